//===- HoistTranslate.cpp - peer addresses leave loops --------------------===//
//
// translate(p, peer) = p - heap_base[rank] + heap_base[peer]: it commutes
// with pointer offsets, so the translation is moved onto the base pointer,
// where it is usually loop-invariant, and then out of the loop.
//
//===----------------------------------------------------------------------===//
#include "weft/Dialect/Weft/Transforms/Passes.h"

#include "mlir/IR/Dominance.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/CSE.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/LoopInvariantCodeMotionUtils.h"
#include "llvm/ADT/SmallPtrSet.h"

namespace weft {
#define GEN_PASS_DEF_WEFTHOISTTRANSLATE
#include "weft/Dialect/Weft/Transforms/Passes.h.inc"
} // namespace weft

using namespace mlir;

namespace weft {
namespace {

/// Is `op` in a loop over peers (the peer is computed in the loop) that the
/// offset of `addPtr` does not depend on? Then
/// `translate(addptr(p, off), peer)` is best left as it is: addptr(p, off)
/// leaves the loop and only the translation stays.
bool inLoopOverPeers(TranslateOp op, AddPtrOp addPtr) {
  for (auto loop = op->getParentOfType<LoopLikeOpInterface>(); loop;
       loop = loop->getParentOfType<LoopLikeOpInterface>()) {
    if (loop.isDefinedOutsideOfLoop(addPtr.getOffset()) &&
        !loop.isDefinedOutsideOfLoop(op.getPeer()))
      return true;
  }
  return false;
}

/// translate(addptr(p, off), peer) -> addptr(translate(p, peer), off)
struct TranslateOfAddPtr : OpRewritePattern<TranslateOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(TranslateOp op,
                                PatternRewriter &rewriter) const override {
    auto addPtr = op.getPtr().getDefiningOp<AddPtrOp>();
    if (!addPtr || inLoopOverPeers(op, addPtr))
      return failure();
    Value base = TranslateOp::create(rewriter, op.getLoc(), addPtr.getPtr(),
                                     op.getPeer());
    rewriter.replaceOpWithNewOp<AddPtrOp>(op, op.getType(), base,
                                          addPtr.getOffset());
    return success();
  }
};

/// A pure op that only moves pointers: one operand, a pointer or a tile of
/// pointers, and one result, a tile of pointers of the same type
/// (tensor.splat, weft.splat, broadcast, expand_dims, reshape,
/// convert_layout, ...). Without an offset operand it cannot make a new
/// address.
bool movesPointersOnly(Operation *op) {
  if (!op || isa<AddPtrOp, TranslateOp>(op) || op->getNumOperands() != 1 ||
      op->getNumResults() != 1 || op->getNumRegions() != 0)
    return false;
  Type result = op->getResult(0).getType();
  Type elem = getElementTypeOrSelf(result);
  return isa<RankedTensorType>(result) && isa<PtrType>(elem) &&
         getElementTypeOrSelf(op->getOperand(0).getType()) == elem &&
         isMemoryEffectFree(op) && isSpeculatable(op);
}

/// translate(f(x), peer) -> f(translate(x, peer)) for such an op f:
/// translating element by element commutes with moving the elements, and a
/// tile built from one scalar base pointer is then translated as that
/// scalar.
struct TranslateOfPointerShuffle : OpRewritePattern<TranslateOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(TranslateOp op,
                                PatternRewriter &rewriter) const override {
    Operation *def = op.getPtr().getDefiningOp();
    if (!movesPointersOnly(def))
      return failure();
    Value src = def->getOperand(0);
    Value moved = TranslateOp::create(rewriter, op.getLoc(), src, op.getPeer());
    IRMapping mapping;
    mapping.map(src, moved);
    rewriter.replaceOp(op, rewriter.clone(*def, mapping)->getResults());
    return success();
  }
};

/// Moves the loop-invariant address computations of `loop` in front of it:
/// its top-level translates, addptrs and pointer-moving tile ops, and the
/// pure, speculatable ops of the loop that compute their operands. Other
/// invariant code is left to -loop-invariant-code-motion.
void hoistAddresses(LoopLikeOpInterface loop) {
  SmallVector<Operation *> worklist;
  for (Region *region : loop.getLoopRegions())
    for (Operation &op : region->getOps())
      if (isa<TranslateOp, AddPtrOp>(op) || movesPointersOnly(&op))
        worklist.push_back(&op);
  if (worklist.empty())
    return;

  llvm::SmallPtrSet<Operation *, 16> candidates;
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val();
    if (!candidates.insert(op).second)
      continue;
    for (Value operand : op->getOperands()) {
      Operation *def = operand.getDefiningOp();
      if (def && def->getParentOp() == loop.getOperation() &&
          isMemoryEffectFree(def) && isSpeculatable(def))
        worklist.push_back(def);
    }
  }

  moveLoopInvariantCode(
      loop.getLoopRegions(),
      [&](Value value, Region *) { return loop.isDefinedOutsideOfLoop(value); },
      [&](Operation *op, Region *) { return candidates.contains(op); },
      [&](Operation *op, Region *) { loop.moveOutOfLoop(op); });
}

struct WeftHoistTranslate
    : impl::WeftHoistTranslateBase<WeftHoistTranslate> {
  void runOnOperation() override {
    Operation *root = getOperation();
    MLIRContext *ctx = &getContext();

    RewritePatternSet patterns(ctx);
    patterns.add<TranslateOfAddPtr, TranslateOfPointerShuffle>(ctx);
    if (failed(applyPatternsGreedily(root, std::move(patterns))))
      return signalPassFailure();

    // Post-order: inner loops first, so an address can leave a whole nest.
    SmallVector<LoopLikeOpInterface> loops;
    root->walk([&](LoopLikeOpInterface loop) { loops.push_back(loop); });
    for (LoopLikeOpInterface loop : loops)
      hoistAddresses(loop);

    IRRewriter rewriter(ctx);
    DominanceInfo dominance(root);
    eliminateCommonSubExpressions(rewriter, dominance, root);
  }
};

} // namespace
} // namespace weft
