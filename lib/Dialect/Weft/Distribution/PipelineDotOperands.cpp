//===- PipelineDotOperands.cpp - dot operands copied stages ahead ---------===//
//
// A K loop of weft.dot waits for its operand loads at every step. Here the
// loads become asynchronous copies into a ring of shared-memory buffers,
// issued num-stages - 1 iterations ahead, so that their latency overlaps
// the math of the iterations in between (docs/tile-ir.md, "Pipelining").
//
//===----------------------------------------------------------------------===//
#include "ExpandTensorDescs.h"

#include "weft/Analysis/AxisInfo.h"

#include "weft/Dialect/Weft/Distribution/DotPlan.h"
#include "weft/Dialect/Weft/Distribution/Passes.h"
#include "weft/Dialect/Weft/Distribution/SharedMemory.h"
#include "weft/Dialect/Weft/IR/CompileTarget.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
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

/// Shared memory left to the program's other uses (exchanges, reductions).
constexpr int64_t kReservedSharedBytes = 8 * 1024;

/// A plain tile load, or a block of a tensor descriptor (always weak).
bool isWeakLoad(Operation *op) {
  auto load = dyn_cast<LoadOp>(op);
  return (load && load.getOrder() == MemOrder::weak) || isa<DescLoadOp>(op);
}

/// Nothing in the loop writes memory or synchronises, so its weak loads may
/// be issued early. (Ops with regions are judged by what they contain.)
bool onlyReads(scf::ForOp loop) {
  return !loop.getBody()
              ->walk([](Operation *op) {
                return isWeakLoad(op) || isMemoryEffectFree(op) ||
                               op->hasTrait<OpTrait::HasRecursiveMemoryEffects>()
                           ? WalkResult::advance()
                           : WalkResult::interrupt();
              })
              .wasInterrupted();
}

bool isZero(Value value) {
  if (auto splat = value.getDefiningOp<SplatOp>())
    value = splat.getSrc();
  return matchPattern(value, m_AnyZeroFloat()) || matchPattern(value, m_Zero());
}

/// The ops of the loop body that compute `load`'s operands, in program
/// order, if they depend only on the induction variable and values from
/// outside the loop and have no memory effects.
std::optional<SmallVector<Operation *>> addressSlice(scf::ForOp loop, Operation *load) {
  SmallVector<Value> work(load->getOperands());
  llvm::SetVector<Operation *> found;
  while (!work.empty()) {
    Value value = work.pop_back_val();
    if (value == loop.getInductionVar() || loop.isDefinedOutsideOfLoop(value))
      continue;
    Operation *def = value.getDefiningOp();
    if (!def || def->getBlock() != loop.getBody() || !isMemoryEffectFree(def) ||
        def->getNumRegions())
      return std::nullopt;
    if (found.insert(def))
      llvm::append_range(work, def->getOperands());
  }
  SmallVector<Operation *> ops = found.takeVector();
  llvm::sort(ops, [](Operation *x, Operation *y) { return x->isBeforeInBlock(y); });
  return ops;
}

/// A dot operand to pipeline: its load (a weft.load or a weft.desc_load)
/// and the load's address slice; `multicast`: the programs of the cluster
/// share its copies.
struct Operand {
  Operation *load;
  SmallVector<Operation *> slice;
  SharedType buffer;
  bool multicast = false;
};

/// Whether `value` is the same in every program of a cluster of `cluster`
/// programs along each grid axis: computed without side effects from the
/// kernel's arguments, constants, grid sizes, program ids along axes the
/// cluster does not span, program ids over a multiple of the cluster's
/// extent (clusters start at multiples of it), and induction variables of
/// loops whose bounds are all such values.
bool sameInCluster(Value value, const std::array<int64_t, 3> &cluster,
                   llvm::DenseMap<Value, bool> &known) {
  if (auto it = known.find(value); it != known.end())
    return it->second;
  known[value] = false; // until shown otherwise (cycles through loops)
  bool same = false;
  if (auto arg = dyn_cast<BlockArgument>(value)) {
    Operation *owner = arg.getOwner()->getParentOp();
    if (isa<FunctionOpInterface>(owner))
      same = owner->hasAttr(kKernelAttrName);
    else if (auto loop = dyn_cast<scf::ForOp>(owner); loop && arg == loop.getInductionVar())
      same = llvm::all_of(ValueRange{loop.getLowerBound(), loop.getUpperBound(), loop.getStep()},
                          [&](Value v) { return sameInCluster(v, cluster, known); });
  } else if (Operation *def = value.getDefiningOp()) {
    auto axisOf = [](Value v) -> std::optional<unsigned> {
      if (auto pid = v.getDefiningOp<ProgramIdOp>())
        return static_cast<unsigned>(pid.getAxis());
      return std::nullopt;
    };
    APInt divisor;
    if (auto axis = axisOf(value)) {
      same = cluster[*axis] == 1;
    } else if (isa<arith::DivSIOp, arith::DivUIOp>(def) && axisOf(def->getOperand(0)) &&
               matchPattern(def->getOperand(1), m_ConstantInt(&divisor)) &&
               divisor.getSExtValue() > 0 &&
               divisor.getSExtValue() % cluster[*axisOf(def->getOperand(0))] == 0) {
      same = true;
    } else if (isMemoryEffectFree(def) && def->getNumRegions() == 0) {
      same = llvm::all_of(def->getOperands(),
                          [&](Value v) { return sameInCluster(v, cluster, known); });
    }
  }
  return known[value] = same;
}

std::optional<Operand> pipelinable(scf::ForOp loop, Value operand) {
  Operation *load = operand.getDefiningOp();
  if (!load || load->getBlock() != loop.getBody() || !isWeakLoad(load) || !load->hasOneUse())
    return std::nullopt;
  if (auto plain = dyn_cast<LoadOp>(load); plain && plain.getOther() && !isZero(plain.getOther()))
    return std::nullopt;
  auto slice = addressSlice(loop, load);
  if (!slice)
    return std::nullopt;
  auto type = cast<RankedTensorType>(operand.getType());
  return Operand{load, std::move(*slice),
                 SharedType::get(loop.getContext(), type.getShape(), type.getElementType())};
}

/// Starts copying `operand`'s tile of iteration `iv` into `buffer`: its
/// address slice cloned with `iv` for `inductionVar`, masked off unless
/// `iv` is below `upper`. A descriptor's block is one bulk copy that
/// arrives at `barrier`; a tile of pointers joins the open copy group.
void copyAt(OpBuilder &b, const Operand &operand, Value inductionVar, Value iv, Value upper,
            bool unsignedCmp, Value buffer, Value barrier) {
  Location loc = operand.load->getLoc();
  IRMapping map;
  map.map(inductionVar, iv);
  for (Operation *op : operand.slice)
    b.clone(*op, map);
  Value inRange = arith::CmpIOp::create(
      b, loc, unsignedCmp ? arith::CmpIPredicate::ult : arith::CmpIPredicate::slt, iv, upper);
  if (auto desc = dyn_cast<DescLoadOp>(operand.load)) {
    SmallVector<Value> offsets;
    for (Value offset : desc.getOffsets())
      offsets.push_back(map.lookupOrDefault(offset));
    DescAsyncCopyOp::create(b, loc, desc.getDesc(), offsets, buffer, barrier, inRange,
                            operand.multicast);
    return;
  }
  auto load = cast<LoadOp>(operand.load);
  auto maskType = RankedTensorType::get(operand.buffer.getShape(), b.getI1Type());
  Value mask = SplatOp::create(b, loc, maskType, inRange);
  if (Value original = load.getMask())
    mask = arith::AndIOp::create(b, loc, map.lookupOrDefault(original), mask);
  AsyncCopyOp::create(b, loc, map.lookupOrDefault(load.getPtr()), buffer, mask);
}

/// The bulk copies `operand` (a descriptor's block in a buffer with its
/// final layout) needs: the kernel argument they read and the plan of its
/// tensor map (tensorCopyPlan, one box per block where the block's offsets
/// are aligned to the view); none where the block is no bulk copy (the
/// descriptor is not the kernel's own argument, or the buffer not
/// swizzled).
std::optional<std::pair<unsigned, TensorCopyPlan>> tensorMapOf(const Operand &operand,
                                                               const AxisInfoAnalysis &axis) {
  auto desc = dyn_cast<DescLoadOp>(operand.load);
  if (!desc)
    return std::nullopt;
  auto arg = dyn_cast<BlockArgument>(desc.getDesc());
  if (!arg || !isa<FunctionOpInterface>(arg.getOwner()->getParentOp()) ||
      !arg.getOwner()->getParentOp()->hasAttr(kKernelAttrName))
    return std::nullopt;
  // A view that walks the tensor in steps needs the block's offsets and the
  // tensor's extent to be whole steps (both powers of two: the smaller
  // divides the other).
  auto func = cast<FunctionOpInterface>(arg.getOwner()->getParentOp());
  auto shape = func.getArgAttrOfType<DenseI64ArrayAttr>(arg.getArgNumber(),
                                                        kShapeDivisibilityAttrName);
  std::array<int64_t, 2> divisibility;
  for (unsigned d = 0; d < 2; ++d)
    divisibility[d] = std::min(axis.get(desc.getOffsets()[d]).divisibility[0],
                               shape && d < shape.size() ? shape[d] : 1);
  auto plan = tensorCopyPlan(operand.buffer, divisibility);
  if (!plan)
    return std::nullopt;
  // A shared copy's box is its slice of the outermost dimension
  // (weft.desc_async_copy's multicast).
  if (operand.multicast)
    plan->dims.back().box /= clusterSize(func);
  return std::pair{arg.getArgNumber(), std::move(*plan)};
}

/// Whether every program of the cluster runs `op`, as often as the others:
/// the loops around it have bounds, and the branches conditions, that are
/// the same in all of them (sameInCluster).
bool reachedTogether(Operation *op, const std::array<int64_t, 3> &cluster,
                     llvm::DenseMap<Value, bool> &known) {
  for (Operation *parent = op->getParentOp(); !isa<FunctionOpInterface>(parent);
       parent = parent->getParentOp()) {
    SmallVector<Value> decides;
    if (auto loop = dyn_cast<scf::ForOp>(parent))
      decides = {loop.getLowerBound(), loop.getUpperBound(), loop.getStep()};
    else if (auto branch = dyn_cast<scf::IfOp>(parent))
      decides = {branch.getCondition()};
    else
      return false;
    if (!llvm::all_of(decides, [&](Value v) { return sameInCluster(v, cluster, known); }))
      return false;
  }
  return true;
}

/// Whether the programs of `func`'s cluster can share the copies of
/// `operand`: its block is the same in all of them, one box (the offsets
/// aligned to a plan of one box per block) whose outermost dimension
/// splits evenly among them, each slice starting where the swizzle
/// pattern does.
bool shareable(const Operand &operand, FunctionOpInterface func, const AxisInfoAnalysis &axis,
               llvm::DenseMap<Value, bool> &known) {
  auto desc = dyn_cast<DescLoadOp>(operand.load);
  int64_t programs = clusterSize(func);
  std::array<int64_t, 3> cluster = clusterShape(func);
  auto same = [&](Value v) { return sameInCluster(v, cluster, known); };
  if (!desc || programs == 1 || !llvm::all_of(desc.getOffsets(), same))
    return false;
  auto map = tensorMapOf(operand, axis);
  if (!map || tensorCopyOrigins(map->second.dims, operand.buffer).size() != 1)
    return false;
  int64_t bytes = sharedTileBytes(operand.buffer);
  return map->second.dims.back().box % programs == 0 &&
         (bytes / programs) % sharedTileAlignment(operand.buffer) == 0;
}

/// Where the operands' blocks are all bulk copies: the tensor maps they
/// read, merged into those the kernel's other loops read (one per
/// argument, so the same map must do for all). None otherwise.
std::optional<DictionaryAttr> tensorMapsFor(ArrayRef<Operand> operands, Operation *func,
                                            const AxisInfoAnalysis &axis) {
  NamedAttrList maps;
  if (auto known = func->getAttrOfType<DictionaryAttr>(kTensorMapsAttrName))
    maps.append(known.getValue());
  for (const Operand &operand : operands) {
    auto map = tensorMapOf(operand, axis);
    if (!map)
      return std::nullopt;
    auto value = encodeTensorCopyPlan(func->getContext(), map->second);
    std::string key = std::to_string(map->first);
    if (Attribute existing = maps.get(key); existing && existing != value)
      return std::nullopt;
    maps.set(key, value);
  }
  return maps.getDictionary(func->getContext());
}

/// Stages that fit in `budget` bytes (none: no limit) with `spare` more
/// buffers per ring and `perStage` more bytes per buffer of the rings (a
/// barrier), at most `wanted`.
int64_t stagesFor(ArrayRef<Operand> operands, unsigned wanted, std::optional<int64_t> budget,
                  int64_t spare, int64_t perStage) {
  if (!budget)
    return wanted;
  // Room for aligning the first buffer (placeSharedBuffers).
  int64_t alignment = 16;
  for (const Operand &operand : operands) {
    perStage += sharedTileBytes(operand.buffer);
    alignment = std::max(alignment, sharedTileAlignment(operand.buffer));
  }
  return std::min<int64_t>(wanted, (*budget - (alignment - 16)) / perStage - spare);
}

/// The most scratch a dot of `func` outside `loop` needs.
int64_t dotScratchOutside(FunctionOpInterface func, scf::ForOp loop,
                          const CompileTarget &target) {
  int64_t most = 0;
  func->walk([&](DotOp dot) {
    if (!loop->isAncestor(dot))
      most = std::max(most, dotScratchBytes(dot, target));
  });
  return most;
}

/// The layout that `layoutOf` (DotPlan.h's, for a dot of operand type,
/// shape {M, N, K} and operand index) gives each of a dot's operand
/// buffers, where it gives one to both; returns whether it did.
bool useLayouts(Operand &a, Operand &b, const CompileTarget &target, OperandLayoutFn layoutOf) {
  std::array<int64_t, 3> mnk = {a.buffer.getDimSize(0), b.buffer.getDimSize(1),
                                a.buffer.getDimSize(1)};
  MLIRContext *ctx = a.buffer.getContext();
  Type in = a.buffer.getElementType();
  SwizzledSharedAttr aLayout = layoutOf(target, ctx, in, mnk, 0);
  SwizzledSharedAttr bLayout = layoutOf(target, ctx, in, mnk, 1);
  if (!aLayout || !bLayout)
    return false;
  a.buffer = SharedType::get(ctx, a.buffer.getShape(), in, aLayout);
  b.buffer = SharedType::get(ctx, b.buffer.getShape(), in, bLayout);
  return true;
}

/// The dot's sums only feed itself in the next iteration (through the
/// loop's yield): they may stay in flight across the step.
std::optional<unsigned> carriedOnly(scf::ForOp loop, DotOp dot) {
  if (!dot->hasOneUse())
    return std::nullopt;
  OpOperand &use = *dot->use_begin();
  auto arg = dyn_cast<BlockArgument>(dot.getC());
  if (use.getOwner() != loop.getBody()->getTerminator() || !arg ||
      arg.getOwner() != loop.getBody() ||
      arg.getArgNumber() != use.getOperandNumber() + loop.getNumInductionVars())
    return std::nullopt;
  return use.getOperandNumber();
}

/// The region of `op` that holds `region` (`op` an ancestor of it).
Region *regionOf(Operation *op, Region *region) {
  while (region->getParentOp() != op)
    region = region->getParentOp()->getParentRegion();
  return region;
}

/// Whether code in regions `a` and `b` never runs together: they lie in
/// different regions of their innermost common ancestor, which runs one
/// of them (runsOneRegion).
bool exclusive(Region *a, Region *b) {
  Operation *common = a->getParentOp();
  while (common && !common->isAncestor(b->getParentOp()))
    common = common->getParentOp();
  return common && runsOneRegion(common) && regionOf(common, a) != regionOf(common, b);
}

/// Pipelines `loop` within `budget` bytes of shared memory (none: no
/// limit); returns the bytes its rings take (0: left alone).
int64_t pipeline(scf::ForOp loop, unsigned numStages, std::optional<int64_t> budget,
                 bool unrollRings, const CompileTarget &target) {
  if (!onlyReads(loop))
    return 0;
  SmallVector<DotOp> dots;
  SmallVector<Operand> operands;
  // Yield positions of warpgroup dots whose products overlap the next
  // step's (weft.dot_wait 1 after each, 0 after the loop).
  SmallVector<std::pair<DotOp, unsigned>> overlapped;
  // Whether threads read the rings themselves (ldmatrix, element loads),
  // not only wgmma: a cluster's arrivals must then release those reads.
  bool threadReads = false;
  for (auto dot : loop.getBody()->getOps<DotOp>()) {
    auto a = pipelinable(loop, dot.getA()), b = pipelinable(loop, dot.getB());
    if (!a || !b)
      continue;
    // The layouts that warpgroup MMA reads in place, else those that
    // warp-level MMA's loads read without bank conflicts.
    if (useLayouts(*a, *b, target, &warpgroupOperandLayout)) {
      if (auto position = carriedOnly(loop, dot))
        overlapped.push_back({dot, *position});
    } else {
      threadReads = true;
      useLayouts(*a, *b, target, &mmaOperandLayout);
    }
    dots.push_back(dot);
    operands.push_back(std::move(*a));
    operands.push_back(std::move(*b));
  }
  if (operands.empty())
    return 0;
  // Descriptor blocks are bulk tensor copies where the target has them and
  // every operand of the loop can be one (the copies then complete on
  // barriers instead of in groups). Otherwise they become tiles of
  // pointers, and the loop is pipelined as such.
  auto func = loop->getParentOfType<FunctionOpInterface>();
  std::optional<DictionaryAttr> tensorMaps;
  if (target.spec.hasTensorCopies()) {
    AxisInfoAnalysis axis(func);
    tensorMaps = tensorMapsFor(operands, func, axis);
    // In a kernel run in clusters, the programs share the copies of the
    // blocks they all read (unless another loop reads the argument whole).
    llvm::DenseMap<Value, bool> known;
    if (tensorMaps && target.spec.hasClusters() && clusterSize(func) > 1 &&
        reachedTogether(loop, clusterShape(func), known)) {
      for (Operand &operand : operands)
        operand.multicast = shareable(operand, func, axis, known);
      if (auto shared = tensorMapsFor(operands, func, axis))
        tensorMaps = shared;
      else
        for (Operand &operand : operands)
          operand.multicast = false;
    }
  }
  if (!tensorMaps) {
    IRRewriter rewriter(loop.getContext());
    bool expanded = false;
    for (const Operand &operand : operands)
      if (auto desc = dyn_cast<DescLoadOp>(operand.load)) {
        expandDescLoad(rewriter, desc);
        expanded = true;
      }
    if (expanded)
      return pipeline(loop, numStages, budget, unrollRings, target);
  }
  bool bulk = tensorMaps.has_value();
  // Copies shared across the cluster refill a buffer in every program, so
  // the cluster's barrier, not the program's join, orders them after the
  // reads: each thread arrives at the end of a step, once done with the
  // buffer of the step before (the buffer read two steps back with a
  // spare, the one read last without), and waits at the next step's
  // copies, which go to that buffer; the waits trail the arrivals by a
  // step, so they rarely stall.
  bool clustered = llvm::any_of(operands, [](const Operand &o) { return o.multicast; });
  // Elsewhere bulk copies need no join at each step: every warp arrives at
  // a ring of "empty" barriers, one per buffer, once done with its step's
  // buffer, and only the copying thread waits there before it refills one;
  // the other warps go on until data they need has not landed. (Products
  // still in flight retire warpgroup by warpgroup after their step, and
  // keep the join: empty barriers measured slower for them, docs/tile-ir.md.)
  bool empties = bulk && !clustered && overlapped.empty();
  // A dot still in flight reads the buffers of the step before: one more
  // buffer per ring keeps the copies off them. (Each warpgroup waits for
  // its own products; the next step's join orders the copies after every
  // warpgroup's.)
  int64_t spare = overlapped.empty() ? 0 : 1;
  int64_t barrierBytes = bulk ? (empties ? 16 : 8) : 0;
  int64_t stages = stagesFor(operands, numStages, budget, spare, barrierBytes);
  if (stages < 2)
    return 0;
  if (bulk)
    func->setAttr(kTensorMapsAttrName, *tensorMaps);
  int64_t ringSize = stages + spare, lead = stages - 1;
  int64_t bytes = ringSize * barrierBytes;
  for (const Operand &operand : operands)
    bytes += ringSize * sharedTileBytes(operand.buffer);

  Location loc = loop.getLoc();
  Value upper = loop.getUpperBound(), step = loop.getStep();
  bool unsignedCmp = loop.getUnsignedCmp();
  OpBuilder b(loop);
  // Ring buffers, operand by operand; with bulk copies a ring of barriers
  // (one per stage, every operand's copy arriving at it) and maybe one of
  // empty barriers (every warp arriving), and the parities of the phases
  // they wait for next; then the first stages - 1 stages.
  SmallVector<Value> rings, barriers, emptyBarriers, phases, emptyPhases;
  for (const Operand &operand : operands)
    for (int64_t s = 0; s < ringSize; ++s)
      rings.push_back(AllocSharedOp::create(b, loc, operand.buffer));
  auto allocBarriers = [&](SmallVector<Value> &ring, int64_t arrivals) {
    auto alloc = AllocMBarriersOp::create(
        b, loc, SmallVector<Type>(ringSize, MBarrierType::get(loop.getContext())),
        b.getI32IntegerAttr(arrivals));
    ring.assign(alloc.getResults().begin(), alloc.getResults().end());
    return alloc;
  };
  if (bulk) {
    // In an enclosing loop the pipeline runs again over the buffers its
    // last run read.
    allocBarriers(barriers, operands.size())
        .setAfterReads(loop->getParentOfType<LoopLikeOpInterface>() != nullptr);
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
  Value iv = loop.getLowerBound();
  for (int64_t s = 0; s < lead; ++s) {
    if (s)
      iv = arith::AddIOp::create(b, loc, iv, step);
    for (auto [i, operand] : llvm::enumerate(operands))
      copyAt(b, operand, loop.getInductionVar(), iv, upper, unsignedCmp, rings[i * ringSize + s],
             bulk ? barriers[s] : Value());
    if (!bulk)
      AsyncCommitOp::create(b, loc);
  }
  if (clustered)
    ClusterArriveOp::create(b, loc);

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
  auto rotate = [&](OpBuilder &yb, Location, ArrayRef<BlockArgument> args) {
    SmallVector<Value> next;
    int64_t groups = carried.size() / ringSize;
    for (int64_t i = 0; i < groups; ++i)
      for (int64_t s = 0; s < ringSize; ++s)
        next.push_back(args[i * ringSize + (s + 1) % ringSize]);
    if (parityRings) {
      Value one = arith::ConstantOp::create(yb, loc, yb.getI32IntegerAttr(1));
      for (int64_t i = groups - parityRings; i < groups; ++i)
        next[i * ringSize + ringSize - 1] = arith::XOrIOp::create(yb, loc, args[i * ringSize], one);
    }
    return next;
  };
  auto replaced = cast<LoopLikeOpInterface>(loop.getOperation())
                      .replaceWithAdditionalYields(rewriter, carried,
                                                   /*replaceInitOperandUsesInLoop=*/false, rotate);
  if (failed(replaced))
    return 0;
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
  for (auto [i, dot] : llvm::enumerate(dots)) {
    dot->setOperand(0, ring[(2 * i) * ringSize]);
    dot->setOperand(1, ring[(2 * i + 1) * ringSize]);
  }
  Operation *yield = pipelined.getBody()->getTerminator();
  for (auto [dot, position] : overlapped) {
    rewriter.setInsertionPointAfter(dot);
    yield->setOperand(position, DotWaitOp::create(rewriter, loc, dot.getResult(), 1));
    rewriter.setInsertionPointAfter(pipelined);
    Value sums = pipelined.getResult(position);
    auto done = DotWaitOp::create(rewriter, loc, sums, 0);
    rewriter.replaceAllUsesExcept(sums, done, done);
  }
  // The copies lead stages ahead. Bulk copies into the rings of products
  // that run asynchronously go after those are started: issuing a block's
  // boxes then overlaps this step's products instead of holding up their
  // start (they go to the buffer read two steps back, free since the join).
  if (bulk && !overlapped.empty())
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
    copyAt(body, operand, pipelined.getInductionVar(), ahead, upper, unsignedCmp,
           ring[i * ringSize + lead], bulk ? Value(barrierRing[lead]) : Value());
  if (!bulk)
    AsyncCommitOp::create(body, loc);
  if (empties)
    waitForStage();
  body.setInsertionPoint(yield);
  if (clustered)
    ClusterArriveOp::create(body, loc, /*release=*/threadReads);
  if (empties)
    MBarrierArriveOp::create(body, loc, emptyRing[0]);
  // The loads and the address arithmetic only they used go: layout
  // assignment would otherwise distribute (and maybe exchange) dead tiles.
  for (const Operand &operand : operands) {
    rewriter.eraseOp(operand.load);
    for (Operation *op : llvm::reverse(operand.slice))
      if (op->use_empty())
        rewriter.eraseOp(op);
  }
  rewriter.setInsertionPointAfter(pipelined);
  // Every copy in flight belongs to an iteration the loop waited for (bulk
  // copies past the bound are not started); the barriers then end, so that
  // an enclosing loop may initialise them again.
  if (clustered) // the last arrival's wait
    ClusterWaitOp::create(rewriter, loc);
  if (bulk)
    InvalMBarriersOp::create(rewriter, loc,
                             llvm::to_vector(llvm::concat<Value>(barriers, emptyBarriers)));
  else
    AsyncWaitOp::create(rewriter, loc, 0);
  // Unrolled by the ring's size, the loop's rotations compose to the
  // identity: every copy and dot addresses a fixed buffer, and the moves
  // that rotated the rings each step go (a third of the K loop's
  // instructions with 128x256 blocks on sm_90). The remainder loop still
  // rotates. Where copies complete at once it would only grow the code.
  if (unrollRings && target.spec.hasAsyncCopy()) {
    // The unrolled bounds assume lb <= ub (a loop that runs no steps could
    // otherwise get a remainder that does); max(lb, ub) keeps the steps.
    rewriter.setInsertionPoint(pipelined);
    Value lb = pipelined.getLowerBound(), ub = pipelined.getUpperBound();
    pipelined.setUpperBound(unsignedCmp ? Value(arith::MaxUIOp::create(rewriter, loc, lb, ub))
                                        : Value(arith::MaxSIOp::create(rewriter, loc, lb, ub)));
    (void)loopUnrollByFactor(pipelined, ringSize);
  }
  return bytes;
}

struct WeftPipelineDotOperands
    : impl::WeftPipelineDotOperandsBase<WeftPipelineDotOperands> {
  using WeftPipelineDotOperandsBase::WeftPipelineDotOperandsBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    FailureOr<CompileTarget> target = getCompileTarget(module);
    if (failed(target))
      return signalPassFailure();
    unsigned numStages = target->options.numStages;
    if (numStages < 2)
      return;
    for (auto func : module.getOps<FunctionOpInterface>()) {
      SmallVector<scf::ForOp> loops;
      func->walk([&](scf::ForOp loop) { loops.push_back(loop); }); // innermost first
      // A kernel's buffers go to dynamic shared memory where the target
      // has it (placeSharedBuffers); otherwise they share the static limit
      // with the scratch area, which its other dots need for operands.
      std::optional<int64_t> dynamic = target->spec.dynamicSharedMemoryBytes();
      bool inDynamic = dynamic && func->hasAttr(kKernelAttrName);
      std::optional<int64_t> limit = inDynamic ? dynamic : target->spec.staticSharedMemoryBytes();
      // The regions of the loops pipelined so far (a pipelined loop is
      // replaced), and the bytes of their rings.
      SmallVector<std::pair<Region *, int64_t>> rings;
      for (scf::ForOp loop : loops) {
        // The rings of all the function's loops live at once, but for
        // those of loops in exclusive regions (an scf.if's branches), which
        // share their room in dynamic shared memory (placeSharedBuffers).
        std::optional<int64_t> budget;
        if (limit) {
          int64_t live = 0;
          for (auto [other, bytes] : rings)
            if (!inDynamic || !exclusive(loop->getParentRegion(), other))
              live += bytes;
          budget = *limit - live -
                   (inDynamic ? 0 : kReservedSharedBytes + dotScratchOutside(func, loop, *target));
        }
        Region *region = loop->getParentRegion();
        if (int64_t bytes = pipeline(loop, numStages, budget, unrollRings, *target))
          rings.push_back({region, bytes});
      }
    }
  }
};

} // namespace
} // namespace weft
