//===- FinalizeKernels.cpp - make weft.kernel functions entry points ------===//
#include "Lowering.h"

#include "weft/Conversion/Passes.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/LLVMIR/ROCDLDialect.h"
#include "mlir/IR/BuiltinOps.h"

namespace weft {
#define GEN_PASS_DEF_WEFTFINALIZEKERNELS
#include "weft/Conversion/Passes.h.inc"
} // namespace weft

using namespace mlir;

namespace weft {
namespace {

struct FinalizeKernels : impl::WeftFinalizeKernelsBase<FinalizeKernels> {
  using WeftFinalizeKernelsBase::WeftFinalizeKernelsBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto info = TargetInfo::forModule(module);
    if (failed(info))
      return signalPassFailure();
    OpBuilder builder(&getContext());
    SmallVector<LLVM::LLVMFuncOp> kernels;
    module.walk([&](LLVM::LLVMFuncOp func) {
      if (func->hasAttr(kKernelAttrName))
        kernels.push_back(func);
    });
    for (LLVM::LLVMFuncOp kernel : kernels) {
      kernel->removeAttr(kKernelAttrName);
      (*info)->finalizeKernel(kernel, builder);
    }
  }
};

} // namespace
} // namespace weft
