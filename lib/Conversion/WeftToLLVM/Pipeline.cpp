//===- Pipeline.cpp - the weft lowering pipeline --------------------------===//
#include "weft/Conversion/Passes.h"

#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

namespace weft {
namespace {
#define GEN_PASS_REGISTRATION
#include "weft/Conversion/Passes.h.inc"

struct LowerOptions : mlir::PassPipelineOptions<LowerOptions> {
  Option<std::string> target{*this, "target",
                             llvm::cl::desc("cuda:90, hip:gfx942 or host"),
                             llvm::cl::init("host")};
  Option<unsigned> numWarps{*this, "num-warps",
                            llvm::cl::desc("Warps per program"),
                            llvm::cl::init(4)};
  Option<bool> debug{*this, "debug",
                     llvm::cl::desc("Bounds checks on peer ids and heap ranges"),
                     llvm::cl::init(false)};
};
} // namespace

void buildLoweringPipeline(mlir::OpPassManager &pm, const TargetSpec &spec) {
  std::string target = spec.str();
  if (spec.numStages > 1)
    pm.addPass(createWeftPipelineDotOperands(
        {target, spec.numWarps, spec.numStages, /*unrollRings=*/true, spec.warpMma}));
  pm.addPass(createWeftExpandTensorDescs());
  pm.addPass(createWeftFenceTensorCopies({target, spec.numWarps, spec.debug}));
  pm.addPass(createWeftAssignLayouts({target, spec.numWarps}));
  pm.addPass(createWeftAddHiddenArgs({target, spec.numWarps, spec.debug}));
  pm.addPass(createWeftEarlyStart({target, spec.numWarps, spec.debug}));
  pm.addPass(createConvertWeftToLLVM({target, spec.numWarps, spec.debug}));
  pm.addPass(createWeftFinalizeKernels({target, spec.numWarps, spec.debug}));
  pm.addPass(mlir::createReconcileUnrealizedCastsPass());
  pm.addPass(mlir::createCanonicalizerPass());
  pm.addPass(mlir::createCSEPass());
}

void registerWeftPasses() {
  registerWeftConversionPasses();
  mlir::PassPipelineRegistration<LowerOptions>(
      "weft-lower", "Lower weft IR to the LLVM dialect for one target",
      [](mlir::OpPassManager &pm, const LowerOptions &options) {
        auto spec = TargetSpec::parse(options.target);
        if (!spec) {
          llvm::consumeError(spec.takeError());
          // An unknown target reaches the first pass, which reports it.
          pm.addPass(createWeftAddHiddenArgs({options.target.getValue(),
                                              options.numWarps,
                                              options.debug}));
          return;
        }
        spec->numWarps = options.numWarps;
        spec->debug = options.debug;
        buildLoweringPipeline(pm, *spec);
      });
}

} // namespace weft
