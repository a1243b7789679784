//===- ScanToLLVM.cpp - weft.scan on distributed tiles --------------------===//
//
// weft-assign-layouts gives a scan's operands a layout in which every
// thread holds whole lines along the axis (lanes and warps spread the other
// dimensions, or hold replicas that scan the same line): each thread then
// scans its lines in order, combining tuples of the operands' elements with
// a copy of the combine region per step.
//
//===----------------------------------------------------------------------===//
#include "TileLowering.h"

using namespace mlir;

namespace weft {
namespace {

struct ScanOpLowering : TilePattern<ScanOp> {
  using TilePattern::TilePattern;

  LogicalResult matchAndRewrite(ScanOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    RankedTensorType type = op.getSrcType();
    if (!isDistributed(type))
      return failure();
    TileLayout layout(type);
    unsigned axis = op.getAxis();
    int64_t length = type.getDimSize(axis);
    if (layout.getSliceDim() >= 0 || layout.elementsPerDim()[axis] != length)
      return op.emitOpError("scans lines held within each thread (weft-assign-layouts "
                            "gives its operands such a layout)");
    Location loc = op.getLoc();
    SmallVector<SmallVector<Value>> out;
    for (Value src : adaptor.getSrcs())
      out.push_back(unpackTile(rewriter, loc, src));
    Combiner combine(rewriter, op.getCombine().front());
    auto tupleAt = [&](unsigned i) {
      SmallVector<Value> tuple;
      for (auto &elements : out)
        tuple.push_back(elements[i]);
      return tuple;
    };
    for (unsigned i = 0; i < layout.numElements(); ++i) {
      SmallVector<unsigned> multi = layout.multiIndex(i);
      if (multi[axis] != 0)
        continue;
      // Positions along the line in the order they combine.
      SmallVector<unsigned> line;
      for (int64_t k = 0; k < length; ++k) {
        multi[axis] = op.getReverse() ? length - 1 - k : k;
        line.push_back(layout.linearIndex(multi));
      }
      SmallVector<Value> acc = tupleAt(line.front());
      for (unsigned at : ArrayRef(line).drop_front()) {
        acc = combine(acc, tupleAt(at));
        for (auto [k, value] : llvm::enumerate(acc))
          out[k][at] = value;
      }
    }
    SmallVector<Value> results;
    for (auto [k, elements] : llvm::enumerate(out))
      results.push_back(packTile(rewriter, loc,
                                 getTypeConverter()->convertType(op.getResult(k).getType()),
                                 elements));
    rewriter.replaceOp(op, results);
    return success();
  }
};

} // namespace

void populateScanPatterns(const LLVMTypeConverter &converter, const TileLowering &tiles,
                          RewritePatternSet &patterns) {
  patterns.add<ScanOpLowering>(converter, tiles);
}

} // namespace weft
