//===- FenceTensorCopies.cpp - acquires ordered before bulk copies --------===//
#include "weft/Dialect/Weft/Distribution/Passes.h"
#include "weft/Dialect/Weft/IR/CompileTarget.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/LoopLikeInterface.h"

namespace weft {
#define GEN_PASS_DEF_WEFTFENCETENSORCOPIES
#include "weft/Dialect/Weft/Distribution/Passes.h.inc"
} // namespace weft

using namespace mlir;

namespace weft {
namespace {

/// Whether `op` is or holds a bulk tensor copy, or a call (whose callee
/// may).
bool mayCopy(Operation *op) {
  return op->walk([](Operation *inner) {
             return isa<DescAsyncCopyOp, CallOpInterface>(inner) ? WalkResult::interrupt()
                                                                 : WalkResult::advance();
           })
      .wasInterrupted();
}

/// Whether a bulk tensor copy may run after `op`: later in its block or an
/// enclosing one, or anywhere in a loop around it (its next step). An
/// acquire after the last copy (an epilogue's wait for partial sums) needs
/// no fence: every thread's fence costs, and nothing reads through the
/// async proxy after it.
bool copyFollows(Operation *op) {
  for (Operation *at = op; at && !isa<FunctionOpInterface>(at); at = at->getParentOp()) {
    for (Operation *next = at->getNextNode(); next; next = next->getNextNode())
      if (mayCopy(next))
        return true;
    Operation *parent = at->getParentOp();
    if (parent && isa<LoopLikeOpInterface>(parent) && mayCopy(parent))
      return true;
  }
  return false;
}

struct FenceTensorCopies : impl::WeftFenceTensorCopiesBase<FenceTensorCopies> {
  using WeftFenceTensorCopiesBase::WeftFenceTensorCopiesBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    FailureOr<CompileTarget> target = getCompileTarget(module);
    if (failed(target))
      return signalPassFailure();
    if (!target->spec.hasTensorCopies())
      return;
    OpBuilder builder(&getContext());
    module.walk([&](func::FuncOp func) {
      bool copies = func.walk([](DescAsyncCopyOp) { return WalkResult::interrupt(); })
                        .wasInterrupted();
      if (!copies)
        return;
      func.walk([&](Operation *op) {
        if (!acquires(op) || !copyFollows(op))
          return;
        builder.setInsertionPointAfter(op);
        AsyncProxyFenceOp::create(builder, op->getLoc());
      });
    });
  }
};

} // namespace
} // namespace weft
