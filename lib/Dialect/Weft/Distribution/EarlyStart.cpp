//===- EarlyStart.cpp - wait for the kernel ahead where it matters --------===//
#include "weft/Dialect/Weft/Distribution/Passes.h"
#include "weft/Dialect/Weft/IR/CompileTarget.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace weft {
#define GEN_PASS_DEF_WEFTEARLYSTART
#include "weft/Dialect/Weft/Distribution/Passes.h.inc"
} // namespace weft

using namespace mlir;

namespace weft {
namespace {

/// Whether `op` touches nothing but the program's own shared memory, and
/// so may run while the kernel ahead still runs.
bool isProgramLocal(Operation *op, bool debug) {
  if (isa<AllocSharedOp, AllocMBarriersOp>(op))
    return true;
  if (!isMemoryEffectFree(op))
    return false;
  if (!debug)
    return true;
  return !op->walk([](TranslateOp) { return WalkResult::interrupt(); })
              .wasInterrupted();
}

struct EarlyStart : impl::WeftEarlyStartBase<EarlyStart> {
  using WeftEarlyStartBase::WeftEarlyStartBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    FailureOr<CompileTarget> target = getCompileTarget(module);
    if (failed(target))
      return signalPassFailure();
    if (!target->spec.hasEarlyStart())
      return;
    OpBuilder builder(&getContext());
    module.walk([&](func::FuncOp func) {
      if (func.isExternal() || !func->hasAttr(kKernelAttrName))
        return;
      // The entry block dominates the whole kernel, so a wait there in
      // front of the first access (or of its terminator) precedes them all.
      Block &entry = func.getBody().front();
      auto first = llvm::find_if(entry.without_terminator(), [&](Operation &op) {
        return !isProgramLocal(&op, target->options.debug);
      });
      builder.setInsertionPoint(first == entry.without_terminator().end()
                                    ? entry.getTerminator()
                                    : &*first);
      DependencyWaitOp::create(builder, func.getLoc());
      func->setAttr(kEarlyStartAttrName, builder.getUnitAttr());
    });
  }
};

} // namespace
} // namespace weft
