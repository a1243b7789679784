//===- LocalShortCircuit.cpp - no translation to the local rank -----------===//
//
// translate(p, rank) = p - heap_base[rank] + heap_base[rank] = p, exactly
// (the arithmetic is modulo 2^64 either way). The pass proves that a peer is
// the rank from the operations that compute it; see isLocalRank.
//
//===----------------------------------------------------------------------===//
#include "weft/Dialect/Weft/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace weft {
#define GEN_PASS_DEF_WEFTLOCALSHORTCIRCUIT
#include "weft/Dialect/Weft/Transforms/Passes.h.inc"
} // namespace weft

using namespace mlir;

namespace weft {
namespace {

bool isNumRanks(Value value) { return value.getDefiningOp<NumRanksOp>(); }

/// True when `value` provably equals weft.rank. Folding has already removed
/// identities such as addi(x, 0) and select(c, x, x); what is left:
///   rank                                  the definition
///   select(c, a, b), a and b proven       whichever is chosen
///   rem{u,s}i(a, num_ranks), a proven     0 <= rank < num_ranks
///   rem{u,s}i(a + num_ranks, num_ranks)   rank + num_ranks <= 2 * 128: no
///                                          wrap, and it is >= 0
bool isLocalRank(Value value, unsigned depth = 0);

/// `value` is rank or rank + num_ranks: below 2 * num_ranks, >= 0, and
/// congruent to rank modulo num_ranks.
bool isRankModNumRanks(Value value, unsigned depth) {
  if (isLocalRank(value, depth))
    return true;
  auto add = value.getDefiningOp<arith::AddIOp>();
  if (!add)
    return false;
  return (isNumRanks(add.getRhs()) && isLocalRank(add.getLhs(), depth)) ||
         (isNumRanks(add.getLhs()) && isLocalRank(add.getRhs(), depth));
}

bool isLocalRank(Value value, unsigned depth) {
  // Expressions that compute a peer are short; the bound keeps a
  // pathological chain of selects from costing more than it saves.
  if (++depth > 8)
    return false;
  Operation *def = value.getDefiningOp();
  if (!def)
    return false;
  if (isa<RankOp>(def))
    return true;
  if (auto select = dyn_cast<arith::SelectOp>(def))
    return isLocalRank(select.getTrueValue(), depth) &&
           isLocalRank(select.getFalseValue(), depth);
  if (isa<arith::RemUIOp, arith::RemSIOp>(def))
    return isNumRanks(def->getOperand(1)) &&
           isRankModNumRanks(def->getOperand(0), depth);
  return false;
}

/// translate(p, peer) -> p when peer is the local rank.
struct TranslateToSelf : OpRewritePattern<TranslateOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(TranslateOp op,
                                PatternRewriter &rewriter) const override {
    if (!isLocalRank(op.getPeer()))
      return failure();
    rewriter.replaceOp(op, op.getPtr());
    return success();
  }
};

struct WeftLocalShortCircuit
    : impl::WeftLocalShortCircuitBase<WeftLocalShortCircuit> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<TranslateToSelf>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
} // namespace weft
