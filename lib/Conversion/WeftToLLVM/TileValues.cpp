//===- TileValues.cpp - the per-thread values of distributed tiles ---------===//
#include "TileValues.h"

#include "LoweringUtils.h"

using namespace mlir;

namespace weft {

namespace {

/// Index of this thread along each dimension of `counts` (threads per warp
/// or warps per program), numbered along `order`.
SmallVector<Value> delinearize(OpBuilder &b, Location loc, Value linear,
                                      ArrayRef<unsigned> counts,
                                      ArrayRef<unsigned> order) {
  SmallVector<Value> out(counts.size());
  for (unsigned d : order) {
    out[d] = remConst(b, loc, linear, counts[d]);
    linear = divConst(b, loc, linear, counts[d]);
  }
  return out;
}

/// The first coordinate this thread holds along each parent dimension,
/// before wrapping.
SmallVector<Value> emitThreadBase(OpBuilder &b, Location loc, const TileLayout &layout,
                                  const TargetInfo &target) {
  BlockedEncodingAttr blocked = layout.getBlocked();
  unsigned rank = layout.getParentShape().size();
  SmallVector<Value> base(rank);
  if (layout.isThreadLocal()) {
    for (unsigned d = 0; d < rank; ++d)
      base[d] = i32Const(b, loc, 0);
    return base;
  }
  Value tid = target.threadId(b, loc);
  Value warpSize = i32Const(b, loc, target.getSpec().warpSize());
  Value lane = LLVM::URemOp::create(b, loc, tid, warpSize);
  Value warp = LLVM::UDivOp::create(b, loc, tid, warpSize);
  auto lanes = delinearize(b, loc, lane, blocked.getThreadsPerWarp(),
                           blocked.getOrder());
  auto warps = delinearize(b, loc, warp, blocked.getWarpsPerProgram(),
                           blocked.getOrder());
  for (unsigned d = 0; d < rank; ++d) {
    Value thread = LLVM::AddOp::create(
        b, loc,
        LLVM::MulOp::create(b, loc, warps[d],
                            i32Const(b, loc, blocked.getThreadsPerWarp()[d])),
        lanes[d]);
    base[d] = LLVM::MulOp::create(
        b, loc, thread, i32Const(b, loc, blocked.getSizePerThread()[d]));
  }
  return base;
}

} // namespace

SmallVector<SmallVector<Value>> emitCoordinates(OpBuilder &b, Location loc,
                                                const TileLayout &layout,
                                                const TargetInfo &target) {
  SmallVector<Value> base = emitThreadBase(b, loc, layout, target);
  ArrayRef<int64_t> shape = layout.getParentShape();
  SmallVector<SmallVector<Value>> coords;
  for (unsigned i = 0; i < layout.numElements(); ++i) {
    SmallVector<unsigned> multi = layout.multiIndex(i);
    SmallVector<Value> element;
    for (unsigned d = 0; d < shape.size(); ++d) {
      if (int(d) == layout.getSliceDim())
        continue;
      Value c = LLVM::AddOp::create(b, loc, base[d],
                                    i32Const(b, loc, layout.offsetInThread(d, multi[d])));
      element.push_back(
          LLVM::AndOp::create(b, loc, c, i32Const(b, loc, shape[d] - 1)));
    }
    coords.push_back(std::move(element));
  }
  return coords;
}

SmallVector<Value> emitOwnership(OpBuilder &b, Location loc, const TileLayout &layout,
                                 const TargetInfo &target) {
  SmallVector<Value> base = emitThreadBase(b, loc, layout, target);
  ArrayRef<int64_t> shape = layout.getParentShape();
  SmallVector<Value> owned;
  for (unsigned i = 0; i < layout.numElements(); ++i) {
    SmallVector<unsigned> multi = layout.multiIndex(i);
    Value all = LLVM::ConstantOp::create(b, loc, b.getI1Type(), 1);
    for (unsigned d = 0; d < shape.size(); ++d) {
      Value c = LLVM::AddOp::create(b, loc, base[d],
                                    i32Const(b, loc, layout.offsetInThread(d, multi[d])));
      all = LLVM::AndOp::create(
          b, loc, all,
          LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::ult, c,
                               i32Const(b, loc, shape[d])));
    }
    owned.push_back(all);
  }
  return owned;
}

Type convertTileType(const LLVMTypeConverter &converter, RankedTensorType type) {
  Type elem = converter.convertType(type.getElementType());
  if (!elem)
    return {};
  unsigned n = TileLayout(type).numElements();
  return LLVM::LLVMStructType::getLiteral(type.getContext(),
                                          SmallVector<Type>(n, elem));
}

void addTileConversion(LLVMTypeConverter &converter) {
  converter.addConversion([&converter](RankedTensorType type) -> std::optional<Type> {
    if (!isa_and_nonnull<BlockedEncodingAttr, SliceEncodingAttr>(
            type.getEncoding()))
      return std::nullopt;
    return convertTileType(converter, type);
  });
}

SmallVector<Value> unpackTile(OpBuilder &b, Location loc, Value tile) {
  auto type = cast<LLVM::LLVMStructType>(tile.getType());
  SmallVector<Value> elements;
  for (unsigned i = 0; i < type.getBody().size(); ++i)
    elements.push_back(LLVM::ExtractValueOp::create(b, loc, tile, i));
  return elements;
}

Value packTile(OpBuilder &b, Location loc, Type structType,
               ValueRange elements) {
  Value tile = LLVM::UndefOp::create(b, loc, structType);
  for (auto [i, element] : llvm::enumerate(elements))
    tile = LLVM::InsertValueOp::create(b, loc, tile, element, i);
  return tile;
}

Value linearize(OpBuilder &b, Location loc, ValueRange coords,
                ArrayRef<int64_t> shape) {
  Value index = i32Const(b, loc, 0);
  for (auto [coord, size] : llvm::zip(coords, shape))
    index = LLVM::AddOp::create(b, loc, mulConst(b, loc, index, size), coord);
  return index;
}

} // namespace weft
