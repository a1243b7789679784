//===- SetTarget.cpp - stamp the compile target on the module -------------===//
#include "weft/Dialect/Weft/Distribution/Passes.h"
#include "weft/Dialect/Weft/IR/CompileTarget.h"

#include "mlir/IR/BuiltinOps.h"

namespace weft {
#define GEN_PASS_DEF_WEFTSETTARGET
#include "weft/Dialect/Weft/Distribution/Passes.h.inc"
} // namespace weft

using namespace mlir;

namespace weft {
namespace {

struct SetTarget : impl::WeftSetTargetBase<SetTarget> {
  using WeftSetTargetBase::WeftSetTargetBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto spec = TargetSpec::parse(target);
    if (!spec) {
      module.emitError() << llvm::toString(spec.takeError());
      return signalPassFailure();
    }
    CompileTarget stamped{*spec, {numWarps, numStages, warpMma, debug, multinode}};
    if (llvm::Error err = stamped.options.check(stamped.spec)) {
      module.emitError() << llvm::toString(std::move(err));
      return signalPassFailure();
    }
    // Weft ops verify their tiles; the upstream ops between them do not.
    WalkResult shapes = module.walk([](Operation *op) {
      if (isa<WeftDialect>(op->getDialect()) || succeeded(verifyTileShapes(op)))
        return WalkResult::advance();
      return WalkResult::interrupt();
    });
    if (shapes.wasInterrupted())
      return signalPassFailure();
    setCompileTarget(module, stamped);
  }
};

} // namespace
} // namespace weft
