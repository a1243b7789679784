//===- ConvertWeftToLLVM.cpp - the conversion pass ------------------------===//
//
// Two conversions in one pass: first the weft ops, inside functions that
// still have their func.func form (so the hidden arguments are stable block
// arguments); then func, arith, math, cf and index to the LLVM dialect, with
// !weft.ptr becoming the target's global pointer.
//
//===----------------------------------------------------------------------===//
#include "TileLowering.h"

#include "weft/Conversion/Passes.h"

#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVM.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
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

/// Tiles are distributed to threads (weft-assign-layouts) before this
/// pass, and only in forms the patterns handle; say so instead of a bare
/// "failed to legalize".
LogicalResult checkDistributed(ModuleOp module) {
  WalkResult result = module.walk([](Operation *op) {
    auto isPlainTile = [](Type t) {
      return isa<RankedTensorType>(t) && !isDistributed(t);
    };
    if (llvm::any_of(op->getOperandTypes(), isPlainTile) ||
        llvm::any_of(op->getResultTypes(), isPlainTile)) {
      op->emitOpError("on tiles must be distributed to threads "
                      "(weft-assign-layouts) before the LLVM lowering");
      return WalkResult::interrupt();
    }
    return failed(checkTileLowerable(op)) ? WalkResult::interrupt()
                                          : WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}

bool hasNoTiles(Operation *op) {
  auto isTile = [](Type t) { return isa<RankedTensorType>(t); };
  return llvm::none_of(op->getOperandTypes(), isTile) &&
         llvm::none_of(op->getResultTypes(), isTile);
}

struct ConvertWeftToLLVM : impl::ConvertWeftToLLVMBase<ConvertWeftToLLVM> {
  using ConvertWeftToLLVMBase::ConvertWeftToLLVMBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    auto spec = parseTargetOption(module, target, numWarps, debug);
    if (failed(spec) || failed(checkDistributed(module)))
      return signalPassFailure();
    auto info = TargetInfo::create(*spec);
    LLVMTypeConverter converter(ctx);
    addPointerConversion(converter, *info);
    addTileConversion(converter);
    Lowering lowering(*info);
    // Before any rewrite: the tile patterns look up the original values.
    AxisInfoAnalysis axis(module);
    TileLowering tiles(lowering, axis);

    {
      ConversionTarget legality(*ctx);
      legality.addIllegalDialect<WeftDialect>();
      legality.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
      legality.addDynamicallyLegalDialect<arith::ArithDialect,
                                          math::MathDialect>(hasNoTiles);
      RewritePatternSet patterns(ctx);
      populateMemoryPatterns(converter, lowering, patterns);
      populateSynchronizationPatterns(converter, lowering, patterns);
      populateMultimemPatterns(converter, lowering, patterns);
      populateTileOpPatterns(converter, tiles, patterns);
      populateTileMemoryPatterns(converter, tiles, patterns);
      populateReducePatterns(converter, tiles, patterns);
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
