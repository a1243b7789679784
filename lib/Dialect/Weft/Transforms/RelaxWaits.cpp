//===- RelaxWaits.cpp - acquire waits as relaxed polls plus a fence -------===//
//
// An acquire wait lowers to a relaxed polling loop in one thread, an
// acquire fence in that thread and a join of the program's threads; a
// program-level acquire fence is a fence in every thread followed by a join
// (docs/design.md). So `wait acquire` == `wait relaxed; fence acquire`, and
// the fences of several waits can merge (weft-coalesce-fences).
//
//===----------------------------------------------------------------------===//
#include "MemoryOrdering.h"
#include "weft/Dialect/Weft/Transforms/Passes.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"

namespace weft {
#define GEN_PASS_DEF_WEFTRELAXWAITS
#include "weft/Dialect/Weft/Transforms/Passes.h.inc"
} // namespace weft

using namespace mlir;

namespace weft {
namespace {

bool isAcquireWait(Operation *op) {
  auto wait = dyn_cast_or_null<WaitOp>(op);
  return wait && wait.getOrder() == MemOrder::acquire;
}

/// An scf.for whose body only polls (memory-free ops and waits whose result
/// is unused), one of them an acquire wait: a wait per peer.
bool isAcquirePollingLoop(Operation *op) {
  auto loop = dyn_cast_or_null<scf::ForOp>(op);
  if (!loop)
    return false;
  bool acquires = false;
  for (Operation &nested : loop.getBody()->getOperations()) {
    if (isMemoryFree(&nested))
      continue;
    if (!isWaitWithUnusedResult(&nested))
      return false;
    acquires |= isAcquireWait(&nested);
  }
  return acquires;
}

/// After the split, will weft-coalesce-fences merge this wait's fence with
/// another one? Yes when the next memory op is an acquiring fence, an
/// acquire wait whose result is unused or a loop of such waits (their
/// polls may move before our fence, see SinkAcquireFence); and, if our own
/// result is unused, when the previous memory op is an acquire wait or such
/// a loop (we are the next wait), or when we are in such a loop (the fence
/// leaves it).
bool fenceCanBeShared(WaitOp wait) {
  Operation *next = nextMemoryOp(wait);
  if (auto fence = dyn_cast_or_null<FenceOp>(next))
    if (hasAcquire(fence.getOrder()))
      return true;
  if ((isAcquireWait(next) && isWaitWithUnusedResult(next)) ||
      isAcquirePollingLoop(next))
    return true;
  if (!wait.getResult().use_empty())
    return false;
  Operation *prev = prevMemoryOp(wait);
  return isAcquireWait(prev) || isAcquirePollingLoop(prev) ||
         isAcquirePollingLoop(wait->getParentOp());
}

struct WeftRelaxWaits : impl::WeftRelaxWaitsBase<WeftRelaxWaits> {
  using WeftRelaxWaitsBase::WeftRelaxWaitsBase;

  void runOnOperation() override {
    // Decide on the input, then rewrite: each decision looks at the waits
    // around it as they were.
    SmallVector<WaitOp> toSplit;
    getOperation()->walk([&](WaitOp wait) {
      if (wait.getOrder() == MemOrder::acquire &&
          (all || fenceCanBeShared(wait)))
        toSplit.push_back(wait);
    });

    OpBuilder builder(&getContext());
    for (WaitOp wait : toSplit) {
      wait.setOrder(MemOrder::relaxed);
      builder.setInsertionPointAfter(wait);
      FenceOp::create(builder, wait.getLoc(), MemOrder::acquire,
                      wait.getScope());
    }
  }
};

} // namespace
} // namespace weft
