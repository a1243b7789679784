//===- FenceTensorCopies.cpp - acquires ordered before bulk copies --------===//
#include "weft/Dialect/Weft/Distribution/Passes.h"
#include "weft/Dialect/Weft/IR/CompileTarget.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

namespace weft {
#define GEN_PASS_DEF_WEFTFENCETENSORCOPIES
#include "weft/Dialect/Weft/Distribution/Passes.h.inc"
} // namespace weft

using namespace mlir;

namespace weft {
namespace {

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
        if (!acquires(op))
          return;
        builder.setInsertionPointAfter(op);
        AsyncProxyFenceOp::create(builder, op->getLoc());
      });
    });
  }
};

} // namespace
} // namespace weft
