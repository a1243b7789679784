//===- TransfersToLLVM.cpp - put, get and quiet ---------------------------===//
//
// The bulk one-sided transfers (docs/multinode.md). Every thread of the
// program takes part: a peer of this node is reached by the program's own
// loads and stores through the translated address (and a put's signal by
// one thread's release atomic after the threads join), a peer of another
// node, in a weft.multinode module, by the engine's block-wide calls
// (TargetInfo::offNode*). Which of the two is a uniform branch on whether
// the peer's heap is mapped here.
//
//===----------------------------------------------------------------------===//
#include "Lowering.h"
#include "LoweringUtils.h"

using namespace mlir;

namespace weft {
namespace {

struct PutOpLowering : WeftPattern<PutOp> {
  using WeftPattern::WeftPattern;

  LogicalResult matchAndRewrite(PutOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value dst = adaptor.getDst(), src = adaptor.getSrc(), nbytes = adaptor.getNbytes(),
          peer = adaptor.getPeer(), flag = adaptor.getSignal(),
          value = adaptor.getSignalValue();
    SignalKind kind = op.getSignalKind().value_or(SignalKind::set);
    // Whichever threads wrote src, all of it is there before any copies.
    lowering.joinProgram(rewriter, loc);
    lowering.checkRange(rewriter, loc, op, dst, nbytes, peer);
    if (flag)
      lowering.checkRange(rewriter, loc, op, flag, i64Const(rewriter, loc, 8), peer);
    lowering.byPlacement(rewriter, loc, op, peer, [&] {
      lowering.copyBytes(rewriter, loc, lowering.translate(rewriter, loc, op, dst, peer), src,
                         nbytes);
      if (flag)
        lowering.oncePerProgram(rewriter, loc, {}, /*releaseBefore=*/true,
                                /*joinAfter=*/false, [&] {
          lowering.signalFlag(rewriter, loc, kind,
                              lowering.translate(rewriter, loc, op, flag, peer), value,
                              MemOrder::release, MemScope::sys);
          return SmallVector<Value>{};
        });
    }, [&] {
      Value status = lowering.target.offNodePut(rewriter, loc, op, lowering.hiddenArgs(op),
                                                dst, src, nbytes, peer, flag, value, kind);
      lowering.stopOnStatus(rewriter, loc, op, status, peer, dst);
    });
    rewriter.eraseOp(op);
    return success();
  }
};

struct GetOpLowering : WeftPattern<GetOp> {
  using WeftPattern::WeftPattern;

  LogicalResult matchAndRewrite(GetOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value dst = adaptor.getDst(), src = adaptor.getSrc(), nbytes = adaptor.getNbytes(),
          peer = adaptor.getPeer();
    // No thread's earlier access to dst may meet the copy's writes.
    lowering.joinProgram(rewriter, loc);
    lowering.checkRange(rewriter, loc, op, src, nbytes, peer);
    lowering.byPlacement(rewriter, loc, op, peer, [&] {
      lowering.copyBytes(rewriter, loc, dst, lowering.translate(rewriter, loc, op, src, peer),
                         nbytes);
    }, [&] {
      Value status = lowering.target.offNodeGet(rewriter, loc, op, lowering.hiddenArgs(op),
                                                dst, src, nbytes, peer);
      lowering.stopOnStatus(rewriter, loc, op, status, peer, src);
    });
    // Every thread sees all of the bytes, whichever thread copied them.
    lowering.joinProgram(rewriter, loc);
    rewriter.eraseOp(op);
    return success();
  }
};

/// In-node puts are the program's stores: a system-scope fence completes
/// them. The engine completes its own: each thread quiets what it issued
/// (NVSHMEM's block calls end joined), then the fence joins them all.
struct QuietOpLowering : WeftPattern<QuietOp> {
  using WeftPattern::WeftPattern;

  LogicalResult matchAndRewrite(QuietOp op, OpAdaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    if (lowering.target.getOptions().multinode)
      lowering.quietEngine(rewriter, loc, op);
    lowering.fenceProgram(rewriter, loc, MemOrder::acq_rel, MemScope::sys);
    rewriter.eraseOp(op);
    return success();
  }
};

} // namespace

void populateTransferPatterns(const LLVMTypeConverter &converter, const Lowering &lowering,
                              RewritePatternSet &patterns) {
  patterns.add<PutOpLowering, GetOpLowering, QuietOpLowering>(converter, lowering);
}

} // namespace weft
