//===- FenceTensorCopies.cpp - acquires ordered before bulk copies --------===//
#include "Lowering.h"

#include "weft/Conversion/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

namespace weft {
#define GEN_PASS_DEF_WEFTFENCETENSORCOPIES
#include "weft/Conversion/Passes.h.inc"
} // namespace weft

using namespace mlir;

namespace weft {
namespace {

struct FenceTensorCopies : impl::WeftFenceTensorCopiesBase<FenceTensorCopies> {
  using WeftFenceTensorCopiesBase::WeftFenceTensorCopiesBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto spec = parseTargetOption(module, target, numWarps, debug);
    if (failed(spec))
      return signalPassFailure();
    if (!TargetInfo::create(*spec)->hasTensorCopies())
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
