//===- PipelineDotOperands.cpp - dot operands copied stages ahead ---------===//
//
// A K loop of weft.dot waits for its operand loads at every step. Here the
// loads become asynchronous copies into a ring of shared-memory buffers,
// issued num-stages - 1 iterations ahead, so that their latency overlaps
// the math of the iterations in between (docs/tile-ir.md, "Pipelining").
//
//===----------------------------------------------------------------------===//
#include "PipelinePlan.h"

#include "weft/Dialect/Weft/Distribution/DotPlan.h"
#include "weft/Dialect/Weft/Distribution/Passes.h"
#include "weft/Dialect/Weft/Distribution/SharedMemory.h"
#include "weft/Dialect/Weft/IR/CompileTarget.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"

namespace weft {
#define GEN_PASS_DEF_WEFTPIPELINEDOTOPERANDS
#include "weft/Dialect/Weft/Distribution/Passes.h.inc"
} // namespace weft

using namespace mlir;

namespace weft {
namespace {

/// The buffer `operand`'s tile (a weak load before its loop) is staged
/// in: copied once, where it is loaded, in a copy group of its own (a
/// loop's first wait covers it: groups complete in order), and released
/// after the last op of the load's block that holds a dot reading it
/// (other uses read the tile's registers). Every loop that multiplies the
/// tile reads this buffer: a copy per loop kept the tile's addresses live
/// through the loops before it (the sequence-parallel attention kernel, a
/// query tile over the keys of every rank, at 255 registers and 15 % more
/// cycles an instruction than flash attention's).
Value stageTile(const Operand &operand, StagedTiles &copied) {
  if (Value buffer = stagedBuffer(copied, operand))
    return buffer;
  auto load = cast<LoadOp>(operand.load);
  Location loc = load.getLoc();
  OpBuilder b(load);
  b.setInsertionPointAfter(load);
  Value buffer = AllocSharedOp::create(b, loc, operand.buffer, /*bulk=*/false);
  AsyncCopyOp::create(b, loc, load.getPtr(), buffer, load.getMask());
  AsyncCommitOp::create(b, loc);
  Operation *last = load;
  for (Operation *user : load->getUsers())
    if (Operation *op = load->getBlock()->findAncestorOpInBlock(*user);
        isa<DotOp>(user) && last->isBeforeInBlock(op))
      last = op;
  b.setInsertionPointAfter(last);
  ReleaseSharedOp::create(b, loc, buffer);
  copied[load].push_back(buffer);
  return buffer;
}

/// A pipelined loop whose enclosing loop runs it once per iteration and
/// lets it copy the next iteration's first stages at its end
/// (kPrefetchAttrName): the enclosing loop and the ops of its body that
/// compute what those copies read (the loop's bounds and the values from
/// outside it that the copies' addresses take), in program order.
struct Prefetch {
  scf::ForOp outer;
  SmallVector<Operation *> slice;
};

/// Where `loop`'s pipeline may prefetch: its parent loop asks for it (the
/// tiles its pipelines copy are ready before it starts: nothing in it
/// writes or publishes them), the copies are bulk copies read only by
/// products that run in place (the join at each step then frees the
/// buffers the next copies fill, so the early copies need no more than
/// the steps' own waits), and the next iteration's copies can be computed
/// from the enclosing induction variable alone (computed even where that
/// iteration does not run, as the copies past a loop's bound are). Code
/// before the loop that orders memory accesses (a wait for the next
/// iteration's rows, most likely) contradicts the first: the pipeline then
/// does not prefetch.
std::optional<Prefetch> prefetchFor(scf::ForOp loop, const PipelinePlan &plan) {
  auto outer = dyn_cast<scf::ForOp>(loop->getParentOp());
  if (!outer || !outer->hasAttr(kPrefetchAttrName) || !plan.bulk() || plan.empties ||
      plan.threadReads || !plan.staged.empty())
    return std::nullopt;
  for (Operation &op : *outer.getBody()) {
    if (&op == loop)
      break;
    if (!accessesWeakly(&op))
      return std::nullopt;
  }
  auto slice = runSlice(outer, loop, plan.operands);
  if (!slice)
    return std::nullopt;
  return Prefetch{outer, std::move(*slice)};
}

/// Rewrites `loop` as `plan` says. Returns the loop that replaces the
/// enclosing one where it prefetches (that carries the rings), else null.
scf::ForOp emitPipeline(scf::ForOp loop, const PipelinePlan &plan, bool unrollRings,
                        const CompileTarget &target, StagedTiles &copied) {
  auto func = loop->getParentOfType<FunctionOpInterface>();
  bool bulk = plan.bulk(), clustered = plan.clustered, empties = plan.empties;
  // With a prefetch the rings and barriers live through the enclosing
  // loop, which carries their rotation and phases from one run of the
  // pipeline to the next: its first stages are copied before the
  // enclosing loop, then at the end of each run for the next.
  std::optional<Prefetch> prefetch = prefetchFor(loop, plan);
  Operation *home = prefetch ? prefetch->outer.getOperation() : loop.getOperation();
  ArrayRef<Operand> operands = plan.operands;
  int64_t stages = plan.stages, ringSize = plan.ringSize(), lead = stages - 1;
  if (bulk)
    func->setAttr(kTensorMapsAttrName, *plan.tensorMaps);
  Location loc = loop.getLoc();
  Value lower = loop.getLowerBound(), upper = loop.getUpperBound(), step = loop.getStep();
  bool unsignedCmp = loop.getUnsignedCmp();
  OpBuilder b(home);
  // Ring buffers, operand by operand; with bulk copies a ring of barriers
  // (one per stage, every operand's copy arriving at it) and maybe one of
  // empty barriers (every warp arriving), and the parities of the phases
  // they wait for next; then the first stages - 1 stages.
  SmallVector<Value> rings, barriers, emptyBarriers, phases, emptyPhases;
  for (const Operand &operand : plan.staged)
    operand.dot->setOperand(operand.index, stageTile(operand, copied));
  rings = allocRings(b, loc, operands, ringSize, bulk);
  auto allocBarriers = [&](SmallVector<Value> &ring, int64_t arrivals) {
    auto alloc = allocBarrierRing(b, loc, ringSize, arrivals);
    ring.assign(alloc.getResults().begin(), alloc.getResults().end());
    return alloc;
  };
  if (bulk) {
    // In an enclosing loop the pipeline runs again over the buffers its
    // last run read.
    allocBarriers(barriers, operands.size())
        .setAfterReads(home->getParentOfType<LoopLikeOpInterface>() != nullptr);
    phases.assign(ringSize, arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(0)));
    // A fresh barrier's phase before its first counts as complete: the
    // first wait on each empty barrier passes (parity 1), and the parity
    // flips where the full barriers' does, once per turn of the ring.
    if (empties) {
      allocBarriers(emptyBarriers, target.options.numWarps);
      emptyPhases.assign(ringSize, arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(1)));
    }
    if (clustered) { // every program's barriers exist before copies arrive at them
      ClusterArriveOp::create(b, loc);
      ClusterWaitOp::create(b, loc);
    }
  }
  // The first lead stages of the run whose bounds and addresses `map`
  // gives (where `guard`, if any, holds), into the rings and barriers as
  // they stand.
  auto fill = [&](OpBuilder &fb, Value inductionVar, const IRMapping &map, Value guard,
                  ArrayRef<Value> ringsNow, ArrayRef<Value> barriersNow) {
    Value iv = map.lookupOrDefault(lower);
    Value upperHere = map.lookupOrDefault(upper), stepHere = map.lookupOrDefault(step);
    for (int64_t s = 0; s < lead; ++s) {
      if (s)
        iv = arith::AddIOp::create(fb, loc, iv, stepHere);
      for (auto [i, operand] : llvm::enumerate(operands))
        copyAt(fb, operand, map, inductionVar, iv, upperHere, unsignedCmp, guard,
               ringsNow[i * ringSize + s], bulk ? barriersNow[s] : Value());
      if (!bulk)
        AsyncCommitOp::create(fb, loc);
    }
    if (clustered)
      ClusterArriveOp::create(fb, loc);
  };
  // The run of the enclosing loop's iteration `outerIv`: its bounds and
  // addresses recomputed, and whether that iteration runs.
  auto runAt = [&](OpBuilder &rb, Value outerIv, IRMapping &map) {
    scf::ForOp outer = prefetch->outer;
    map.map(outer.getInductionVar(), outerIv);
    for (Operation *op : prefetch->slice)
      rb.clone(*op, map);
    return below(rb, loc, outerIv, outer.getUpperBound(), outer.getUnsignedCmp());
  };
  if (prefetch) {
    IRMapping map;
    Value runs = runAt(b, prefetch->outer.getLowerBound(), map);
    fill(b, loop.getInductionVar(), map, runs, rings, barriers);
  } else {
    fill(b, loop.getInductionVar(), IRMapping(), Value(), rings, barriers);
  }

  // The loop carries each ring rotated by one per iteration: positions
  // 0..lead - 1 hold the tiles of this iteration and the next ones,
  // position lead the oldest buffer read (by the previous iteration, or
  // with a spare the one before), which receives the copies lead ahead.
  // Barriers rotate with their buffers; a barrier's parity flips each time
  // it comes round again.
  // The parities go last: rotate flips the last parityRings rings.
  SmallVector<Value> carried(rings);
  for (ArrayRef<Value> more : {barriers, emptyBarriers, phases, emptyPhases})
    llvm::append_range(carried, more);
  int64_t parityRings = (phases.size() + emptyPhases.size()) / ringSize;
  IRRewriter rewriter(loop.getContext());
  // The enclosing loop passes the rings from one run to the next.
  scf::ForOp outer;
  if (prefetch) {
    outer = prefetch->outer = carryThrough(rewriter, prefetch->outer, carried);
    if (!outer)
      return {};
  }
  auto rotate = [&](OpBuilder &yb, Location, ArrayRef<BlockArgument> args) {
    return rotateRings(yb, loc, args, ringSize, parityRings);
  };
  auto replaced = cast<LoopLikeOpInterface>(loop.getOperation())
                      .replaceWithAdditionalYields(rewriter, carried,
                                                   /*replaceInitOperandUsesInLoop=*/false, rotate);
  if (failed(replaced))
    return {};
  auto pipelined = cast<scf::ForOp>(replaced->getOperation());
  // The loop's arguments for each ring, taken in the order carried has them.
  ArrayRef<BlockArgument> args = pipelined.getRegionIterArgs().take_back(carried.size());
  auto take = [&](ArrayRef<Value> group) {
    ArrayRef<BlockArgument> front = args.take_front(group.size());
    args = args.drop_front(group.size());
    return front;
  };
  auto ring = take(rings);
  auto barrierRing = take(barriers);
  auto emptyRing = take(emptyBarriers);
  auto phaseRing = take(phases);
  auto emptyPhaseRing = take(emptyPhases);

  OpBuilder body = OpBuilder::atBlockBegin(pipelined.getBody());
  // The step's wait for its own stage, which joins the program where
  // nothing else orders the refills. It opens the step, except with empty
  // barriers: there it follows the step's copies, which wait only for the
  // buffer they refill, so a stage landing late does not also hold up the
  // copies of the steps after it.
  auto waitForStage = [&] {
    if (bulk)
      MBarrierWaitOp::create(body, loc, barrierRing[0], phaseRing[0],
                             /*join=*/!clustered && !empties);
    else
      AsyncWaitOp::create(body, loc, stages - 2);
  };
  if (!empties)
    waitForStage();
  for (auto [i, operand] : llvm::enumerate(operands))
    operand.dot->setOperand(operand.index, ring[i * ringSize]);
  Operation *yield = pipelined.getBody()->getTerminator();
  // After the loop: the products still reading the rings complete, then
  // the pipeline's tail (below) ends the rings' life.
  Operation *tail = retireOverlapped(rewriter, pipelined, plan.overlapped).first;
  // The copies lead stages ahead. Bulk copies into the rings of products
  // that run asynchronously go after those are started: issuing a block's
  // boxes then overlaps this step's products instead of holding up their
  // start (they go to the buffer read two steps back, free since the join).
  if (bulk && !plan.overlapped.empty())
    body.setInsertionPoint(yield);
  if (clustered)
    ClusterWaitOp::create(body, loc);
  if (empties)
    MBarrierWaitOp::create(body, loc, emptyRing[lead], emptyPhaseRing[lead], /*join=*/false,
                           /*copier=*/true);
  Value leadSteps = arith::ConstantOp::create(body, loc, body.getIntegerAttr(step.getType(), lead));
  Value ahead = arith::AddIOp::create(body, loc, pipelined.getInductionVar(),
                                      arith::MulIOp::create(body, loc, step, leadSteps));
  for (auto [i, operand] : llvm::enumerate(operands))
    copyAt(body, operand, IRMapping(), pipelined.getInductionVar(), ahead, upper, unsignedCmp,
           Value(), ring[i * ringSize + lead], bulk ? Value(barrierRing[lead]) : Value());
  if (!bulk)
    AsyncCommitOp::create(body, loc);
  if (empties)
    waitForStage();
  body.setInsertionPoint(yield);
  if (clustered)
    ClusterArriveOp::create(body, loc, /*release=*/plan.threadReads);
  if (empties)
    MBarrierArriveOp::create(body, loc, emptyRing[0]);
  rewriter.setInsertionPointAfter(tail);
  if (prefetch) {
    // The next iteration's first stages, before the code after the run:
    // the copies the steps past its bound would have made had the runs
    // been one loop. The buffers they fill were read two steps or more
    // before the end (the last step's join, or the cluster's wait below,
    // orders those reads first).
    if (clustered)
      ClusterWaitOp::create(rewriter, loc);
    SmallVector<Value> after(pipelined.getResults().take_back(carried.size()));
    IRMapping map;
    Value next = arith::AddIOp::create(rewriter, loc, outer.getInductionVar(), outer.getStep());
    Value runs = runAt(rewriter, next, map);
    fill(rewriter, pipelined.getInductionVar(), map, runs,
         ArrayRef(after).take_front(rings.size()),
         ArrayRef(after).slice(rings.size(), barriers.size()));
    yieldLast(outer, after);
  }
  eraseLoads(rewriter, operands);
  // A staged tile may still feed a later loop (or one left alone).
  for (const Operand &operand : plan.staged)
    if (operand.load->use_empty()) {
      copied.erase(operand.load);
      rewriter.eraseOp(operand.load);
    }
  rewriter.setInsertionPointAfter(prefetch ? outer.getOperation() : tail);
  // Every copy in flight belongs to an iteration the loop waited for (bulk
  // copies past the bound are not started); the rings and barriers then
  // end, so that what follows may take their room and an enclosing loop
  // may initialise the barriers again.
  if (clustered) // the last arrival's wait
    ClusterWaitOp::create(rewriter, loc);
  ReleaseSharedOp::create(rewriter, loc, rings);
  if (bulk)
    InvalMBarriersOp::create(rewriter, loc,
                             llvm::to_vector(llvm::concat<Value>(barriers, emptyBarriers)));
  // Unrolled by the ring's size, the loop's rotations compose to the
  // identity: every copy and dot addresses a fixed buffer, and the moves
  // that rotated the rings each step go (a third of the K loop's
  // instructions with 128x256 blocks on sm_90). The remainder loop still
  // rotates. Where copies complete at once it would only grow the code,
  // and so where the loop does more than one product: attention's steps
  // compute a softmax between theirs, the moves are a small part, and
  // ptxas keeps values of the unrolled steps live at once (with 128-row
  // blocks 1.8 KB a thread spilled instead of 0.2; 7 % slower at 8K).
  if (unrollRings && target.spec.hasAsyncCopy() &&
      llvm::hasSingleElement(pipelined.getBody()->getOps<DotOp>())) {
    unrollByRing(pipelined, ringSize);
  }
  return prefetch ? prefetch->outer : scf::ForOp();
}

/// The shared memory `loop`'s rings may take in `func`, a kernel when
/// `inDynamic`, for each kind of ring (none: no limit).
RingBudget ringBudget(FunctionOpInterface func, scf::ForOp loop, bool inDynamic,
                      const CompileTarget &target) {
  const TargetSpec &spec = target.spec;
  std::optional<int64_t> limit =
      inDynamic ? spec.dynamicSharedMemoryBytes() : spec.staticSharedMemoryBytes();
  if (!limit)
    return {};
  // Less the buffers in use while the loop runs: in dynamic shared memory
  // (placeSharedBuffers) those whose life overlaps the loop's and those
  // of the other proxy, whenever they live; in static shared memory all
  // of the function's.
  std::optional<SharedLiveness> liveness;
  SharedLiveness::Span steps;
  if (inDynamic) {
    liveness.emplace(func);
    steps = liveness->span(loop);
  }
  int64_t live[2] = {0, 0}; // by the rings' kind: generic, bulk
  func->walk([&](Operation *op) {
    if (!isa<AllocSharedOp, AllocMBarriersOp>(op))
      return;
    bool overlaps = !liveness || liveness->life(op).overlaps(steps);
    for (bool bulk : {false, true})
      if (overlaps || inAsyncProxy(op) != bulk)
        live[bulk] += sharedFootprint(op).first;
  });
  // And the exchanges': in dynamic shared memory those of the loop keep as
  // much as static shared memory would give them, or the function's
  // largest (an epilogue's conversion: bulk copies' rings never share its
  // room, placeSharedBuffers); in static shared memory the scratch area is
  // one buffer, as large as its largest user needs.
  int64_t exchanges =
      inDynamic ? std::max(*spec.staticSharedMemoryBytes(), largestConversion(func, target))
                : kReservedSharedBytes + dotScratchOutside(func, loop, target);
  return {*limit - live[true] - exchanges, *limit - live[false] - exchanges};
}

struct WeftPipelineDotOperands
    : impl::WeftPipelineDotOperandsBase<WeftPipelineDotOperands> {
  using WeftPipelineDotOperandsBase::WeftPipelineDotOperandsBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    FailureOr<CompileTarget> target = getCompileTarget(module);
    if (failed(target))
      return signalPassFailure();
    for (auto func : module.getOps<FunctionOpInterface>()) {
      SmallVector<scf::ForOp> loops;
      func->walk([&](scf::ForOp loop) { loops.push_back(loop); }); // innermost first
      // A kernel's buffers go to dynamic shared memory where the target
      // has it (placeSharedBuffers); otherwise they share the static limit
      // with the scratch area, which its other dots need for operands.
      bool inDynamic = placedInDynamic(func, target->spec);
      StagedTiles copied;
      for (auto [i, loop] : llvm::enumerate(loops)) {
        // A loop's own weft.num_stages (wl.range(..., num_stages=)) wins
        // over the module's; below 2 the loop is left alone.
        unsigned numStages = target->options.numStages;
        if (auto own = loop->getAttrOfType<IntegerAttr>(kNumStagesAttrName))
          numStages = own.getInt();
        if (numStages < 2)
          continue;
        // In dynamic shared memory the exchanges of the loop have their
        // own room (ringBudget); otherwise its dots' take from the rings'.
        if (std::optional<PipelinePlan> plan =
                planPipeline(loop, numStages, ringBudget(func, loop, inDynamic, *target),
                             *target, /*withScratch=*/!inDynamic, copied)) {
          // A prefetching pipeline replaces the enclosing loop, still to come.
          Operation *parent = loop->getParentOp();
          scf::ForOp outer = plan->specializedHome
                                 ? emitSpecializedPipeline(loop, *plan, unrollRings, *target)
                                 : emitPipeline(loop, *plan, unrollRings, *target, copied);
          if (outer)
            std::replace_if(
                loops.begin() + i + 1, loops.end(),
                [&](scf::ForOp other) { return other.getOperation() == parent; }, outer);
        }
      }
    }
  }
};

} // namespace
} // namespace weft
