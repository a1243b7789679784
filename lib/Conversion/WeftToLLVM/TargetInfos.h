//===- TargetInfos.h - factories of the concrete TargetInfos ----*- C++ -*-===//
#ifndef WEFT_CONVERSION_WEFTTOLLVM_TARGETINFOS_H
#define WEFT_CONVERSION_WEFTTOLLVM_TARGETINFOS_H

#include "weft/Conversion/TargetInfo.h"

namespace weft {

std::unique_ptr<TargetInfo> createNVPTXTargetInfo(const CompileTarget &target);
std::unique_ptr<TargetInfo> createAMDGPUTargetInfo(const CompileTarget &target);
std::unique_ptr<TargetInfo> createHostTargetInfo(const CompileTarget &target);

mlir::LLVM::AtomicOrdering toLLVMOrdering(MemOrder order);

/// The i32 special register for `axis`: one of the NVVM or ROCDL ops `X`,
/// `Y`, `Z` (block ids, grid dimensions).
template <typename X, typename Y, typename Z>
mlir::Value specialRegister(mlir::OpBuilder &b, mlir::Location loc, Axis axis) {
  mlir::Type i32 = b.getI32Type();
  switch (axis) {
  case Axis::x:
    return X::create(b, loc, i32);
  case Axis::y:
    return Y::create(b, loc, i32);
  case Axis::z:
    return Z::create(b, loc, i32);
  }
  return {};
}

} // namespace weft

#endif
