//===- TileOps.cpp - verifiers of the tile (shape) operations -------------===//
//
// Layout rules are checked only once tensors carry layouts (after
// weft-assign-layouts); before, every tensor is plain and only shapes and
// element types matter.
//
//===----------------------------------------------------------------------===//
#include "weft/Dialect/Weft/IR/Dialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

using namespace mlir;
using namespace weft;

LogicalResult weft::verifyTileShapes(Operation *op) {
  for (Type type : llvm::concat<Type>(op->getOperandTypes(), op->getResultTypes())) {
    auto tile = dyn_cast<RankedTensorType>(type);
    if (!tile)
      continue;
    for (int64_t dim : tile.getShape())
      if (ShapedType::isDynamic(dim) || !llvm::isPowerOf2_64(dim))
        return op->emitOpError() << "tile " << type
                                 << ": every dimension must be a power of two";
    if (tile.getNumElements() > kMaxTileElements)
      return op->emitOpError() << "tile " << type << " has " << tile.getNumElements()
                               << " elements; a tile has at most " << kMaxTileElements;
  }
  return success();
}

static Attribute layoutOf(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor ? tensor.getEncoding() : Attribute();
}

/// Either both tensors are distributed or neither is.
static LogicalResult checkBothOrNeither(Operation *op, Type a, Type b) {
  if (!layoutOf(a) != !layoutOf(b))
    return op->emitOpError(
        "operand and result must both have layouts or both have none");
  return success();
}

static LogicalResult checkSameElement(Operation *op, Type src, Type result) {
  if (getElementTypeOrSelf(src) != getElementTypeOrSelf(result))
    return op->emitOpError() << "result element type "
                             << getElementTypeOrSelf(result)
                             << " differs from the source's "
                             << getElementTypeOrSelf(src);
  return success();
}

LogicalResult MakeRangeOp::verify() {
  auto type = getResult().getType();
  int64_t start = getStart(), end = getEnd();
  if (type.getRank() != 1)
    return emitOpError("result must be a 1-D tensor of i32");
  if (end <= start)
    return emitOpError() << "empty range [" << start << ", " << end << ")";
  if (type.getDimSize(0) != end - start)
    return emitOpError() << "range [" << start << ", " << end << ") has "
                         << end - start << " elements but the result has "
                         << type.getDimSize(0);
  return success();
}

LogicalResult SplatOp::verify() {
  return checkSameElement(*this, getSrc().getType(), getResult().getType());
}

LogicalResult BroadcastOp::verify() {
  auto src = cast<RankedTensorType>(getSrc().getType());
  auto result = cast<RankedTensorType>(getResult().getType());
  if (failed(checkSameElement(*this, src, result)))
    return failure();
  if (src.getRank() != result.getRank())
    return emitOpError() << "cannot broadcast a rank-" << src.getRank()
                         << " tile to rank " << result.getRank()
                         << "; use weft.expand_dims first";
  for (int64_t d = 0; d < src.getRank(); ++d)
    if (src.getDimSize(d) != 1 && src.getDimSize(d) != result.getDimSize(d))
      return emitOpError() << "dimension " << d << " of size "
                           << src.getDimSize(d) << " cannot broadcast to "
                           << result.getDimSize(d);
  if (src.getEncoding() != result.getEncoding())
    return emitOpError("source and result must have the same layout");
  return success();
}

LogicalResult ExpandDimsOp::verify() {
  auto src = cast<RankedTensorType>(getSrc().getType());
  auto result = cast<RankedTensorType>(getResult().getType());
  if (failed(checkSameElement(*this, src, result)))
    return failure();
  int64_t axis = getAxis();
  if (axis < 0 || axis > src.getRank())
    return emitOpError() << "axis " << axis << " is out of range for a rank-"
                         << src.getRank() << " tile";
  SmallVector<int64_t> expected(src.getShape());
  expected.insert(expected.begin() + axis, 1);
  if (result.getShape() != ArrayRef<int64_t>(expected))
    return emitOpError("result shape must be the source's with a 1 inserted "
                       "at the axis");
  if (failed(checkBothOrNeither(*this, src, result)))
    return failure();
  if (Attribute parent = result.getEncoding()) {
    auto slice = dyn_cast<SliceEncodingAttr>(src.getEncoding());
    if (!slice || slice.getDim() != axis || slice.getParent() != parent)
      return emitOpError("source layout must be the result's layout sliced "
                         "at the axis");
  }
  return success();
}

LogicalResult ReshapeOp::verify() {
  auto src = cast<RankedTensorType>(getSrc().getType());
  auto result = cast<RankedTensorType>(getResult().getType());
  if (failed(checkSameElement(*this, src, result)) ||
      failed(checkBothOrNeither(*this, src, result)))
    return failure();
  if (src.getNumElements() != result.getNumElements())
    return emitOpError() << "cannot reshape " << src.getNumElements()
                         << " elements into " << result.getNumElements();
  return success();
}

LogicalResult DotOp::verify() {
  auto a = cast<ShapedType>(getA().getType()), b = cast<ShapedType>(getB().getType());
  RankedTensorType c = getC().getType(), result = getResult().getType();
  if (a.getRank() != 2 || b.getRank() != 2 || c.getRank() != 2)
    return emitOpError("multiplies 2-D tiles");
  if (a.getDimSize(1) != b.getDimSize(0))
    return emitOpError() << "a is " << a.getDimSize(0) << "x" << a.getDimSize(1)
                         << " but b is " << b.getDimSize(0) << "x"
                         << b.getDimSize(1) << ": their K differ";
  if (c.getShape() != ArrayRef<int64_t>{a.getDimSize(0), b.getDimSize(1)})
    return emitOpError() << "c must be " << a.getDimSize(0) << "x"
                         << b.getDimSize(1) << " (a's rows by b's columns)";
  Type in = a.getElementType();
  if (in != b.getElementType())
    return emitOpError() << "a is " << in << " but b is " << b.getElementType();
  if (!in.isF16() && !in.isBF16() && !in.isF32())
    return emitOpError() << "multiplies f16, bf16 or f32 tiles, not " << in;
  if (!c.getElementType().isF32())
    return emitOpError("accumulates in f32: c must be an f32 tile");
  if (result.getShape() != c.getShape() ||
      result.getElementType() != c.getElementType() ||
      result.getEncoding() != c.getEncoding())
    return emitOpError("result must have c's type");
  // Shared-memory operands have no layout; tiles follow c.
  auto tileLayoutDiffers = [&](ShapedType operand) {
    auto tile = dyn_cast<RankedTensorType>(operand);
    return tile && !layoutOf(tile) != !layoutOf(c);
  };
  if (tileLayoutDiffers(a) || tileLayoutDiffers(b))
    return emitOpError("operands must all have layouts or all have none");
  return success();
}

LogicalResult AsyncCopyOp::verify() {
  auto ptr = cast<RankedTensorType>(getPtr().getType());
  SharedType dst = getDst().getType();
  if (ptr.getShape() != dst.getShape() || getPointeeType(ptr.getElementType()) != dst.getElementType())
    return emitOpError() << "copies a tile of " << ptr.getElementType() << " into " << dst
                         << ": shapes and element types must match";
  return success();
}

//===----------------------------------------------------------------------===//
// Tensor descriptors
//===----------------------------------------------------------------------===//

/// `tile` is one block of `desc` (any layout), addressed by one offset per
/// dimension.
static LogicalResult checkBlock(Operation *op, TensorDescType desc, ValueRange offsets,
                                ShapedType tile, StringRef what) {
  if (offsets.size() != desc.getRank())
    return op->emitOpError() << "takes " << desc.getRank() << " offsets for " << desc
                             << ", got " << offsets.size();
  if (tile.getShape() != desc.getBlockShape() || tile.getElementType() != desc.getElementType())
    return op->emitOpError() << what << " " << tile << " is not a block of " << desc;
  return success();
}

LogicalResult DescLoadOp::verify() {
  return checkBlock(*this, getDesc().getType(), getOffsets(), getResult().getType(), "result");
}

LogicalResult DescStoreOp::verify() {
  return checkBlock(*this, getDesc().getType(), getOffsets(), getValue().getType(), "value");
}

LogicalResult DescAsyncCopyOp::verify() {
  return checkBlock(*this, getDesc().getType(), getOffsets(), getDst().getType(), "buffer");
}

LogicalResult MBarrierWaitOp::verify() {
  if (getCopier() && getJoin())
    return emitOpError("waits in the copying thread alone, so it cannot join the program");
  return success();
}

LogicalResult DescBaseOp::verify() {
  PtrType ptr = getResult().getType();
  if (ptr.getMulticast() || ptr.getPointee() != getDesc().getType().getElementType())
    return emitOpError() << "yields a unicast pointer to "
                         << getDesc().getType().getElementType();
  return success();
}

template <typename Op>
static LogicalResult checkDim(Op op) {
  if (op.getDim() >= op.getDesc().getType().getRank())
    return op.emitOpError() << "dimension " << op.getDim() << " is outside "
                            << op.getDesc().getType();
  return success();
}

LogicalResult DescDimOp::verify() { return checkDim(*this); }
LogicalResult DescStrideOp::verify() { return checkDim(*this); }

LogicalResult ConvertLayoutOp::verify() {
  auto src = cast<RankedTensorType>(getSrc().getType());
  auto result = cast<RankedTensorType>(getResult().getType());
  if (failed(checkSameElement(*this, src, result)))
    return failure();
  if (src.getShape() != result.getShape())
    return emitOpError("cannot change the shape; use weft.reshape");
  if (!src.getEncoding() || !result.getEncoding())
    return emitOpError("converts between layouts: both types need one");
  return success();
}

/// The operands of a reduce or scan share one shape and layout; `axis` is
/// one of their dimensions; the combine region takes two elements of each
/// (the first's, then the second's) and returns one of each.
static LogicalResult checkCombining(Operation *op, ValueRange srcs, int64_t axis,
                                    Region &combine, ValueRange returned) {
  if (srcs.empty())
    return op->emitOpError("needs at least one operand");
  auto first = cast<RankedTensorType>(srcs.front().getType());
  SmallVector<Type> elems;
  for (Value src : srcs) {
    auto type = cast<RankedTensorType>(src.getType());
    if (type.getShape() != first.getShape() || type.getEncoding() != first.getEncoding())
      return op->emitOpError("operands must share one shape and layout");
    elems.push_back(type.getElementType());
  }
  if (axis < 0 || axis >= first.getRank())
    return op->emitOpError() << "axis " << axis << " is out of range for a rank-"
                             << first.getRank() << " tile";
  Block &body = combine.front();
  SmallVector<Type> args(elems);
  llvm::append_range(args, elems);
  if (body.getArgumentTypes() != TypeRange(args))
    return op->emitOpError("combine region takes two elements of each operand");
  if (TypeRange(returned) != TypeRange(elems))
    return op->emitOpError("combine region must return one element of each operand");
  return success();
}

LogicalResult ReduceOp::verifyRegions() {
  int64_t axis = getAxis();
  auto ret = cast<ReduceReturnOp>(getCombine().front().getTerminator());
  if (failed(checkCombining(*this, getSrcs(), axis, getCombine(), ret.getResults())))
    return failure();
  if (getResults().size() != getSrcs().size())
    return emitOpError("yields one result per operand");
  for (auto [src, result] : llvm::zip(getSrcs(), getResults())) {
    auto srcType = cast<RankedTensorType>(src.getType());
    Type elem = srcType.getElementType();
    Type type = result.getType();
    if (srcType.getRank() == 1) {
      if (type != elem)
        return emitOpError() << "reducing a 1-D tile yields a scalar " << elem;
      continue;
    }
    auto tensor = dyn_cast<RankedTensorType>(type);
    SmallVector<int64_t> expected(srcType.getShape());
    expected.erase(expected.begin() + axis);
    if (!tensor || tensor.getElementType() != elem ||
        tensor.getShape() != ArrayRef<int64_t>(expected))
      return emitOpError("results must be the operands without the reduced axis");
    if (failed(checkBothOrNeither(*this, srcType, tensor)))
      return failure();
    if (srcType.getEncoding() &&
        tensor.getEncoding() != SliceEncodingAttr::get(getContext(), axis, srcType.getEncoding()))
      return emitOpError("result layout must be the source layout sliced at the axis");
  }
  return success();
}

LogicalResult WarpSpecializeOp::verifyRegions() {
  // The producer warps have no part in the program's tiles (layouts
  // distribute them over its own warps).
  WalkResult tiles = getProducerRegion().walk([](Operation *op) {
    return holdsTiles(op) ? WalkResult::interrupt() : WalkResult::advance();
  });
  if (tiles.wasInterrupted())
    return emitOpError("producer region holds tiles");
  // Nothing follows it but the return: the producer warps leave there.
  Operation *next = (*this)->getNextNode();
  if (!next || !next->hasTrait<OpTrait::IsTerminator>() ||
      !isa<FunctionOpInterface>((*this)->getParentOp()))
    return emitOpError("must be the last op of its function");
  return success();
}

LogicalResult ScanOp::verifyRegions() {
  auto ret = cast<ScanReturnOp>(getCombine().front().getTerminator());
  if (failed(checkCombining(*this, getSrcs(), getAxis(), getCombine(), ret.getResults())))
    return failure();
  if (getResults().getTypes() != getSrcs().getTypes())
    return emitOpError("results have the operands' types");
  return success();
}

LogicalResult TransOp::verify() {
  auto src = cast<RankedTensorType>(getSrc().getType());
  auto result = cast<RankedTensorType>(getResult().getType());
  ArrayRef<int32_t> order = getOrder();
  SmallVector<int32_t> sorted(order);
  llvm::sort(sorted);
  if (int64_t(order.size()) != src.getRank() ||
      llvm::any_of(llvm::enumerate(sorted), [](auto e) { return e.value() != int32_t(e.index()); }))
    return emitOpError("order must be a permutation of the source's dimensions");
  if (failed(checkSameElement(*this, src, result)) ||
      failed(checkBothOrNeither(*this, src, result)))
    return failure();
  for (auto [d, from] : llvm::enumerate(order))
    if (result.getDimSize(d) != src.getDimSize(from))
      return emitOpError() << "result dimension " << d << " must be the source's dimension "
                           << from;
  if (auto blocked = dyn_cast_or_null<BlockedEncodingAttr>(src.getEncoding());
      blocked && result.getEncoding() != transposedLayout(blocked, order))
    return emitOpError("result layout must be the source's, permuted");
  if (src.getEncoding() && !isa<BlockedEncodingAttr>(src.getEncoding()))
    return emitOpError("transposes a blocked layout");
  return success();
}

LogicalResult JoinOp::verify() {
  auto src = cast<RankedTensorType>(getLhs().getType());
  auto result = cast<RankedTensorType>(getResult().getType());
  SmallVector<int64_t> shape(src.getShape());
  shape.push_back(2);
  if (failed(checkSameElement(*this, src, result)) ||
      failed(checkBothOrNeither(*this, src, result)))
    return failure();
  if (result.getShape() != ArrayRef<int64_t>(shape))
    return emitOpError("result is the operands' shape with a last dimension of 2");
  if (!src.getEncoding())
    return success();
  auto blocked = dyn_cast<BlockedEncodingAttr>(src.getEncoding());
  if (!blocked || result.getEncoding() != joinedLayout(blocked))
    return emitOpError("result layout must be the operands' blocked layout with the new "
                       "dimension in each thread");
  return success();
}

LogicalResult SplitOp::verify() {
  auto src = cast<RankedTensorType>(getSrc().getType());
  auto result = cast<RankedTensorType>(getLhs().getType());
  if (failed(checkSameElement(*this, src, result)) ||
      failed(checkBothOrNeither(*this, src, result)))
    return failure();
  if (src.getRank() < 2 || src.getShape().back() != 2 ||
      result.getShape() != src.getShape().drop_back())
    return emitOpError("splits a last dimension of 2 off");
  if (!src.getEncoding())
    return success();
  auto blocked = dyn_cast<BlockedEncodingAttr>(src.getEncoding());
  BlockedEncodingAttr expected = blocked ? splitLayout(blocked) : BlockedEncodingAttr();
  if (!expected)
    return emitOpError("the source's last dimension must be held within each thread");
  if (result.getEncoding() != expected)
    return emitOpError("result layout must be the source's without its last dimension");
  return success();
}

LogicalResult FlipOp::verify() {
  int64_t rank = cast<RankedTensorType>(getSrc().getType()).getRank();
  if (static_cast<int64_t>(getAxis()) >= rank)
    return emitOpError() << "axis " << getAxis() << " is out of range for a rank-" << rank
                         << " tile";
  return success();
}
