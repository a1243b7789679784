//===- TargetInfo.cpp - shared parts of the target descriptions -----------===//
#include "weft/Conversion/TargetInfo.h"

#include "TargetInfos.h"
#include "weft/Dialect/Weft/IR/CompileTarget.h"

using namespace mlir;

namespace weft {

TargetInfo::~TargetInfo() = default;

std::unique_ptr<TargetInfo> TargetInfo::create(const CompileTarget &target) {
  switch (target.spec.kind) {
  case TargetKind::NVPTX:
    return createNVPTXTargetInfo(target);
  case TargetKind::AMDGPU:
    return createAMDGPUTargetInfo(target);
  case TargetKind::Host:
    return createHostTargetInfo(target);
  }
  return nullptr;
}

FailureOr<std::unique_ptr<TargetInfo>> TargetInfo::forModule(Operation *op) {
  FailureOr<CompileTarget> target = weft::getCompileTarget(op);
  if (failed(target))
    return failure();
  return create(*target);
}

LLVM::LLVMPointerType TargetInfo::globalPtrType(MLIRContext *ctx) const {
  return LLVM::LLVMPointerType::get(ctx, target.spec.globalAddressSpace());
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

Value TargetInfo::loadHinted(OpBuilder &b, Location loc, Type type, Value ptr,
                             unsigned alignment, const AccessHints &hints) const {
  return LLVM::LoadOp::create(b, loc, type, ptr, alignment, hints.isVolatile);
}

void TargetInfo::storeHinted(OpBuilder &b, Location loc, Value value, Value ptr,
                             unsigned alignment, const AccessHints &hints) const {
  LLVM::StoreOp::create(b, loc, value, ptr, alignment, hints.isVolatile);
}

Value TargetInfo::shuffleXor(OpBuilder &, Location, Value, unsigned) const {
  llvm_unreachable("a program of one thread has no lanes to shuffle with");
}

SmallVector<Value> TargetInfo::mma(OpBuilder &, Location, Type, ValueRange,
                                   ValueRange, ValueRange) const {
  llvm_unreachable("mma without mmaShape");
}

SmallVector<Value> TargetInfo::loadMatrices(OpBuilder &, Location, Value, unsigned,
                                            bool) const {
  llvm_unreachable("loadMatrices without mmaShape");
}

void TargetInfo::asyncCopy(OpBuilder &, Location, Value, Value, unsigned, Value) const {
  llvm_unreachable("asyncCopy without hasAsyncCopy");
}

Value TargetInfo::multimem(OpBuilder &, Location, Operation *, Value,
                           Value) const {
  return {};
}

// KernelOptions::check refuses weft.multinode where a target has no engine.
Value TargetInfo::offNodePut(OpBuilder &, Location, Operation *, const HiddenArgs &,
                             Value, Value, Value, Value, Value, Value, SignalKind) const {
  llvm_unreachable("offNodePut on a target without an engine");
}

Value TargetInfo::offNodeGet(OpBuilder &, Location, Operation *, const HiddenArgs &,
                             Value, Value, Value, Value) const {
  llvm_unreachable("offNodeGet on a target without an engine");
}

Value TargetInfo::offNodeSignal(OpBuilder &, Location, Operation *, const HiddenArgs &,
                                Value, Value, Value, SignalKind, bool) const {
  llvm_unreachable("offNodeSignal on a target without an engine");
}

Value TargetInfo::offNodeQuiet(OpBuilder &, Location, Operation *,
                               const HiddenArgs &) const {
  llvm_unreachable("offNodeQuiet on a target without an engine");
}

} // namespace weft
