//===- ConvertWeftToLLVM.cpp - the conversion pass ------------------------===//
//
// Two conversions in one pass: first the weft ops, inside functions that
// still have their func.func form (so the hidden arguments are stable block
// arguments); then func, arith, math, cf and index to the LLVM dialect, with
// !weft.ptr becoming the target's global pointer.
//
//===----------------------------------------------------------------------===//
#include "Lowering.h"

#include "weft/Conversion/Passes.h"

#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVM.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Conversion/LLVMCommon/ConversionTarget.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/LLVMIR/ROCDLDialect.h"
#include "mlir/IR/BuiltinOps.h"

namespace weft {
#define GEN_PASS_DEF_CONVERTWEFTTOLLVM
#include "weft/Conversion/Passes.h.inc"
} // namespace weft

using namespace mlir;

namespace weft {
namespace {

/// Tile operands are distributed to threads before this pass; say so
/// instead of a bare "failed to legalize".
LogicalResult checkScalar(ModuleOp module) {
  WalkResult result = module.walk([](Operation *op) {
    if (!isa<WeftDialect>(op->getDialect()))
      return WalkResult::advance();
    auto isTile = [](Type t) { return isa<RankedTensorType>(t); };
    if (llvm::any_of(op->getOperandTypes(), isTile) ||
        llvm::any_of(op->getResultTypes(), isTile)) {
      op->emitOpError("on tiles must be distributed to threads before the "
                      "LLVM lowering");
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}

struct ConvertWeftToLLVM : impl::ConvertWeftToLLVMBase<ConvertWeftToLLVM> {
  using ConvertWeftToLLVMBase::ConvertWeftToLLVMBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    auto spec = parseTargetOption(module, target, numWarps);
    if (failed(spec) || failed(checkScalar(module)))
      return signalPassFailure();
    auto info = TargetInfo::create(*spec);
    LLVMTypeConverter converter(ctx);
    addPointerConversion(converter, *info);
    Lowering lowering(*info);

    {
      ConversionTarget legality(*ctx);
      legality.addIllegalDialect<WeftDialect>();
      legality.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
      RewritePatternSet patterns(ctx);
      populateMemoryPatterns(converter, lowering, patterns);
      populateSynchronizationPatterns(converter, lowering, patterns);
      populateMultimemPatterns(converter, lowering, patterns);
      if (failed(applyPartialConversion(module, legality, std::move(patterns))))
        return signalPassFailure();
    }

    LLVMConversionTarget legality(*ctx);
    legality.addLegalOp<ModuleOp>();
    legality.addLegalDialect<NVVM::NVVMDialect, ROCDL::ROCDLDialect>();
    RewritePatternSet patterns(ctx);
    populateFuncToLLVMConversionPatterns(converter, patterns);
    arith::populateArithToLLVMConversionPatterns(converter, patterns);
    populateMathToLLVMConversionPatterns(converter, patterns);
    cf::populateControlFlowToLLVMConversionPatterns(converter, patterns);
    index::populateIndexToLLVMConversionPatterns(converter, patterns);
    if (failed(applyPartialConversion(module, legality, std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
} // namespace weft
