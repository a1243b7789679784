//===- SynchronizationToLLVM.cpp - signal, wait, barrier, dependency wait -===//
//
// The program-level model (docs/memory-model.md): a signal joins the
// program's threads and one thread releases; a wait has one thread poll
// with relaxed loads, acquire with a fence, and the threads join; the
// device-wide barrier combines a per-rank arrival counter with per-peer
// monotonic arrival counts in the reserved region. In a weft.multinode
// module a signal or an arrival for a peer on another node is the engine's
// signal (docs/multinode.md). The dependency wait is nothing where launches
// never start early (sm_90's is NVPTX/BulkCopiesToLLVM.cpp's).
//
//===----------------------------------------------------------------------===//
#include "KernelContext.h"
#include "Lowering.h"
#include "LoweringUtils.h"

using namespace mlir;

namespace weft {
namespace {

struct SignalOpLowering : WeftPattern<SignalOp> {
  using WeftPattern::WeftPattern;

  LogicalResult matchAndRewrite(SignalOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    bool release = op.getOrder() == MemOrder::release;
    Value ptr = adaptor.getPtr(), value = adaptor.getValue(), peer = adaptor.getPeer();
    lowering.oncePerProgram(rewriter, loc, {}, release, /*joinAfter=*/false, [&] {
      if (peer)
        lowering.signalPeer(rewriter, loc, op, ptr, value, peer, op.getKind(),
                            op.getOrder(), op.getScope(), /*quietFirst=*/release);
      else
        lowering.signalFlag(rewriter, loc, op.getKind(), ptr, value, op.getOrder(),
                            op.getScope());
      return SmallVector<Value>{};
    });
    rewriter.eraseOp(op);
    return success();
  }
};

struct WaitOpLowering : WeftPattern<WaitOp> {
  using WeftPattern::WeftPattern;

  LogicalResult matchAndRewrite(WaitOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    // An unused result needs no broadcast, and so no second join.
    SmallVector<Type> types;
    if (!op.getResult().use_empty())
      types.push_back(adaptor.getValue().getType());
    auto seen = lowering.oncePerProgram(
        rewriter, loc, types, /*releaseBefore=*/false, /*joinAfter=*/true, [&] {
          Value value = lowering.poll(rewriter, loc, op, adaptor.getPtr(),
                                      adaptor.getValue(), op.getCmp(),
                                      op.getScope());
          // Relaxed polls plus one acquire fence: the acquire pattern
          // without an ordered load per iteration.
          if (op.getOrder() == MemOrder::acquire)
            lowering.target.fence(rewriter, loc, MemOrder::acquire,
                                  op.getScope());
          return types.empty() ? SmallVector<Value>{} : SmallVector<Value>{value};
        });
    if (types.empty())
      rewriter.eraseOp(op);
    else
      rewriter.replaceOp(op, seen);
    return success();
  }
};

struct BarrierOpLowering : WeftPattern<BarrierOp> {
  using WeftPattern::WeftPattern;

  LogicalResult matchAndRewrite(BarrierOp op, OpAdaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    const TargetInfo &target = lowering.target;
    Type i32 = rewriter.getI32Type();
    Type i64 = rewriter.getI64Type();
    lowering.oncePerProgram(rewriter, loc, {}, /*releaseBefore=*/true,
                            /*joinAfter=*/true, [&] {
      Value reserved = lowering.reservedRegion(rewriter, loc, op);
      auto field = [&](size_t offset) {
        return byteOffset(rewriter, loc, reserved, i64Const(rewriter, loc, offset));
      };
      Value countPtr = field(offsetof(weft_reserved, barrier_count));
      Value genPtr = field(offsetof(weft_reserved, barrier_gen));
      // Byte offset of barrier_arrive[r] in a reserved region.
      auto arriveOffset = [&](Value r) -> Value {
        return LLVM::AddOp::create(
            rewriter, loc,
            LLVM::MulOp::create(rewriter, loc,
                                LLVM::ZExtOp::create(rewriter, loc, i64, r),
                                i64Const(rewriter, loc, sizeof(uint64_t))),
            i64Const(rewriter, loc, offsetof(weft_reserved, barrier_arrive)));
      };

      HiddenArgs hidden = lowering.hiddenArgs(op);
      Value programs = target.numPrograms(rewriter, loc, Axis::x, hidden);
      for (Axis axis : {Axis::y, Axis::z})
        programs = LLVM::MulOp::create(
            rewriter, loc, programs,
            target.numPrograms(rewriter, loc, axis, hidden));

      // The generation cannot move before every program of this rank has
      // arrived, so reading it first names the barrier we are in.
      Value gen = lowering.load(rewriter, loc, i32, genPtr, MemOrder::acquire,
                                MemScope::gpu);
      Value arrived = target.atomicRMW(rewriter, loc, RMWKind::add, countPtr,
                                       i32Const(rewriter, loc, 1),
                                       MemOrder::acq_rel, MemScope::gpu);
      Value last = LLVM::ICmpOp::create(
          rewriter, loc, LLVM::ICmpPredicate::eq, arrived,
          LLVM::SubOp::create(rewriter, loc, programs, i32Const(rewriter, loc, 1)));
      Value nextGen = LLVM::AddOp::create(rewriter, loc, gen,
                                          i32Const(rewriter, loc, 1));

      // The last program of this rank to arrive tells every rank, waits for
      // every rank, then opens the barrier for this rank's programs. Peers
      // on other nodes hear it from the engine, after this rank's puts are
      // complete (the barrier releases them too).
      auto leader = [&] {
        lowering.store(rewriter, loc, i32Const(rewriter, loc, 0), countPtr,
                       MemOrder::relaxed, MemScope::gpu);
        Value ctx = hidden.context;
        Value rank = loadParamField(rewriter, loc, ctx,
                                    offsetof(weft_kernel_context, rank), i32);
        Value ranks = loadParamField(
            rewriter, loc, ctx, offsetof(weft_kernel_context, num_ranks), i32);
        Value slot = arriveOffset(rank);
        if (target.getOptions().multinode)
          lowering.quietEngine(rewriter, loc, op); // once, not per peer
        Value arrival = byteOffset(rewriter, loc, reserved, slot);
        Value one = i64Const(rewriter, loc, 1);
        lowering.forEach(rewriter, loc, ranks, [&](Value peer) {
          lowering.signalPeer(rewriter, loc, op, arrival, one, peer, SignalKind::add,
                              MemOrder::release, MemScope::sys, /*quietFirst=*/false);
        });
        Value epoch = LLVM::ZExtOp::create(rewriter, loc, i64, nextGen);
        lowering.forEach(rewriter, loc, ranks, [&](Value peer) {
          lowering.poll(rewriter, loc, op,
                        byteOffset(rewriter, loc, reserved, arriveOffset(peer)),
                        epoch, WaitPredicate::ge, MemScope::sys);
        });
        target.fence(rewriter, loc, MemOrder::acquire, MemScope::sys);
        lowering.store(rewriter, loc, nextGen, genPtr, MemOrder::release,
                       MemScope::gpu);
        return SmallVector<Value>{};
      };
      auto follower = [&] {
        lowering.poll(rewriter, loc, op, genPtr, gen, WaitPredicate::ne,
                      MemScope::gpu);
        target.fence(rewriter, loc, MemOrder::acquire, MemScope::gpu);
        return SmallVector<Value>{};
      };
      emitIfElse(rewriter, loc, last, {}, leader, follower);
      return SmallVector<Value>{};
    });
    rewriter.eraseOp(op);
    return success();
  }
};

struct DependencyWaitOpLowering : WeftPattern<DependencyWaitOp> {
  using WeftPattern::WeftPattern;

  LogicalResult matchAndRewrite(DependencyWaitOp op, OpAdaptor,
                                ConversionPatternRewriter &rewriter) const override {
    rewriter.eraseOp(op);
    return success();
  }
};

} // namespace

void populateSynchronizationPatterns(const LLVMTypeConverter &converter,
                                     const Lowering &lowering,
                                     RewritePatternSet &patterns) {
  patterns.add<SignalOpLowering, WaitOpLowering, BarrierOpLowering,
               DependencyWaitOpLowering>(converter, lowering);
}

} // namespace weft
