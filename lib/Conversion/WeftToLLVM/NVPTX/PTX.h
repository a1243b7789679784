//===- PTX.h - inline PTX in the LLVM dialect -------------------*- C++ -*-===//
//
// Internal to the NVPTX lowering (TargetInfoNVPTX.cpp and the NVPTX pattern
// files): what has no NVVM op or LLVM intrinsic is inline PTX.
//
//===----------------------------------------------------------------------===//
#ifndef WEFT_CONVERSION_WEFTTOLLVM_NVPTX_PTX_H
#define WEFT_CONVERSION_WEFTTOLLVM_NVPTX_PTX_H

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"

#include <string>

namespace weft {

/// Inline PTX; always kept, since every use touches memory.
mlir::Value emitAsm(mlir::OpBuilder &b, mlir::Location loc, mlir::Type resultType,
                    mlir::ValueRange operands, llvm::StringRef text,
                    llvm::StringRef constraints);
/// Inline PTX with several results (a struct of `types`, unpacked).
llvm::SmallVector<mlir::Value> emitAsmResults(mlir::OpBuilder &b, mlir::Location loc,
                                              llvm::ArrayRef<mlir::Type> types,
                                              mlir::ValueRange operands, llvm::StringRef text,
                                              llvm::StringRef constraints, bool hasSideEffects);
/// A shared-memory pointer as the 32-bit address PTX's shared state space
/// takes.
mlir::Value sharedAddress(mlir::OpBuilder &b, mlir::Location loc, mlir::Value ptr);
/// Constraints of `n` f32 results that are also inputs (accumulators
/// passed through inline PTX): "=f" each, then inputs tied to them.
std::string tiedF32Constraints(unsigned n);

} // namespace weft

#endif // WEFT_CONVERSION_WEFTTOLLVM_NVPTX_PTX_H
