//===- DotPlan.cpp - how a weft.dot runs on a target ----------------------===//
#include "weft/Dialect/Weft/Distribution/DotPlan.h"
#include "weft/Dialect/Weft/Distribution/SharedMemory.h"

#include <cmath>

using namespace mlir;

namespace weft {

namespace {

ShapedType typeOfA(DotOp op) { return cast<ShapedType>(op.getA().getType()); }
std::array<int64_t, 3> shapeOf(DotOp op) { return dotShape(op); }

/// The accumulator layout of a dot of shape mnk = {M, N, K} in `shape`
/// instruction tiles, whose lanes hold the instruction's result fragment
/// (sizePerThread over threadsPerWarp): the warps form the wm x wn grid
/// whose (M / wm) x (N / wn) blocks are squarest, which loads the fewest
/// fragments per instruction. Null when K is not a multiple of the
/// instruction's or no grid divides M x N.
BlockedEncodingAttr mmaGridLayout(MLIRContext *ctx, std::array<int64_t, 3> mnk,
                                  std::array<int64_t, 3> shape, ArrayRef<unsigned> sizePerThread,
                                  ArrayRef<unsigned> threadsPerWarp, unsigned warps) {
  if (mnk[2] % shape[2])
    return {};
  unsigned best = 0;
  double bestSkew = 0;
  for (unsigned wm = 1; wm <= warps; wm *= 2) {
    unsigned wn = warps / wm;
    if (mnk[0] % (shape[0] * wm) || mnk[1] % (shape[1] * wn))
      continue;
    double skew = std::abs(std::log2(double(mnk[0]) / wm) - std::log2(double(mnk[1]) / wn));
    if (!best || skew < bestSkew)
      std::tie(best, bestSkew) = std::make_pair(wm, skew);
  }
  if (!best)
    return {};
  return BlockedEncodingAttr::get(ctx, sizePerThread, threadsPerWarp, {best, warps / best},
                                  {1, 0});
}

/// The operands are buffers in the #weft.swizzled layouts `layoutOf` gives
/// them.
bool operandsIn(DotOp op, const CompileTarget &target, OperandLayoutFn layoutOf) {
  auto a = dyn_cast<SharedType>(op.getA().getType());
  auto b = dyn_cast<SharedType>(op.getB().getType());
  MLIRContext *ctx = op.getContext();
  Type in = typeOfA(op).getElementType();
  return a && b && a.getLayout() && a.getLayout() == layoutOf(target, ctx, in, shapeOf(op), 0) &&
         b.getLayout() == layoutOf(target, ctx, in, shapeOf(op), 1);
}

/// Operands in a #weft.swizzled layout that warp-level MMA does not read
/// (only descriptors, or the portable path's element loads, do). One
/// operand may be a tile (a pipelined dot whose other operand is computed
/// in the loop): it is stored in padded rows, which MMA reads.
bool swizzledOperands(DotOp op, const CompileTarget &target) {
  auto swizzled = [&](Value operand, unsigned index) {
    auto buffer = dyn_cast<SharedType>(operand.getType());
    if (!buffer || !buffer.getLayout())
      return false;
    return buffer.getLayout() != mmaOperandLayout(target, op.getContext(),
                                                  buffer.getElementType(), shapeOf(op), index);
  };
  return swizzled(op.getA(), 0) || swizzled(op.getB(), 1);
}

} // namespace

std::array<int64_t, 3> dotShape(DotOp dot) {
  auto a = cast<ShapedType>(dot.getA().getType());
  auto b = cast<ShapedType>(dot.getB().getType());
  return {a.getDimSize(0), b.getDimSize(1), a.getDimSize(1)};
}

int64_t dotOperandBytes(DotOp dot) {
  int64_t bytes = 0;
  for (Value operand : {dot.getA(), dot.getB()})
    if (auto tile = dyn_cast<RankedTensorType>(operand.getType()))
      bytes += sharedTileBytes(tile);
  return bytes;
}

std::optional<std::array<int64_t, 3>> mmaShape(const TargetSpec &target, Type elemType) {
  if (!(elemType.isF16() || elemType.isBF16()))
    return std::nullopt;
  switch (target.kind) {
  case TargetKind::NVPTX:
    return std::array<int64_t, 3>{16, 8, 16};
  case TargetKind::AMDGPU:
    return std::array<int64_t, 3>{16, 16, 16};
  case TargetKind::Host:
    return std::nullopt;
  }
  llvm_unreachable("unknown target kind");
}

MmaFragments mmaFragments(const TargetSpec &target) {
  return target.kind == TargetKind::AMDGPU ? MmaFragments::LaneBlocks : MmaFragments::Ldmatrix;
}

BlockedEncodingAttr mmaAccumulatorLayout(const CompileTarget &target, MLIRContext *ctx,
                                         Type elemType, std::array<int64_t, 3> mnk) {
  auto shape = mmaShape(target.spec, elemType);
  if (!shape)
    return {};
  unsigned warps = target.options.numWarps;
  // NVPTX: lane 4 * group + t holds rows group and group + 8 of a 16x8
  // tile, columns 2t and 2t + 1: sizePerThread [1, 2] over threadsPerWarp
  // [8, 4] with rows repeating every 8. AMDGPU: lane l holds rows 4 (l /
  // 16) .. + 3 of column l % 16 of a 16x16 tile: sizePerThread [4, 1] over
  // threadsPerWarp [4, 16]. Warps in a wm x wn grid, warp (i, j) owning
  // the tiles (i + wm s, j + wn t).
  if (target.spec.kind == TargetKind::NVPTX)
    return mmaGridLayout(ctx, mnk, *shape, {1, 2}, {8, 4}, warps);
  return mmaGridLayout(ctx, mnk, *shape, {4, 1}, {4, 16}, warps);
}

SwizzledSharedAttr mmaOperandLayout(const CompileTarget &target, MLIRContext *ctx,
                                    Type elemType, std::array<int64_t, 3> mnk, unsigned index) {
  auto shape = mmaShape(target.spec, elemType);
  if (!shape || mmaFragments(target.spec) != MmaFragments::Ldmatrix)
    return {};
  auto [m, n, k] = mnk;
  if (m % (*shape)[0] || n % (*shape)[1] || k % (*shape)[2])
    return {};
  unsigned bytes = swizzleSpan(elemType.getIntOrFloatBitWidth() / 8 * (index == 0 ? k : n));
  return bytes ? SwizzledSharedAttr::get(ctx, bytes, 0) : SwizzledSharedAttr();
}

SwizzledSharedAttr warpgroupOperandLayout(const CompileTarget &target, MLIRContext *ctx,
                                          Type elemType, std::array<int64_t, 3> mnk,
                                          unsigned index) {
  if (target.spec.kind != TargetKind::NVPTX)
    return {};
  auto [m, n, k] = mnk;
  unsigned warps = target.options.numWarps;
  // Every warpgroup takes whole m64 instructions over all of N (at most
  // 256); rows of b of at least 32 bytes, so that they swizzle.
  if (target.options.warpMma || !(elemType.isF16() || elemType.isBF16()) || warps % 4 ||
      m % (16 * warps) || n % 16 || n > 256 || k % 16)
    return {};
  return SwizzledSharedAttr::get(ctx, swizzleSpan(2 * (index == 0 ? k : n)),
                                 index == 0 ? warps : 0);
}

BlockedEncodingAttr warpgroupAccumulatorLayout(MLIRContext *ctx, unsigned warps) {
  return BlockedEncodingAttr::get(ctx, {1, 2}, {8, 4}, {warps, 1}, {1, 0});
}

bool warpgroupOperands(DotOp dot, const CompileTarget &target) {
  return operandsIn(dot, target, &warpgroupOperandLayout);
}

bool warpgroupRegisterA(DotOp dot, const CompileTarget &target) {
  auto b = dyn_cast<SharedType>(dot.getB().getType());
  if (!isa<RankedTensorType>(dot.getA().getType()) || !b || !b.getLayout())
    return false;
  MLIRContext *ctx = dot.getContext();
  Type in = b.getElementType();
  return warpgroupOperandLayout(target, ctx, in, shapeOf(dot), 0) &&
         b.getLayout() == warpgroupOperandLayout(target, ctx, in, shapeOf(dot), 1);
}

bool accumulatesInRegisters(DotOp dot, const CompileTarget &target) {
  RankedTensorType c = dot.getC().getType();
  return c.getEncoding() && c.getEncoding() == dotAccumulatorLayout(dot, target);
}

std::optional<std::array<int64_t, 3>> mmaFor(DotOp dot, const CompileTarget &target) {
  if (swizzledOperands(dot, target))
    return std::nullopt;
  auto [m, n, k] = shapeOf(dot);
  auto shape = mmaShape(target.spec, typeOfA(dot).getElementType());
  if (!shape || m % (*shape)[0] || n % (*shape)[1] || k % (*shape)[2])
    return std::nullopt;
  if (mmaFragments(target.spec) == MmaFragments::LaneBlocks &&
      !accumulatesInRegisters(dot, target))
    return std::nullopt;
  return shape;
}

BlockedEncodingAttr dotAccumulatorLayout(DotOp dot, const CompileTarget &target) {
  if (warpgroupOperands(dot, target))
    return warpgroupAccumulatorLayout(dot.getContext(),
                                      cast<SharedType>(dot.getA().getType()).getLayout().getWarps());
  if (warpgroupRegisterA(dot, target))
    return warpgroupAccumulatorLayout(dot.getContext(), target.options.numWarps);
  if (swizzledOperands(dot, target))
    return {};
  return mmaAccumulatorLayout(target, dot.getContext(), typeOfA(dot).getElementType(),
                              shapeOf(dot));
}

int64_t dotScratchBytes(DotOp dot, const CompileTarget &target) {
  // A tile a in registers needs none where warpgroup MMA takes it (which
  // wants c in registers too); elsewhere the lowering stores it.
  bool inRegisters = warpgroupRegisterA(dot, target) && accumulatesInRegisters(dot, target);
  int64_t bytes = inRegisters ? 0 : dotOperandBytes(dot);
  if (mmaFor(dot, target) && !accumulatesInRegisters(dot, target))
    bytes += dot.getC().getType().getNumElements() * 4; // the f32 products
  return bytes;
}

unsigned swizzleSpan(int64_t rowBytes) {
  for (unsigned bytes : {128u, 64u, 32u})
    if (rowBytes % bytes == 0)
      return bytes;
  return 0;
}

} // namespace weft
