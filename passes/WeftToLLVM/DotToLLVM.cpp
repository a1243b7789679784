//===- DotToLLVM.cpp - weft.dot -------------------------------------------===//
//
// Every thread stores the elements of a and b it holds into the scratch
// area at their row-major positions (shared memory on GPUs, the stack on
// the host) and the program joins. Then, where the target has a warp-level
// matrix instruction for the inputs and the shape is a multiple of it
// (mma.sync m16n8k16 for f16/bf16 on sm_90): if c is in the target's mma
// accumulator layout (weft-assign-layouts picks it for dots where it can),
// every thread's elements are its warp's fragments and the sums stay in
// registers; otherwise the warps share the result's instruction-sized
// tiles, write their sums to a second scratch region, join, and every
// thread adds the products at its elements of c's layout. Elsewhere (f32,
// other shapes, AMDGPU, the host) every thread computes its result elements
// in f32 with one loop over k (the portable path). Swizzled
// layouts, cp.async pipelining, wgmma and MFMA are later work; the
// fragments come from shared memory by ldmatrix (TargetInfo::loadMatrices).
//
//===----------------------------------------------------------------------===//
#include "LoweringUtils.h"
#include "TileLowering.h"

using namespace mlir;

namespace weft {

namespace {

/// c's layout keeps the accumulator in mma fragments.
bool accumulatesInRegisters(DotOp op, const TargetInfo &target) {
  RankedTensorType a = op.getA().getType(), c = op.getC().getType();
  return c.getEncoding() &&
         c.getEncoding() == target.mmaAccumulatorLayout(
                                op.getContext(), a.getElementType(),
                                {a.getDimSize(0), c.getDimSize(1), a.getDimSize(1)});
}

/// The instruction shape the dot lowers to, if any.
std::optional<std::array<int64_t, 3>> mmaFor(DotOp op, const TargetInfo &target) {
  RankedTensorType a = op.getA().getType(), b = op.getB().getType();
  auto shape = target.mmaShape(a.getElementType());
  if (!shape || a.getDimSize(0) % (*shape)[0] || b.getDimSize(1) % (*shape)[1] ||
      a.getDimSize(1) % (*shape)[2])
    return std::nullopt;
  return shape;
}

/// Bytes of a and b in the scratch area, 16-byte aligned.
int64_t operandBytes(DotOp op) {
  RankedTensorType a = op.getA().getType(), b = op.getB().getType();
  int64_t bytes = (a.getNumElements() + b.getNumElements()) *
                  naturalAlignment(a.getElementType());
  return llvm::alignTo(bytes, 16);
}

struct DotOpLowering : TileResultPattern<DotOp> {
  using TileResultPattern::TileResultPattern;

  SmallVector<Value> lowerTile(DotOp op, OpAdaptor adaptor,
                               ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType aType = op.getA().getType(), bType = op.getB().getType();
    Type in = getTypeConverter()->convertType(aType.getElementType());
    SmallVector<Value> aIn = unpackTile(rewriter, loc, adaptor.getA());
    SmallVector<Value> bIn = unpackTile(rewriter, loc, adaptor.getB());
    SmallVector<Value> acc = unpackTile(rewriter, loc, adaptor.getC());
    auto write = [&](Value buffer) {
      tiles.storeRowMajor(rewriter, loc, buffer, in, aType, aIn);
      tiles.storeRowMajor(rewriter, loc, bRegion(rewriter, loc, op, in, buffer), in, bType, bIn);
    };
    if (accumulatesInRegisters(op, tiles.target))
      return tiles.exchange(rewriter, loc, op, write, [&](Value buffer) {
        return mmaInRegisters(rewriter, loc, op, in, buffer, acc);
      });
    if (auto shape = mmaFor(op, tiles.target))
      return tiles.exchange(rewriter, loc, op, write, [&](Value buffer) {
        return mmaProduct(rewriter, loc, op, *shape, in, buffer, acc);
      });
    return tiles.exchange(rewriter, loc, op, write, [&](Value buffer) {
      return loopProduct(rewriter, loc, op, in, buffer, acc);
    });
  }

private:
  Value add(OpBuilder &b, Location loc, Value x, Value y) const {
    return LLVM::AddOp::create(b, loc, x, y);
  }
  Value mul(OpBuilder &b, Location loc, Value x, int64_t c) const {
    return LLVM::MulOp::create(b, loc, x, i32Const(b, loc, c));
  }
  /// Where b starts in the scratch area: right after a.
  Value bRegion(OpBuilder &b, Location loc, DotOp op, Type in, Value buffer) const {
    return elementPtr(b, loc, buffer, in, i32Const(b, loc, op.getA().getType().getNumElements()));
  }

  /// The portable path: per result element, c + sum over k in f32.
  SmallVector<Value> loopProduct(OpBuilder &b, Location loc, DotOp op, Type in, Value a,
                                 ArrayRef<Value> acc) const {
    int64_t k = op.getA().getType().getDimSize(1), n = op.getB().getType().getDimSize(1);
    Value bBase = bRegion(b, loc, op, in, a);
    auto coords = TileLayout(op.getC().getType()).emitCoordinates(b, loc, tiles.target);
    Type f32 = b.getF32Type();
    auto widen = [&](Value v) -> Value {
      return in == f32 ? v : LLVM::FPExtOp::create(b, loc, f32, v);
    };
    return tiles.lowering.forEach(
        b, loc, i32Const(b, loc, k), acc, [&](Value kk, ValueRange sums) {
          SmallVector<Value> next;
          for (auto [sum, mn] : llvm::zip(sums, coords)) {
            Value x = LLVM::LoadOp::create(
                b, loc, in, elementPtr(b, loc, a, in, add(b, loc, mul(b, loc, mn[0], k), kk)));
            Value y = LLVM::LoadOp::create(
                b, loc, in, elementPtr(b, loc, bBase, in, add(b, loc, mul(b, loc, kk, n), mn[1])));
            next.push_back(LLVM::FMulAddOp::create(b, loc, widen(x), widen(y), sum));
          }
          return next;
        });
  }

  /// Lane coordinates within mma.sync m16n8k16's fragments (PTX ISA,
  /// "Matrix Fragments for mma.m16n8k16"): lane = 4 * group + t.
  struct Fragments {
    Value warp, lane, group, pair; // pair = 2t
  };
  Fragments fragments(OpBuilder &b, Location loc) const {
    int64_t warpSize = tiles.target.getSpec().warpSize();
    Value tid = tiles.target.threadId(b, loc);
    Value lane = LLVM::URemOp::create(b, loc, tid, i32Const(b, loc, warpSize));
    return {LLVM::UDivOp::create(b, loc, tid, i32Const(b, loc, warpSize)), lane,
            LLVM::UDivOp::create(b, loc, lane, i32Const(b, loc, 4)),
            mul(b, loc, LLVM::URemOp::create(b, loc, lane, i32Const(b, loc, 4)), 2)};
  }
  /// a's four registers for rows row0..row0+15 and columns k0..k0+15 (a
  /// K wide, row-major in shared memory): the four 8x8 quarters, rows
  /// 0-7 and 8-15 of columns 0-7, then of columns 8-15; lane l gives row
  /// l % 16 of column block l / 16.
  SmallVector<Value> aFragment(OpBuilder &b, Location loc, Type in, Value a, int64_t k,
                               const Fragments &f, Value row0, Value k0) const {
    Value row = add(b, loc, row0, LLVM::URemOp::create(b, loc, f.lane, i32Const(b, loc, 16)));
    Value col = add(b, loc, k0, mul(b, loc, LLVM::UDivOp::create(b, loc, f.lane,
                                                                i32Const(b, loc, 16)),
                                    8));
    return tiles.target.loadMatrices(
        b, loc, elementPtr(b, loc, a, in, add(b, loc, mul(b, loc, row, k), col)), 4,
        /*transpose=*/false);
  }
  /// b's two registers for rows k0..k0+15 and columns col0..col0+7 (b N
  /// wide, row-major): rows 0-7 and 8-15, transposed into column
  /// fragments; lane l gives row l % 16.
  SmallVector<Value> bFragment(OpBuilder &b, Location loc, Type in, Value bBase, int64_t n,
                               const Fragments &f, Value col0, Value k0) const {
    Value row = add(b, loc, k0, LLVM::URemOp::create(b, loc, f.lane, i32Const(b, loc, 16)));
    return tiles.target.loadMatrices(
        b, loc, elementPtr(b, loc, bBase, in, add(b, loc, mul(b, loc, row, n), col0)), 2,
        /*transpose=*/true);
  }

  /// c in mmaAccumulatorLayout: every thread's elements are the fragments
  /// of its warp's tiles (warp w: n-tiles w, w + warps, ..., every m-tile),
  /// so the sums stay in registers, c is the first accumulator and the
  /// result needs no exchange.
  SmallVector<Value> mmaInRegisters(OpBuilder &b, Location loc, DotOp op, Type in, Value a,
                                    ArrayRef<Value> acc) const {
    RankedTensorType cType = op.getC().getType();
    int64_t m = op.getA().getType().getDimSize(0), k = op.getA().getType().getDimSize(1);
    int64_t n = op.getB().getType().getDimSize(1);
    int64_t warps = tiles.target.getSpec().numWarps;
    int64_t mTiles = m / 16, nTilesPerWarp = n / (8 * warps);
    TileLayout layout(cType);
    // Struct index of fragment element e (c0..c3) of tile (tm, j): rows
    // repeat every 8 (index 2tm, 2tm + 1), column pairs every 8 * warps.
    auto index = [&](int64_t tm, int64_t j, int e) {
      return layout.linearIndex({unsigned(2 * tm + e / 2), unsigned(2 * j + e % 2)});
    };
    Fragments f = fragments(b, loc);
    Value bBase = bRegion(b, loc, op, in, a);
    return tiles.lowering.forEach(
        b, loc, i32Const(b, loc, k / 16), acc, [&](Value step, ValueRange sums) {
          SmallVector<Value> next(sums.begin(), sums.end());
          Value k0 = mul(b, loc, step, 16);
          SmallVector<SmallVector<Value>> bRegs;
          for (int64_t j = 0; j < nTilesPerWarp; ++j) {
            Value tile = add(b, loc, f.warp, i32Const(b, loc, j * warps));
            bRegs.push_back(bFragment(b, loc, in, bBase, n, f, mul(b, loc, tile, 8), k0));
          }
          for (int64_t tm = 0; tm < mTiles; ++tm) {
            SmallVector<Value> aRegs =
                aFragment(b, loc, in, a, k, f, i32Const(b, loc, 16 * tm), k0);
            for (int64_t j = 0; j < nTilesPerWarp; ++j) {
              SmallVector<Value> c;
              for (int e = 0; e < 4; ++e)
                c.push_back(next[index(tm, j, e)]);
              SmallVector<Value> d = tiles.target.mma(b, loc, in, aRegs, bRegs[j], c);
              for (int e = 0; e < 4; ++e)
                next[index(tm, j, e)] = d[e];
            }
          }
          return next;
        });
  }

  /// c in any other layout: the warps take the result's 16x8 tiles round
  /// robin, each from zero; the four sums per lane (rows group and
  /// group + 8, columns 2t and 2t + 1) go to a second scratch region, the
  /// program joins, and every thread adds the products at its elements of
  /// c's layout to c.
  SmallVector<Value> mmaProduct(OpBuilder &b, Location loc, DotOp op,
                                std::array<int64_t, 3> shape, Type in, Value a,
                                ArrayRef<Value> acc) const {
    const TargetInfo &target = tiles.target;
    RankedTensorType cType = op.getC().getType();
    int64_t m = op.getA().getType().getDimSize(0), k = op.getA().getType().getDimSize(1);
    int64_t n = op.getB().getType().getDimSize(1);
    auto [tm, tn, tk] = shape;
    int64_t warps = target.getSpec().numWarps;
    int64_t tilesN = n / tn, numTiles = (m / tm) * tilesN;
    Type f32 = b.getF32Type();
    Value bBase = bRegion(b, loc, op, in, a);
    Value d = byteOffset(b, loc, a, i64Const(b, loc, operandBytes(op)));
    Fragments f = fragments(b, loc);

    // Warp w computes tiles w, w + warps, ...; a trailing partial round
    // skips the warps past the last tile.
    int64_t rounds = llvm::divideCeil(numTiles, warps);
    tiles.lowering.forEach(b, loc, i32Const(b, loc, rounds), [&](Value round) {
      Value tile = add(b, loc, f.warp, mul(b, loc, round, warps));
      Value inRange = LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::ult, tile,
                                           i32Const(b, loc, numTiles));
      emitIf(b, loc, inRange, {}, [&] {
        Value tileRow = mul(b, loc, LLVM::UDivOp::create(b, loc, tile, i32Const(b, loc, tilesN)), tm);
        Value tileCol = mul(b, loc, LLVM::URemOp::create(b, loc, tile, i32Const(b, loc, tilesN)), tn);
        Value row = add(b, loc, tileRow, f.group);
        Value row8 = add(b, loc, row, i32Const(b, loc, 8));
        Value col = add(b, loc, tileCol, f.pair);
        Value zero = LLVM::ConstantOp::create(b, loc, f32, b.getF32FloatAttr(0));
        SmallVector<Value> sums = tiles.lowering.forEach(
            b, loc, i32Const(b, loc, k / tk), SmallVector<Value>(4, zero),
            [&](Value step, ValueRange c) {
              Value k0 = mul(b, loc, step, tk);
              SmallVector<Value> aRegs = aFragment(b, loc, in, a, k, f, tileRow, k0);
              SmallVector<Value> bRegs = bFragment(b, loc, in, bBase, n, f, tileCol, k0);
              return target.mma(b, loc, in, aRegs, bRegs, c);
            });
        Value col1 = add(b, loc, col, i32Const(b, loc, 1));
        Value at[4][2] = {{row, col}, {row, col1}, {row8, col}, {row8, col1}};
        for (int i = 0; i < 4; ++i)
          LLVM::StoreOp::create(
              b, loc, sums[i],
              elementPtr(b, loc, d, f32, add(b, loc, mul(b, loc, at[i][0], n), at[i][1])));
        return SmallVector<Value>{};
      }, {});
    });
    tiles.lowering.joinProgram(b, loc);
    SmallVector<Value> out;
    for (auto [c, sum] : llvm::zip(acc, tiles.loadRowMajor(b, loc, d, f32, cType)))
      out.push_back(LLVM::FAddOp::create(b, loc, c, sum));
    return out;
  }
};

} // namespace

int64_t dotScratchBytes(DotOp op, const TargetInfo &target) {
  int64_t bytes = operandBytes(op);
  if (mmaFor(op, target) && !accumulatesInRegisters(op, target))
    bytes += op.getC().getType().getNumElements() * 4; // the f32 products
  return bytes;
}

void populateDotPatterns(const LLVMTypeConverter &converter, const TileLowering &tiles,
                         RewritePatternSet &patterns) {
  patterns.add<DotOpLowering>(converter, tiles);
}

} // namespace weft
