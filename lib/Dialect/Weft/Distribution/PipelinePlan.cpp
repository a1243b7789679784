//===- PipelinePlan.cpp - which K loops to pipeline, and how --------------===//
#include "PipelinePlan.h"
#include "ExpandTensorDescs.h"

#include "weft/Analysis/AxisInfo.h"
#include "weft/Dialect/Weft/Distribution/DotPlan.h"
#include "weft/Dialect/Weft/Distribution/SharedMemory.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;

namespace weft {

std::array<int64_t, 2> blockDivisibility(BlockArgument desc, ValueRange offsets,
                                         const AxisInfoAnalysis &axis) {
  // A view that walks the tensor in steps needs the block's offsets and the
  // tensor's extent to be whole steps (both powers of two: the smaller
  // divides the other).
  auto func = cast<FunctionOpInterface>(desc.getOwner()->getParentOp());
  auto shape = func.getArgAttrOfType<DenseI64ArrayAttr>(desc.getArgNumber(),
                                                        kShapeDivisibilityAttrName);
  std::array<int64_t, 2> divisibility;
  for (unsigned d = 0; d < 2; ++d)
    divisibility[d] = std::min(axis.get(offsets[d]).divisibility[0],
                               shape && d < shape.size() ? shape[d] : 1);
  return divisibility;
}

namespace {

/// A plain tile load, or a block of a tensor descriptor (always weak).
bool isWeakLoad(Operation *op) {
  auto load = dyn_cast<LoadOp>(op);
  return (load && load.getOrder() == MemOrder::weak) || isa<DescLoadOp>(op);
}

/// Whether `op` itself reads memory weakly or not at all (ops with regions
/// are judged by what they contain).
bool readsWeakly(Operation *op) {
  return isWeakLoad(op) || isMemoryEffectFree(op) ||
         op->hasTrait<OpTrait::HasRecursiveMemoryEffects>();
}

/// Whether `allowed` holds for `root` and every op within it.
bool allWithin(Operation *root, function_ref<bool(Operation *)> allowed) {
  return !root
              ->walk([&](Operation *op) {
                return allowed(op) ? WalkResult::advance() : WalkResult::interrupt();
              })
              .wasInterrupted();
}

/// Nothing in the loop writes memory or synchronises, so its weak loads may
/// be issued early.
bool onlyReads(scf::ForOp loop) { return allWithin(loop, readsWeakly); }

bool isZero(Value value) {
  if (auto splat = value.getDefiningOp<SplatOp>())
    value = splat.getSrc();
  return matchPattern(value, m_AnyZeroFloat()) || matchPattern(value, m_Zero());
}

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

/// Whether the elements a load masks off read zero, as a copy leaves them.
bool zeroFilled(Operation *load) {
  auto plain = dyn_cast<LoadOp>(load);
  return !plain || !plain.getOther() || isZero(plain.getOther());
}

/// The dot operand `operand`, loaded by `load` (its address computed in
/// the loop by `slice`), with a buffer of its tile's shape, layout to come.
Operand operandOf(Operation *load, SmallVector<Operation *> slice, Value operand) {
  auto type = cast<RankedTensorType>(operand.getType());
  return Operand{load, std::move(slice),
                 SharedType::get(operand.getContext(), type.getShape(), type.getElementType())};
}

std::optional<Operand> pipelinable(scf::ForOp loop, Value operand) {
  Operation *load = operand.getDefiningOp();
  if (!load || load->getBlock() != loop.getBody() || !isWeakLoad(load) || !load->hasOneUse() ||
      !zeroFilled(load))
    return std::nullopt;
  auto slice = pureSlice(loop, load->getOperands());
  if (!slice)
    return std::nullopt;
  return operandOf(load, std::move(*slice), operand);
}

/// A dot operand loaded before the loop by a weak tile load, its elements
/// outside the mask zero: it can be copied once into a buffer.
std::optional<Operand> stageable(scf::ForOp loop, Value operand) {
  auto load = operand.getDefiningOp<LoadOp>();
  if (!load || !loop.isDefinedOutsideOfLoop(operand) || !isWeakLoad(load) || !zeroFilled(load))
    return std::nullopt;
  return operandOf(load, {}, operand);
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
  auto func = cast<FunctionOpInterface>(arg.getOwner()->getParentOp());
  auto plan = tensorCopyPlan(operand.buffer, blockDivisibility(arg, desc.getOffsets(), axis));
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
int64_t stagesFor(ArrayRef<Operand> operands, ArrayRef<Operand> staged, unsigned wanted,
                  std::optional<int64_t> budget, int64_t spare, int64_t perStage) {
  if (!budget)
    return wanted;
  // Room for aligning the first buffer (placeSharedBuffers), and for the
  // staged operands' buffers, one each.
  int64_t alignment = 16, room = *budget;
  for (const Operand &operand : operands) {
    perStage += sharedTileBytes(operand.buffer);
    alignment = std::max(alignment, sharedTileAlignment(operand.buffer));
  }
  for (const Operand &operand : staged)
    room -= sharedTileBytes(operand.buffer) + sharedTileAlignment(operand.buffer);
  return std::min<int64_t>(wanted, (room - (alignment - 16)) / perStage - spare);
}

/// The layout that `layoutOf` (DotPlan.h's, for `dot`'s operand type,
/// shape {M, N, K} and operand index) gives each of the dot's operand
/// rings (a or b may be absent: that operand is a tile), where it gives
/// one to every ring; returns whether it did.
bool useLayouts(DotOp dot, std::optional<Operand> &a, std::optional<Operand> &b,
                const CompileTarget &target, OperandLayoutFn layoutOf) {
  MLIRContext *ctx = dot.getContext();
  Type in = (a ? a : b)->buffer.getElementType();
  std::array<int64_t, 3> mnk = dotShape(dot);
  SmallVector<std::pair<Operand *, SwizzledSharedAttr>, 2> layouts;
  for (auto [index, operand] : llvm::enumerate(std::array{&a, &b}))
    if (*operand) {
      SwizzledSharedAttr layout = layoutOf(target, ctx, in, mnk, index);
      if (!layout)
        return false;
      layouts.push_back({&**operand, layout});
    }
  for (auto [operand, layout] : layouts)
    operand->buffer = SharedType::get(ctx, operand->buffer.getShape(), in, layout);
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

/// Whether a memory access in `order` orders no other access around it.
bool unordered(MemOrder order) { return order == MemOrder::weak || order == MemOrder::relaxed; }

} // namespace

bool accessesWeakly(Operation *op, function_ref<bool(Operation *)> alsoAllowed) {
  return allWithin(op, [&](Operation *inner) {
    auto store = dyn_cast<StoreOp>(inner);
    auto rmw = dyn_cast<AtomicRMWOp>(inner);
    return readsWeakly(inner) || isa<DescStoreOp>(inner) ||
           (store && unordered(store.getOrder())) || (rmw && unordered(rmw.getOrder())) ||
           (alsoAllowed && alsoAllowed(inner));
  });
}

std::optional<SmallVector<Operation *>> pureSlice(scf::ForOp loop, ValueRange values) {
  SmallVector<Value> work(values);
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

Value stagedBuffer(const StagedTiles &copied, const Operand &operand) {
  for (Value buffer : copied.lookup(operand.load))
    if (buffer.getType() == operand.buffer)
      return buffer;
  return {};
}

std::optional<PipelinePlan> planPipeline(scf::ForOp loop, unsigned numStages,
                                         RingBudget budget,
                                         const CompileTarget &target, bool withScratch,
                                         const StagedTiles &copied, bool stage) {
  if (!onlyReads(loop))
    return std::nullopt;
  PipelinePlan plan;
  SmallVector<Operand> &operands = plan.operands;
  auto &overlapped = plan.overlapped;
  bool &threadReads = plan.threadReads;
  for (auto dot : loop.getBody()->getOps<DotOp>()) {
    auto a = pipelinable(loop, dot.getA()), b = pipelinable(loop, dot.getB());
    // A tile a loaded before the loop beside a ring b (attention's query
    // tile): where copies are asynchronous, a is copied once into a buffer
    // that the dot reads like a ring's, instead of taking registers (or
    // exchanges) through the loop.
    bool stagedA = false;
    if (stage && !a && b && target.spec.hasAsyncCopy())
      stagedA = (a = stageable(loop, dot.getA())).has_value();
    // One ring beside a tile pays only where copies are asynchronous;
    // elsewhere it would only grow the code (the host unrolls every
    // element of its copies).
    if ((!a && !b) || (!(a && b) && !target.spec.hasAsyncCopy()))
      continue;
    // The layouts that warpgroup MMA reads in place, else those that
    // warp-level MMA's loads read without bank conflicts (one ring: beside
    // the other operand's rows).
    if (a && b && useLayouts(dot, a, b, target, &warpgroupOperandLayout)) {
      if (auto position = carriedOnly(loop, dot))
        overlapped.push_back({dot, *position});
    } else {
      threadReads = true;
      useLayouts(dot, a, b, target, &mmaOperandLayout);
    }
    // Its tile operand (and products) then take the scratch area.
    if (withScratch && !(a && b))
      for (std::optional<int64_t> *room : {&budget.bulk, &budget.generic})
        if (*room)
          **room -= dotScratchBytes(dot, target) - sharedTileBytes((a ? *a : *b).buffer);
    for (auto [index, operand] : llvm::enumerate(std::array{&a, &b}))
      if (*operand) {
        (*operand)->dot = dot;
        (*operand)->index = index;
        (index == 0 && stagedA ? plan.staged : operands).push_back(std::move(**operand));
      }
  }
  if (operands.empty())
    return std::nullopt;
  // Descriptor blocks are bulk tensor copies where the target has them and
  // every operand of the loop can be one (the copies then complete on
  // barriers instead of in groups). Otherwise they become tiles of
  // pointers, and the loop is pipelined as such.
  auto func = loop->getParentOfType<FunctionOpInterface>();
  std::optional<DictionaryAttr> &tensorMaps = plan.tensorMaps;
  if (target.spec.hasTensorCopies()) {
    AxisInfoAnalysis axis(func);
    tensorMaps = tensorMapsFor(operands, func, axis);
    // Producer warps make the copies where the loop asks for them.
    if (tensorMaps && !threadReads && plan.staged.empty())
      planSpecialized(loop, plan);
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
      return planPipeline(loop, numStages, budget, target, withScratch, copied, stage);
  }
  bool bulk = plan.bulk();
  // Copies shared across the cluster refill a buffer in every program, so
  // the cluster's barrier, not the program's join, orders them after the
  // reads: each thread arrives at the end of a step, once done with the
  // buffer of the step before (the buffer read two steps back with a
  // spare, the one read last without), and waits at the next step's
  // copies, which go to that buffer; the waits trail the arrivals by a
  // step, so they rarely stall.
  bool clustered = plan.clustered =
      llvm::any_of(operands, [](const Operand &o) { return o.multicast; });
  // Elsewhere bulk copies need no join at each step: every warp arrives at
  // a ring of "empty" barriers, one per buffer, once done with its step's
  // buffer, and only the copying thread waits there before it refills one;
  // the other warps go on until data they need has not landed. (Products
  // still in flight retire warpgroup by warpgroup after their step, and
  // keep the join: empty barriers measured slower for them, docs/tile-ir.md.)
  plan.empties = bulk && !clustered && overlapped.empty() && !plan.specializedHome;
  // A dot still in flight reads the buffers of the step before: one more
  // buffer per ring keeps the copies off them. (Each warpgroup waits for
  // its own products; the next step's join orders the copies after every
  // warpgroup's.) Producer warps wait for each buffer to be free instead.
  plan.spare = overlapped.empty() || plan.specializedHome ? 0 : 1;
  plan.barrierBytes = bulk ? (plan.empties || plan.specializedHome ? 16 : 8) : 0;
  // Staged operands are tiles of pointers: their copies complete in
  // groups, which bulk copies' barriers do not wait for.
  if (bulk && !plan.staged.empty())
    return planPipeline(loop, numStages, budget, target, withScratch, copied,
                        /*stage=*/false);
  // A tile that an earlier loop staged is in its buffer already, whose
  // room the budget counts.
  SmallVector<Operand> fresh;
  for (const Operand &operand : plan.staged)
    if (!stagedBuffer(copied, operand))
      fresh.push_back(operand);
  plan.stages =
      stagesFor(operands, fresh, numStages, budget.of(bulk), plan.spare, plan.barrierBytes);
  if (plan.stages < 2)
    return std::nullopt;
  return plan;
}

Value below(OpBuilder &b, Location loc, Value iv, Value upper, bool unsignedCmp) {
  return arith::CmpIOp::create(
      b, loc, unsignedCmp ? arith::CmpIPredicate::ult : arith::CmpIPredicate::slt, iv, upper);
}

void copyAt(OpBuilder &b, const Operand &operand, IRMapping map, Value inductionVar, Value iv,
            Value upper, bool unsignedCmp, Value guard, Value buffer, Value barrier) {
  Location loc = operand.load->getLoc();
  map.map(inductionVar, iv);
  for (Operation *op : operand.slice)
    b.clone(*op, map);
  Value inRange = below(b, loc, iv, upper, unsignedCmp);
  if (guard)
    inRange = arith::AndIOp::create(b, loc, inRange, guard);
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

std::pair<Operation *, Operation *>
retireOverlapped(RewriterBase &rewriter, scf::ForOp loop,
                 ArrayRef<std::pair<DotOp, unsigned>> overlapped) {
  Location loc = loop.getLoc();
  Operation *yield = loop.getBody()->getTerminator(), *tail = loop, *lastWait = nullptr;
  for (auto [dot, position] : overlapped) {
    rewriter.setInsertionPointAfter(dot);
    auto wait = DotWaitOp::create(rewriter, loc, dot.getResult(), 1);
    yield->setOperand(position, wait);
    lastWait = wait;
    rewriter.setInsertionPointAfter(tail);
    Value sums = loop.getResult(position);
    auto done = DotWaitOp::create(rewriter, loc, sums, 0);
    rewriter.replaceAllUsesExcept(sums, done, done);
    tail = done;
  }
  return {tail, lastWait};
}

SmallVector<Value> rotateRings(OpBuilder &b, Location loc, ArrayRef<BlockArgument> args,
                               int64_t ringSize, int64_t parityRings) {
  SmallVector<Value> next;
  int64_t groups = args.size() / ringSize;
  for (int64_t i = 0; i < groups; ++i)
    for (int64_t s = 0; s < ringSize; ++s)
      next.push_back(args[i * ringSize + (s + 1) % ringSize]);
  if (parityRings) {
    Value one = arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(1));
    for (int64_t i = groups - parityRings; i < groups; ++i)
      next[i * ringSize + ringSize - 1] = arith::XOrIOp::create(b, loc, args[i * ringSize], one);
  }
  return next;
}

SmallVector<Value> allocRings(OpBuilder &b, Location loc, ArrayRef<Operand> operands,
                              int64_t ringSize, bool bulk) {
  SmallVector<Value> rings;
  for (const Operand &operand : operands)
    for (int64_t s = 0; s < ringSize; ++s)
      rings.push_back(AllocSharedOp::create(b, loc, operand.buffer, bulk));
  return rings;
}

AllocMBarriersOp allocBarrierRing(OpBuilder &b, Location loc, int64_t ringSize,
                                  int64_t arrivals) {
  return AllocMBarriersOp::create(
      b, loc, SmallVector<Type>(ringSize, MBarrierType::get(b.getContext())),
      b.getI32IntegerAttr(arrivals));
}

void eraseLoads(RewriterBase &rewriter, ArrayRef<Operand> operands) {
  for (const Operand &operand : operands) {
    rewriter.eraseOp(operand.load);
    for (Operation *op : llvm::reverse(operand.slice))
      if (op->use_empty())
        rewriter.eraseOp(op);
  }
}

scf::ForOp carryThrough(RewriterBase &rewriter, scf::ForOp loop, SmallVector<Value> &carried) {
  auto passed = cast<LoopLikeOpInterface>(loop.getOperation())
                    .replaceWithAdditionalYields(
                        rewriter, carried, /*replaceInitOperandUsesInLoop=*/false,
                        [](OpBuilder &, Location, ArrayRef<BlockArgument> args) {
                          return SmallVector<Value>(args.begin(), args.end());
                        });
  if (failed(passed))
    return {};
  auto replaced = cast<scf::ForOp>(passed->getOperation());
  carried.assign(replaced.getRegionIterArgs().take_back(carried.size()).begin(),
                 replaced.getRegionIterArgs().end());
  return replaced;
}

void yieldLast(scf::ForOp loop, ValueRange values) {
  Operation *yield = loop.getBody()->getTerminator();
  unsigned first = yield->getNumOperands() - values.size();
  for (auto [i, value] : llvm::enumerate(values))
    yield->setOperand(first + i, value);
}

void unrollByRing(scf::ForOp loop, int64_t ringSize) {
  // The unrolled bounds assume lb <= ub (a loop that runs no steps could
  // otherwise get a remainder that does); max(lb, ub) keeps the steps.
  OpBuilder b(loop);
  Location loc = loop.getLoc();
  Value lb = loop.getLowerBound(), ub = loop.getUpperBound();
  loop.setUpperBound(loop.getUnsignedCmp() ? Value(arith::MaxUIOp::create(b, loc, lb, ub))
                                           : Value(arith::MaxSIOp::create(b, loc, lb, ub)));
  (void)loopUnrollByFactor(loop, ringSize);
}

std::optional<SmallVector<Operation *>> runSlice(scf::ForOp outer, scf::ForOp loop,
                                                 ArrayRef<Operand> operands) {
  SmallVector<Value> reads{loop.getLowerBound(), loop.getUpperBound(), loop.getStep()};
  for (const Operand &operand : operands)
    for (Operation *op : llvm::concat<Operation *const>(operand.slice, ArrayRef(operand.load)))
      for (Value value : op->getOperands())
        if (loop.isDefinedOutsideOfLoop(value))
          reads.push_back(value);
  return pureSlice(outer, reads);
}

} // namespace weft
