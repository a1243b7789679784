//===- PTX.cpp - inline PTX in the LLVM dialect ---------------------------===//
#include "PTX.h"

#include "llvm/Support/FormatVariadic.h"

using namespace mlir;

namespace weft {

Value emitAsm(OpBuilder &b, Location loc, Type resultType, ValueRange operands,
              StringRef text, StringRef constraints) {
  auto op = LLVM::InlineAsmOp::create(
      b, loc, resultType, operands, text, constraints,
      /*has_side_effects=*/true, /*is_align_stack=*/false,
      LLVM::TailCallKind::None, LLVM::AsmDialectAttr(), ArrayAttr());
  return resultType ? op.getResult(0) : Value();
}

SmallVector<Value> emitAsmResults(OpBuilder &b, Location loc, ArrayRef<Type> types,
                                  ValueRange operands, StringRef text,
                                  StringRef constraints, bool hasSideEffects) {
  auto op = LLVM::InlineAsmOp::create(
      b, loc, LLVM::LLVMStructType::getLiteral(b.getContext(), types), operands, text,
      constraints, hasSideEffects, /*is_align_stack=*/false, LLVM::TailCallKind::None,
      LLVM::AsmDialectAttr(), ArrayAttr());
  SmallVector<Value> out;
  for (int64_t i = 0, e = types.size(); i < e; ++i)
    out.push_back(LLVM::ExtractValueOp::create(b, loc, op.getResult(0), i));
  return out;
}

Value sharedAddress(OpBuilder &b, Location loc, Value ptr) {
  return LLVM::PtrToIntOp::create(b, loc, b.getI32Type(), ptr);
}

std::string tiedF32Constraints(unsigned n) {
  std::string constraints;
  for (unsigned i = 0; i < n; ++i)
    constraints += "=f,";
  for (unsigned i = 0; i < n; ++i)
    constraints += llvm::formatv("{0}{1}", i ? "," : "", i).str();
  return constraints;
}

} // namespace weft
