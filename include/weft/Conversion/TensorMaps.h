//===- TensorMaps.h - the tensor maps a kernel's bulk copies read -*- C++ -*-===//
//
// weft-pipeline-dot-operands plans the bulk tensor copies of a pipelined K
// loop as boxes of a tensor map over a descriptor argument, and records
// each plan on the kernel (kTensorMapsAttrName). The lowering addresses
// the copies from that record and weft_compile reports it ("kernels") for
// the runtime to encode (weft_tensor_desc_encode): one encoding, read here.
//
//===----------------------------------------------------------------------===//
#ifndef WEFT_CONVERSION_TENSORMAPS_H
#define WEFT_CONVERSION_TENSORMAPS_H

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/SmallVector.h"
#include <array>

namespace weft {

/// One dimension of the tensor map bulk copies read: coordinate c along it
/// is element c * step along the block's dimension `dim` (0: rows, 1:
/// columns); `size` coordinates (0: the tensor's extent along dim over
/// step), `box` of them per copy.
struct TensorMapDim {
  int64_t dim, step, size, box;
};
/// How bulk tensor copies fill a #weft.swizzled buffer: boxes of a tensor
/// map of `dims` (innermost first; a view of the tensor whose boxes land
/// in the layout's order) under the hardware swizzle of `swizzle` bytes
/// (the layout's). The block's offsets must be multiples of `alignment`
/// (rows, columns).
struct TensorCopyPlan {
  llvm::SmallVector<TensorMapDim> dims;
  unsigned swizzle;
  std::array<int64_t, 2> alignment;
};
/// A plan as the kTensorMapsAttrName entry of a kernel argument
/// ([swizzle, then dim, step, size, box per dimension, innermost first]),
/// and back. The alignment is not recorded (the pass that planned the
/// copies checked it): a decoded plan's is {1, 1}.
mlir::DenseI64ArrayAttr encodeTensorCopyPlan(mlir::MLIRContext *ctx, const TensorCopyPlan &plan);
TensorCopyPlan decodeTensorCopyPlan(mlir::DenseI64ArrayAttr attr);

} // namespace weft

#endif // WEFT_CONVERSION_TENSORMAPS_H
