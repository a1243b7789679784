//===- TileLayout.cpp - which elements of a tile a thread holds -----------===//
#include "TileLayout.h"

#include "LoweringUtils.h"

using namespace mlir;

namespace weft {

TileLayout::TileLayout(RankedTensorType type)
    : shape(type.getShape()) {
  Attribute encoding = type.getEncoding();
  if (auto slice = dyn_cast<SliceEncodingAttr>(encoding)) {
    sliceDim = slice.getDim();
    shape.insert(shape.begin() + sliceDim, 1);
    encoding = slice.getParent();
  }
  blocked = cast<BlockedEncodingAttr>(encoding);
  for (unsigned d = 0; d < shape.size(); ++d) {
    int64_t perThread = std::min<int64_t>(blocked.getSizePerThread()[d], shape[d]);
    int64_t block = int64_t(blocked.getSizePerThread()[d]) *
                    blocked.getThreadsPerWarp()[d] *
                    blocked.getWarpsPerProgram()[d];
    elems.push_back(perThread * std::max<int64_t>(1, shape[d] / block));
    count *= elems.back();
  }
}

unsigned TileLayout::parentDim(unsigned dim) const {
  return sliceDim >= 0 && dim >= unsigned(sliceDim) ? dim + 1 : dim;
}

SmallVector<unsigned> TileLayout::multiIndex(unsigned i) const {
  SmallVector<unsigned> multi(elems.size());
  for (unsigned d : blocked.getOrder()) {
    multi[d] = i % elems[d];
    i /= elems[d];
  }
  return multi;
}

unsigned TileLayout::linearIndex(ArrayRef<unsigned> multi) const {
  unsigned index = 0;
  for (unsigned d : llvm::reverse(blocked.getOrder()))
    index = index * elems[d] + multi[d];
  return index;
}

int64_t TileLayout::offsetInThread(unsigned dim, unsigned index) const {
  int64_t perThread = std::min<int64_t>(blocked.getSizePerThread()[dim], shape[dim]);
  int64_t block = int64_t(blocked.getSizePerThread()[dim]) *
                  blocked.getThreadsPerWarp()[dim] *
                  blocked.getWarpsPerProgram()[dim];
  return (index / perThread) * block + index % perThread;
}

bool TileLayout::isThreadLocal() const {
  auto ones = [](ArrayRef<unsigned> v) {
    return llvm::all_of(v, [](unsigned x) { return x == 1; });
  };
  return ones(blocked.getThreadsPerWarp()) && ones(blocked.getWarpsPerProgram());
}

SmallVector<int64_t> TileLayout::constantCoordinates(unsigned i) const {
  SmallVector<unsigned> multi = multiIndex(i);
  SmallVector<int64_t> coords;
  for (unsigned d = 0; d < shape.size(); ++d)
    if (int(d) != sliceDim)
      coords.push_back(offsetInThread(d, multi[d]) & (shape[d] - 1));
  return coords;
}

/// Index of this thread along each dimension of `counts` (threads per warp
/// or warps per program), numbered along `order`.
static SmallVector<Value> delinearize(OpBuilder &b, Location loc, Value linear,
                                      ArrayRef<unsigned> counts,
                                      ArrayRef<unsigned> order) {
  SmallVector<Value> out(counts.size());
  for (unsigned d : order) {
    out[d] = remConst(b, loc, linear, counts[d]);
    linear = divConst(b, loc, linear, counts[d]);
  }
  return out;
}

SmallVector<Value> TileLayout::emitThreadBase(OpBuilder &b, Location loc,
                                              const TargetInfo &target) const {
  unsigned rank = shape.size();
  SmallVector<Value> base(rank);
  if (isThreadLocal()) {
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

SmallVector<SmallVector<Value>>
TileLayout::emitCoordinates(OpBuilder &b, Location loc,
                            const TargetInfo &target) const {
  SmallVector<Value> base = emitThreadBase(b, loc, target);
  SmallVector<SmallVector<Value>> coords;
  for (unsigned i = 0; i < count; ++i) {
    SmallVector<unsigned> multi = multiIndex(i);
    SmallVector<Value> element;
    for (unsigned d = 0; d < shape.size(); ++d) {
      if (int(d) == sliceDim)
        continue;
      Value c = LLVM::AddOp::create(b, loc, base[d],
                                    i32Const(b, loc, offsetInThread(d, multi[d])));
      element.push_back(
          LLVM::AndOp::create(b, loc, c, i32Const(b, loc, shape[d] - 1)));
    }
    coords.push_back(std::move(element));
  }
  return coords;
}

bool TileLayout::isReplicated() const {
  for (unsigned d = 0; d < shape.size(); ++d)
    if (int64_t(blocked.getSizePerThread()[d]) * blocked.getThreadsPerWarp()[d] *
            blocked.getWarpsPerProgram()[d] >
        shape[d])
      return true;
  return false;
}

int64_t TileLayout::distinctLanes(unsigned dim) const {
  int64_t spt = blocked.getSizePerThread()[dim];
  return std::min<int64_t>(blocked.getThreadsPerWarp()[dim],
                           std::max<int64_t>(1, shape[dim] / spt));
}

int64_t TileLayout::distinctWarps(unsigned dim) const {
  int64_t spt = blocked.getSizePerThread()[dim];
  int64_t tpw = blocked.getThreadsPerWarp()[dim];
  return std::min<int64_t>(blocked.getWarpsPerProgram()[dim],
                           std::max<int64_t>(1, shape[dim] / (spt * tpw)));
}

SmallVector<Value> TileLayout::emitOwnership(OpBuilder &b, Location loc,
                                             const TargetInfo &target) const {
  SmallVector<Value> base = emitThreadBase(b, loc, target);
  SmallVector<Value> owned;
  for (unsigned i = 0; i < count; ++i) {
    SmallVector<unsigned> multi = multiIndex(i);
    Value all = LLVM::ConstantOp::create(b, loc, b.getI1Type(), 1);
    for (unsigned d = 0; d < shape.size(); ++d) {
      Value c = LLVM::AddOp::create(b, loc, base[d],
                                    i32Const(b, loc, offsetInThread(d, multi[d])));
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
