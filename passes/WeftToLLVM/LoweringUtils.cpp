//===- LoweringUtils.cpp --------------------------------------------------===//
#include "LoweringUtils.h"

#include "mlir/IR/BuiltinOps.h"
#include <algorithm>

using namespace mlir;

namespace weft {

unsigned naturalAlignment(Type type) {
  if (isa<LLVM::LLVMPointerType>(type))
    return 8;
  if (auto vec = dyn_cast<VectorType>(type))
    return vec.getNumElements() * naturalAlignment(vec.getElementType());
  return std::max(1u, type.getIntOrFloatBitWidth() / 8);
}

Value byteOffset(OpBuilder &b, Location loc, Value base, Value offset) {
  return LLVM::GEPOp::create(b, loc, base.getType(), b.getI8Type(), base,
                             ValueRange{offset});
}

LLVM::LLVMFuncOp declareFunction(OpBuilder &b, Operation *from, StringRef name,
                                 LLVM::LLVMFunctionType type) {
  auto module = from->getParentOfType<ModuleOp>();
  if (auto fn = module.lookupSymbol<LLVM::LLVMFuncOp>(name))
    return fn;
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(module.getBody());
  return LLVM::LLVMFuncOp::create(b, module.getLoc(), name, type);
}

SmallVector<Value> emitIf(OpBuilder &b, Location loc, Value cond,
                          TypeRange resultTypes,
                          function_ref<SmallVector<Value>()> then,
                          ValueRange otherwise) {
  Block *before = b.getInsertionBlock();
  Block *join = before->splitBlock(b.getInsertionPoint());
  for (Type type : resultTypes)
    join->addArgument(type, loc);
  Block *thenBlock = b.createBlock(join);

  b.setInsertionPointToEnd(before);
  LLVM::CondBrOp::create(b, loc, cond, thenBlock, ValueRange{}, join,
                         otherwise);

  b.setInsertionPointToEnd(thenBlock);
  SmallVector<Value> results = then();
  LLVM::BrOp::create(b, loc, results, join);

  b.setInsertionPointToStart(join);
  return SmallVector<Value>(join->getArguments());
}

} // namespace weft
