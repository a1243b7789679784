//===- Passes.h - weft lowering pipeline -------------------------*- C++ -*-===//
#ifndef WEFT_CONVERSION_PASSES_H
#define WEFT_CONVERSION_PASSES_H

#include "weft/Target/Target.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

namespace weft {

#define GEN_PASS_DECL
#include "weft/Conversion/Passes.h.inc"

/// Everything from verified weft IR (scalar or tile ops inside func.func
/// kernels) down to the LLVM dialect (+ NVVM / ROCDL), ready for
/// mlir::translateModuleToLLVMIR: weft-set-target stamps `target` on the
/// module (weft/Dialect/Weft/IR/CompileTarget.h), distribution and the
/// conversion read it from there.
void buildLoweringPipeline(mlir::OpPassManager &pm, const CompileTarget &target);

/// Registers the distribution and conversion passes and the "weft-lower"
/// pipeline (the same options as weft-set-target) with MLIR's global
/// registry (weft-opt, the mlir-opt plugin).
void registerWeftPasses();

} // namespace weft

#endif // WEFT_CONVERSION_PASSES_H
