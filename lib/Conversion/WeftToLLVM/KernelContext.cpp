//===- KernelContext.cpp --------------------------------------------------===//
#include "KernelContext.h"
#include "LoweringUtils.h"

#include "weft/Dialect/Weft/IR/Dialect.h"

using namespace mlir;

namespace weft {

LLVM::LLVMStructType getKernelContextType(MLIRContext *ctx) {
  auto i32 = IntegerType::get(ctx, 32);
  auto i64 = IntegerType::get(ctx, 64);
  static_assert(offsetof(weft_kernel_context, heap_size) == 16 &&
                    offsetof(weft_kernel_context, heap_base) == 40 &&
                    offsetof(weft_kernel_context, local_rank) == 40 + 8 * WEFT_MAX_RANKS &&
                    sizeof(weft_kernel_context) == 64 + 8 * WEFT_MAX_RANKS,
                "the struct below mirrors weft_kernel_context");
  return LLVM::LLVMStructType::getLiteral(
      ctx, {i32, i32, i32, i32, i64, i64, i64,
            LLVM::LLVMArrayType::get(i64, WEFT_MAX_RANKS), i32, i32, i32, i32, i64});
}

LLVM::LLVMStructType getTensorDescType(MLIRContext *ctx) {
  auto i8 = IntegerType::get(ctx, 8);
  auto i64 = IntegerType::get(ctx, 64);
  auto dims = LLVM::LLVMArrayType::get(i64, WEFT_TENSOR_DESC_MAX_RANK);
  constexpr size_t kFields = offsetof(weft_tensor_desc, strides) + sizeof(int64_t) * WEFT_TENSOR_DESC_MAX_RANK;
  static_assert(offsetof(weft_tensor_desc, base) == 128 &&
                    offsetof(weft_tensor_desc, shape) == 136 &&
                    offsetof(weft_tensor_desc, strides) == 136 + 8 * WEFT_TENSOR_DESC_MAX_RANK,
                "the struct below mirrors weft_tensor_desc");
  return LLVM::LLVMStructType::getLiteral(
      ctx, {LLVM::LLVMArrayType::get(i8, 128), i64, dims, dims,
            LLVM::LLVMArrayType::get(i8, sizeof(weft_tensor_desc) - kFields)});
}

SmallVector<ByValueParam> takeByValueParams(LLVM::LLVMFuncOp kernel, unsigned contextArg) {
  MLIRContext *ctx = kernel.getContext();
  SmallVector<ByValueParam> params;
  for (unsigned i = 0, e = kernel.getNumArguments(); i < e; ++i)
    if (kernel.getArgAttr(i, kTensorDescArgAttrName)) {
      kernel.removeArgAttr(i, kTensorDescArgAttrName);
      params.push_back({i, getTensorDescType(ctx), alignof(weft_tensor_desc)});
    }
  params.push_back({contextArg, getKernelContextType(ctx), alignof(weft_kernel_context)});
  return params;
}

Value loadParamField(OpBuilder &b, Location loc, Value param, size_t offset, Type type) {
  return LLVM::LoadOp::create(b, loc, type, byteOffset(b, loc, param, i64Const(b, loc, offset)),
                              /*alignment=*/type.getIntOrFloatBitWidth() / 8,
                              /*isVolatile=*/false, /*isNonTemporal=*/false,
                              /*isInvariant=*/true);
}

Value loadHeapBase(OpBuilder &b, Location loc, Value context, Value rank) {
  Type i64 = b.getI64Type();
  Value index = LLVM::ZExtOp::create(b, loc, i64, rank);
  Value scaled = LLVM::MulOp::create(b, loc, index, i64Const(b, loc, sizeof(uint64_t)));
  Value offset = LLVM::AddOp::create(b, loc, scaled,
                                     i64Const(b, loc, offsetof(weft_kernel_context, heap_base)));
  return LLVM::LoadOp::create(b, loc, i64, byteOffset(b, loc, context, offset),
                              /*alignment=*/8, /*isVolatile=*/false,
                              /*isNonTemporal=*/false, /*isInvariant=*/true);
}

} // namespace weft
