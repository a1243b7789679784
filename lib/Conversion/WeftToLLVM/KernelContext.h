//===- KernelContext.h - by-value kernel parameters in lowered code -*- C++ -*-===//
//
// The kernel context and tensor descriptors. Field offsets come from
// weft/abi.h through offsetof, so the compiler and the runtime read one
// definition.
//
//===----------------------------------------------------------------------===//
#ifndef WEFT_PASSES_WEFTTOLLVM_KERNELCONTEXT_H
#define WEFT_PASSES_WEFTTOLLVM_KERNELCONTEXT_H

#include "weft/abi.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"

namespace weft {

/// The LLVM struct with the layout of weft_kernel_context.
mlir::LLVM::LLVMStructType getKernelContextType(mlir::MLIRContext *ctx);

/// The LLVM struct with the layout of weft_tensor_desc.
mlir::LLVM::LLVMStructType getTensorDescType(mlir::MLIRContext *ctx);

/// A kernel parameter the runtime passes by value: its argument index, the
/// struct it points at and that struct's alignment.
struct ByValueParam {
  unsigned index;
  mlir::Type type;
  int64_t alignment;
};
/// The kernel's by-value parameters: its tensor descriptors (arguments
/// marked kTensorDescArgAttrName, a mark this removes) and the context
/// (argument `contextArg`).
llvm::SmallVector<ByValueParam> takeByValueParams(mlir::LLVM::LLVMFuncOp kernel,
                                                  unsigned contextArg);

/// Loads the field at byte `offset` (an offsetof) of a by-value parameter
/// (the context, a tensor descriptor). Neither changes during a launch:
/// the load is invariant, so LLVM hoists and CSEs it like arithmetic.
mlir::Value loadParamField(mlir::OpBuilder &b, mlir::Location loc,
                           mlir::Value param, size_t offset, mlir::Type type);

/// heap_base[rank] as i64; `rank` is an i32.
mlir::Value loadHeapBase(mlir::OpBuilder &b, mlir::Location loc,
                         mlir::Value context, mlir::Value rank);

} // namespace weft

#endif
