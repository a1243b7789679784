//===- KernelContext.h - the kernel context in lowered code -----*- C++ -*-===//
//
// Field offsets come from weft/abi.h through offsetof, so the compiler and
// the runtime read one definition.
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

/// Loads the context field at byte `offset` (an offsetof(weft_kernel_context,
/// ...)). The context never changes during a launch: the load is invariant,
/// so LLVM hoists and CSEs it like arithmetic.
mlir::Value loadContextField(mlir::OpBuilder &b, mlir::Location loc,
                             mlir::Value context, size_t offset,
                             mlir::Type type);

/// heap_base[rank] as i64; `rank` is an i32.
mlir::Value loadHeapBase(mlir::OpBuilder &b, mlir::Location loc,
                         mlir::Value context, mlir::Value rank);

} // namespace weft

#endif
