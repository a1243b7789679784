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
/// mlir::translateModuleToLLVMIR. The target options are recorded on the
/// module as the `weft.target` attribute by the first pass, so every
/// later pass reads the same spec.
void buildLoweringPipeline(mlir::OpPassManager &pm, const TargetSpec &target);

/// Registers the weft passes and the "weft-lower" pipeline with MLIR's
/// global registry (weft-opt, the mlir-opt plugin).
void registerWeftPasses();

} // namespace weft

#endif // WEFT_CONVERSION_PASSES_H
