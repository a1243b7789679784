//===- AddHiddenArgs.cpp - thread the kernel context through functions ----===//
#include "Lowering.h"

#include "weft/Conversion/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/LLVMIR/ROCDLDialect.h"
#include "mlir/IR/BuiltinOps.h"

namespace weft {
#define GEN_PASS_DEF_WEFTADDHIDDENARGS
#include "weft/Conversion/Passes.h.inc"
} // namespace weft

using namespace mlir;

namespace weft {
namespace {

struct AddHiddenArgs : impl::WeftAddHiddenArgsBase<AddHiddenArgs> {
  using WeftAddHiddenArgsBase::WeftAddHiddenArgsBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto info = TargetInfo::forModule(module);
    if (failed(info))
      return signalPassFailure();
    SmallVector<Type> hiddenTypes = (*info)->hiddenArgTypes(&getContext());

    // Functions with a body take the context; external declarations are
    // someone else's ABI and stay as they are.
    DenseSet<StringAttr> threaded;
    WalkResult result = module.walk([&](func::FuncOp func) {
      if (func.isExternal())
        return WalkResult::advance();
      if (func->hasAttr(kKernelAttrName) && func.getNumResults() != 0) {
        func.emitError("a weft kernel returns nothing; write results "
                       "through pointers");
        return WalkResult::interrupt();
      }
      unsigned n = func.getNumArguments();
      SmallVector<unsigned> positions(hiddenTypes.size(), n);
      SmallVector<DictionaryAttr> attrs(hiddenTypes.size());
      SmallVector<Location> locs(hiddenTypes.size(), func.getLoc());
      if (failed(func.insertArguments(positions, hiddenTypes, attrs, locs))) {
        func.emitError("could not add the kernel-context arguments");
        return WalkResult::interrupt();
      }
      threaded.insert(func.getSymNameAttr());
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      return signalPassFailure();

    module.walk([&](func::CallOp call) {
      if (!threaded.contains(call.getCalleeAttr().getAttr()))
        return;
      auto caller = call->getParentOfType<func::FuncOp>();
      Block &entry = caller.getBody().front();
      unsigned first = entry.getNumArguments() - hiddenTypes.size();
      SmallVector<Value> operands(call.getOperands());
      for (unsigned i = 0; i < hiddenTypes.size(); ++i)
        operands.push_back(entry.getArgument(first + i));
      call->setOperands(operands);
    });
  }
};

} // namespace
} // namespace weft
