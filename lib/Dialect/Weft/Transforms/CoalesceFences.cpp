//===- CoalesceFences.cpp - merge fences and signals ----------------------===//
//
// Every rewrite here replaces a sequence by one that orders at least as
// much, as far as any observer can tell; docs/optimizations.md has the
// arguments. "Adjacent" means: in the same block, with only memory-free
// operations between (MemoryOrdering.h).
//
//===----------------------------------------------------------------------===//
#include "MemoryOrdering.h"
#include "weft/Dialect/Weft/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace weft {
#define GEN_PASS_DEF_WEFTCOALESCEFENCES
#include "weft/Dialect/Weft/Transforms/Passes.h.inc"
} // namespace weft

using namespace mlir;

namespace weft {
namespace {

/// fence o1 s1; fence o2 s2  ->  fence join(o1, o2) max(s1, s2)
struct MergeAdjacentFences : OpRewritePattern<FenceOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(FenceOp op,
                                PatternRewriter &rewriter) const override {
    auto prev = dyn_cast_or_null<FenceOp>(prevMemoryOp(op));
    if (!prev)
      return failure();
    rewriter.modifyOpInPlace(op, [&] {
      op.setOrder(joinOrders(prev.getOrder(), op.getOrder()));
      op.setScope(joinScopes(prev.getScope(), op.getScope()));
    });
    rewriter.eraseOp(prev);
    return success();
  }
};

/// fence acquire; wait relaxed (result unused)  ->  wait relaxed; fence
/// acquire. The polls may now see older values of the flag before they see
/// one that satisfies the predicate; with the result unused, only the
/// termination of the wait is observable, and the fence still follows every
/// read it followed before. Likewise past an scf.for whose body only polls
/// that way (one wait per peer), and out of the end of such a body: the
/// fence of iteration i only ordered the polls of iteration i + 1.
struct SinkAcquireFence : OpRewritePattern<FenceOp> {
  using OpRewritePattern::OpRewritePattern;

  static bool sinkable(FenceOp op) {
    return op.getOrder() == MemOrder::acquire ||
           op.getOrder() == MemOrder::acq_rel;
  }

  /// The body of `loop` has only memory-free ops, relaxed waits whose
  /// result is unused, and `fence` (if given).
  static bool onlyRelaxedWaits(scf::ForOp loop, Operation *fence) {
    return llvm::all_of(loop.getBody()->getOperations(), [&](Operation &op) {
      return &op == fence || isMemoryFree(&op) ||
             isWaitWithUnusedResult(&op, MemOrder::relaxed);
    });
  }

  LogicalResult matchAndRewrite(FenceOp op,
                                PatternRewriter &rewriter) const override {
    if (!sinkable(op))
      return failure();
    Operation *next = nextMemoryOp(op);
    auto nextLoop = dyn_cast_or_null<scf::ForOp>(next);
    if (isWaitWithUnusedResult(next, MemOrder::relaxed) ||
        (nextLoop && onlyRelaxedWaits(nextLoop, nullptr))) {
      rewriter.moveOpAfter(op, next);
      return success();
    }
    auto parentLoop = dyn_cast<scf::ForOp>(op->getParentOp());
    if (next || !parentLoop || !onlyRelaxedWaits(parentLoop, op))
      return failure();
    rewriter.moveOpAfter(op, parentLoop);
    return success();
  }
};

/// True when no write that a release fence of `scope` placed before `op`
/// would have ordered follows `op`: walking forward from `op`, every write
/// up to a later release fence of at least `scope` is itself a release of
/// at least `scope`, and the walk ends at the return of a kernel. It may
/// leave the regions of ops that do not loop (scf.if); a loop would bring
/// its body's writes after `op` again, a function return its caller's.
bool nothingElseToRelease(Operation *op, MemScope scope) {
  Operation *next = op->getNextNode();
  while (true) {
    // Up to the block's terminator, its last op. (Not hasTrait<IsTerminator>:
    // trait TypeIDs do not match across libMLIR and WeftPlugin.so.)
    for (; next && next->getNextNode(); next = next->getNextNode()) {
      if (auto fence = dyn_cast<FenceOp>(next))
        if (hasRelease(fence.getOrder()) &&
            scopeCovers(fence.getScope(), scope))
          return true;
      if (writesWithoutRelease(next, scope))
        return false;
    }
    Operation *parent = op->getParentOp();
    if (next && isa<func::ReturnOp>(next))
      return parent->hasAttr(kKernelAttrName);
    auto branch = dyn_cast<RegionBranchOpInterface>(parent);
    if (!next || !branch || branch.hasLoop() ||
        !isa<RegionBranchTerminatorOpInterface>(next))
      return false;
    op = parent;
    next = parent->getNextNode();
  }
}

/// fence release s1; signal <kind> relaxed s2  ->  signal <kind> release
/// max(s1, s2), where the fence has nothing else to order.
struct FenceIntoReleaseSignal : OpRewritePattern<SignalOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(SignalOp op,
                                PatternRewriter &rewriter) const override {
    if (op.getOrder() != MemOrder::relaxed)
      return failure();
    auto fence = dyn_cast_or_null<FenceOp>(prevMemoryOp(op));
    if (!fence || fence.getOrder() != MemOrder::release ||
        !nothingElseToRelease(op, fence.getScope()))
      return failure();
    rewriter.modifyOpInPlace(op, [&] {
      op.setOrder(MemOrder::release);
      op.setScope(joinScopes(fence.getScope(), op.getScope()));
    });
    rewriter.eraseOp(fence);
    return success();
  }
};

/// signal add o1 s1 %f, %a; signal add o2 s2 %f, %b
///   -> signal add join(o1, o2) max(s1, s2) %f, %a + %b
/// signal set o1 s1 %f, %a; signal set o2 s2 %f, %b
///   -> signal set join(o1, o2) max(s1, s2) %f, %b
struct MergeAdjacentSignals : OpRewritePattern<SignalOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(SignalOp op,
                                PatternRewriter &rewriter) const override {
    auto prev = dyn_cast_or_null<SignalOp>(prevMemoryOp(op));
    if (!prev || prev.getPtr() != op.getPtr() || prev.getPeer() != op.getPeer() ||
        prev.getKind() != op.getKind())
      return failure();
    Value value = op.getValue();
    if (op.getKind() == SignalKind::add)
      value = arith::AddIOp::create(rewriter, op.getLoc(), prev.getValue(),
                                    value);
    rewriter.modifyOpInPlace(op, [&] {
      op.getValueMutable().assign(value);
      op.setOrder(joinOrders(prev.getOrder(), op.getOrder()));
      op.setScope(joinScopes(prev.getScope(), op.getScope()));
    });
    rewriter.eraseOp(prev);
    return success();
  }
};

struct WeftCoalesceFences
    : impl::WeftCoalesceFencesBase<WeftCoalesceFences> {
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    RewritePatternSet patterns(ctx);
    patterns.add<MergeAdjacentFences, SinkAcquireFence, FenceIntoReleaseSignal,
                 MergeAdjacentSignals>(ctx);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
} // namespace weft
