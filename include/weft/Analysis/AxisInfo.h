//===- AxisInfo.h - contiguity, divisibility, constancy of tiles -*- C++ -*-===//
//
// What the compiler knows about the integer and pointer values of a tile,
// per dimension, in the style of Triton's axis analysis:
//
//   contiguity[d]   the values form runs of this many consecutive integers
//                   (pointers: consecutive elements) along d, the runs
//                   being the tile's blocks of that many elements (from
//                   index 0, c, 2c, ...);
//   divisibility[d] the largest power of two known to divide the first value
//                   of every such run (pointers: their byte address);
//   constancy[d]    the values form runs of this many equal values along d.
//
// Scalars are described as 1-D values of one element. Layout assignment uses
// it to choose how many consecutive elements a thread holds; the lowering
// uses it again to emit 16-byte vector accesses only where they are provably
// contiguous and aligned.
//
//===----------------------------------------------------------------------===//
#ifndef WEFT_ANALYSIS_AXISINFO_H
#define WEFT_ANALYSIS_AXISINFO_H

#include "mlir/IR/Operation.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

namespace weft {

struct AxisInfo {
  llvm::SmallVector<int64_t> contiguity;
  llvm::SmallVector<int64_t> divisibility;
  llvm::SmallVector<int64_t> constancy;

  /// Nothing known about a value of this rank (1 for scalars).
  static AxisInfo unknown(unsigned rank);
  unsigned getRank() const { return contiguity.size(); }
  /// The power of two known to divide every value along `dim` (not just the
  /// first of each run).
  int64_t elementDivisibility(unsigned dim) const;
};

/// Kernel arguments of pointer type are assumed 16-byte aligned unless they
/// carry this argument attribute with another power of two; integer
/// arguments may carry it to say they are multiples of it.
constexpr llvm::StringLiteral kDivisibilityAttrName = "weft.divisibility";
/// The alignment assumed for a kernel's pointer arguments.
constexpr int64_t kDefaultPointerDivisibility = 16;
/// On a tensor-descriptor argument: per dimension, a power of two dividing
/// the tensor's extent (weft.desc_dim), as the frontend specialises it.
constexpr llvm::StringLiteral kShapeDivisibilityAttrName = "weft.shape_divisibility";

/// A forward analysis of every function under a root operation. Values it
/// cannot reason about (loop-carried values other than scf.for's induction
/// variable, loads, block arguments of non-entry blocks) are unknown, which
/// is always safe.
class AxisInfoAnalysis {
public:
  explicit AxisInfoAnalysis(mlir::Operation *root);
  /// The information about `value`; unknown for values it never saw.
  AxisInfo get(mlir::Value value) const;

private:
  void visitArguments(mlir::Operation *function);
  void visit(mlir::Operation *op);

  llvm::DenseMap<mlir::Value, AxisInfo> infos;
};

} // namespace weft

#endif // WEFT_ANALYSIS_AXISINFO_H
