//===- WarpgroupDotToLLVM.cpp - weft.dot by sm_90 warpgroup MMA -----------===//
//
// A dot whose operands are buffers in warpgroup MMA's #weft.swizzled
// layouts (or whose a is a tile in the accumulator's layout, taken from
// registers) and whose accumulator is in warpgroupAccumulatorLayout
// (DotPlan.h: weft-pipeline-dot-operands and weft-assign-layouts chose them
// on sm_90): each warpgroup issues its m64 x N x k16 wgmma steps from
// shared-memory descriptors, and the sums stay in registers. weft.dot_wait retires the
// products still in flight. Every other dot is DotToLLVM.cpp's.
//
//===----------------------------------------------------------------------===//
#include "NVPTXPatterns.h"
#include "PTX.h"

#include "../LoweringUtils.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "llvm/Support/FormatVariadic.h"

#include <functional>

using namespace mlir;

namespace weft {
namespace {

/// One m64 x n x k16 wgmma: a is a shared-memory descriptor, or four
/// registers of two elements each (the k16 slice of a's rows).
SmallVector<Value> warpgroupMma(OpBuilder &b, Location loc, Type elemType, int64_t n,
                                ValueRange a, Value descB, ValueRange acc) {
  // Operands: the accumulators (outputs, tied inputs), a, b's descriptor,
  // and scale-d = 1 as a register (setp wants one).
  unsigned regs = acc.size();
  std::string list, aList;
  for (unsigned i = 0; i < regs; ++i)
    list += llvm::formatv("{0}${1}", i ? "," : "", i).str();
  for (unsigned i = 0; i < a.size(); ++i)
    aList += llvm::formatv("{0}${1}", i ? "," : "", 2 * regs + i).str();
  bool inRegisters = a.size() > 1;
  if (inRegisters)
    aList = "{" + aList + "}";
  std::string constraints = tiedF32Constraints(regs) + (inRegisters ? ",r,r,r,r" : ",l") + ",l,r";
  const char *type = elemType.isBF16() ? "bf16" : "f16";
  // Immediates: scale-a, scale-b, then (a from shared memory only) a's
  // transpose, then b's.
  unsigned last = 2 * regs + a.size();
  std::string text = llvm::formatv(
      "{{ .reg .pred p; setp.ne.b32 p, ${0}, 0; "
      "wgmma.mma_async.sync.aligned.m64n{1}k16.f32.{2}.{2} {{{3}}, {4}, ${5}, p, 1, 1, {6}1; }",
      last + 1, n, type, list, aList, last, inRegisters ? "" : "0, ");
  SmallVector<Value> operands(acc);
  llvm::append_range(operands, a);
  operands.append({descB, i32Const(b, loc, 1)});
  // Reads shared memory asynchronously: ordered with the fence and waits.
  return emitAsmResults(b, loc, SmallVector<Type>(regs, b.getF32Type()), operands, text,
                        constraints, /*hasSideEffects=*/true);
}
void warpgroupFence(OpBuilder &b, Location loc) {
  NVVM::WgmmaFenceAlignedOp::create(b, loc);
}
void warpgroupCommit(OpBuilder &b, Location loc) {
  NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
}
SmallVector<Value> warpgroupWait(OpBuilder &b, Location loc, unsigned pending,
                                 ValueRange acc) {
  // The accumulators pass through the wait (tied), so that nothing reads
  // them before it. The first chunk's wait does the waiting; the rest
  // find the groups complete.
  constexpr unsigned kChunk = 64;
  SmallVector<Value> out;
  for (unsigned first = 0; first < acc.size(); first += kChunk) {
    ValueRange chunk = acc.slice(first, std::min<size_t>(kChunk, acc.size() - first));
    llvm::append_range(
        out, emitAsmResults(b, loc, SmallVector<Type>(chunk.size(), b.getF32Type()), chunk,
                            llvm::formatv("wgmma.wait_group.sync.aligned {0};", pending).str(),
                            tiedF32Constraints(chunk.size()), /*hasSideEffects=*/true));
  }
  return out;
}

struct WarpgroupDotLowering : TilePattern<DotOp> {
  WarpgroupDotLowering(const LLVMTypeConverter &converter, const TileLowering &tiles)
      : TilePattern(converter, tiles, kVendorBenefit) {}

  LogicalResult matchAndRewrite(DotOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    const CompileTarget &target = tiles.target.getCompileTarget();
    if (!isDistributed(op.getType()) || !accumulatesInRegisters(op, target) ||
        !(warpgroupOperands(op, target) || warpgroupRegisterA(op, target)))
      return failure();
    Location loc = op.getLoc();
    Type in = getTypeConverter()->convertType(
        cast<ShapedType>(op.getA().getType()).getElementType());
    SmallVector<Value> acc = unpackTile(rewriter, loc, adaptor.getC());
    replaceWithTile(rewriter, op, *getTypeConverter(),
                    warpgroupProduct(rewriter, loc, op, in, adaptor.getA(), adaptor.getB(), acc));
    return success();
  }

private:
  /// c in warpgroupAccumulatorLayout over W warps, b #weft.swizzled, a
  /// #weft.swizzled too or a tile in c's layout: warpgroup j's R = M / 16W
  /// instructions cover a's stored rows 64 (R j + r) and up (the rows the
  /// layout gives its warps), each m64 x N, stepping 16 along K; thread
  /// t's accumulator register 4q + e of instruction r is its element
  /// (2r + e / 2, 2q + e % 2) of the layout. A tile a gives the registers
  /// that layout holds: its k16 slice s is, per instruction, the pairs of
  /// elements (2r + i % 2, 4s + 2 (i / 2)) and the one after, i = 0..3
  /// (PTX ISA, "Register Fragments and Shared Memory Matrix Layouts").
  /// The warpgroup waits for its products before the dot's result is used
  /// (and before the next copies overwrite the buffers).
  SmallVector<Value> warpgroupProduct(OpBuilder &b, Location loc, DotOp op, Type in,
                                      Value aBase, Value bBase, ArrayRef<Value> acc) const {
    const TargetInfo &target = tiles.target;
    auto bType = cast<SharedType>(op.getB().getType());
    auto [m, n, k] = dotShape(op);
    int64_t elementBytes = naturalAlignment(bType.getElementType());
    int64_t bBytes = bType.getLayout().getBytes();
    int64_t warps = target.getCompileTarget().options.numWarps;
    int64_t perWarpgroup = m / (16 * warps);
    TileLayout layout(op.getC().getType());
    Type i64 = b.getI64Type();
    auto advance = [&](Value desc, int64_t bytes) -> Value {
      return LLVM::AddOp::create(b, loc, desc, i64Const(b, loc, bytes / 16));
    };
    // a's operand of instruction r at k0.
    std::function<SmallVector<Value>(int64_t, int64_t)> aOperand;
    if (auto aTile = dyn_cast<RankedTensorType>(op.getA().getType())) {
      SmallVector<Value> values = unpackTile(b, loc, aBase);
      TileLayout aLayout(aTile);
      aOperand = [&, values, aLayout](int64_t r, int64_t k0) {
        SmallVector<Value> regs;
        for (unsigned i = 0; i < 4; ++i) {
          unsigned row = 2 * r + i % 2, col = k0 / 4 + 2 * (i / 2);
          Value pair = packVector(b, loc, {values[aLayout.linearIndex({row, col})],
                                           values[aLayout.linearIndex({row, col + 1})]});
          regs.push_back(LLVM::BitcastOp::create(b, loc, b.getI32Type(), pair));
        }
        return regs;
      };
    } else {
      int64_t aBytes = cast<SharedType>(op.getA().getType()).getLayout().getBytes();
      Value warpgroup = LLVM::ZExtOp::create(
          b, loc, i64,
          divConst(b, loc, target.threadId(b, loc), 4 * target.getSpec().warpSize()));
      Value aStart = LLVM::AddOp::create(
          b, loc, LLVM::PtrToIntOp::create(b, loc, i64, aBase),
          LLVM::MulOp::create(b, loc, warpgroup, i64Const(b, loc, 64 * perWarpgroup * aBytes)));
      // Leading byte offset: from one column block to the next; stride
      // byte offset: from 8 rows to the next 8.
      Value descA = descriptor(b, loc, aStart, m * aBytes, 8 * aBytes, aBytes);
      aOperand = [&, descA, aBytes](int64_t r, int64_t k0) {
        int64_t kBytes = k0 * elementBytes;
        int64_t offset = kBytes / aBytes * m * aBytes + 64 * r * aBytes + kBytes % aBytes;
        return SmallVector<Value>{advance(descA, offset)};
      };
    }
    Value descB = descriptor(b, loc, LLVM::PtrToIntOp::create(b, loc, i64, bBase), k * bBytes,
                             8 * bBytes, bBytes);
    SmallVector<Value> out(acc);
    warpgroupFence(b, loc);
    for (int64_t r = 0; r < perWarpgroup; ++r) {
      SmallVector<unsigned> index;
      for (int64_t q = 0; q < n / 8; ++q)
        for (unsigned e = 0; e < 4; ++e)
          index.push_back(layout.linearIndex({unsigned(2 * r + e / 2), unsigned(2 * q + e % 2)}));
      SmallVector<Value> d;
      for (unsigned i : index)
        d.push_back(out[i]);
      for (int64_t k0 = 0; k0 < k; k0 += 16)
        d = warpgroupMma(b, loc, in, n, aOperand(r, k0), advance(descB, k0 * bBytes), d);
      for (auto [i, value] : llvm::zip(index, d))
        out[i] = value;
    }
    warpgroupCommit(b, loc);
    // A weft.dot_wait that is the only user does the waiting.
    if (op->hasOneUse() && isa<DotWaitOp>(*op->user_begin()))
      return out;
    return warpgroupWait(b, loc, /*pending=*/0, out);
  }

  /// A shared-memory matrix descriptor (PTX ISA, "Matrix Descriptor
  /// Format"): the start address, the leading and stride byte offsets, all
  /// in 16-byte units, and the swizzle mode.
  Value descriptor(OpBuilder &b, Location loc, Value address, int64_t leading, int64_t stride,
                   int64_t swizzleBytes) const {
    uint64_t mode = swizzleBytes == 128 ? 1 : swizzleBytes == 64 ? 2 : 3;
    uint64_t fixed = (uint64_t(leading >> 4) & 0x3FFF) << 16 |
                     (uint64_t(stride >> 4) & 0x3FFF) << 32 | mode << 62;
    Value start = LLVM::AndOp::create(
        b, loc, LLVM::LShrOp::create(b, loc, address, i64Const(b, loc, 4)),
        i64Const(b, loc, 0x3FFF));
    return LLVM::OrOp::create(b, loc, start, i64Const(b, loc, int64_t(fixed)));
  }

};

struct DotWaitLowering : TileResultPattern<DotWaitOp> {
  DotWaitLowering(const LLVMTypeConverter &converter, const TileLowering &tiles)
      : TileResultPattern(converter, tiles, kVendorBenefit) {}

  SmallVector<Value> lowerTile(DotWaitOp op, OpAdaptor adaptor,
                               ConversionPatternRewriter &rewriter) const override {
    return warpgroupWait(rewriter, op.getLoc(), op.getPending(),
                         unpackTile(rewriter, op.getLoc(), adaptor.getSrc()));
  }
};

} // namespace

void populateWarpgroupDotPatterns(const LLVMTypeConverter &converter, const TileLowering &tiles,
                                  RewritePatternSet &patterns) {
  patterns.add<WarpgroupDotLowering, DotWaitLowering>(converter, tiles);
}

} // namespace weft
