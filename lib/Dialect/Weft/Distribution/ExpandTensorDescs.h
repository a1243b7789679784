//===- ExpandTensorDescs.h - a descriptor block as a tile load --*- C++ -*-===//
//
// Internal to the distribution passes: weft-expand-tensor-descs expands
// every descriptor access, and weft-pipeline-dot-operands the blocks of a
// loop it does not copy in bulk.
//
//===----------------------------------------------------------------------===//
#ifndef WEFT_LIB_DISTRIBUTION_EXPANDTENSORDESCS_H
#define WEFT_LIB_DISTRIBUTION_EXPANDTENSORDESCS_H

#include "weft/Dialect/Weft/IR/Dialect.h"

#include "mlir/IR/PatternMatch.h"

namespace weft {

/// The masked tile load that `op` is on targets without bulk tensor
/// copies, in its place.
LoadOp expandDescLoad(mlir::RewriterBase &rewriter, DescLoadOp op);

} // namespace weft

#endif // WEFT_LIB_DISTRIBUTION_EXPANDTENSORDESCS_H
