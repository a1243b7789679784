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
// that coordinate dropped.
//
//===----------------------------------------------------------------------===//
#ifndef WEFT_PASSES_WEFTTOLLVM_TILELAYOUT_H
#define WEFT_PASSES_WEFTTOLLVM_TILELAYOUT_H

#include "weft/Conversion/TargetInfo.h"

#include "mlir/Conversion/LLVMCommon/TypeConverter.h"

namespace weft {

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
  /// Parent dimension of tensor dimension `dim`.
  unsigned parentDim(unsigned dim) const;

  /// Per-parent-dimension index of struct element `i`, and back.
  llvm::SmallVector<unsigned> multiIndex(unsigned i) const;
  unsigned linearIndex(llvm::ArrayRef<unsigned> multi) const;

  /// Every thread holds every element, at coordinates known when compiling
  /// (the host, where a program is one thread).
  bool isThreadLocal() const;
  /// Coordinates (tensor dimensions) of element `i` in a thread-local layout.
  llvm::SmallVector<int64_t> constantCoordinates(unsigned i) const;
  /// Coordinates (tensor dimensions, i32) of every element of this thread.
  llvm::SmallVector<llvm::SmallVector<mlir::Value>>
  emitCoordinates(mlir::OpBuilder &b, mlir::Location loc,
                  const TargetInfo &target) const;

  /// Some elements are held by more than one thread.
  bool isReplicated() const;
  /// Lanes of a warp, and warps of the program, that hold distinct parts of
  /// parent dimension `dim`; the others hold replicas.
  int64_t distinctLanes(unsigned dim) const;
  int64_t distinctWarps(unsigned dim) const;
  /// Per element, whether this thread is the one owner of it (the thread
  /// whose coordinate did not wrap), for side effects that must happen once.
  llvm::SmallVector<mlir::Value> emitOwnership(mlir::OpBuilder &b,
                                               mlir::Location loc,
                                               const TargetInfo &target) const;

private:
  int64_t offsetInThread(unsigned dim, unsigned index) const;
  /// The first coordinate this thread holds along each parent dimension,
  /// before wrapping.
  llvm::SmallVector<mlir::Value> emitThreadBase(mlir::OpBuilder &b,
                                                mlir::Location loc,
                                                const TargetInfo &target) const;

  BlockedEncodingAttr blocked;
  int sliceDim = -1;
  llvm::SmallVector<int64_t> shape; // the parent's (padded) shape
  llvm::SmallVector<unsigned> elems;
  unsigned count = 1;
};

/// The per-thread struct of a distributed tensor.
mlir::Type convertTileType(const mlir::LLVMTypeConverter &converter,
                           mlir::RankedTensorType type);
void addTileConversion(mlir::LLVMTypeConverter &converter);

llvm::SmallVector<mlir::Value> unpackTile(mlir::OpBuilder &b,
                                          mlir::Location loc,
                                          mlir::Value tile);
mlir::Value packTile(mlir::OpBuilder &b, mlir::Location loc,
                     mlir::Type structType, mlir::ValueRange elements);

/// Row-major linear index of a coordinate in `shape`.
mlir::Value linearize(mlir::OpBuilder &b, mlir::Location loc,
                      mlir::ValueRange coords, llvm::ArrayRef<int64_t> shape);

} // namespace weft

#endif
