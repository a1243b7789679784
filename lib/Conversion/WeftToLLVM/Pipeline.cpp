//===- Pipeline.cpp - the weft lowering pipeline --------------------------===//
#include "weft/Conversion/Passes.h"
#include "weft/Dialect/Weft/Distribution/Passes.h"

#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

namespace weft {
namespace {
#define GEN_PASS_REGISTRATION
#include "weft/Conversion/Passes.h.inc"

/// weft-lower's options: weft-set-target's.
struct LowerOptions : mlir::PassPipelineOptions<LowerOptions> {
  Option<std::string> target{*this, "target",
                             llvm::cl::desc("cuda:90, hip:gfx942 or host"),
                             llvm::cl::init("host")};
  Option<unsigned> numWarps{*this, "num-warps",
                            llvm::cl::desc("Warps per program"),
                            llvm::cl::init(4)};
  Option<unsigned> numStages{*this, "num-stages",
                             llvm::cl::desc("Buffers per operand of a pipelined K loop"),
                             llvm::cl::init(3)};
  Option<bool> warpMma{*this, "warp-mma",
                       llvm::cl::desc("wl.dot takes warp-level MMA even where "
                                      "warpgroup MMA applies"),
                       llvm::cl::init(false)};
  Option<bool> debug{*this, "debug",
                     llvm::cl::desc("Bounds checks on peer ids and heap ranges"),
                     llvm::cl::init(false)};
  Option<bool> multinode{*this, "multinode",
                         llvm::cl::desc("The kernel runs in a job across nodes"),
                         llvm::cl::init(false)};
};

void addLoweringPasses(mlir::OpPassManager &pm, const WeftSetTargetOptions &target) {
  pm.addPass(createWeftSetTarget(target));
  pm.addPass(createWeftPlanBulkStores());
  pm.addPass(createWeftPipelineDotOperands());
  pm.addPass(createWeftExpandTensorDescs());
  pm.addPass(createWeftFenceTensorCopies());
  pm.addPass(createWeftAssignLayouts());
  pm.addPass(createWeftAddHiddenArgs());
  pm.addPass(createWeftEarlyStart());
  pm.addPass(createConvertWeftToLLVM());
  pm.addPass(createWeftFinalizeKernels());
  pm.addPass(mlir::createReconcileUnrealizedCastsPass());
  pm.addPass(mlir::createCanonicalizerPass());
  pm.addPass(mlir::createCSEPass());
}

} // namespace

void buildLoweringPipeline(mlir::OpPassManager &pm, const CompileTarget &target) {
  const KernelOptions &o = target.options;
  addLoweringPasses(pm, {target.spec.str(), o.numWarps, o.numStages, o.warpMma, o.debug,
                         o.multinode});
}

void registerWeftPasses() {
  registerWeftDistributionPasses();
  registerWeftConversionPasses();
  mlir::PassPipelineRegistration<LowerOptions>(
      "weft-lower", "Lower weft IR to the LLVM dialect for one target",
      [](mlir::OpPassManager &pm, const LowerOptions &options) {
        addLoweringPasses(pm, {options.target, options.numWarps, options.numStages,
                               options.warpMma, options.debug, options.multinode});
      });
}

} // namespace weft
