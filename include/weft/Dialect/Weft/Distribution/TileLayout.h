//===- TileLayout.h - which elements of a tile a thread holds ---*- C++ -*-===//
//
// A distributed tensor lowers to the LLVM struct of the elements one thread
// holds. For a blocked layout of a tile of shape S, a thread holds along
// each dimension d
//     e[d] = min(sizePerThread[d], S[d]) consecutive elements, repeated
//     max(1, S[d] / (sizePerThread[d] * threadsPerWarp[d] * warpsPerProgram[d]))
// times, one program-wide block apart; coordinates wrap modulo S[d], which
// is how a tile smaller than the program is replicated. The struct lists
// the elements with order[0] varying fastest, so a thread's consecutive
// elements along order[0] are neighbours in the struct (one vector access).
// A slice layout is its parent's over the shape with a 1 inserted at `dim`,
// that coordinate dropped. This is the arithmetic of layouts, which
// distribution plans with; the conversion emits the per-thread values
// (lib/Conversion/WeftToLLVM/TileValues.h).
//
//===----------------------------------------------------------------------===//
#ifndef WEFT_DIALECT_WEFT_DISTRIBUTION_TILELAYOUT_H
#define WEFT_DIALECT_WEFT_DISTRIBUTION_TILELAYOUT_H

#include "weft/Dialect/Weft/IR/Dialect.h"

#include "mlir/IR/BuiltinTypes.h"

namespace weft {

/// A tensor type with a weft layout (one distributed over threads).
bool isDistributed(mlir::Type type);

class TileLayout {
public:
  explicit TileLayout(mlir::RankedTensorType type);

  /// Elements one thread holds (the struct's length).
  unsigned numElements() const { return count; }
  /// Elements per parent dimension (1 along a slice's dim).
  llvm::ArrayRef<unsigned> elementsPerDim() const { return elems; }
  BlockedEncodingAttr getBlocked() const { return blocked; }
  /// The sliced-away parent dimension, or -1 for a blocked layout.
  int getSliceDim() const { return sliceDim; }
  /// The parent's shape (a slice's with the 1 at its dim).
  llvm::ArrayRef<int64_t> getParentShape() const { return shape; }
  /// Parent dimension of tensor dimension `dim`.
  unsigned parentDim(unsigned dim) const;

  /// Per-parent-dimension index of struct element `i`, and back.
  llvm::SmallVector<unsigned> multiIndex(unsigned i) const;
  unsigned linearIndex(llvm::ArrayRef<unsigned> multi) const;
  /// Consecutive elements a thread holds along parent dimension `dim` (a
  /// chunk), and how many chunks: the layout's repetitions over the tile.
  int64_t chunkSize(unsigned dim) const;
  int64_t repetitions(unsigned dim) const { return elems[dim] / chunkSize(dim); }
  /// Where element `index` of a thread along parent dimension `dim` is,
  /// from the thread's first coordinate there (before wrapping).
  int64_t offsetInThread(unsigned dim, unsigned index) const;

  /// Every thread holds every element, at coordinates known when compiling
  /// (the host, where a program is one thread).
  bool isThreadLocal() const;
  /// Coordinates (tensor dimensions) of element `i` in a thread-local layout.
  llvm::SmallVector<int64_t> constantCoordinates(unsigned i) const;

  /// Some elements are held by more than one thread.
  bool isReplicated() const;
  /// Lanes of a warp, and warps of the program, that hold distinct parts of
  /// parent dimension `dim`; the others hold replicas.
  int64_t distinctLanes(unsigned dim) const;
  int64_t distinctWarps(unsigned dim) const;

private:
  BlockedEncodingAttr blocked;
  int sliceDim = -1;
  llvm::SmallVector<int64_t> shape; // the parent's (padded) shape
  llvm::SmallVector<unsigned> elems;
  unsigned count = 1;
};

} // namespace weft

#endif // WEFT_DIALECT_WEFT_DISTRIBUTION_TILELAYOUT_H
