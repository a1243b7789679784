//===- RearrangeToLLVM.cpp - weft.trans, join, split and flip -------------===//
//
// trans, join and split keep every element in its thread: their layouts
// (transposedLayout, joinedLayout, splitLayout) are made so, and the
// lowering only reorders the struct of each thread's elements. flip moves
// elements between threads: through shared memory, or on the host (one
// thread per program) by reordering at compile time.
//
//===----------------------------------------------------------------------===//
#include "LoweringUtils.h"
#include "TileLowering.h"

using namespace mlir;

namespace weft {
namespace {

struct TransOpLowering : TileResultPattern<TransOp> {
  using TileResultPattern::TileResultPattern;
  SmallVector<Value> lowerTile(TransOp op, OpAdaptor adaptor,
                               ConversionPatternRewriter &rewriter) const override {
    TileLayout src(op.getSrc().getType()), dst(op.getType());
    SmallVector<Value> in = unpackTile(rewriter, op.getLoc(), adaptor.getSrc());
    SmallVector<Value> out;
    for (unsigned i = 0; i < dst.numElements(); ++i) {
      SmallVector<unsigned> multi = dst.multiIndex(i), from(multi.size());
      for (auto [d, source] : llvm::enumerate(op.getOrder()))
        from[source] = multi[d];
      out.push_back(in[src.linearIndex(from)]);
    }
    return out;
  }
};

struct JoinOpLowering : TileResultPattern<JoinOp> {
  using TileResultPattern::TileResultPattern;
  SmallVector<Value> lowerTile(JoinOp op, OpAdaptor adaptor,
                               ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    TileLayout src(op.getLhs().getType()), dst(op.getType());
    SmallVector<Value> halves[] = {unpackTile(rewriter, loc, adaptor.getLhs()),
                                   unpackTile(rewriter, loc, adaptor.getRhs())};
    SmallVector<Value> out;
    for (unsigned i = 0; i < dst.numElements(); ++i) {
      SmallVector<unsigned> multi = dst.multiIndex(i);
      unsigned half = multi.pop_back_val();
      out.push_back(halves[half][src.linearIndex(multi)]);
    }
    return out;
  }
};

struct SplitOpLowering : TilePattern<SplitOp> {
  using TilePattern::TilePattern;
  LogicalResult matchAndRewrite(SplitOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    if (!isDistributed(op.getSrc().getType()))
      return failure();
    Location loc = op.getLoc();
    TileLayout src(op.getSrc().getType()), dst(op.getLhs().getType());
    SmallVector<Value> in = unpackTile(rewriter, loc, adaptor.getSrc());
    Type type = getTypeConverter()->convertType(op.getLhs().getType());
    SmallVector<Value> results;
    for (unsigned half = 0; half < 2; ++half) {
      SmallVector<Value> out;
      for (unsigned i = 0; i < dst.numElements(); ++i) {
        SmallVector<unsigned> multi = dst.multiIndex(i);
        multi.push_back(half);
        out.push_back(in[src.linearIndex(multi)]);
      }
      results.push_back(packTile(rewriter, loc, type, out));
    }
    rewriter.replaceOp(op, results);
    return success();
  }
};

struct FlipOpLowering : TileResultPattern<FlipOp> {
  using TileResultPattern::TileResultPattern;
  SmallVector<Value> lowerTile(FlipOp op, OpAdaptor adaptor,
                               ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto srcType = cast<RankedTensorType>(op.getSrc().getType());
    auto dstType = cast<RankedTensorType>(op.getType());
    TileLayout src(srcType), dst(dstType);
    ArrayRef<int64_t> shape = srcType.getShape();
    unsigned axis = op.getAxis();
    SmallVector<Value> in = unpackTile(rewriter, loc, adaptor.getSrc());
    auto rowMajor = [&](ArrayRef<int64_t> coords) {
      int64_t index = 0;
      for (auto [c, size] : llvm::zip(coords, shape))
        index = index * size + c;
      return index;
    };
    if (src.isThreadLocal() && dst.isThreadLocal()) {
      DenseMap<int64_t, Value> byPosition;
      for (unsigned i = 0; i < src.numElements(); ++i)
        byPosition.try_emplace(rowMajor(src.constantCoordinates(i)), in[i]);
      SmallVector<Value> out;
      for (unsigned i = 0; i < dst.numElements(); ++i) {
        SmallVector<int64_t> coords = dst.constantCoordinates(i);
        coords[axis] = shape[axis] - 1 - coords[axis];
        out.push_back(byPosition.lookup(rowMajor(coords)));
      }
      return out;
    }
    Type elemType = getTypeConverter()->convertType(srcType.getElementType());
    auto write = [&](Value buffer) {
      tiles.storeRowMajor(rewriter, loc, buffer, elemType, srcType, in);
    };
    auto read = [&](Value buffer) {
      SmallVector<Value> out;
      for (SmallVector<Value> coords : emitCoordinates(rewriter, loc, dst, tiles.target)) {
        coords[axis] = LLVM::SubOp::create(rewriter, loc, i32Const(rewriter, loc, shape[axis] - 1),
                                           coords[axis]);
        Value ptr = elementPtr(rewriter, loc, buffer, elemType, linearize(rewriter, loc, coords, shape));
        out.push_back(LLVM::LoadOp::create(rewriter, loc, elemType, ptr));
      }
      return out;
    };
    return tiles.exchange(rewriter, loc, op, write, read);
  }
};

} // namespace

void populateRearrangePatterns(const LLVMTypeConverter &converter, const TileLowering &tiles,
                               RewritePatternSet &patterns) {
  patterns.add<TransOpLowering, JoinOpLowering, SplitOpLowering, FlipOpLowering>(converter,
                                                                                 tiles);
}

} // namespace weft
