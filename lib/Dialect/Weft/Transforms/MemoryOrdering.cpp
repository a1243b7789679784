//===- MemoryOrdering.cpp - what the co-optimisations know about memory ---===//
#include "MemoryOrdering.h"

#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;

namespace weft {

MemOrder joinOrders(MemOrder a, MemOrder b) {
  if (a == b)
    return a;
  if (a == MemOrder::seq_cst || b == MemOrder::seq_cst)
    return MemOrder::seq_cst;
  // Below seq_cst an order is the pair (acquires?, releases?), plus the
  // atomicity of relaxed over weak.
  bool acquire = hasAcquire(a) || hasAcquire(b);
  bool release = hasRelease(a) || hasRelease(b);
  if (acquire && release)
    return MemOrder::acq_rel;
  if (acquire)
    return MemOrder::acquire;
  if (release)
    return MemOrder::release;
  return MemOrder::relaxed; // {weak, relaxed}, a != b
}

MemScope joinScopes(MemScope a, MemScope b) {
  return scopeCovers(a, b) ? a : b;
}

bool isMemoryFree(Operation *op) { return isMemoryEffectFree(op); }

Operation *prevMemoryOp(Operation *op) {
  for (Operation *prev = op->getPrevNode(); prev; prev = prev->getPrevNode())
    if (!isMemoryFree(prev))
      return prev;
  return nullptr;
}

Operation *nextMemoryOp(Operation *op) {
  for (Operation *next = op->getNextNode(); next; next = next->getNextNode())
    if (!isMemoryFree(next))
      return next;
  return nullptr;
}

/// The order and scope with which a weft op that writes releases, if it is
/// one that releases the program's earlier writes.
static bool isReleaseOf(Operation *op, MemScope scope) {
  auto covers = [&](MemOrder order, MemScope opScope) {
    return hasRelease(order) && scopeCovers(opScope, scope);
  };
  if (auto store = dyn_cast<StoreOp>(op))
    return covers(store.getOrder(), store.getScope());
  if (auto signal = dyn_cast<SignalOp>(op))
    return covers(signal.getOrder(), signal.getScope());
  if (auto rmw = dyn_cast<AtomicRMWOp>(op))
    return covers(rmw.getOrder(), rmw.getScope());
  if (auto cas = dyn_cast<AtomicCASOp>(op))
    return covers(cas.getOrder(), cas.getScope());
  if (auto red = dyn_cast<MultimemRedOp>(op))
    return covers(red.getOrder(), red.getScope());
  if (auto store = dyn_cast<MultimemStoreOp>(op))
    return covers(store.getOrder(), store.getScope());
  // Every program's writes before the barrier are visible to every program
  // after it, on every rank.
  return isa<BarrierOp>(op);
}

bool writesWithoutRelease(Operation *op, MemScope scope) {
  if (isa<LoadOp, WaitOp, MultimemLdReduceOp, FenceOp>(op))
    return false;
  if (isa<StoreOp, SignalOp, AtomicRMWOp, AtomicCASOp, MultimemRedOp,
          MultimemStoreOp, BarrierOp>(op))
    return !isReleaseOf(op, scope);
  if (isMemoryFree(op))
    return false;
  auto effects = dyn_cast<MemoryEffectOpInterface>(op);
  if (effects && (effects.hasEffect<MemoryEffects::Write>() ||
                  effects.hasEffect<MemoryEffects::Free>()))
    return true;
  // Control flow (scf.if, scf.for, ...) writes what its regions write.
  // Recognised by interface: trait checks (HasRecursiveMemoryEffects) made
  // here would not match libMLIR's TypeIDs inside WeftPlugin.so.
  if (isa<RegionBranchOpInterface, LoopLikeOpInterface>(op)) {
    for (Region &region : op->getRegions())
      for (Operation &nested : region.getOps())
        if (writesWithoutRelease(&nested, scope))
          return true;
    return false;
  }
  // A call, or an op nothing is known about, unless its interface says it
  // does not write.
  return !effects;
}

bool isWaitWithUnusedResult(Operation *op, std::optional<MemOrder> order) {
  auto wait = dyn_cast_or_null<WaitOp>(op);
  return wait && wait.getResult().use_empty() &&
         (!order || wait.getOrder() == *order);
}

} // namespace weft
