//===- OptimizePipeline.cpp - the weft-optimize pipeline ------------------===//
#include "weft/Dialect/Weft/Transforms/Passes.h"

#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

namespace weft {

void buildOptimizePipeline(mlir::OpPassManager &pm) {
  // Split acquire waits first, so that their fences take part in the
  // coalescing; drop local translations before hoisting, so that what is
  // hoisted is only what remains; coalesce once the address arithmetic has
  // settled; clean up (summed signal values, folded peers) at the end.
  pm.addPass(createWeftRelaxWaits());
  pm.addPass(createWeftLocalShortCircuit());
  pm.addPass(createWeftHoistTranslate());
  pm.addPass(createWeftCoalesceFences());
  pm.addPass(mlir::createCanonicalizerPass());
  pm.addPass(mlir::createCSEPass());
}

void registerWeftOptimizePipeline() {
  mlir::PassPipelineRegistration<>(
      "weft-optimize",
      "Co-optimise computation and communication on weft tile IR",
      buildOptimizePipeline);
}

} // namespace weft
