//===- SpecializedPipeline.cpp - producer warps copy a K loop's stages ----===//
//
// A pipelined K loop whose program makes its own copies spends part of each
// step on them: a thread issues them between the products, and the program
// orders the refills after its reads with a join (or a cluster's barrier)
// per step. Here a warpgroup of producer warps makes them instead, running
// its own copy of the loop ahead of the program's warps, waiting only until
// each buffer is free; the program's warps wait only for their stages and
// tell the producer, through a barrier per buffer, when they are done with
// one (docs/tile-ir.md, "Warp specialisation").
//
//===----------------------------------------------------------------------===//
#include "PipelinePlan.h"

#include "weft/Dialect/Weft/IR/CompileTarget.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;

namespace weft {

/// The producer warps: a warpgroup, the unit in which sm_90 moves registers
/// between warps (setmaxnreg), so that the program's warps keep theirs.
constexpr int32_t kProducerWarps = 4;

namespace {

/// The ops before `home` in its block that the program's warps alone must
/// run, after the split: those that hold tiles (whose layouts only the
/// program's warps have) and what uses their results. The producer warps
/// run the others with them; none may touch memory but the shared buffers
/// and barriers it allocates, and those that move must be pure. None if
/// an op breaks these rules.
std::optional<llvm::SetVector<Operation *>> programOnly(scf::ForOp home) {
  llvm::SetVector<Operation *> moved;
  for (Operation &op : *home->getBlock()) {
    if (&op == home)
      break;
    if (isa<AllocSharedOp, AllocMBarriersOp>(op))
      continue;
    if (!isMemoryEffectFree(&op) || op.getNumRegions())
      return std::nullopt;
    if (holdsTiles(&op) ||
        llvm::any_of(op.getOperands(), [&](Value v) { return moved.contains(v.getDefiningOp()); }))
      moved.insert(&op);
  }
  return moved;
}

} // namespace

void planSpecialized(scf::ForOp loop, PipelinePlan &plan) {
  scf::ForOp home = loop;
  if (!loop->hasAttr(kWarpSpecializeAttrName)) {
    home = dyn_cast<scf::ForOp>(loop->getParentOp());
    if (!home || !home->hasAttr(kWarpSpecializeAttrName))
      return;
  }
  // The split goes before the home loop, in the kernel's own body: the
  // producers run what comes before it, and leave after their copies.
  auto func = dyn_cast<FunctionOpInterface>(home->getParentOp());
  if (!func || !func->hasAttr(kKernelAttrName))
    return;
  std::optional<llvm::SetVector<Operation *>> moved = programOnly(home);
  if (!moved)
    return;
  // Products in flight or none: the program's warps free a buffer once
  // their products that read it have retired.
  if (!plan.overlapped.empty() &&
      plan.overlapped.size() != llvm::range_size(loop.getBody()->getOps<DotOp>()))
    return;
  // The producers copy ahead of the program's warps, into later runs of
  // the home loop: nothing in the kernel may order the accesses those
  // copies read (a wait for rows a peer sends, a release of a partial).
  auto alsoWeak = [&](Operation *op) { return op == func || isa<BulkStoreWaitOp>(op); };
  if (!accessesWeakly(func, alsoWeak))
    return;
  SmallVector<Operation *> slice;
  if (home != loop) {
    auto found = runSlice(home, loop, plan.operands);
    if (!found)
      return;
    slice = std::move(*found);
  }
  // The producers compute their loops' bounds and their copies' addresses
  // from what comes before the split; the ops that move come after it.
  SmallVector<Value> read{home.getLowerBound(), home.getUpperBound(), home.getStep(),
                          loop.getLowerBound(), loop.getUpperBound(), loop.getStep()};
  for (const Operand &operand : plan.operands)
    for (Operation *op : llvm::concat<Operation *const>(operand.slice, ArrayRef(operand.load)))
      llvm::append_range(read, op->getOperands());
  for (Operation *op : slice)
    llvm::append_range(read, op->getOperands());
  if (llvm::any_of(read, [&](Value v) { return moved->contains(v.getDefiningOp()); }))
    return;
  plan.specializedHome = home;
  plan.homeSlice = std::move(slice);
  plan.programOnly = moved->takeVector();
}

scf::ForOp emitSpecializedPipeline(scf::ForOp loop, const PipelinePlan &plan, bool unrollRings,
                                   const CompileTarget &target) {
  auto func = loop->getParentOfType<FunctionOpInterface>();
  func->setAttr(kTensorMapsAttrName, *plan.tensorMaps);
  ArrayRef<Operand> operands = plan.operands;
  int64_t ringSize = plan.ringSize();
  Location loc = loop.getLoc();
  scf::ForOp home = plan.specializedHome;
  bool nested = home != loop;
  Value lower = loop.getLowerBound(), upper = loop.getUpperBound(), step = loop.getStep();
  bool unsignedCmp = loop.getUnsignedCmp();

  // Rings, a barrier per buffer that its copies arrive at (full), one that
  // the program's warps arrive at once done with it (empty), before the
  // split: both kinds of warps use them. Where the cluster's programs
  // share copies, a buffer is free once every program's warps are done
  // with it: they arrive at the empty barriers of all of them, which exist
  // before any arrival or copy reaches them (the cluster's barrier).
  OpBuilder b(home);
  bool clustered = plan.clustered;
  int64_t programs = clustered ? clusterSize(func) : 1;
  SmallVector<Value> rings = allocRings(b, loc, operands, ringSize, /*bulk=*/true);
  ValueRange full = allocBarrierRing(b, loc, ringSize, operands.size()).getResults();
  ValueRange empty =
      allocBarrierRing(b, loc, ringSize, target.options.numWarps * programs).getResults();
  if (clustered) {
    ClusterArriveOp::create(b, loc);
    ClusterWaitOp::create(b, loc);
  }
  // What both kinds of loops carry, ring by ring: the operands' buffers,
  // the full and the empty barriers, and the parities of the phases each
  // kind waits for next (its barriers' positions in the list).
  const int64_t fullAt = operands.size(), emptyAt = fullAt + 1, phaseAt = fullAt + 2;
  auto ringsWith = [&](int32_t parity) {
    SmallVector<Value> carried(rings);
    llvm::append_range(carried, full);
    llvm::append_range(carried, empty);
    carried.append(ringSize, arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(parity)));
    return carried;
  };
  SmallVector<Value> produced = ringsWith(1), carried = ringsWith(0);

  // The split: the home loop and what follows it go to the program's warps.
  auto split = WarpSpecializeOp::create(b, loc, kProducerWarps);
  Block *defaultBlock = new Block, *producerBlock = new Block;
  split.getDefaultRegion().push_back(defaultBlock);
  split.getProducerRegion().push_back(producerBlock);
  Block *body = split->getBlock();
  for (Operation *op : plan.programOnly)
    op->moveBefore(defaultBlock, defaultBlock->end());
  defaultBlock->getOperations().splice(defaultBlock->end(), body->getOperations(),
                                       Block::iterator(home),
                                       Block::iterator(body->getTerminator()));
  for (Block *region : {defaultBlock, producerBlock}) {
    OpBuilder end = OpBuilder::atBlockEnd(region);
    WarpYieldOp::create(end, loc);
  }
  // A program returns only once the others' warps have made their last
  // arrivals at its barriers (its own copies have landed: its warps waited
  // for them). The producers need not: exited threads release the barrier.
  if (clustered) {
    OpBuilder end(defaultBlock->getTerminator());
    ClusterArriveOp::create(end, loc, /*release=*/true);
    ClusterWaitOp::create(end, loc);
  }

  // The producers' loops: every step waits until its buffers are free (a
  // fresh barrier's phase before its first counts as complete: the first
  // wait on each passes with parity 1), then copies its stage into them.
  auto copies = [&](OpBuilder &pb, const IRMapping &map, ValueRange carried) {
    Value upperHere = map.lookupOrDefault(upper);
    auto steps = scf::ForOp::create(
        pb, loc, map.lookupOrDefault(lower), upperHere, map.lookupOrDefault(step), carried,
        [&](OpBuilder &sb, Location, Value iv, ValueRange args) {
          auto ring = [&](int64_t group) { return args[group * ringSize]; };
          MBarrierWaitOp::create(sb, loc, ring(emptyAt), ring(phaseAt), /*join=*/false,
                                 /*copier=*/true);
          for (auto [i, operand] : llvm::enumerate(operands))
            copyAt(sb, operand, map, loop.getInductionVar(), iv, upperHere, unsignedCmp, Value(),
                   ring(i), ring(fullAt));
          SmallVector<BlockArgument> blockArgs(sb.getBlock()->getArguments().drop_front());
          scf::YieldOp::create(sb, loc, rotateRings(sb, loc, blockArgs, ringSize, 1));
        });
    steps.setUnsignedCmp(unsignedCmp);
    return steps;
  };
  OpBuilder pb(producerBlock->getTerminator());
  scf::ForOp producer;
  if (nested) {
    auto runs = scf::ForOp::create(
        pb, loc, home.getLowerBound(), home.getUpperBound(), home.getStep(), produced,
        [&](OpBuilder &rb, Location, Value outerIv, ValueRange args) {
          IRMapping map;
          map.map(home.getInductionVar(), outerIv);
          for (Operation *op : plan.homeSlice)
            rb.clone(*op, map);
          producer = copies(rb, map, args);
          scf::YieldOp::create(rb, loc, SmallVector<Value>(producer.getResults()));
        });
    runs.setUnsignedCmp(home.getUnsignedCmp());
  } else {
    producer = copies(pb, IRMapping(), produced);
  }
  // Unrolled, the producers' thread addresses fixed buffers and barriers;
  // rotating them it spent a step's time on moves and spills, and fell
  // behind the products.
  if (unrollRings)
    unrollByRing(producer, ringSize);

  // The program's loop: each step waits for its stage and, once the
  // products that read the step before's buffers have retired, frees them.
  IRRewriter rewriter(loop.getContext());
  scf::ForOp outer;
  if (nested && !(outer = carryThrough(rewriter, home, carried)))
    return {};
  auto replaced = cast<LoopLikeOpInterface>(loop.getOperation())
                      .replaceWithAdditionalYields(
                          rewriter, carried, /*replaceInitOperandUsesInLoop=*/false,
                          [&](OpBuilder &yb, Location, ArrayRef<BlockArgument> args) {
                            return rotateRings(yb, loc, args, ringSize, 1);
                          });
  if (failed(replaced))
    return {};
  auto steps = cast<scf::ForOp>(replaced->getOperation());
  ArrayRef<BlockArgument> args = steps.getRegionIterArgs().take_back(carried.size());
  auto ring = [&](ArrayRef<BlockArgument> from, int64_t group) {
    return from.slice(group * ringSize, ringSize);
  };
  OpBuilder sb = OpBuilder::atBlockBegin(steps.getBody());
  MBarrierWaitOp::create(sb, loc, ring(args, fullAt)[0], ring(args, phaseAt)[0],
                         /*join=*/false);
  for (auto [i, operand] : llvm::enumerate(operands))
    operand.dot->setOperand(operand.index, ring(args, i)[0]);
  Operation *yield = steps.getBody()->getTerminator();
  if (plan.overlapped.empty()) {
    sb.setInsertionPoint(yield);
    MBarrierArriveOp::create(sb, loc, ring(args, emptyAt)[0], /*async_reads=*/true, clustered);
  } else {
    // Each product waits until only this step's are in flight; the step
    // before's buffers (the ring's last) are then free, where there was
    // a step before. After the loop the last products retire and free the
    // last step's buffers, where the loop ran.
    auto [tail, lastWait] = retireOverlapped(rewriter, steps, plan.overlapped);
    rewriter.setInsertionPointAfter(lastWait);
    Value later = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::ne,
                                        steps.getInductionVar(), lower);
    scf::IfOp::create(rewriter, loc, later, [&](OpBuilder &ib, Location) {
      MBarrierArriveOp::create(ib, loc, ring(args, emptyAt).back(), /*async_reads=*/true,
                               clustered);
      scf::YieldOp::create(ib, loc);
    });
    rewriter.setInsertionPointAfter(tail);
    Value ran = below(rewriter, loc, lower, upper, unsignedCmp);
    SmallVector<Value> after(steps.getResults().take_back(carried.size()));
    Value lastEmpty = after[(emptyAt + 1) * ringSize - 1];
    scf::IfOp::create(rewriter, loc, ran, [&](OpBuilder &ib, Location) {
      MBarrierArriveOp::create(ib, loc, lastEmpty, /*async_reads=*/true, clustered);
      scf::YieldOp::create(ib, loc);
    });
  }
  if (nested)
    yieldLast(outer, steps.getResults().take_back(carried.size()));
  eraseLoads(rewriter, operands);
  // The rings and barriers live to the kernel's end (the producers use
  // them outside the program's code). Unrolled by the ring's size, the
  // program's loop addresses fixed buffers (emitPipeline's reason).
  if (unrollRings && llvm::hasSingleElement(steps.getBody()->getOps<DotOp>()))
    unrollByRing(steps, ringSize);
  return outer;
}

} // namespace weft
