//===- TileLowering.h - lowering distributed tiles --------------*- C++ -*-===//
//
// Patterns for tensors that weft-assign-layouts distributed: every such
// tensor becomes the struct of the elements one thread holds (TileLayout),
// and every tile op becomes per-element code, plus shuffles and shared
// memory where threads exchange elements.
//
//===----------------------------------------------------------------------===//
#ifndef WEFT_PASSES_WEFTTOLLVM_TILELOWERING_H
#define WEFT_PASSES_WEFTTOLLVM_TILELOWERING_H

#include "Lowering.h"
#include "TileLayout.h"

#include "weft/Analysis/AxisInfo.h"

namespace weft {

class TileLowering {
public:
  TileLowering(const Lowering &lowering, const AxisInfoAnalysis &axis)
      : lowering(lowering), target(lowering.target), axis(axis) {}

  const Lowering &lowering;
  const TargetInfo &target;
  const AxisInfoAnalysis &axis;

  /// The program's scratch area in shared memory (LDS), at least `bytes`
  /// long: one module-wide static buffer sized by its largest user. Users
  /// end with a program barrier, so the next may reuse it at once.
  mlir::Value scratch(mlir::OpBuilder &b, mlir::Location loc,
                      mlir::Operation *op, int64_t bytes) const;

  /// Joins the program's threads (nothing on the host).
  void barrier(mlir::OpBuilder &b, mlir::Location loc) const {
    if (!target.singleThreadPrograms())
      target.programBarrier(b, loc);
  }
};

template <typename Op>
class TilePattern : public mlir::ConvertOpToLLVMPattern<Op> {
public:
  /// Above the scalar weft patterns, which do not handle tiles.
  TilePattern(const mlir::LLVMTypeConverter &converter,
              const TileLowering &tiles)
      : mlir::ConvertOpToLLVMPattern<Op>(converter, /*benefit=*/2),
        tiles(tiles) {}

protected:
  const TileLowering &tiles;
};

/// A distributed tensor type (one with a weft layout).
bool isDistributed(mlir::Type type);
/// Reports tile ops the lowering cannot handle, before it starts.
mlir::LogicalResult checkTileLowerable(mlir::Operation *op);

void populateTileOpPatterns(const mlir::LLVMTypeConverter &converter,
                            const TileLowering &tiles,
                            mlir::RewritePatternSet &patterns);
void populateTileMemoryPatterns(const mlir::LLVMTypeConverter &converter,
                                const TileLowering &tiles,
                                mlir::RewritePatternSet &patterns);
void populateReducePatterns(const mlir::LLVMTypeConverter &converter,
                            const TileLowering &tiles,
                            mlir::RewritePatternSet &patterns);

} // namespace weft

#endif
