//===- ConvertWeftToLLVM.cpp - the conversion pass ------------------------===//
//
// Two conversions in one pass: first the weft ops, inside functions that
// still have their func.func form (so the hidden arguments are stable block
// arguments); then func, arith, math, cf and index to the LLVM dialect, with
// !weft.ptr becoming the target's global pointer.
//
//===----------------------------------------------------------------------===//
#include "TileLowering.h"
#include "NVPTX/NVPTXPatterns.h"

#include "weft/Conversion/Passes.h"

#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVM.h"
#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MathToLibm/MathToLibm.h"
#include "mlir/Conversion/MathToROCDL/MathToROCDL.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Dialect/AMDGPU/Utils/Chipset.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
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
LogicalResult checkDistributed(ModuleOp module, const TargetInfo &target) {
  WalkResult result = module.walk([&](Operation *op) {
    auto isPlainTile = [](Type t) {
      return isa<RankedTensorType>(t) && !isDistributed(t);
    };
    if (llvm::any_of(op->getOperandTypes(), isPlainTile) ||
        llvm::any_of(op->getResultTypes(), isPlainTile)) {
      op->emitOpError("on tiles must be distributed to threads "
                      "(weft-assign-layouts) before the LLVM lowering");
      return WalkResult::interrupt();
    }
    return failed(checkTileLowerable(op, target)) ? WalkResult::interrupt()
                                                  : WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}

/// math.exp2 and math.exp marked `afn` (wl.math.fast_exp2 and fast_exp) on
/// f32, and on f16 and bf16 through f32: the GPU's exponential unit alone
/// (`intrinsic`), without the range scaling the precise forms wrap around
/// it to keep denormal arguments and results; exp multiplies by log2(e)
/// first. Other types keep the precise lowering.
template <typename MathOp>
struct ApproxExpLowering : ConvertOpToLLVMPattern<MathOp> {
  ApproxExpLowering(const LLVMTypeConverter &converter, StringRef intrinsic)
      : ConvertOpToLLVMPattern<MathOp>(converter, /*benefit=*/3),
        intrinsic(intrinsic) {}

  LogicalResult
  matchAndRewrite(MathOp op, typename MathOp::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto type = dyn_cast<FloatType>(op.getType());
    if (!type || type.getWidth() > 32 ||
        !arith::bitEnumContainsAll(op.getFastmath(),
                                   arith::FastMathFlags::afn))
      return failure();
    Location loc = op.getLoc();
    Type f32 = rewriter.getF32Type();
    Value x = adaptor.getOperand();
    if (type != f32)
      x = LLVM::FPExtOp::create(rewriter, loc, f32, x);
    if constexpr (std::is_same_v<MathOp, math::ExpOp>)
      x = LLVM::FMulOp::create(
          rewriter, loc, x,
          LLVM::ConstantOp::create(rewriter, loc, f32,
                                   rewriter.getF32FloatAttr(M_LOG2E)));
    Value y = LLVM::CallIntrinsicOp::create(rewriter, loc, f32,
                                            rewriter.getStringAttr(intrinsic),
                                            ValueRange{x})
                  .getResult(0);
    if (type != f32)
      y = LLVM::FPTruncOp::create(rewriter, loc, type, y);
    rewriter.replaceOp(op, y);
    return success();
  }

  std::string intrinsic;
};

void populateApproxExpPatterns(const LLVMTypeConverter &converter,
                               StringRef intrinsic,
                               RewritePatternSet &patterns) {
  patterns.add<ApproxExpLowering<math::Exp2Op>, ApproxExpLowering<math::ExpOp>>(
      converter, intrinsic);
}

/// `math` ops become calls into the target's math library where that holds
/// the precise implementation (as in CUDA and HIP without fast-math), LLVM
/// intrinsics elsewhere. Codegen links the library the calls need
/// (lib/Target/Codegen/DeviceLibraries.cpp); the host's is the C library.
void populateMathPatterns(const LLVMTypeConverter &converter,
                          const TargetSpec &spec,
                          RewritePatternSet &patterns) {
  // The intrinsic lowerings are the fallback, and MathToLLVM's log1p
  // shortcut log(1 + x) loses the precision log1p exists for.
  constexpr bool approximateLog1p = false;
  switch (spec.kind) {
  case TargetKind::NVPTX:
    // The NVPTX backend selects none of the transcendental intrinsics
    // (llvm.exp, llvm.sin, ... have no libcall either): libdevice for all.
    populateApproxExpPatterns(converter, "llvm.nvvm.ex2.approx.ftz.f32",
                              patterns);
    populateLibDeviceConversionPatterns(converter, patterns, /*benefit=*/2);
    populateMathToLLVMConversionPatterns(converter, patterns, approximateLog1p,
                                         /*benefit=*/1);
    return;
  case TargetKind::AMDGPU: {
    // OCML, except where the backend expands the intrinsic precisely (f32
    // exp and log, sqrt, fma, ...), which MathToROCDL leaves to MathToLLVM.
    // Its patterns have the default benefit, so MathToLLVM goes below it.
    populateApproxExpPatterns(converter, "llvm.amdgcn.exp2.f32", patterns);
    FailureOr<amdgpu::Chipset> chipset = amdgpu::Chipset::parse(spec.arch);
    populateMathToROCDLConversionPatterns(
        converter, patterns,
        succeeded(chipset) ? std::optional(*chipset) : std::nullopt);
    populateMathToLLVMConversionPatterns(converter, patterns, approximateLog1p,
                                         /*benefit=*/0);
    return;
  }
  case TargetKind::Host: {
    // libm for every function it has; x86 selects the cheap ones (sqrtf,
    // floorf, ...) as instructions all the same. MathToLibm would also call
    // rsqrtf, which the C library lacks: MathToLLVM's 1 / sqrt(x) it is.
    RewritePatternSet libm(patterns.getContext());
    populateMathToLibmConversionPatterns(libm, /*benefit=*/2);
    for (std::unique_ptr<RewritePattern> &pattern : libm.getNativePatterns()) {
      std::optional<OperationName> root = pattern->getRootKind();
      if (!root || root->getStringRef() != math::RsqrtOp::getOperationName())
        patterns.add(std::move(pattern));
    }
    populateMathToLLVMConversionPatterns(converter, patterns, approximateLog1p,
                                         /*benefit=*/1);
    return;
  }
  }
  llvm_unreachable("unknown target kind");
}

struct ConvertWeftToLLVM : impl::ConvertWeftToLLVMBase<ConvertWeftToLLVM> {
  using ConvertWeftToLLVMBase::ConvertWeftToLLVMBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    auto targetInfo = TargetInfo::forModule(module);
    if (failed(targetInfo))
      return signalPassFailure();
    const TargetInfo &info = **targetInfo;
    // Exchanges placed in dynamic shared memory fit; the check reports the
    // static ones that do not.
    if (failed(placeSharedBuffers(module, info.getCompileTarget())) ||
        failed(checkDistributed(module, info)))
      return signalPassFailure();
    LLVMTypeConverter converter(ctx);
    addPointerConversion(converter, info);
    addTileConversion(converter);
    addSharedBufferConversion(converter, info);
    Lowering lowering(info);
    // Before any rewrite: the tile patterns look up the original values.
    AxisInfoAnalysis axis(module);
    TileLowering tiles(lowering, axis);

    // Loops become branches only now, after the analysis saw them (an
    // induction variable's divisibility aligns a K loop's loads). The
    // rewrite moves blocks and ops, so the values it describes survive.
    {
      ConversionTarget legality(*ctx);
      legality.addIllegalOp<scf::ForallOp, scf::ForOp, scf::IfOp, scf::IndexSwitchOp,
                            scf::ParallelOp, scf::WhileOp, scf::ExecuteRegionOp>();
      legality.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
      RewritePatternSet patterns(ctx);
      populateSCFToControlFlowConversionPatterns(patterns);
      if (failed(applyPartialConversion(module, legality, std::move(patterns))))
        return signalPassFailure();
    }

    {
      ConversionTarget legality(*ctx);
      legality.addIllegalDialect<WeftDialect>();
      // Its regions' ops are lowered first (they ask which warps run them).
      legality.addLegalOp<WarpSpecializeOp, WarpYieldOp>();
      legality.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
      legality.addDynamicallyLegalDialect<arith::ArithDialect,
                                          math::MathDialect>(
          [](Operation *op) { return !holdsTiles(op); });
      RewritePatternSet patterns(ctx);
      populateMemoryPatterns(converter, lowering, patterns);
      populateSynchronizationPatterns(converter, lowering, patterns);
      populateMultimemPatterns(converter, lowering, patterns);
      populateTransferPatterns(converter, lowering, patterns);
      populateTileOpPatterns(converter, tiles, patterns);
      populateTileMemoryPatterns(converter, tiles, patterns);
      populateSharedBufferPatterns(converter, tiles, patterns);
      populateReducePatterns(converter, tiles, patterns);
      populateScanPatterns(converter, tiles, patterns);
      populateRearrangePatterns(converter, tiles, patterns);
      populateProgramOpPatterns(converter, tiles, patterns);
      populateDotPatterns(converter, tiles, patterns);
      if (info.getSpec().kind == TargetKind::NVPTX) {
        populateBulkCopyPatterns(converter, tiles, patterns);
        populateWarpgroupDotPatterns(converter, tiles, patterns);
      }
      if (failed(applyPartialConversion(module, legality, std::move(patterns))))
        return signalPassFailure();
      if (info.getSpec().kind == TargetKind::NVPTX)
        lowerWarpSpecialize(module, info);
    }

    // Kernels receive tensor descriptors by value (FinalizeKernels sets the
    // parameter attributes): mark them while their type still shows it.
    module.walk([](func::FuncOp func) {
      if (!func->hasAttr(kKernelAttrName))
        return;
      for (BlockArgument arg : func.getArguments())
        if (isa<TensorDescType>(arg.getType()))
          func.setArgAttr(arg.getArgNumber(), kTensorDescArgAttrName,
                          UnitAttr::get(func.getContext()));
    });

    LLVMConversionTarget legality(*ctx);
    legality.addLegalOp<ModuleOp>();
    legality.addLegalDialect<NVVM::NVVMDialect, ROCDL::ROCDLDialect>();
    RewritePatternSet patterns(ctx);
    populateFuncToLLVMConversionPatterns(converter, patterns);
    arith::populateArithToLLVMConversionPatterns(converter, patterns);
    populateFloat8Patterns(converter, patterns);
    populateMathPatterns(converter, info.getSpec(), patterns);
    cf::populateControlFlowToLLVMConversionPatterns(converter, patterns);
    index::populateIndexToLLVMConversionPatterns(converter, patterns);
    if (failed(applyPartialConversion(module, legality, std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
} // namespace weft
