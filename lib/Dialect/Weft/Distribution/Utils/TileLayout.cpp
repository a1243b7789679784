//===- TileLayout.cpp - which elements of a tile a thread holds -----------===//
#include "weft/Dialect/Weft/Distribution/TileLayout.h"

using namespace mlir;

namespace weft {

bool isDistributed(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor &&
         isa_and_nonnull<BlockedEncodingAttr, SliceEncodingAttr>(tensor.getEncoding());
}

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
    int64_t block = int64_t(blocked.getSizePerThread()[d]) *
                    blocked.getThreadsPerWarp()[d] *
                    blocked.getWarpsPerProgram()[d];
    elems.push_back(chunkSize(d) * std::max<int64_t>(1, shape[d] / block));
    count *= elems.back();
  }
}

int64_t TileLayout::chunkSize(unsigned dim) const {
  return std::min<int64_t>(blocked.getSizePerThread()[dim], shape[dim]);
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
  int64_t block = int64_t(blocked.getSizePerThread()[dim]) *
                  blocked.getThreadsPerWarp()[dim] *
                  blocked.getWarpsPerProgram()[dim];
  return (index / chunkSize(dim)) * block + index % chunkSize(dim);
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

} // namespace weft
