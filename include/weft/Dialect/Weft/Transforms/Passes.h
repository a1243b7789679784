//===- Passes.h - weft co-optimisation passes -------------------*- C++ -*-===//
//
// The `weft-optimize` pipeline: passes that optimise computation and
// communication together on tile IR, before it is distributed and lowered.
// docs/optimizations.md describes each pass and why it is sound.
//
//===----------------------------------------------------------------------===//
#ifndef WEFT_DIALECT_WEFT_TRANSFORMS_PASSES_H
#define WEFT_DIALECT_WEFT_TRANSFORMS_PASSES_H

#include "weft/Dialect/Weft/IR/Dialect.h"

#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

namespace weft {

#define GEN_PASS_DECL
#include "weft/Dialect/Weft/Transforms/Passes.h.inc"

/// weft-relax-waits, weft-local-short-circuit, weft-hoist-translate,
/// weft-coalesce-fences, canonicalize, cse; `pm` is anchored on the module
/// (or on any op: every pass is op-agnostic).
void buildOptimizePipeline(mlir::OpPassManager &pm);

/// Registers the "weft-optimize" pipeline with MLIR's global registry.
void registerWeftOptimizePipeline();

#define GEN_PASS_REGISTRATION
#include "weft/Dialect/Weft/Transforms/Passes.h.inc"

} // namespace weft

#endif // WEFT_DIALECT_WEFT_TRANSFORMS_PASSES_H
