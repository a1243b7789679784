//===- MemoryOpsToLLVM.cpp - queries, addresses, loads, stores, atomics ---===//
#include "KernelContext.h"
#include "Lowering.h"
#include "LoweringUtils.h"
#include "TargetInfos.h"

using namespace mlir;

namespace weft {
namespace {

struct RankOpLowering : WeftPattern<RankOp> {
  using WeftPattern::WeftPattern;
  LogicalResult matchAndRewrite(RankOp op, OpAdaptor,
                                ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, lowering.contextField(
                               rewriter, op.getLoc(), op,
                               offsetof(weft_kernel_context, rank),
                               rewriter.getI32Type()));
    return success();
  }
};

struct NumRanksOpLowering : WeftPattern<NumRanksOp> {
  using WeftPattern::WeftPattern;
  LogicalResult matchAndRewrite(NumRanksOp op, OpAdaptor,
                                ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, lowering.contextField(
                               rewriter, op.getLoc(), op,
                               offsetof(weft_kernel_context, num_ranks),
                               rewriter.getI32Type()));
    return success();
  }
};

/// The node layout's fields of the kernel context.
template <typename Op, size_t Offset>
struct ContextFieldLowering : WeftPattern<Op> {
  using WeftPattern<Op>::WeftPattern;
  LogicalResult matchAndRewrite(Op op, typename Op::Adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, this->lowering.contextField(rewriter, op.getLoc(), op, Offset,
                                                       rewriter.getI32Type()));
    return success();
  }
};
using LocalRankOpLowering =
    ContextFieldLowering<LocalRankOp, offsetof(weft_kernel_context, local_rank)>;
using LocalSizeOpLowering =
    ContextFieldLowering<LocalSizeOp, offsetof(weft_kernel_context, local_size)>;
using NodeOpLowering = ContextFieldLowering<NodeOp, offsetof(weft_kernel_context, node)>;

struct ProgramIdOpLowering : WeftPattern<ProgramIdOp> {
  using WeftPattern::WeftPattern;
  LogicalResult matchAndRewrite(ProgramIdOp op, OpAdaptor,
                                ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, lowering.target.programId(
                               rewriter, op.getLoc(), op.getAxis(),
                               lowering.hiddenArgs(op)));
    return success();
  }
};

struct NumProgramsOpLowering : WeftPattern<NumProgramsOp> {
  using WeftPattern::WeftPattern;
  LogicalResult matchAndRewrite(NumProgramsOp op, OpAdaptor,
                                ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, lowering.target.numPrograms(
                               rewriter, op.getLoc(), op.getAxis(),
                               lowering.hiddenArgs(op)));
    return success();
  }
};

struct AddPtrOpLowering : WeftPattern<AddPtrOp> {
  using WeftPattern::WeftPattern;
  LogicalResult matchAndRewrite(AddPtrOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Type pointee = cast<PtrType>(op.getPtr().getType()).getPointee();
    Type elem = getTypeConverter()->convertType(pointee);
    rewriter.replaceOpWithNewOp<LLVM::GEPOp>(
        op, adaptor.getPtr().getType(), elem, adaptor.getPtr(),
        ValueRange{adaptor.getOffset()});
    return success();
  }
};

struct TranslateOpLowering : WeftPattern<TranslateOp> {
  using WeftPattern::WeftPattern;
  LogicalResult matchAndRewrite(TranslateOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, lowering.translate(rewriter, op.getLoc(), op,
                                              adaptor.getPtr(),
                                              adaptor.getPeer()));
    return success();
  }
};

/// With NVLS live, the address in the multicast mapping; otherwise the
/// pointer itself, which the multimem fallback translates per peer. Targets
/// without multimem always take the fallback, whatever the context's flags
/// say, so their multicast pointer is always the pointer itself.
struct MulticastOpLowering : WeftPattern<MulticastOp> {
  using WeftPattern::WeftPattern;
  LogicalResult matchAndRewrite(MulticastOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    if (!lowering.target.getSpec().hasMultimem()) {
      rewriter.replaceOp(op, adaptor.getPtr());
      return success();
    }
    Location loc = op.getLoc();
    Type i64 = rewriter.getI64Type();
    Value flags = lowering.contextField(rewriter, loc, op,
                                        offsetof(weft_kernel_context, flags),
                                        rewriter.getI32Type());
    Value on = LLVM::ICmpOp::create(
        rewriter, loc, LLVM::ICmpPredicate::ne,
        LLVM::AndOp::create(rewriter, loc, flags,
                            i32Const(rewriter, loc, WEFT_CTX_MULTICAST)),
        i32Const(rewriter, loc, 0));
    Value mcBase = lowering.contextField(
        rewriter, loc, op, offsetof(weft_kernel_context, multicast_base), i64);
    Value base = LLVM::PtrToIntOp::create(
        rewriter, loc, i64, lowering.reservedRegion(rewriter, loc, op));
    Value addr = LLVM::PtrToIntOp::create(rewriter, loc, i64, adaptor.getPtr());
    Value mapped = LLVM::AddOp::create(
        rewriter, loc, LLVM::SubOp::create(rewriter, loc, addr, base), mcBase);
    Value chosen = LLVM::SelectOp::create(rewriter, loc, on, mapped, addr);
    rewriter.replaceOpWithNewOp<LLVM::IntToPtrOp>(op, adaptor.getPtr().getType(),
                                                  chosen);
    return success();
  }
};

Value zeroOf(OpBuilder &b, Location loc, Type type) {
  return LLVM::ZeroOp::create(b, loc, type);
}

struct LoadOpLowering : WeftPattern<LoadOp> {
  using WeftPattern::WeftPattern;
  LogicalResult matchAndRewrite(LoadOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type type = getTypeConverter()->convertType(op.getType());
    auto hints = AccessHints::of(op);
    auto emit = [&] {
      if (hints.any())
        return SmallVector<Value>{lowering.target.loadHinted(
            rewriter, loc, type, adaptor.getPtr(), naturalAlignment(type), hints)};
      return SmallVector<Value>{lowering.load(rewriter, loc, type,
                                              adaptor.getPtr(), op.getOrder(),
                                              op.getScope())};
    };
    if (!adaptor.getMask()) {
      rewriter.replaceOp(op, emit());
      return success();
    }
    Value other = adaptor.getOther() ? adaptor.getOther()
                                     : zeroOf(rewriter, loc, type);
    rewriter.replaceOp(op, emitIf(rewriter, loc, adaptor.getMask(), {type},
                                  emit, {other}));
    return success();
  }
};

struct StoreOpLowering : WeftPattern<StoreOp> {
  using WeftPattern::WeftPattern;
  LogicalResult matchAndRewrite(StoreOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    // A release store publishes the writes of every thread of the program.
    if (op.getOrder() == MemOrder::release)
      lowering.joinProgram(rewriter, loc);
    auto hints = AccessHints::of(op);
    auto emit = [&] {
      if (hints.any())
        lowering.target.storeHinted(rewriter, loc, adaptor.getValue(), adaptor.getPtr(),
                                    naturalAlignment(adaptor.getValue().getType()), hints);
      else
        lowering.store(rewriter, loc, adaptor.getValue(), adaptor.getPtr(),
                       op.getOrder(), op.getScope());
      return SmallVector<Value>{};
    };
    if (adaptor.getMask())
      emitIf(rewriter, loc, adaptor.getMask(), {}, emit, {});
    else
      emit();
    rewriter.eraseOp(op);
    return success();
  }
};

bool releases(MemOrder order) {
  return order == MemOrder::release || order == MemOrder::acq_rel;
}
bool acquires(MemOrder order) {
  return order == MemOrder::acquire || order == MemOrder::acq_rel;
}

/// Scalar atomics execute once per program; every thread gets the result.
struct AtomicRMWOpLowering : WeftPattern<AtomicRMWOp> {
  using WeftPattern::WeftPattern;
  LogicalResult matchAndRewrite(AtomicRMWOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type type = adaptor.getValue().getType();
    auto rmw = [&] {
      return SmallVector<Value>{lowering.target.atomicRMW(
          rewriter, loc, op.getKind(), adaptor.getPtr(), adaptor.getValue(),
          op.getOrder(), op.getScope())};
    };
    auto guarded = [&] {
      if (!adaptor.getMask())
        return rmw();
      return emitIf(rewriter, loc, adaptor.getMask(), {type}, rmw,
                    {zeroOf(rewriter, loc, type)});
    };
    rewriter.replaceOp(op, lowering.oncePerProgram(
                               rewriter, loc, {type}, releases(op.getOrder()),
                               acquires(op.getOrder()), guarded));
    return success();
  }
};

struct AtomicCASOpLowering : WeftPattern<AtomicCASOp> {
  using WeftPattern::WeftPattern;
  LogicalResult matchAndRewrite(AtomicCASOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type type = adaptor.getValue().getType();
    MemOrder order = op.getOrder();
    // A failed exchange only reads: it keeps the acquire part, if any.
    MemOrder failure = acquires(order) ? MemOrder::acquire : MemOrder::relaxed;
    auto cas = [&] {
      auto xchg = LLVM::AtomicCmpXchgOp::create(
          rewriter, loc, adaptor.getPtr(), adaptor.getCmp(), adaptor.getValue(),
          toLLVMOrdering(order), toLLVMOrdering(failure),
          lowering.target.syncScope(op.getScope()));
      return SmallVector<Value>{
          LLVM::ExtractValueOp::create(rewriter, loc, xchg, 0)};
    };
    rewriter.replaceOp(op, lowering.oncePerProgram(rewriter, loc, {type},
                                                   releases(order),
                                                   acquires(order), cas));
    return success();
  }
};

/// A fence orders the accesses of the whole program, like a signal or a
/// wait: the threads join before the fence when it releases, so that every
/// thread's earlier accesses precede the fence of the thread that later
/// signals; and they join after it when it acquires, so that what any
/// thread read before its fence (a relaxed wait's poll, a tile of flags) is
/// acquired for all of them. Every thread fences. The PTX and C++ models
/// only order a fence with the accesses of its own thread.
/// In a weft.multinode module a releasing fence at system scope also
/// completes the program's off-node puts (their engine's quiet): what it
/// orders before later writes includes them.
struct FenceOpLowering : WeftPattern<FenceOp> {
  using WeftPattern::WeftPattern;
  LogicalResult matchAndRewrite(FenceOp op, OpAdaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    if (lowering.target.getOptions().multinode && op.getOrder() != MemOrder::acquire &&
        op.getScope() == MemScope::sys)
      lowering.quietEngine(rewriter, loc, op);
    lowering.fenceProgram(rewriter, loc, op.getOrder(), op.getScope());
    rewriter.eraseOp(op);
    return success();
  }
};

} // namespace

/// The plain fields of a tensor descriptor (abi.h, weft_tensor_desc),
/// read where the kernel received it.
struct DescBaseOpLowering : WeftPattern<DescBaseOp> {
  using WeftPattern::WeftPattern;
  LogicalResult matchAndRewrite(DescBaseOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Value base = loadParamField(rewriter, op.getLoc(), adaptor.getDesc(),
                                offsetof(weft_tensor_desc, base), rewriter.getI64Type());
    rewriter.replaceOpWithNewOp<LLVM::IntToPtrOp>(
        op, lowering.target.globalPtrType(op.getContext()), base);
    return success();
  }
};

template <typename Op, size_t Offset>
struct DescFieldOpLowering : WeftPattern<Op> {
  using WeftPattern<Op>::WeftPattern;
  LogicalResult matchAndRewrite(Op op, typename Op::Adaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, loadParamField(rewriter, op.getLoc(), adaptor.getDesc(),
                                          Offset + sizeof(int64_t) * op.getDim(),
                                          rewriter.getI64Type()));
    return success();
  }
};

void populateMemoryPatterns(const LLVMTypeConverter &converter,
                            const Lowering &lowering,
                            RewritePatternSet &patterns) {
  patterns.add<RankOpLowering, NumRanksOpLowering, LocalRankOpLowering,
               LocalSizeOpLowering, NodeOpLowering, ProgramIdOpLowering,
               NumProgramsOpLowering, AddPtrOpLowering, TranslateOpLowering,
               MulticastOpLowering, LoadOpLowering, StoreOpLowering,
               AtomicRMWOpLowering, AtomicCASOpLowering, FenceOpLowering,
               DescBaseOpLowering,
               DescFieldOpLowering<DescDimOp, offsetof(weft_tensor_desc, shape)>,
               DescFieldOpLowering<DescStrideOp, offsetof(weft_tensor_desc, strides)>>(
      converter, lowering);
}

} // namespace weft
