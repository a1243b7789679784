//===- TargetInfos.h - factories of the concrete TargetInfos ----*- C++ -*-===//
#ifndef WEFT_PASSES_WEFTTOLLVM_TARGETINFOS_H
#define WEFT_PASSES_WEFTTOLLVM_TARGETINFOS_H

#include "weft/Conversion/TargetInfo.h"

namespace weft {

std::unique_ptr<TargetInfo> createNVPTXTargetInfo(const TargetSpec &spec);
std::unique_ptr<TargetInfo> createAMDGPUTargetInfo(const TargetSpec &spec);
std::unique_ptr<TargetInfo> createHostTargetInfo(const TargetSpec &spec);

mlir::LLVM::AtomicOrdering toLLVMOrdering(MemOrder order);

/// The rows wm of the wm x (warps / wm) grid of warps that shares an MxN
/// accumulator in tileM x tileN instruction tiles (mnk = {M, N, K}), each
/// warp owning (M / wm) x (N / wn): the squarest block, which loads the
/// fewest fragments per instruction; 0 when no grid divides it.
unsigned mmaWarpRows(unsigned warps, std::array<int64_t, 3> mnk, int64_t tileM, int64_t tileN);

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
