//===- TargetInfo.cpp - shared parts of the target descriptions -----------===//
#include "weft/Conversion/TargetInfo.h"

#include "TargetInfos.h"
#include <cmath>

using namespace mlir;

namespace weft {

TargetInfo::~TargetInfo() = default;

std::unique_ptr<TargetInfo> TargetInfo::create(const TargetSpec &spec) {
  switch (spec.kind) {
  case TargetKind::NVPTX:
    return createNVPTXTargetInfo(spec);
  case TargetKind::AMDGPU:
    return createAMDGPUTargetInfo(spec);
  case TargetKind::Host:
    return createHostTargetInfo(spec);
  }
  return nullptr;
}

LLVM::LLVMPointerType TargetInfo::globalPtrType(MLIRContext *ctx) const {
  return LLVM::LLVMPointerType::get(ctx, spec.globalAddressSpace());
}

LLVM::LLVMPointerType TargetInfo::byValueParamType(MLIRContext *ctx) const {
  return LLVM::LLVMPointerType::get(ctx);
}

SmallVector<Type> TargetInfo::hiddenArgTypes(MLIRContext *ctx) const {
  return {byValueParamType(ctx)};
}

static LLVM::AtomicOrdering toLLVM(MemOrder order) {
  switch (order) {
  case MemOrder::weak:
    return LLVM::AtomicOrdering::not_atomic;
  case MemOrder::relaxed:
    return LLVM::AtomicOrdering::monotonic;
  case MemOrder::acquire:
    return LLVM::AtomicOrdering::acquire;
  case MemOrder::release:
    return LLVM::AtomicOrdering::release;
  case MemOrder::acq_rel:
    return LLVM::AtomicOrdering::acq_rel;
  case MemOrder::seq_cst:
    return LLVM::AtomicOrdering::seq_cst;
  }
  return LLVM::AtomicOrdering::seq_cst;
}

LLVM::AtomicOrdering toLLVMOrdering(MemOrder order) { return toLLVM(order); }

static LLVM::AtomicBinOp toLLVM(RMWKind kind) {
  switch (kind) {
  case RMWKind::add:
    return LLVM::AtomicBinOp::add;
  case RMWKind::fadd:
    return LLVM::AtomicBinOp::fadd;
  case RMWKind::max:
    return LLVM::AtomicBinOp::max;
  case RMWKind::min:
    return LLVM::AtomicBinOp::min;
  case RMWKind::umax:
    return LLVM::AtomicBinOp::umax;
  case RMWKind::umin:
    return LLVM::AtomicBinOp::umin;
  case RMWKind::and_:
    return LLVM::AtomicBinOp::_and;
  case RMWKind::or_:
    return LLVM::AtomicBinOp::_or;
  case RMWKind::xor_:
    return LLVM::AtomicBinOp::_xor;
  case RMWKind::xchg:
    return LLVM::AtomicBinOp::xchg;
  }
  return LLVM::AtomicBinOp::xchg;
}

static StringAttr scopeAttr(OpBuilder &b, StringRef scope) {
  return scope.empty() ? StringAttr() : b.getStringAttr(scope);
}

Value TargetInfo::atomicRMW(OpBuilder &b, Location loc, RMWKind kind,
                            Value ptr, Value value, MemOrder order,
                            MemScope scope) const {
  auto op = LLVM::AtomicRMWOp::create(b, loc, toLLVM(kind), ptr, value,
                                      toLLVM(order));
  op.setSyncscopeAttr(scopeAttr(b, syncScope(scope)));
  return op.getResult();
}

void TargetInfo::fence(OpBuilder &b, Location loc, MemOrder order,
                       MemScope scope) const {
  LLVM::FenceOp::create(b, loc, toLLVM(order), syncScope(scope));
}

Value TargetInfo::loadRelaxed(OpBuilder &b, Location loc, Type type,
                              Value ptr, unsigned alignment, MemScope) const {
  return LLVM::LoadOp::create(b, loc, type, ptr, alignment,
                              /*isVolatile=*/true);
}

void TargetInfo::storeRelaxed(OpBuilder &b, Location loc, Value value,
                              Value ptr, unsigned alignment, MemScope) const {
  LLVM::StoreOp::create(b, loc, value, ptr, alignment, /*isVolatile=*/true);
}

Value TargetInfo::shuffleXor(OpBuilder &, Location, Value, unsigned) const {
  llvm_unreachable("a program of one thread has no lanes to shuffle with");
}

BlockedEncodingAttr mmaGridLayout(MLIRContext *ctx, std::array<int64_t, 3> mnk,
                                  std::array<int64_t, 3> shape, ArrayRef<unsigned> sizePerThread,
                                  ArrayRef<unsigned> threadsPerWarp, unsigned warps) {
  if (mnk[2] % shape[2])
    return {};
  unsigned best = 0;
  double bestSkew = 0;
  for (unsigned wm = 1; wm <= warps; wm *= 2) {
    unsigned wn = warps / wm;
    if (mnk[0] % (shape[0] * wm) || mnk[1] % (shape[1] * wn))
      continue;
    double skew = std::abs(std::log2(double(mnk[0]) / wm) - std::log2(double(mnk[1]) / wn));
    if (!best || skew < bestSkew)
      std::tie(best, bestSkew) = std::make_pair(wm, skew);
  }
  if (!best)
    return {};
  return BlockedEncodingAttr::get(ctx, sizePerThread, threadsPerWarp, {best, warps / best},
                                  {1, 0});
}

SmallVector<Value> TargetInfo::mma(OpBuilder &, Location, Type, ValueRange,
                                   ValueRange, ValueRange) const {
  llvm_unreachable("mma without mmaShape");
}

SmallVector<Value> TargetInfo::loadMatrices(OpBuilder &, Location, Value, unsigned,
                                            bool) const {
  llvm_unreachable("loadMatrices without mmaShape");
}

SwizzledSharedAttr TargetInfo::mmaOperandLayout(MLIRContext *ctx, Type elemType,
                                               std::array<int64_t, 3> mnk,
                                               unsigned index) const {
  auto shape = mmaShape(elemType);
  if (!shape || mmaFragments() != MmaFragments::Ldmatrix)
    return {};
  auto [m, n, k] = mnk;
  if (m % (*shape)[0] || n % (*shape)[1] || k % (*shape)[2])
    return {};
  unsigned bytes = swizzleSpan(elemType.getIntOrFloatBitWidth() / 8 * (index == 0 ? k : n));
  return bytes ? SwizzledSharedAttr::get(ctx, bytes, 0) : SwizzledSharedAttr();
}

unsigned swizzleSpan(int64_t rowBytes) {
  for (unsigned bytes : {128u, 64u, 32u})
    if (rowBytes % bytes == 0)
      return bytes;
  return 0;
}

SmallVector<Value> TargetInfo::warpgroupMma(OpBuilder &, Location, Type, int64_t, Value, Value,
                                            ValueRange) const {
  llvm_unreachable("warpgroupMma without warpgroupOperandLayout");
}

void TargetInfo::warpgroupFence(OpBuilder &, Location) const {
  llvm_unreachable("warpgroupFence without warpgroupOperandLayout");
}

void TargetInfo::warpgroupCommit(OpBuilder &, Location) const {
  llvm_unreachable("warpgroupCommit without warpgroupOperandLayout");
}

SmallVector<Value> TargetInfo::warpgroupWait(OpBuilder &, Location, unsigned,
                                             ValueRange acc) const {
  return acc; // no asynchronous products
}

void TargetInfo::asyncCopy(OpBuilder &, Location, Value, Value, unsigned, Value) const {
  llvm_unreachable("asyncCopy without hasAsyncCopy");
}

void TargetInfo::tensorCopy(OpBuilder &, Location, Value, Value, ValueRange, Value,
                            Value) const {
  llvm_unreachable("tensorCopy without hasTensorCopies");
}

void TargetInfo::barrierInit(OpBuilder &, Location, ValueRange, unsigned, bool) const {
  llvm_unreachable("barrierInit without hasTensorCopies");
}

void TargetInfo::barrierArriveExpect(OpBuilder &, Location, Value, int64_t) const {
  llvm_unreachable("barrierArriveExpect without hasTensorCopies");
}

void TargetInfo::barrierWait(OpBuilder &, Location, Value, Value) const {
  llvm_unreachable("barrierWait without hasTensorCopies");
}

void TargetInfo::barrierArrive(OpBuilder &, Location, Value) const {
  llvm_unreachable("barrierArrive without hasTensorCopies");
}

void TargetInfo::barrierInval(OpBuilder &, Location, Value) const {
  llvm_unreachable("barrierInval without hasTensorCopies");
}

void TargetInfo::asyncProxyFence(OpBuilder &, Location) const {
  llvm_unreachable("asyncProxyFence without hasTensorCopies");
}

Value TargetInfo::clusterRank(OpBuilder &, Location) const {
  llvm_unreachable("clusterRank without hasClusters");
}

void TargetInfo::clusterArrive(OpBuilder &, Location, bool) const {
  llvm_unreachable("clusterArrive without hasClusters");
}

void TargetInfo::clusterWait(OpBuilder &, Location) const {
  llvm_unreachable("clusterWait without hasClusters");
}

Value TargetInfo::multimem(OpBuilder &, Location, Operation *, Value,
                           Value) const {
  return {};
}

} // namespace weft
