//===- ExpandTensorDescs.cpp - descriptor blocks as masked tile accesses --===//
//
// A block of a tensor descriptor that no bulk tensor copy moves (every
// block on targets without them, and on sm_90 those outside pipelined K
// loops) becomes a masked access through a tile of pointers computed from
// the descriptor's plain fields. The layout assignment, the axis analysis
// and the vectorised tile accesses then treat it like any other tile
// (docs/tile-ir.md, "Tensor descriptors").
//
//===----------------------------------------------------------------------===//
#include "ExpandTensorDescs.h"

#include "weft/Dialect/Weft/Distribution/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/PatternMatch.h"

namespace weft {
#define GEN_PASS_DEF_WEFTEXPANDTENSORDESCS
#include "weft/Dialect/Weft/Distribution/Passes.h.inc"
} // namespace weft

using namespace mlir;

namespace weft {

namespace {

/// The addresses of the block of `desc` at `offsets`, and where they lie
/// inside the tensor. Coordinates are i32 like the offsets; the offsets
/// from the base are i64, since a tensor may span more than 2^31 elements.
std::pair<Value, Value> blockAccess(OpBuilder &b, Location loc, TypedValue<TensorDescType> desc,
                                    ValueRange offsets) {
  TensorDescType type = desc.getType();
  ArrayRef<int64_t> shape = type.getBlockShape();
  unsigned rank = type.getRank();
  Type i32 = b.getI32Type(), i64 = b.getI64Type();
  auto tile = [&](Type elem) { return RankedTensorType::get(shape, elem); };
  Value offset, inside;
  for (unsigned d = 0; d < rank; ++d) {
    // offsets[d] + arange(shape[d]), shaped 1 x .. x shape[d] x .. x 1,
    // then broadcast over the block.
    auto line = RankedTensorType::get({shape[d]}, i32);
    Value coord = arith::AddIOp::create(b, loc, SplatOp::create(b, loc, line, offsets[d]),
                                        MakeRangeOp::create(b, loc, line, 0, shape[d]));
    SmallVector<int64_t> expanded(rank, 1);
    expanded[d] = shape[d];
    auto lineType = RankedTensorType::get(expanded, i32);
    if (rank <= 2) {
      // A slice of the block's layout: the analysis sees the run.
      if (rank == 2)
        coord = ExpandDimsOp::create(b, loc, lineType, coord, b.getI32IntegerAttr(1 - d));
    } else {
      // Slices of slices have no layout: deeper blocks take a reshape.
      coord = ReshapeOp::create(b, loc, lineType, coord);
    }
    coord = BroadcastOp::create(b, loc, tile(i32), coord);
    Value wide = arith::ExtSIOp::create(b, loc, tile(i64), coord);
    // Unsigned: a negative coordinate is outside too.
    Value dim = DescDimOp::create(b, loc, desc, d);
    Value in = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, wide,
                                     SplatOp::create(b, loc, tile(i64), dim));
    inside = inside ? arith::AndIOp::create(b, loc, inside, in).getResult() : in;
    // The last stride is 1 (the encoder checks it): keeping the product
    // out keeps the run of consecutive addresses visible to the analysis.
    Value term = wide;
    if (d + 1 < rank)
      term = arith::MulIOp::create(b, loc, wide,
                                   SplatOp::create(b, loc, tile(i64),
                                                   DescStrideOp::create(b, loc, desc, d)));
    offset = offset ? arith::AddIOp::create(b, loc, offset, term).getResult() : term;
  }
  auto ptrType = PtrType::get(type.getElementType());
  Value base = SplatOp::create(b, loc, tile(ptrType), DescBaseOp::create(b, loc, ptrType, desc));
  return {AddPtrOp::create(b, loc, tile(ptrType), base, offset), inside};
}

} // namespace

LoadOp expandDescLoad(RewriterBase &rewriter, DescLoadOp op) {
  rewriter.setInsertionPoint(op);
  auto [ptrs, inside] = blockAccess(rewriter, op.getLoc(), op.getDesc(), op.getOffsets());
  Value zero = arith::ConstantOp::create(
      rewriter, op.getLoc(), rewriter.getZeroAttr(op.getResult().getType()));
  return rewriter.replaceOpWithNewOp<LoadOp>(op, op.getResult().getType(), ptrs, inside, zero,
                                             MemOrder::weak, MemScope::sys);
}

namespace {

void expandDescStore(RewriterBase &rewriter, DescStoreOp op) {
  rewriter.setInsertionPoint(op);
  auto [ptrs, inside] = blockAccess(rewriter, op.getLoc(), op.getDesc(), op.getOffsets());
  rewriter.replaceOpWithNewOp<StoreOp>(op, ptrs, op.getValue(), inside, MemOrder::weak,
                                       MemScope::sys);
}

struct WeftExpandTensorDescs : impl::WeftExpandTensorDescsBase<WeftExpandTensorDescs> {
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    getOperation()->walk([&](Operation *op) {
      if (auto load = dyn_cast<DescLoadOp>(op))
        expandDescLoad(rewriter, load);
      else if (auto store = dyn_cast<DescStoreOp>(op); store && !store.getBulk())
        expandDescStore(rewriter, store);
    });
  }
};

} // namespace
} // namespace weft
