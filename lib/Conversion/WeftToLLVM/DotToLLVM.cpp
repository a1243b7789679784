//===- DotToLLVM.cpp - weft.dot -------------------------------------------===//
//
// Operands that are tiles: every thread stores the elements of a and b it
// holds into the scratch area at their row-major positions (shared memory
// on GPUs, the stack on the host) and the program joins. Operands already
// in shared memory (`!weft.shared` buffers, which weft-pipeline-dot-operands
// fills with cp.async a few K steps ahead) are read in place: no store, no
// joins. A dot may mix the two (one operand computed in the K loop, as
// attention's P in P V): the tile is stored, the buffer read in place.
// Then, by what the target has:
//  - warpgroup MMA (wgmma on sm_90), for #weft.swizzled buffers with c in
//    warpgroupAccumulatorLayout: NVPTX/WarpgroupDotToLLVM.cpp's pattern;
//  - a warp-level matrix instruction (mma.sync m16n8k16 for f16/bf16),
//    where the shape is a multiple of it: if c is in the target's mma
//    accumulator layout every thread's elements are its warp's fragments
//    and the sums stay in registers; otherwise the warps share the
//    result's instruction-sized tiles, write their sums to a second scratch
//    region, join, and every thread adds the products at its elements of
//    c's layout. The fragments come by ldmatrix (TargetInfo::loadMatrices)
//    from padded rows, or from pipelined buffers swizzled for it
//    (DotPlan.h, mmaOperandLayout);
//    On AMDGPU the instruction is MFMA 16x16x16, whose fragments are runs
//    of four elements per lane (DotPlan.h, MmaFragments::LaneBlocks),
//    loaded with plain shared-memory loads; only with c in the accumulator
//    layout;
//  - elsewhere (f32, other shapes, the host) every thread computes its
//    result elements in f32 with one loop over k (the portable path).
//
//===----------------------------------------------------------------------===//
#include "LoweringUtils.h"
#include "TileLowering.h"

using namespace mlir;

namespace weft {

namespace {

ShapedType typeOfA(DotOp op) { return cast<ShapedType>(op.getA().getType()); }
ShapedType typeOfB(DotOp op) { return cast<ShapedType>(op.getB().getType()); }

struct DotOpLowering : TileResultPattern<DotOp> {
  using TileResultPattern::TileResultPattern;

  SmallVector<Value> lowerTile(DotOp op, OpAdaptor adaptor,
                               ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type in = getTypeConverter()->convertType(typeOfA(op).getElementType());
    SmallVector<Value> acc = unpackTile(rewriter, loc, adaptor.getC());
    auto shape = mmaFor(op, tiles.target.getCompileTarget());
    bool inRegisters = accumulatesInRegisters(op, tiles.target.getCompileTarget());
    // The product from operands at aBase and bBase; `scratch` (after the
    // operands) holds the warp-level path's products.
    auto product = [&](Value aBase, Value bBase, Value scratch) {
      if (inRegisters && shape)
        return mmaFragments(tiles.target.getSpec()) == MmaFragments::LaneBlocks
                   ? laneBlockProduct(rewriter, loc, op, in, aBase, bBase, acc)
                   : mmaInRegisters(rewriter, loc, op, in, aBase, bBase, acc);
      if (shape)
        return mmaProduct(rewriter, loc, op, *shape, in, aBase, bBase, scratch, acc);
      return loopProduct(rewriter, loc, op, in, aBase, bBase, acc);
    };
    bool aShared = isa<SharedType>(op.getA().getType());
    bool bShared = isa<SharedType>(op.getB().getType());
    if (aShared && bShared) {
      if ((inRegisters && shape) || !shape)
        return product(adaptor.getA(), adaptor.getB(), Value());
      return tiles.exchange(rewriter, loc, op, [](Value) {}, [&](Value buffer) {
        return product(adaptor.getA(), adaptor.getB(), buffer);
      });
    }
    // The tile operands go to the scratch area (a first), the buffers are
    // read where they are.
    SmallVector<Value> aIn, bIn;
    if (!aShared)
      aIn = unpackTile(rewriter, loc, adaptor.getA());
    if (!bShared)
      bIn = unpackTile(rewriter, loc, adaptor.getB());
    auto bRegion = [&](Value buffer) {
      return aShared ? buffer
                     : byteOffset(rewriter, loc, buffer,
                                  i64Const(rewriter, loc, sharedTileBytes(typeOfA(op))));
    };
    auto write = [&](Value buffer) {
      if (!aShared)
        tiles.storeRowMajor(rewriter, loc, buffer, in, cast<RankedTensorType>(typeOfA(op)), aIn,
                            sharedRowPitch(typeOfA(op)));
      if (!bShared)
        tiles.storeRowMajor(rewriter, loc, bRegion(buffer), in,
                            cast<RankedTensorType>(typeOfB(op)), bIn, sharedRowPitch(typeOfB(op)));
    };
    return tiles.exchange(rewriter, loc, op, write, [&](Value buffer) {
      return product(aShared ? adaptor.getA() : buffer, bShared ? adaptor.getB() : bRegion(buffer),
                     byteOffset(rewriter, loc, buffer, i64Const(rewriter, loc, dotOperandBytes(op))));
    });
  }

private:
  Value add(OpBuilder &b, Location loc, Value x, Value y) const {
    return LLVM::AddOp::create(b, loc, x, y);
  }
  /// The portable path: per result element, c + sum over k in f32.
  SmallVector<Value> loopProduct(OpBuilder &b, Location loc, DotOp op, Type in, Value a,
                                 Value bBase, ArrayRef<Value> acc) const {
    int64_t k = typeOfA(op).getDimSize(1);
    auto coords = emitCoordinates(b, loc, TileLayout(op.getC().getType()), tiles.target);
    Type f32 = b.getF32Type();
    auto widen = [&](Value v) -> Value {
      return in == f32 ? v : LLVM::FPExtOp::create(b, loc, f32, v);
    };
    auto element = [&](Value base, ShapedType type, Value row, Value col) -> Value {
      return LLVM::LoadOp::create(
          b, loc, in, byteOffset(b, loc, base, sharedElementOffset(b, loc, type, row, col)));
    };
    return tiles.lowering.forEach(
        b, loc, i32Const(b, loc, k), acc, [&](Value kk, ValueRange sums) {
          SmallVector<Value> next;
          for (auto [sum, mn] : llvm::zip(sums, coords)) {
            Value x = element(a, typeOfA(op), mn[0], kk);
            Value y = element(bBase, typeOfB(op), kk, mn[1]);
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
    Value lane = remConst(b, loc, tid, warpSize);
    return {divConst(b, loc, tid, warpSize), lane,
            divConst(b, loc, lane, 4),
            mulConst(b, loc, remConst(b, loc, lane, 4), 2)};
  }
  /// a's four registers for columns k0..k0+15 of the fragment's rows 0-7
  /// (a's rows row0..row0+7) and 8-15 (rows row0+half..row0+half+7; half
  /// = 8 for 16 consecutive rows), a of `type` in shared memory (padded
  /// or swizzled rows, sharedElementOffset): the four 8x8 quarters, rows
  /// 0-7 and 8-15 of columns 0-7, then of columns 8-15; lane l gives row
  /// l % 8 of quarter l / 8.
  SmallVector<Value> aFragment(OpBuilder &b, Location loc, Value a, ShapedType type,
                               const Fragments &f, Value row0, int64_t half, Value k0) const {
    Value quarter = divConst(b, loc, f.lane, 8);
    Value row = add(b, loc, add(b, loc, row0, remConst(b, loc, f.lane, 8)),
                    mulConst(b, loc, remConst(b, loc, quarter, 2), half));
    Value col = add(b, loc, k0, mulConst(b, loc, divConst(b, loc, quarter, 2), 8));
    return tiles.target.loadMatrices(
        b, loc, byteOffset(b, loc, a, sharedElementOffset(b, loc, type, row, col)), 4,
        /*transpose=*/false);
  }
  /// b's registers for rows k0..k0+15 of `nTiles` n-tiles, the first at
  /// columns col0..col0+7 and each `stride` columns after the one before
  /// (b of `type` in shared memory): two per n-tile, its rows 0-7 and
  /// 8-15 transposed into column fragments. Pairs of n-tiles take one
  /// load of four matrices, lane l giving row l % 16 of the pair's n-tile
  /// l / 16 (an odd last n-tile, two).
  SmallVector<SmallVector<Value>> bFragments(OpBuilder &b, Location loc, Value bBase,
                                             ShapedType type, const Fragments &f, Value col0,
                                             int64_t stride, int64_t nTiles, Value k0) const {
    Value row = add(b, loc, k0, remConst(b, loc, f.lane, 16));
    Value second = mulConst(b, loc, divConst(b, loc, f.lane, 16), stride);
    SmallVector<SmallVector<Value>> regs;
    for (int64_t s = 0; s < nTiles; s += 2) {
      bool pair = s + 1 < nTiles;
      Value col = add(b, loc, col0, i32Const(b, loc, s * stride));
      if (pair)
        col = add(b, loc, col, second);
      SmallVector<Value> loaded = tiles.target.loadMatrices(
          b, loc, byteOffset(b, loc, bBase, sharedElementOffset(b, loc, type, row, col)),
          pair ? 4 : 2, /*transpose=*/true);
      regs.push_back({loaded[0], loaded[1]});
      if (pair)
        regs.push_back({loaded[2], loaded[3]});
    }
    return regs;
  }

  /// One step of K of a warp's in-register MMA over mTiles x nTiles
  /// instruction tiles: b's registers for every n-tile (bRegs), then per
  /// m-tile a's (aOf) and one mma() per n-tile on accumulator elements
  /// index(tm, s, 0..3) of `sums`, updated in place.
  void mmaTiles(OpBuilder &b, Location loc, Type in, int64_t mTiles,
                ArrayRef<SmallVector<Value>> bRegs,
                function_ref<unsigned(int64_t, int64_t, int)> index, SmallVector<Value> &sums,
                function_ref<SmallVector<Value>(int64_t)> aOf) const {
    int64_t nTiles = bRegs.size();
    for (int64_t tm = 0; tm < mTiles; ++tm) {
      SmallVector<Value> aRegs = aOf(tm);
      for (int64_t s = 0; s < nTiles; ++s) {
        SmallVector<Value> c;
        for (int e = 0; e < 4; ++e)
          c.push_back(sums[index(tm, s, e)]);
        SmallVector<Value> d = tiles.target.mma(b, loc, in, aRegs, bRegs[s], c);
        for (int e = 0; e < 4; ++e)
          sums[index(tm, s, e)] = d[e];
      }
    }
  }

  /// c in mmaAccumulatorLayout: every thread's elements are the fragments
  /// of its warp's tiles, so the sums stay in registers, c is the first
  /// accumulator and the result needs no exchange. The layout's warps form
  /// a wm x wn grid and repeat every 8 rows and columns: warp (i, j)'s
  /// m-tile t is the row blocks i + wm * 2t and i + wm * (2t + 1) (8 rows
  /// each: the fragment's two halves), its n-tile s the 8 columns of
  /// block j + wn * s.
  SmallVector<Value> mmaInRegisters(OpBuilder &b, Location loc, DotOp op, Type in, Value a,
                                    Value bBase, ArrayRef<Value> acc) const {
    RankedTensorType cType = op.getC().getType();
    int64_t m = typeOfA(op).getDimSize(0), k = typeOfA(op).getDimSize(1);
    int64_t n = typeOfB(op).getDimSize(1);
    TileLayout layout(cType);
    ArrayRef<unsigned> grid = layout.getBlocked().getWarpsPerProgram();
    int64_t wm = grid[0], wn = grid[1];
    int64_t mTiles = m / (16 * wm), nTiles = n / (8 * wn);
    // Struct index of fragment element e (c0..c3) of tile (tm, s): rows
    // repeat every 8 * wm (index 2tm, 2tm + 1), column pairs every 8 * wn.
    auto index = [&](int64_t tm, int64_t s, int e) {
      return layout.linearIndex({unsigned(2 * tm + e / 2), unsigned(2 * s + e % 2)});
    };
    Fragments f = fragments(b, loc);
    // Warps are numbered along columns first (the layout's order).
    Value warpRow = mulConst(b, loc, divConst(b, loc, f.warp, wn), 8);
    Value warpCol = mulConst(b, loc, remConst(b, loc, f.warp, wn), 8);
    // Unrolled: ptxas schedules only within a block, and a loop over K
    // would expose each slice's ldmatrix latency before its MMAs (1024^3
    // mma.sync GEMM: 8.3 -> 8.1 us). Operands in shared memory bound the
    // code.
    SmallVector<Value> sums(acc);
    for (int64_t step = 0; step < k / 16; ++step) {
      Value k0 = i32Const(b, loc, 16 * step);
      auto bRegs = bFragments(b, loc, bBase, typeOfB(op), f, warpCol, 8 * wn, nTiles, k0);
      mmaTiles(b, loc, in, mTiles, bRegs, index, sums, [&](int64_t tm) {
        return aFragment(b, loc, a, typeOfA(op), f,
                         add(b, loc, warpRow, i32Const(b, loc, 16 * wm * tm)), 8 * wm, k0);
      });
    }
    return sums;
  }

  /// MMA with LaneBlocks fragments (MFMA 16x16x16), c in the accumulator
  /// layout: warp (i, j) of the wm x wn grid owns the 16x16 tiles at rows
  /// 16 (i + wm tm) and columns 16 (j + wn s); lane l loads a's row l % 16
  /// at k0 + 4 (l / 16) as one 8-byte vector and b's column l % 16 at the
  /// same four k; its results are its elements (4 tm + e, s) of c's layout.
  SmallVector<Value> laneBlockProduct(OpBuilder &b, Location loc, DotOp op, Type in, Value a,
                                      Value bBase, ArrayRef<Value> acc) const {
    auto [m, n, k] = dotShape(op);
    int64_t aPitch = sharedRowPitch(typeOfA(op)), bPitch = sharedRowPitch(typeOfB(op));
    TileLayout layout(op.getC().getType());
    ArrayRef<unsigned> grid = layout.getBlocked().getWarpsPerProgram();
    int64_t wm = grid[0], wn = grid[1];
    int64_t mTiles = m / (16 * wm), nTiles = n / (16 * wn);
    int64_t warpSize = tiles.target.getSpec().warpSize();
    Value tid = tiles.target.threadId(b, loc);
    Value warp = divConst(b, loc, tid, warpSize), lane = remConst(b, loc, tid, warpSize);
    Value line = remConst(b, loc, lane, 16);
    Value quad = mulConst(b, loc, divConst(b, loc, lane, 16), 4);
    Value row = add(b, loc, mulConst(b, loc, divConst(b, loc, warp, wn), 16), line);
    Value col = add(b, loc, mulConst(b, loc, remConst(b, loc, warp, wn), 16), line);
    auto vector4 = VectorType::get({4}, in);
    int64_t elementBytes = naturalAlignment(in);
    auto index = [&](int64_t tm, int64_t s, int e) {
      return layout.linearIndex({unsigned(4 * tm + e), unsigned(s)});
    };
    return tiles.lowering.forEach(
        b, loc, i32Const(b, loc, k / 16), acc, [&](Value step, ValueRange sums) {
          SmallVector<Value> next(sums.begin(), sums.end());
          Value k0 = add(b, loc, mulConst(b, loc, step, 16), quad);
          SmallVector<SmallVector<Value>> bRegs;
          for (int64_t s = 0; s < nTiles; ++s) {
            Value column = add(b, loc, col, i32Const(b, loc, 16 * wn * s));
            Value v = LLVM::PoisonOp::create(b, loc, vector4);
            for (int64_t j = 0; j < 4; ++j) {
              Value at = add(b, loc, mulConst(b, loc, add(b, loc, k0, i32Const(b, loc, j)), bPitch),
                             column);
              Value x = LLVM::LoadOp::create(b, loc, in, elementPtr(b, loc, bBase, in, at));
              v = LLVM::InsertElementOp::create(b, loc, v, x, i32Const(b, loc, j));
            }
            bRegs.push_back({v});
          }
          mmaTiles(b, loc, in, mTiles, bRegs, index, next, [&](int64_t tm) {
            Value r = add(b, loc, row, i32Const(b, loc, 16 * wm * tm));
            return SmallVector<Value>{LLVM::LoadOp::create(
                b, loc, vector4,
                elementPtr(b, loc, a, in, add(b, loc, mulConst(b, loc, r, aPitch), k0)),
                4 * elementBytes)};
          });
          return next;
        });
  }

  /// c in any other layout: the warps take the result's 16x8 tiles round
  /// robin, each from zero; the four sums per lane (rows group and
  /// group + 8, columns 2t and 2t + 1) go to a second scratch region, the
  /// program joins, and every thread adds the products at its elements of
  /// c's layout to c.
  SmallVector<Value> mmaProduct(OpBuilder &b, Location loc, DotOp op,
                                std::array<int64_t, 3> shape, Type in, Value a, Value bBase,
                                Value d, ArrayRef<Value> acc) const {
    const TargetInfo &target = tiles.target;
    RankedTensorType cType = op.getC().getType();
    int64_t m = typeOfA(op).getDimSize(0), k = typeOfA(op).getDimSize(1);
    int64_t n = typeOfB(op).getDimSize(1);
    auto [tm, tn, tk] = shape;
    int64_t warps = target.getOptions().numWarps;
    int64_t tilesN = n / tn, numTiles = (m / tm) * tilesN;
    Type f32 = b.getF32Type();
    Fragments f = fragments(b, loc);

    // Warp w computes tiles w, w + warps, ...; a trailing partial round
    // skips the warps past the last tile.
    int64_t rounds = llvm::divideCeil(numTiles, warps);
    tiles.lowering.forEach(b, loc, i32Const(b, loc, rounds), [&](Value round) {
      Value tile = add(b, loc, f.warp, mulConst(b, loc, round, warps));
      Value inRange = LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::ult, tile,
                                           i32Const(b, loc, numTiles));
      emitIf(b, loc, inRange, {}, [&] {
        Value tileRow = mulConst(b, loc, divConst(b, loc, tile, tilesN), tm);
        Value tileCol = mulConst(b, loc, remConst(b, loc, tile, tilesN), tn);
        Value row = add(b, loc, tileRow, f.group);
        Value row8 = add(b, loc, row, i32Const(b, loc, 8));
        Value col = add(b, loc, tileCol, f.pair);
        Value zero = LLVM::ConstantOp::create(b, loc, f32, b.getF32FloatAttr(0));
        SmallVector<Value> sums = tiles.lowering.forEach(
            b, loc, i32Const(b, loc, k / tk), SmallVector<Value>(4, zero),
            [&](Value step, ValueRange c) {
              Value k0 = mulConst(b, loc, step, tk);
              SmallVector<Value> aRegs = aFragment(b, loc, a, typeOfA(op), f, tileRow, 8, k0);
              auto bRegs = bFragments(b, loc, bBase, typeOfB(op), f, tileCol, tn, 1, k0);
              return target.mma(b, loc, in, aRegs, bRegs.front(), c);
            });
        Value col1 = add(b, loc, col, i32Const(b, loc, 1));
        Value at[4][2] = {{row, col}, {row, col1}, {row8, col}, {row8, col1}};
        for (int i = 0; i < 4; ++i)
          LLVM::StoreOp::create(
              b, loc, sums[i],
              elementPtr(b, loc, d, f32, add(b, loc, mulConst(b, loc, at[i][0], n), at[i][1])));
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

/// Where there is no warpgroup MMA (NVPTX/WarpgroupDotToLLVM.cpp), the sums
/// are in registers as they are.
struct DotWaitOpLowering : TileResultPattern<DotWaitOp> {
  using TileResultPattern::TileResultPattern;

  SmallVector<Value> lowerTile(DotWaitOp op, OpAdaptor adaptor,
                               ConversionPatternRewriter &rewriter) const override {
    return unpackTile(rewriter, op.getLoc(), adaptor.getSrc());
  }
};

} // namespace

void populateDotPatterns(const LLVMTypeConverter &converter, const TileLowering &tiles,
                         RewritePatternSet &patterns) {
  patterns.add<DotOpLowering, DotWaitOpLowering>(converter, tiles);
}

} // namespace weft
