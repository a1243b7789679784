//===- TargetInfos.h - factories of the concrete TargetInfos ----*- C++ -*-===//
#ifndef WEFT_PASSES_WEFTTOLLVM_TARGETINFOS_H
#define WEFT_PASSES_WEFTTOLLVM_TARGETINFOS_H

#include "weft/Conversion/TargetInfo.h"

namespace weft {

std::unique_ptr<TargetInfo> createNVPTXTargetInfo(const TargetSpec &spec);
std::unique_ptr<TargetInfo> createAMDGPUTargetInfo(const TargetSpec &spec);
std::unique_ptr<TargetInfo> createHostTargetInfo(const TargetSpec &spec);

mlir::LLVM::AtomicOrdering toLLVMOrdering(MemOrder order);

/// The accumulator layout of a dot of shape mnk = {M, N, K} in `shape`
/// instruction tiles (mmaShape()), whose lanes hold the instruction's
/// result fragment (sizePerThread over threadsPerWarp): the warps form the
/// wm x wn grid whose (M / wm) x (N / wn) blocks are squarest, which loads
/// the fewest fragments per instruction. Null when K is not a multiple of
/// the instruction's or no grid divides M x N.
BlockedEncodingAttr mmaGridLayout(mlir::MLIRContext *ctx, std::array<int64_t, 3> mnk,
                                  std::array<int64_t, 3> shape,
                                  llvm::ArrayRef<unsigned> sizePerThread,
                                  llvm::ArrayRef<unsigned> threadsPerWarp, unsigned warps);

/// The widest #weft.swizzled span (128, 64 or 32 bytes) that divides rows
/// of `rowBytes`; 0 for none.
unsigned swizzleSpan(int64_t rowBytes);

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
