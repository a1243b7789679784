//===- LoweringUtils.h - small helpers shared by the lowering ---*- C++ -*-===//
#ifndef WEFT_PASSES_WEFTTOLLVM_LOWERINGUTILS_H
#define WEFT_PASSES_WEFTTOLLVM_LOWERINGUTILS_H

#include "weft/Dialect/Weft/Distribution/SharedMemory.h" // naturalAlignment

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/STLFunctionalExtras.h"

namespace weft {

inline mlir::Value i32Const(mlir::OpBuilder &b, mlir::Location loc,
                            int64_t v) {
  return mlir::LLVM::ConstantOp::create(b, loc, b.getI32Type(), v);
}
inline mlir::Value i64Const(mlir::OpBuilder &b, mlir::Location loc,
                            int64_t v) {
  return mlir::LLVM::ConstantOp::create(b, loc, b.getI64Type(), v);
}
/// i32 `x * c`, `x / c` and `x % c` (unsigned) for a constant c: the
/// index arithmetic of tile and shared-memory layouts.
inline mlir::Value mulConst(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x,
                            int64_t c) {
  return mlir::LLVM::MulOp::create(b, loc, x, i32Const(b, loc, c));
}
inline mlir::Value divConst(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x,
                            int64_t c) {
  return mlir::LLVM::UDivOp::create(b, loc, x, i32Const(b, loc, c));
}
inline mlir::Value remConst(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x,
                            int64_t c) {
  return mlir::LLVM::URemOp::create(b, loc, x, i32Const(b, loc, c));
}

/// `base + offset` bytes, keeping base's pointer type.
mlir::Value byteOffset(mlir::OpBuilder &b, mlir::Location loc,
                       mlir::Value base, mlir::Value offset);

/// Address of element `index` of `elemType` from `base`.
mlir::Value elementPtr(mlir::OpBuilder &b, mlir::Location loc, mlir::Value base,
                       mlir::Type elemType, mlir::Value index);

/// `elements` (of one type) as one LLVM vector, and a vector's elements.
mlir::Value packVector(mlir::OpBuilder &b, mlir::Location loc, mlir::ValueRange elements);
llvm::SmallVector<mlir::Value> unpackVector(mlir::OpBuilder &b, mlir::Location loc,
                                            mlir::Value vector);

/// The address space of shared memory (LDS) on NVPTX and AMDGPU.
constexpr unsigned kSharedAddressSpace = 3;
/// The kernel's dynamic shared memory (an external array of no size).
constexpr llvm::StringLiteral kDynamicSharedName = "__weft_dynamic_shared";
/// The module-wide shared-memory global `name` of the module around
/// `from`, created with `type` on first use.
mlir::LLVM::GlobalOp sharedGlobal(mlir::OpBuilder &b, mlir::Location loc,
                                  mlir::Operation *from, llvm::StringRef name,
                                  mlir::Type type, uint64_t alignment);
mlir::Value addressOf(mlir::OpBuilder &b, mlir::Location loc,
                      mlir::LLVM::GlobalOp global);

/// A constant global of the module around `from` holding `text` (no NUL
/// added) in `addressSpace`, named `prefix` and a number; its address.
mlir::Value stringConstant(mlir::OpBuilder &b, mlir::Location loc, mlir::Operation *from,
                           llvm::StringRef prefix, llvm::StringRef text,
                           unsigned addressSpace);
/// One `type` on the stack of the function around `from` (alloca at its
/// entry, in `addressSpace`, the target's alloca space).
mlir::Value entryAlloca(mlir::OpBuilder &b, mlir::Location loc, mlir::Operation *from,
                        mlir::Type type, unsigned addressSpace);

/// The external function `name` of the module around `from`, declared on
/// first use.
mlir::LLVM::LLVMFuncOp declareFunction(mlir::OpBuilder &b,
                                       mlir::Operation *from,
                                       llvm::StringRef name,
                                       mlir::LLVM::LLVMFunctionType type);

/// Emits `if (cond) { then() }` with LLVM blocks; the builder ends after
/// the join. `then` may yield values (one per `resultTypes`), which merge
/// with `otherwise` on the false path.
llvm::SmallVector<mlir::Value>
emitIf(mlir::OpBuilder &b, mlir::Location loc, mlir::Value cond,
       mlir::TypeRange resultTypes,
       llvm::function_ref<llvm::SmallVector<mlir::Value>()> then,
       mlir::ValueRange otherwise);
/// `if (cond) then() else otherwise()`, both yielding `resultTypes`; the
/// builder ends after the join.
llvm::SmallVector<mlir::Value>
emitIfElse(mlir::OpBuilder &b, mlir::Location loc, mlir::Value cond,
           mlir::TypeRange resultTypes,
           llvm::function_ref<llvm::SmallVector<mlir::Value>()> then,
           llvm::function_ref<llvm::SmallVector<mlir::Value>()> otherwise);

} // namespace weft

#endif
