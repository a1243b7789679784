//===- LoweringUtils.cpp --------------------------------------------------===//
#include "LoweringUtils.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include <algorithm>

using namespace mlir;

namespace weft {

Value byteOffset(OpBuilder &b, Location loc, Value base, Value offset) {
  return LLVM::GEPOp::create(b, loc, base.getType(), b.getI8Type(), base,
                             ValueRange{offset});
}

Value elementPtr(OpBuilder &b, Location loc, Value base, Type elemType,
                 Value index) {
  return LLVM::GEPOp::create(b, loc, base.getType(), elemType, base,
                             ValueRange{index});
}

Value packVector(OpBuilder &b, Location loc, ValueRange elements) {
  auto type = VectorType::get({int64_t(elements.size())}, elements.front().getType());
  Value vector = LLVM::PoisonOp::create(b, loc, type);
  for (auto [k, element] : llvm::enumerate(elements))
    vector = LLVM::InsertElementOp::create(b, loc, vector, element, i32Const(b, loc, k));
  return vector;
}

SmallVector<Value> unpackVector(OpBuilder &b, Location loc, Value vector) {
  SmallVector<Value> elements;
  for (int64_t k = 0, n = cast<VectorType>(vector.getType()).getNumElements(); k < n; ++k)
    elements.push_back(LLVM::ExtractElementOp::create(b, loc, vector, i32Const(b, loc, k)));
  return elements;
}

LLVM::GlobalOp sharedGlobal(OpBuilder &b, Location loc, Operation *from,
                            StringRef name, Type type, uint64_t alignment) {
  auto module = from->getParentOfType<ModuleOp>();
  if (auto global = module.lookupSymbol<LLVM::GlobalOp>(name))
    return global;
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(module.getBody());
  return LLVM::GlobalOp::create(b, loc, type, /*isConstant=*/false,
                                LLVM::Linkage::Internal, name, Attribute(),
                                alignment, kSharedAddressSpace);
}

Value addressOf(OpBuilder &b, Location loc, LLVM::GlobalOp global) {
  return LLVM::AddressOfOp::create(
      b, loc, LLVM::LLVMPointerType::get(b.getContext(), kSharedAddressSpace),
      global.getSymName());
}

Value stringConstant(OpBuilder &b, Location loc, Operation *from, StringRef prefix,
                     StringRef text, unsigned addressSpace) {
  auto module = from->getParentOfType<ModuleOp>();
  std::string name;
  for (unsigned i = 0; name.empty() || module.lookupSymbol(name); ++i)
    name = (prefix + "_" + std::to_string(i)).str();
  auto type = LLVM::LLVMArrayType::get(b.getI8Type(), text.size());
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(module.getBody());
    LLVM::GlobalOp::create(b, loc, type, /*isConstant=*/true, LLVM::Linkage::Internal, name,
                           b.getStringAttr(text), /*alignment=*/1, addressSpace);
  }
  return LLVM::AddressOfOp::create(
      b, loc, LLVM::LLVMPointerType::get(b.getContext(), addressSpace), name);
}

Value entryAlloca(OpBuilder &b, Location loc, Operation *from, Type type,
                  unsigned addressSpace) {
  OpBuilder::InsertionGuard guard(b);
  auto func = from->getParentOfType<FunctionOpInterface>();
  b.setInsertionPointToStart(&func.getFunctionBody().front());
  return LLVM::AllocaOp::create(b, loc, LLVM::LLVMPointerType::get(b.getContext(), addressSpace),
                                type, i64Const(b, loc, 1), /*alignment=*/16);
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

SmallVector<Value> emitIfElse(OpBuilder &b, Location loc, Value cond,
                              TypeRange resultTypes,
                              function_ref<SmallVector<Value>()> then,
                              function_ref<SmallVector<Value>()> otherwise) {
  Block *before = b.getInsertionBlock();
  Block *join = before->splitBlock(b.getInsertionPoint());
  for (Type type : resultTypes)
    join->addArgument(type, loc);
  Block *thenBlock = b.createBlock(join);
  Block *elseBlock = b.createBlock(join);
  b.setInsertionPointToEnd(before);
  LLVM::CondBrOp::create(b, loc, cond, thenBlock, elseBlock);
  b.setInsertionPointToEnd(thenBlock);
  LLVM::BrOp::create(b, loc, then(), join);
  b.setInsertionPointToEnd(elseBlock);
  LLVM::BrOp::create(b, loc, otherwise(), join);
  b.setInsertionPointToStart(join);
  return SmallVector<Value>(join->getArguments());
}

} // namespace weft
