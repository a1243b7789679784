//===- DotToLLVM.cpp - weft.dot, the portable lowering --------------------===//
//
// Every thread stores the elements of a and b it holds into the scratch
// area at their row-major positions (shared memory on GPUs, the stack on
// the host), the program joins, and every thread computes the elements of
// the result it holds, c[m][n] + sum over k of a[m][k] * b[k][n], in f32,
// in a loop over k that carries its accumulators. Correct on every target
// and for every layout; tensor-core instruction selection is a faster
// lowering for the layouts it supports.
//
//===----------------------------------------------------------------------===//
#include "LoweringUtils.h"
#include "TileLowering.h"

using namespace mlir;

namespace weft {
namespace {

struct DotOpLowering : TileResultPattern<DotOp> {
  using TileResultPattern::TileResultPattern;

  SmallVector<Value> lowerTile(DotOp op, OpAdaptor adaptor,
                               ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType aType = op.getA().getType(), bType = op.getB().getType();
    RankedTensorType cType = op.getC().getType();
    int64_t m = aType.getDimSize(0), k = aType.getDimSize(1), n = bType.getDimSize(1);
    Type in = getTypeConverter()->convertType(aType.getElementType());
    Type f32 = rewriter.getF32Type();
    const TargetInfo &target = tiles.target;

    SmallVector<Value> aIn = unpackTile(rewriter, loc, adaptor.getA());
    SmallVector<Value> bIn = unpackTile(rewriter, loc, adaptor.getB());
    SmallVector<Value> acc = unpackTile(rewriter, loc, adaptor.getC());
    auto write = [&](Value buffer) {
      auto store = [&](RankedTensorType type, ArrayRef<Value> elements, Value base) {
        for (auto [element, coords] :
             llvm::zip(elements, TileLayout(type).emitCoordinates(rewriter, loc, target)))
          LLVM::StoreOp::create(
              rewriter, loc, element,
              elementPtr(rewriter, loc, base, in,
                         linearize(rewriter, loc, coords, type.getShape())));
      };
      store(aType, aIn, buffer);
      store(bType, bIn, elementPtr(rewriter, loc, buffer, in, i32Const(rewriter, loc, m * k)));
    };
    auto read = [&](Value buffer) {
      Value bBase = elementPtr(rewriter, loc, buffer, in, i32Const(rewriter, loc, m * k));
      auto coords = TileLayout(cType).emitCoordinates(rewriter, loc, target);
      Value kConst = i32Const(rewriter, loc, k), nConst = i32Const(rewriter, loc, n);
      auto widen = [&](Value v) -> Value {
        return in == f32 ? v : LLVM::FPExtOp::create(rewriter, loc, f32, v);
      };
      return tiles.lowering.forEach(
          rewriter, loc, kConst, acc, [&](Value kk, ValueRange sums) {
            SmallVector<Value> next;
            for (auto [sum, mn] : llvm::zip(sums, coords)) {
              Value aIndex = LLVM::AddOp::create(
                  rewriter, loc, LLVM::MulOp::create(rewriter, loc, mn[0], kConst), kk);
              Value bIndex = LLVM::AddOp::create(
                  rewriter, loc, LLVM::MulOp::create(rewriter, loc, kk, nConst), mn[1]);
              Value a = LLVM::LoadOp::create(rewriter, loc, in,
                                             elementPtr(rewriter, loc, buffer, in, aIndex));
              Value b = LLVM::LoadOp::create(rewriter, loc, in,
                                             elementPtr(rewriter, loc, bBase, in, bIndex));
              next.push_back(LLVM::FMulAddOp::create(rewriter, loc, widen(a), widen(b), sum));
            }
            return next;
          });
    };
    return tiles.exchange(rewriter, loc, op, write, read);
  }
};

} // namespace

void populateDotPatterns(const LLVMTypeConverter &converter, const TileLowering &tiles,
                         RewritePatternSet &patterns) {
  patterns.add<DotOpLowering>(converter, tiles);
}

} // namespace weft
