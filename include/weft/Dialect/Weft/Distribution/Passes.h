//===- Passes.h - distribution of tiles over threads ------------*- C++ -*-===//
//
// The passes between co-optimisation and the conversion to LLVM
// (weft-lower runs them): weft-set-target stamps the compile target on the
// module, then tiles get their shared-memory pipelines, their layouts over
// the threads of a program, and kernels their early start. The helpers
// they share with the conversion are the headers beside this one
// (TileLayout.h, DotPlan.h, SharedMemory.h).
//
//===----------------------------------------------------------------------===//
#ifndef WEFT_DIALECT_WEFT_DISTRIBUTION_PASSES_H
#define WEFT_DIALECT_WEFT_DISTRIBUTION_PASSES_H

#include "weft/Dialect/Weft/IR/Dialect.h"

#include "mlir/Pass/Pass.h"

namespace weft {

#define GEN_PASS_DECL
#include "weft/Dialect/Weft/Distribution/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "weft/Dialect/Weft/Distribution/Passes.h.inc"

} // namespace weft

#endif // WEFT_DIALECT_WEFT_DISTRIBUTION_PASSES_H
