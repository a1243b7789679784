//===- AssignLayouts.cpp - distribute tiles over a program's threads ------===//
//
// Three walks over each function:
//  1. anchors: every access through a tile of pointers wants the layout
//     that makes its accesses 16-byte vectors (from the axis analysis),
//     and where that trades against a dot's fragments, the rules below
//     say which side crosses shared memory;
//  2. backwards, consumers before producers: an op that wants a layout for
//     its result passes the wish on to its operands (element-wise ops the
//     same layout, expand_dims a slice of it, broadcast the same);
//  3. forwards, in program order: every tensor gets its layout, the wish
//     where there is one, else what its operands determine, else a default;
//     an operand whose layout differs from what its user needs goes through
//     a weft.convert_layout (as does a sliced tile that is reduced again).
// The first wish for a value wins, and accesses come first, so the loads
// and stores (the expensive part) get their best layout and any conversion
// lands on cheaper values. Last, a conversion of index arithmetic is
// replaced by the arithmetic computed again in the wanted layout.
//
//===----------------------------------------------------------------------===//
#include "weft/Analysis/AxisInfo.h"
#include "weft/Dialect/Weft/Distribution/DotPlan.h"
#include "weft/Dialect/Weft/Distribution/Passes.h"
#include "weft/Dialect/Weft/Distribution/SharedMemory.h"
#include "weft/Dialect/Weft/Distribution/TileLayout.h"
#include "weft/Dialect/Weft/IR/CompileTarget.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/Support/MathExtras.h"
#include <numeric>

namespace weft {
#define GEN_PASS_DEF_WEFTASSIGNLAYOUTS
#include "weft/Dialect/Weft/Distribution/Passes.h.inc"
} // namespace weft

using namespace mlir;

namespace weft {
namespace {

/// The widest access the targets have: 16 bytes (ld.global.v4.b32,
/// global_load_dwordx4).
constexpr int64_t kVectorBytes = 16;

int64_t elementBytes(Type elem) {
  if (isa<PtrType>(elem))
    return 8;
  return std::max<int64_t>(1, elem.getIntOrFloatBitWidth() / 8);
}

bool isTile(Type type) { return isa<RankedTensorType>(type); }

/// Ops whose tensor operands and results all share one layout.
bool isSameLayout(Operation *op) {
  return op->hasTrait<OpTrait::Elementwise>() ||
         isa<AddPtrOp, TranslateOp, LoadOp, StoreOp, AtomicRMWOp, AtomicCASOp, AsyncCopyOp,
             DotWaitOp, AxisHintOp, InlineAsmOp>(op);
}

SmallVector<int32_t> inversePermutation(ArrayRef<int32_t> order) {
  SmallVector<int32_t> inverse(order.size());
  for (auto [d, from] : llvm::enumerate(order))
    inverse[from] = d;
  return inverse;
}

/// The value whose layout decides a same-layout op's: the pointer of an
/// access, else the result.
Value primaryOf(Operation *op) {
  if (isa<LoadOp, StoreOp, AtomicRMWOp, AtomicCASOp, AsyncCopyOp>(op))
    return op->getOperand(0);
  return op->getNumResults() == 1 ? op->getResult(0) : Value();
}

class LayoutChooser {
public:
  LayoutChooser(MLIRContext *ctx, const CompileTarget &target)
      : ctx(ctx), target(target) {}

  /// `vector` consecutive elements per thread along order[0]; lanes, then
  /// warps, fill the tile along `order`. Lanes or warps left over once the
  /// tile is covered replicate it.
  BlockedEncodingAttr blocked(ArrayRef<int64_t> shape, ArrayRef<unsigned> order,
                              int64_t vector) const {
    unsigned rank = shape.size();
    SmallVector<unsigned> spt(rank, 1), tpw(rank, 1), wpp(rank, 1);
    if (target.threadsPerProgram() == 1) {
      for (unsigned d = 0; d < rank; ++d)
        spt[d] = shape[d];
      return BlockedEncodingAttr::get(ctx, spt, tpw, wpp, order);
    }
    spt[order[0]] = std::min<int64_t>(vector, shape[order[0]]);
    unsigned lanes = target.spec.warpSize(), warps = target.options.numWarps;
    for (unsigned d : order) {
      int64_t room = std::max<int64_t>(1, shape[d] / spt[d]);
      tpw[d] = std::min<int64_t>(lanes, room);
      lanes /= tpw[d];
    }
    tpw[order[0]] *= lanes;
    for (unsigned d : order) {
      int64_t room = std::max<int64_t>(1, shape[d] / (spt[d] * tpw[d]));
      wpp[d] = std::min<int64_t>(warps, room);
      warps /= wpp[d];
    }
    wpp[order[0]] *= warps;
    return BlockedEncodingAttr::get(ctx, spt, tpw, wpp, order);
  }

  /// Row-major, one element at a time: for values no access cares about.
  BlockedEncodingAttr fallback(RankedTensorType type) const {
    SmallVector<unsigned> order;
    for (unsigned d = type.getRank(); d-- > 0;)
      order.push_back(d);
    return blocked(type.getShape(), order, 1);
  }

  /// The layout for an access through `ptrs`: its most contiguous dimension
  /// first, as many elements per thread as fit a 16-byte aligned vector.
  BlockedEncodingAttr coalesced(Value ptrs, const AxisInfo &info) const {
    auto type = cast<RankedTensorType>(ptrs.getType());
    SmallVector<unsigned> order;
    for (unsigned d = type.getRank(); d-- > 0;)
      order.push_back(d);
    llvm::stable_sort(order, [&](unsigned a, unsigned b) {
      return info.contiguity[a] > info.contiguity[b];
    });
    unsigned fast = order[0];
    int64_t bytes =
        elementBytes(cast<PtrType>(type.getElementType()).getPointee());
    int64_t vector = std::min({kVectorBytes / bytes, info.contiguity[fast],
                               info.divisibility[fast] / bytes});
    vector = std::max<int64_t>(1, llvm::bit_floor(uint64_t(vector)));
    return blocked(type.getShape(), order, vector);
  }

private:
  MLIRContext *ctx;
  const CompileTarget &target;
};

class Assigner {
public:
  Assigner(func::FuncOp func, const LayoutChooser &chooser,
           const AxisInfoAnalysis &axis, const CompileTarget &target)
      : func(func), chooser(chooser), axis(axis), target(target) {}

  LogicalResult run() {
    for (BlockArgument arg : func.getArguments())
      if (isTile(arg.getType()))
        return func.emitOpError("cannot distribute tiles passed as "
                                "arguments; pass pointers");
    anchor();
    propagateBackwards();
    // A loop-carried tile whose steps wish a layout, or whose next value
    // comes from a reduction (attention's running maxima and sums, in the
    // slice of the products' layout their reductions produce), is carried
    // in it, initial value included: else each step converts it there and
    // back through shared memory.
    func.walk([&](scf::ForOp loop) {
      for (auto [arg, next] : llvm::zip(loop.getRegionIterArgs(), loop.getYieldedValues()))
        wishThroughLoop(arg, wished(arg) ? wished(arg) : reducedLayout(next));
    });
    WalkResult result = func.walk<WalkOrder::PreOrder>([&](Operation *op) {
      return succeeded(assign(op)) ? WalkResult::advance()
                                   : WalkResult::interrupt();
    });
    if (result.wasInterrupted())
      return failure();
    rematerializeConversions();
    return success();
  }

private:
  void wish(Value value, Attribute layout) {
    if (layout && isTile(value.getType()))
      desired.try_emplace(value, layout);
  }
  Attribute wished(Value value) const { return desired.lookup(value); }

  /// The layout wished for `value`, or for the tile it comes from through
  /// one-operand element-wise ops (casts), loops that carry it (a dot's
  /// sums that a later loop adds to) and ifs that yield it (sums computed
  /// either of two ways: the then branch's decides).
  Attribute wishedSource(Value value) const {
    while (value) {
      if (Attribute layout = wished(value))
        return layout;
      if (auto arg = dyn_cast<BlockArgument>(value)) {
        auto loop = dyn_cast_or_null<scf::ForOp>(arg.getOwner()->getParentOp());
        if (!loop || arg.getArgNumber() < loop.getNumInductionVars())
          return {};
        value = loop.getInitArgs()[arg.getArgNumber() - loop.getNumInductionVars()];
        continue;
      }
      Operation *def = value.getDefiningOp();
      if (auto loop = dyn_cast<scf::ForOp>(def)) {
        value = loop.getInitArgs()[cast<OpResult>(value).getResultNumber()];
        continue;
      }
      if (auto branch = dyn_cast<scf::IfOp>(def)) {
        unsigned index = cast<OpResult>(value).getResultNumber();
        if (Attribute layout = wishedSource(branch.thenYield().getOperand(index)))
          return layout;
        value = branch.elseYield().getOperand(index);
        continue;
      }
      if (!def->hasTrait<OpTrait::Elementwise>() || def->getNumOperands() != 1)
        return {};
      value = def->getOperand(0);
    }
    return {};
  }

  /// The layout of a reduction that `value` is computed from element-wise
  /// (l * alpha + sum(p, 1)): the slice of the layout wished for the
  /// reduced tile.
  Attribute reducedLayout(Value value, unsigned depth = 4) const {
    Operation *def = value.getDefiningOp();
    if (auto reduce = dyn_cast_or_null<ReduceOp>(def)) {
      Attribute source = wishedSource(reduce.getSrcs().front());
      return source ? SliceEncodingAttr::get(def->getContext(), reduce.getAxis(), source)
                    : Attribute();
    }
    if (!def || !depth || !OpTrait::hasElementwiseMappableTraits(def))
      return {};
    for (Value operand : def->getOperands())
      if (Attribute layout = reducedLayout(operand, depth - 1))
        return layout;
    return {};
  }

  /// The layout wished for a tile that the result of `load` is combined
  /// with element-wise (a dot's sums that loaded values are added to),
  /// looking past one-operand element-wise ops on the loaded tile (a
  /// widening cast), whose results `casts` collects.
  Attribute partnerOf(LoadOp load, SmallVectorImpl<Value> &casts) const {
    Value value = load.getResult();
    while (true) {
      Value cast;
      for (Operation *user : value.getUsers()) {
        if (!user->hasTrait<OpTrait::Elementwise>())
          continue;
        for (Value operand : user->getOperands())
          if (operand != value && isTile(operand.getType()))
            if (Attribute layout = wishedSource(operand))
              return layout;
        if (user->getNumOperands() == 1 && user->getNumResults() == 1)
          cast = user->getResult(0);
      }
      if (!cast)
        return {};
      casts.push_back(cast);
      value = cast;
    }
  }

  /// Also wishes it for every value that carries the same tile: where
  /// `value` is a loop-carried argument (an accumulator), the loop's
  /// initial value, the value its body yields and its result; where one
  /// of those is an if's result, what the branches yield; and so on
  /// outwards (attention's sums carried over several key ranges inside a
  /// loop over work items). Every loop then carries the tile in that
  /// layout, with no conversion in its steps, and its users see it.
  void wishThroughLoop(Value value, Attribute layout) {
    if (!layout)
      return;
    SmallVector<Value> carriers{value};
    llvm::SmallDenseSet<Value> seen;
    while (!carriers.empty()) {
      Value carrier = carriers.pop_back_val();
      if (!seen.insert(carrier).second)
        continue;
      wish(carrier, layout);
      if (auto arg = dyn_cast<BlockArgument>(carrier)) {
        auto loop = dyn_cast_or_null<scf::ForOp>(arg.getOwner()->getParentOp());
        if (!loop || arg.getArgNumber() < loop.getNumInductionVars())
          continue;
        unsigned index = arg.getArgNumber() - loop.getNumInductionVars();
        carriers.append({loop.getInitArgs()[index], loop.getYieldedValues()[index],
                         loop.getResult(index)});
      } else if (auto loop = carrier.getDefiningOp<scf::ForOp>()) {
        carriers.push_back(loop.getRegionIterArgs()[cast<OpResult>(carrier).getResultNumber()]);
      } else if (auto branch = carrier.getDefiningOp<scf::IfOp>()) {
        unsigned index = cast<OpResult>(carrier).getResultNumber();
        carriers.push_back(branch.thenYield().getOperand(index));
        if (branch.elseBlock())
          carriers.push_back(branch.elseYield().getOperand(index));
      }
    }
  }

  /// wishThroughLoop for a dot's c and, where c is computed elementwise
  /// from tiles of its type (the online softmax's rescaled accumulator, c
  /// = acc * alpha[:, None]), for those tiles too: else the loop would
  /// carry the sums in another layout and convert them twice a step.
  void wishAccumulator(Value c, Attribute layout) {
    wishThroughLoop(c, layout);
    Operation *def = c.getDefiningOp();
    if (!def || def->getNumResults() != 1 || !OpTrait::hasElementwiseMappableTraits(def))
      return;
    for (Value operand : def->getOperands())
      if (operand.getType() == c.getType() && !wished(operand))
        wishAccumulator(operand, layout);
  }

  /// A tile loaded through pointers whose coalesced layout is `access`,
  /// perhaps widened by one-operand element-wise ops.
  bool loadedIn(Value value, Attribute access) const {
    while (Operation *def = value.getDefiningOp()) {
      if (auto load = dyn_cast<LoadOp>(def))
        return isTile(load.getPtr().getType()) &&
               chooser.coalesced(load.getPtr(), axis.get(load.getPtr())) == access;
      if (!def->hasTrait<OpTrait::Elementwise>() || def->getNumOperands() != 1)
        return false;
      value = def->getOperand(0);
    }
    return false;
  }

  /// The values that carry a dot's sums to `value`, from `value` back to
  /// the first one with a wish (`source`, the sums' layout): through
  /// one-operand element-wise ops, loops that carry them (result, yielded
  /// value, argument, initial value) and element-wise ops that add tiles
  /// loaded in `access` to them (collected in `loaded`); empty where
  /// anything else lies between.
  SmallVector<Value> sumsPath(Value value, Attribute access, Attribute &source,
                              SmallVectorImpl<Value> &loaded) const {
    SmallVector<Value> path;
    while (path.size() < kPathLimit) {
      path.push_back(value);
      if ((source = wished(value)))
        return path;
      if (auto arg = dyn_cast<BlockArgument>(value)) {
        auto loop = dyn_cast_or_null<scf::ForOp>(arg.getOwner()->getParentOp());
        if (!loop || arg.getArgNumber() < loop.getNumInductionVars())
          break;
        value = loop.getTiedLoopInit(arg)->get();
        continue;
      }
      Operation *def = value.getDefiningOp();
      if (auto loop = dyn_cast<scf::ForOp>(def)) {
        value = loop.getYieldedValues()[cast<OpResult>(value).getResultNumber()];
        continue;
      }
      if (!def->hasTrait<OpTrait::Elementwise>() || def->getNumResults() != 1)
        break;
      if (def->getNumOperands() == 1) {
        value = def->getOperand(0);
        continue;
      }
      Value sums;
      for (Value operand : def->getOperands()) {
        if (!isTile(operand.getType()))
          continue;
        if (!sums && wishedSource(operand))
          sums = operand;
        else if (loadedIn(operand, access))
          loaded.push_back(operand);
        else
          return {};
      }
      if (!sums)
        break;
      value = sums;
    }
    return {};
  }
  static constexpr size_t kPathLimit = 32;

  /// Sums of a dot that loaded tiles are added to and that are then
  /// stored (another rank's partial, a residual), where the store would
  /// convert them out of the accumulator's layout (anchor's rule): carried
  /// in the store's coalesced layout from their narrowest value after the
  /// last addition back, so that they cross shared memory once, there,
  /// rather than every loaded tile crossing into the accumulator's layout
  /// and the result crossing back (bench/README.md, "Prefill: own rows'
  /// epilogue on one GPU").
  void anchorStoredSums(StoreOp store) {
    Value value = store.getValue();
    if (!isTile(value.getType()) || wished(value))
      return;
    Attribute access = chooser.coalesced(store.getPtr(), axis.get(store.getPtr()));
    Attribute source;
    SmallVector<Value> loaded;
    SmallVector<Value> path = sumsPath(value, access, source, loaded);
    if (loaded.empty() || path.empty() || fillsSectors(source, value.getType()))
      return;
    // The crossing goes where the sums are narrowest between the
    // accumulator and the first value that a loop carries or an addition
    // makes (the last one of the path that is).
    size_t first = path.size() - 1;
    while (first > 0 && !isa<BlockArgument>(path[first - 1]) &&
           !path[first - 1].getDefiningOp<scf::ForOp>() &&
           path[first - 1].getDefiningOp()->getNumOperands() == 1)
      --first;
    size_t narrowest = path.size() - 1;
    for (size_t i = first; i < path.size(); ++i)
      if (elementBits(path[i]) < elementBits(path[narrowest]))
        narrowest = i;
    // It happens at the next value's op, or before the loop whose
    // argument that is (never inside a loop: once per step).
    Value next = path[narrowest - 1];
    Operation *at = next.getDefiningOp();
    if (auto arg = dyn_cast<BlockArgument>(next))
      at = arg.getOwner()->getParentOp();
    else if (isa<scf::ForOp>(at))
      return;
    if (!weft::conversionFits(
            at, conversionBytes(cast<RankedTensorType>(path[narrowest].getType())), target))
      return;
    wish(path[narrowest], source); // else the wish would reach back past it
    for (size_t i = 0; i < narrowest; ++i)
      wishThroughLoop(path[i], access);
    for (Value tile : loaded) // before anchor's rule for loads wishes them the sums'
      wish(tile, access);
  }

  static unsigned elementBits(Value value) {
    Type elem = cast<RankedTensorType>(value.getType()).getElementType();
    return elem.isIntOrFloat() ? elem.getIntOrFloatBitWidth() : 64;
  }

  void anchor() {
    // A dot whose accumulator can stay in registers (warpgroup or warp
    // MMA fragments) wants that layout for its result and c (and a loop's
    // initial accumulator) first, and so does a tile a that warpgroup MMA
    // takes from registers (attention's P, computed from the sums of
    // another dot in that layout).
    func.walk([&](DotOp dot) {
      if (BlockedEncodingAttr layout = dotAccumulatorLayout(dot, target)) {
        wish(dot.getResult(), layout);
        wishAccumulator(dot.getC(), layout);
        if (warpgroupRegisterA(dot, target))
          wish(dot.getA(), layout);
      }
    });
    // A wait for a dot's sums keeps their layout.
    func.walk([&](DotWaitOp wait) {
      if (Attribute layout = wished(wait.getSrc()))
        wish(wait.getResult(), layout);
    });
    // So does an if that yields them from either branch (inner ifs first):
    // its result would otherwise take what its users wish, and each
    // branch would convert the sums to it through shared memory.
    func.walk([&](scf::IfOp branch) {
      for (Value result : branch.getResults())
        if (isTile(result.getType()))
          wish(result, wishedSource(result));
    });
    func.walk([&](StoreOp store) { anchorStoredSums(store); });
    // A bulk store takes its block in any layout: a dot's sums stay in
    // theirs (what is left of the descriptor stores is bulk).
    func.walk([&](DescStoreOp store) {
      if (Attribute source = wishedSource(store.getValue()))
        wish(store.getValue(), source);
    });
    func.walk([&](Operation *op) {
      if (!isa<LoadOp, StoreOp, AtomicRMWOp, AtomicCASOp, AsyncCopyOp>(op) ||
          !isTile(op->getOperand(0).getType()))
        return;
      // Storing a dot's result (or its rounding to the pointer's type):
      // the addresses follow its layout, which costs nothing, where a
      // warp's accesses still fill whole sectors (f32 sums: four threads
      // of two per row of an MMA accumulator). Narrower elements fill half
      // of one, which costs more than crossing shared memory: the value
      // keeps the accumulator's layout and is converted to the addresses'
      // coalesced one, where the exchange fits (bench/README.md, "GEMM").
      Value value;
      if (auto store = dyn_cast<StoreOp>(op))
        value = store.getValue();
      else if (auto rmw = dyn_cast<AtomicRMWOp>(op))
        value = rmw.getValue();
      if (Attribute source = value ? wishedSource(value) : Attribute()) {
        if (fillsSectors(source, value.getType()) || !conversionFits(op, value.getType()))
          wish(op->getOperand(0), source);
        else
          wish(value, source);
      }
      // Loading what is added to a dot's sums (partial sums, a residual):
      // the same trade the other way round, the loaded tile arriving in
      // the sums' layout rather than crossing shared memory. Where it
      // crosses, it does so as loaded, before a cast widens it.
      if (auto load = dyn_cast<LoadOp>(op)) {
        SmallVector<Value> casts;
        if (Attribute partner = partnerOf(load, casts)) {
          if (fillsSectors(partner, load.getType()) || !conversionFits(op, load.getType()))
            wish(op->getOperand(0), partner);
          else
            for (Value cast : casts)
              wish(cast, partner);
        }
      }
      wish(op->getOperand(0),
           chooser.coalesced(op->getOperand(0), axis.get(op->getOperand(0))));
    });
  }

  /// Whether a warp's accesses to a tile of `type` in `layout` cover
  /// whole 32-byte sectors (or whole rows, where those are shorter): the
  /// consecutive bytes of a row its lanes hold.
  static bool fillsSectors(Attribute layout, Type type) {
    auto blocked = dyn_cast<BlockedEncodingAttr>(layout);
    if (!blocked)
      return true;
    auto tile = cast<RankedTensorType>(type);
    unsigned last = blocked.getRank() - 1;
    int64_t bytes = elementBytes(tile.getElementType());
    int64_t run = blocked.getSizePerThread()[last] * bytes;
    if (blocked.getOrder()[0] == last)
      run *= blocked.getThreadsPerWarp()[last];
    return run >= std::min(kSectorBytes, tile.getDimSize(last) * bytes);
  }
  static constexpr int64_t kSectorBytes = 32;

  /// Whether converting a tile of `type` before `op` fits the scratch area.
  bool conversionFits(Operation *op, Type type) const {
    return weft::conversionFits(op, conversionBytes(cast<RankedTensorType>(type)), target);
  }

  void propagateBackwards() {
    SmallVector<Operation *> ops;
    func.walk<WalkOrder::PostOrder>([&](Operation *op) { ops.push_back(op); });
    for (Operation *op : llvm::reverse(ops)) {
      if (isSameLayout(op)) {
        if (Value primary = primaryOf(op))
          if (Attribute layout = wished(primary))
            for (Value operand : op->getOperands())
              wish(operand, layout);
      } else if (auto b = dyn_cast<BroadcastOp>(op)) {
        wish(b.getSrc(), wished(b.getResult()));
      } else if (auto e = dyn_cast<ExpandDimsOp>(op)) {
        Attribute layout = wished(e.getResult());
        if (layout && !isa<SliceEncodingAttr>(layout)) // slices do not nest
          wish(e.getSrc(), SliceEncodingAttr::get(op->getContext(),
                                                  e.getAxis(), layout));
      } else if (auto d = dyn_cast<DotOp>(op)) {
        wishThroughLoop(d.getC(), wished(d.getResult()));
      } else if (auto r = dyn_cast<ReduceOp>(op)) {
        auto slice = dyn_cast_or_null<SliceEncodingAttr>(wished(r.getResults().front()));
        if (slice && slice.getDim() == r.getAxis())
          for (Value src : r.getSrcs())
            wish(src, slice.getParent());
      } else if (auto t = dyn_cast<TransOp>(op)) {
        if (auto layout = dyn_cast_or_null<BlockedEncodingAttr>(wished(t.getResult())))
          wish(t.getSrc(), transposedLayout(layout, inversePermutation(t.getOrder())));
      } else if (auto j = dyn_cast<JoinOp>(op)) {
        if (auto layout = dyn_cast_or_null<BlockedEncodingAttr>(wished(j.getResult())))
          if (BlockedEncodingAttr halves = splitLayout(layout)) {
            wish(j.getLhs(), halves);
            wish(j.getRhs(), halves);
          }
      } else if (auto sp = dyn_cast<SplitOp>(op)) {
        if (auto layout = dyn_cast_or_null<BlockedEncodingAttr>(wished(sp.getLhs())))
          wish(sp.getSrc(), joinedLayout(layout));
      }
    }
  }

  static RankedTensorType withLayout(Type type, Attribute layout) {
    auto tensor = cast<RankedTensorType>(type);
    return RankedTensorType::get(tensor.getShape(), tensor.getElementType(),
                                 layout);
  }
  static Attribute layoutOf(Value value) {
    return cast<RankedTensorType>(value.getType()).getEncoding();
  }

  void setLayout(Value value, Attribute layout) {
    value.setType(withLayout(value.getType(), layout));
  }
  /// The wish for `value`, else the row-major default.
  Attribute wishedOrDefault(Value value) {
    if (Attribute layout = wished(value))
      return layout;
    return chooser.fallback(cast<RankedTensorType>(value.getType()));
  }

  /// Makes operand `index` of `op` have `layout`, converting if needed.
  void require(Operation *op, unsigned index, Attribute layout) {
    Value operand = op->getOperand(index);
    if (layoutOf(operand) == layout)
      return;
    OpBuilder b(op);
    auto convert = ConvertLayoutOp::create(
        b, op->getLoc(), withLayout(operand.getType(), layout), operand);
    op->setOperand(index, convert);
  }

  /// Index arithmetic (ranges, splats, constants, broadcasts, address and
  /// element-wise ops of them) is cheaper to compute again in the layout a
  /// user wants than to exchange through shared memory with two joins;
  /// a K loop's row and column offsets would otherwise cost an exchange
  /// per step. Dead originals go to the canonicalizer.
  void rematerializeConversions() {
    SmallVector<ConvertLayoutOp> converts;
    func.walk([&](ConvertLayoutOp c) { converts.push_back(c); });
    // Conversions of one value to one layout share its recomputation.
    DenseMap<std::pair<Value, Attribute>, Value> done;
    for (ConvertLayoutOp convert : converts) {
      unsigned budget = kRematerializeBudget;
      if (Value again = rematerialize(convert.getSrc(), layoutOf(convert.getResult()), done,
                                      budget)) {
        convert.getResult().replaceAllUsesWith(again);
        convert.erase();
      }
    }
  }
  static constexpr unsigned kRematerializeBudget = 16;

  /// `value` computed again in `layout` right after its original, or null
  /// when its expression has anything but index arithmetic or exceeds
  /// `budget` ops.
  Value rematerialize(Value value, Attribute layout,
                      DenseMap<std::pair<Value, Attribute>, Value> &done, unsigned &budget) {
    if (layoutOf(value) == layout)
      return value;
    if (Value again = done.lookup({value, layout}))
      return again;
    Operation *op = value.getDefiningOp();
    if (!op || op->getNumResults() != 1 || budget-- == 0 ||
        (isa<ExpandDimsOp>(op) && isa<SliceEncodingAttr>(layout)) ||
        !(isa<MakeRangeOp, SplatOp, BroadcastOp, ExpandDimsOp, AddPtrOp, arith::ConstantOp>(op) ||
          (op->hasTrait<OpTrait::Elementwise>() && isMemoryEffectFree(op))))
      return {};
    IRMapping map;
    for (Value operand : op->getOperands()) {
      if (!isTile(operand.getType()))
        continue;
      Attribute wanted = layout;
      if (auto e = dyn_cast<ExpandDimsOp>(op))
        wanted = SliceEncodingAttr::get(op->getContext(), e.getAxis(), layout);
      Value again = rematerialize(operand, wanted, done, budget);
      if (!again)
        return {};
      map.map(operand, again);
    }
    OpBuilder b(op->getContext());
    b.setInsertionPointAfter(op);
    Operation *clone = b.clone(*op, map);
    Type type = withLayout(value.getType(), layout);
    clone->getResult(0).setType(type);
    if (auto constant = dyn_cast<arith::ConstantOp>(clone)) {
      auto dense = dyn_cast<DenseElementsAttr>(constant.getValue());
      if (!dense)
        return clone->erase(), Value();
      constant.setValueAttr(dense.reshape(cast<ShapedType>(type)));
    }
    done[{value, layout}] = clone->getResult(0);
    return clone->getResult(0);
  }

  LogicalResult assign(Operation *op) {
    if (auto forOp = dyn_cast<scf::ForOp>(op)) {
      // A tile carried around the loop takes the layout its steps want
      // (run()'s loop rule), else its initial value's: an initial value in
      // another layout (a constant shared with users after the loop)
      // converts once, before the loop, not at every step.
      for (auto [arg, result] : llvm::zip(forOp.getRegionIterArgs(), forOp.getResults())) {
        if (!isTile(arg.getType()))
          continue;
        OpOperand *init = forOp.getTiedLoopInit(arg);
        Attribute layout = wished(arg) ? wished(arg) : layoutOf(init->get());
        require(op, init->getOperandNumber(), layout);
        setLayout(arg, layout);
        setLayout(result, layout);
      }
      return success();
    }
    if (auto ifOp = dyn_cast<scf::IfOp>(op)) {
      for (Value result : ifOp.getResults())
        if (isTile(result.getType()))
          setLayout(result, wishedOrDefault(result));
      return success();
    }
    if (auto whileOp = dyn_cast<scf::WhileOp>(op)) {
      // A tile carried around the loop keeps its initial layout in both
      // regions; the condition's forwarded values and the results take
      // the layout of the carried tile in their place, or their own.
      for (auto [init, arg] :
           llvm::zip(whileOp.getInits(), whileOp.getBeforeArguments()))
        if (isTile(init.getType()))
          setLayout(arg, layoutOf(init));
      for (auto [i, arg] : llvm::enumerate(whileOp.getAfterArguments())) {
        if (!isTile(arg.getType()))
          continue;
        Value init = i < whileOp.getInits().size() ? whileOp.getInits()[i] : Value();
        Attribute layout = init && withLayout(init.getType(), {}) == arg.getType()
                               ? layoutOf(init)
                               : wishedOrDefault(arg);
        setLayout(arg, layout);
        setLayout(whileOp.getResult(i), layout);
      }
      return success();
    }
    if (auto condition = dyn_cast<scf::ConditionOp>(op)) {
      auto loop = cast<scf::WhileOp>(op->getParentOp());
      for (auto [i, operand] : llvm::enumerate(condition.getArgs()))
        if (isTile(operand.getType()))
          require(op, i + 1, layoutOf(loop.getAfterArguments()[i]));
      return success();
    }
    if (auto yield = dyn_cast<scf::YieldOp>(op)) {
      // A while loop's body yields the next values of its carried tiles.
      auto loop = dyn_cast<scf::WhileOp>(op->getParentOp());
      for (auto [i, operand] : llvm::enumerate(yield.getOperands()))
        if (isTile(operand.getType()))
          require(op, i,
                  layoutOf(loop ? Value(loop.getBeforeArguments()[i])
                                : op->getParentOp()->getResult(i)));
      return success();
    }
    if (!holdsTiles(op) || isa<ReduceReturnOp>(op))
      return success();

    if (isSameLayout(op)) {
      Value primary = primaryOf(op);
      Attribute layout;
      if (primary && isa<OpResult>(primary) && primary.getDefiningOp() == op)
        layout = wished(primary);
      if (!layout)
        for (Value operand : op->getOperands())
          if (isTile(operand.getType())) {
            layout = layoutOf(operand);
            break;
          }
      if (!layout)
        layout = wishedOrDefault(op->getResult(0));
      for (auto [i, operand] : llvm::enumerate(op->getOperands()))
        if (isTile(operand.getType()))
          require(op, i, layout);
      for (Value result : op->getResults())
        if (isTile(result.getType()))
          setLayout(result, layout);
      return success();
    }
    if (isa<PrintOp, DescStoreOp>(op))
      return success(); // any layout (a bulk store writes shared memory)
    if (isa<FlipOp>(op)) { // elements move through shared memory, any layout
      Attribute layout = wishedOrDefault(op->getResult(0));
      require(op, 0, layout);
      setLayout(op->getResult(0), layout);
      return success();
    }
    if (isa<MakeRangeOp, SplatOp, ReshapeOp>(op)) {
      setLayout(op->getResult(0), wishedOrDefault(op->getResult(0)));
      return success();
    }
    if (auto constant = dyn_cast<arith::ConstantOp>(op)) {
      // The value attribute carries the type too.
      setLayout(constant.getResult(), wishedOrDefault(constant.getResult()));
      auto dense = dyn_cast<DenseElementsAttr>(constant.getValue());
      if (!dense)
        return op->emitOpError("only dense tile constants can be distributed");
      constant.setValueAttr(
          dense.reshape(cast<ShapedType>(constant.getType())));
      return success();
    }
    if (auto b = dyn_cast<BroadcastOp>(op)) {
      Attribute layout = wished(b.getResult());
      if (!layout)
        layout = layoutOf(b.getSrc());
      require(op, 0, layout);
      setLayout(b.getResult(), layout);
      return success();
    }
    if (auto e = dyn_cast<ExpandDimsOp>(op)) {
      // The result's layout must be blocked: its source's is a slice of
      // it, and slices do not nest (a 1-D tile expanded twice converts in
      // between).
      Attribute layout = wished(e.getResult());
      if (isa_and_nonnull<SliceEncodingAttr>(layout))
        layout = nullptr;
      auto slice = dyn_cast<SliceEncodingAttr>(layoutOf(e.getSrc()));
      if (!layout)
        layout = slice && slice.getDim() == e.getAxis()
                     ? slice.getParent()
                     : chooser.fallback(e.getType());
      require(op, 0, SliceEncodingAttr::get(op->getContext(), e.getAxis(),
                                            layout));
      setLayout(e.getResult(), layout);
      return success();
    }
    if (isa<ReduceOp, ScanOp>(op)) {
      // Reductions and scans combine along any blocked layout's threads,
      // lanes and warps; an operand in a slice (a reduction's result) gets
      // the blocked layout it wishes for, else the default. The operands
      // share the first's; a scan's results keep it.
      Value first = op->getOperand(0);
      Attribute layout = layoutOf(first);
      if (isa<SliceEncodingAttr>(layout)) {
        layout = wished(first);
        if (!isa_and_nonnull<BlockedEncodingAttr>(layout))
          layout = chooser.fallback(cast<RankedTensorType>(first.getType()));
      }
      for (unsigned i = 0; i < op->getNumOperands(); ++i)
        require(op, i, layout);
      auto reduce = dyn_cast<ReduceOp>(op);
      for (Value result : op->getResults())
        if (!reduce)
          setLayout(result, layout);
        else if (isTile(result.getType()))
          setLayout(result, SliceEncodingAttr::get(op->getContext(), reduce.getAxis(), layout));
      return success();
    }
    if (auto t = dyn_cast<TransOp>(op)) {
      auto layout = dyn_cast<BlockedEncodingAttr>(layoutOf(t.getSrc()));
      if (!layout) {
        layout = chooser.fallback(t.getSrc().getType());
        require(op, 0, layout);
      }
      setLayout(t.getResult(), transposedLayout(layout, t.getOrder()));
      return success();
    }
    if (auto j = dyn_cast<JoinOp>(op)) {
      auto layout = dyn_cast<BlockedEncodingAttr>(layoutOf(j.getLhs()));
      if (!layout)
        layout = chooser.fallback(j.getLhs().getType());
      require(op, 0, layout);
      require(op, 1, layout);
      setLayout(j.getResult(), joinedLayout(layout));
      return success();
    }
    if (auto sp = dyn_cast<SplitOp>(op)) {
      auto layout = dyn_cast<BlockedEncodingAttr>(layoutOf(sp.getSrc()));
      if (!layout || !splitLayout(layout)) {
        auto halves = dyn_cast_or_null<BlockedEncodingAttr>(wished(sp.getLhs()));
        layout = joinedLayout(halves ? halves : chooser.fallback(sp.getLhs().getType()));
        require(op, 0, layout);
      }
      setLayout(sp.getLhs(), splitLayout(layout));
      setLayout(sp.getRhs(), splitLayout(layout));
      return success();
    }
    if (auto d = dyn_cast<DotOp>(op)) {
      // The lowering reads a and b in any layout but a register operand's
      // (the accumulator's); the result is c's.
      Attribute layout = wished(d.getResult());
      if (!layout)
        layout = layoutOf(d.getC());
      if (warpgroupRegisterA(d, target))
        require(op, 0, dotAccumulatorLayout(d, target));
      require(op, 2, layout);
      setLayout(d.getResult(), layout);
      return success();
    }
    return op->emitOpError("cannot distribute the tiles of this operation");
  }

  func::FuncOp func;
  const LayoutChooser &chooser;
  const AxisInfoAnalysis &axis;
  const CompileTarget &target;
  DenseMap<Value, Attribute> desired;
};

/// Tiles already distributed (by hand or an earlier run) stay as they are.
bool isDistributed(func::FuncOp func) {
  bool any = false;
  func.walk([&](Operation *op) {
    for (Type type : llvm::concat<Type>(op->getOperandTypes(),
                                        op->getResultTypes()))
      if (auto tensor = dyn_cast<RankedTensorType>(type))
        any |= tensor.getEncoding() != nullptr;
  });
  return any;
}

struct WeftAssignLayouts : impl::WeftAssignLayoutsBase<WeftAssignLayouts> {
  using WeftAssignLayoutsBase::WeftAssignLayoutsBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    FailureOr<CompileTarget> target = getCompileTarget(module);
    if (failed(target))
      return signalPassFailure();
    AxisInfoAnalysis axis(module);
    LayoutChooser chooser(&getContext(), *target);
    for (auto func : module.getOps<func::FuncOp>()) {
      if (func.isExternal() || isDistributed(func))
        continue;
      if (failed(Assigner(func, chooser, axis, *target).run()))
        return signalPassFailure();
    }
  }
};

} // namespace
} // namespace weft
