//===- TileMemoryToLLVM.cpp - addresses, accesses and atomics of tiles ----===//
//
// A thread's consecutive elements along the layout's fastest dimension are
// one vector access when the axis analysis proves their addresses
// contiguous and aligned (16 bytes: ld.global.v4.b32, global_load_dwordx4).
// Under a mask, a vector whose lanes are all on is still one access; any
// other vector (the tail) falls back to one predicated access per element.
//
// Ordered tile accesses are relaxed accesses plus fences, since no target
// has an acquire or release vector access:
//   acquire load  = relaxed loads, acquire fence, program barrier
//   release store = program barrier, release fence, relaxed stores
// The fence orders this thread's accesses; the barrier extends the order to
// the program's other threads (docs/tile-ir.md). weft.async_copy, a tile
// load into a shared buffer, groups its accesses the same way.
//
//===----------------------------------------------------------------------===//
#include "KernelContext.h"
#include "LoweringUtils.h"
#include "TargetInfos.h"
#include "TileLowering.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;

namespace weft {
namespace {

constexpr int64_t kVectorBytes = 16;

/// How many consecutive elements of `ptrs` one access may cover: within
/// what a thread holds contiguously, what the analysis proves contiguous,
/// 16 bytes, and the proven alignment.
unsigned vectorWidth(const TileLowering &tiles, Value ptrs,
                     const TileLayout &layout, Type elemType) {
  if (layout.getSliceDim() >= 0 || !elemType.isIntOrFloat() ||
      elemType.getIntOrFloatBitWidth() % 8)
    return 1;
  BlockedEncodingAttr blocked = layout.getBlocked();
  unsigned fast = blocked.getOrder()[0];
  auto shape = cast<RankedTensorType>(ptrs.getType()).getShape();
  int64_t bytes = elemType.getIntOrFloatBitWidth() / 8;
  AxisInfo info = tiles.axis.get(ptrs);
  int64_t width = std::min({int64_t(blocked.getSizePerThread()[fast]),
                            shape[fast], info.contiguity[fast],
                            kVectorBytes / bytes,
                            info.divisibility[fast] / bytes});
  return width < 1 ? 1 : llvm::bit_floor(uint64_t(width));
}

Value allOf(OpBuilder &b, Location loc, ArrayRef<Value> bits) {
  Value all = bits.front();
  for (Value bit : bits.drop_front())
    all = LLVM::AndOp::create(b, loc, all, bit);
  return all;
}

/// The mask bits of every group of `width` consecutive elements (along the
/// layout's fastest dimension) of `ptrs` are equal: the axis analysis
/// found runs of equal bits that the groups fall within.
bool wholeGroupMasks(const TileLowering &tiles, Value ptrs, Value mask, unsigned width) {
  if (!mask || width == 1)
    return true;
  TileLayout layout(cast<RankedTensorType>(ptrs.getType()));
  if (layout.getSliceDim() >= 0)
    return false;
  return tiles.axis.get(mask).constancy[layout.getBlocked().getOrder()[0]] % width == 0;
}

/// The state shared by the tile load and store patterns.
struct TileAccess {
  const TileLowering &tiles;
  Location loc;
  Type elemType;
  unsigned width;
  bool ordered;
  MemScope scope;
  /// Every group's mask bits are equal (wholeGroupMasks): its first
  /// decides for the group.
  bool wholeMasks;
  /// Cache hints and volatility of a weak access.
  AccessHints hints;

  /// Accesses of `elemType` through the tile of pointers `ptrs`, masked
  /// by `mask` (or not).
  static TileAccess make(const TileLowering &tiles, Location loc, Value ptrs, Value mask,
                         Type elemType, bool ordered, MemScope scope) {
    auto ptrType = cast<RankedTensorType>(ptrs.getType());
    unsigned width = vectorWidth(tiles, ptrs, TileLayout(ptrType), elemType);
    return {tiles, loc,   elemType, width, ordered,
            scope, wholeGroupMasks(tiles, ptrs, mask, width), {}};
  }
  template <typename Op>
  static TileAccess of(const TileLowering &tiles, Op op, Type elemType) {
    TileAccess access = make(tiles, op.getLoc(), op.getPtr(), op.getMask(), elemType,
                             op.getOrder() != MemOrder::weak, op.getScope());
    access.hints = AccessHints::of(op);
    return access;
  }

  /// Whether the group of `width` elements from `first` is all there:
  /// its first mask bit where they are all equal, else all of them.
  Value groupMask(OpBuilder &b, ArrayRef<Value> masks, unsigned first) const {
    return wholeMasks ? masks[first] : allOf(b, loc, masks.slice(first, width));
  }

  unsigned alignment() const {
    return width * std::max(1u, elemType.getIntOrFloatBitWidth() / 8);
  }
  VectorType vectorType() const { return VectorType::get({width}, elemType); }

  Value loadOne(OpBuilder &b, Value ptr) const {
    if (hints.any())
      return tiles.target.loadHinted(b, loc, elemType, ptr, naturalAlignment(elemType), hints);
    return tiles.lowering.load(b, loc, elemType, ptr,
                               ordered ? MemOrder::relaxed : MemOrder::weak,
                               scope);
  }
  /// The `width` elements from `ptr` on: one access.
  SmallVector<Value> loadGroup(OpBuilder &b, Value ptr) const {
    if (width == 1)
      return {loadOne(b, ptr)};
    Value vector =
        ordered      ? tiles.target.loadRelaxed(b, loc, vectorType(), ptr, alignment(), scope)
        : hints.any() ? tiles.target.loadHinted(b, loc, vectorType(), ptr, alignment(), hints)
                      : LLVM::LoadOp::create(b, loc, vectorType(), ptr, alignment()).getResult();
    return unpackVector(b, loc, vector);
  }
  void storeOne(OpBuilder &b, Value value, Value ptr) const {
    if (hints.any())
      return tiles.target.storeHinted(b, loc, value, ptr, naturalAlignment(elemType), hints);
    tiles.lowering.store(b, loc, value, ptr,
                         ordered ? MemOrder::relaxed : MemOrder::weak, scope);
  }
  void storeGroup(OpBuilder &b, ValueRange values, Value ptr) const {
    if (width == 1)
      return storeOne(b, values.front(), ptr);
    Value vector = packVector(b, loc, values);
    if (ordered)
      tiles.target.storeRelaxed(b, loc, vector, ptr, alignment(), scope);
    else if (hints.any())
      tiles.target.storeHinted(b, loc, vector, ptr, alignment(), hints);
    else
      LLVM::StoreOp::create(b, loc, vector, ptr, alignment());
  }

  /// Whether a masked access is llvm.masked.load/store per group
  /// (TargetInfo::masksAccessesAsVectors).
  bool masksAsVectors(ArrayRef<Value> masks) const {
    return !masks.empty() && !ordered && !hints.isVolatile &&
           tiles.target.masksAccessesAsVectors();
  }
  SmallVector<Value> loadMasked(OpBuilder &b, ArrayRef<Value> ptrs, ArrayRef<Value> masks,
                                ArrayRef<Value> others) const {
    SmallVector<Value> out;
    for (unsigned first = 0; first < ptrs.size(); first += width) {
      Value vector = LLVM::MaskedLoadOp::create(
          b, loc, vectorType(), ptrs[first], packVector(b, loc, masks.slice(first, width)),
          packVector(b, loc, others.slice(first, width)), alignment());
      llvm::append_range(out, unpackVector(b, loc, vector));
    }
    return out;
  }
  void storeMasked(OpBuilder &b, ArrayRef<Value> ptrs, ArrayRef<Value> values,
                   ArrayRef<Value> masks) const {
    for (unsigned first = 0; first < ptrs.size(); first += width)
      LLVM::MaskedStoreOp::create(b, loc, packVector(b, loc, values.slice(first, width)),
                                  ptrs[first], packVector(b, loc, masks.slice(first, width)),
                                  alignment());
  }

  /// Accesses `count` elements in groups of `width`: a group without a mask,
  /// or whose mask bits are all on, is `whole(first)`; any other group is
  /// `single(i)` per element under its mask bit, yielding `others[i]` where
  /// it is off. Loads yield one value per element; stores pass no `others`
  /// and yield nothing.
  SmallVector<Value>
  emitGroups(OpBuilder &b, unsigned count, ArrayRef<Value> masks,
             ArrayRef<Value> others,
             function_ref<SmallVector<Value>(unsigned)> whole,
             function_ref<SmallVector<Value>(unsigned)> single) const {
    SmallVector<Type> elemTypes, groupTypes;
    if (!others.empty()) {
      elemTypes.push_back(elemType);
      groupTypes.assign(width, elemType);
    }
    SmallVector<Value> out;
    for (unsigned first = 0; first < count; first += width) {
      auto vector = [&] { return whole(first); };
      auto tail = [&] {
        SmallVector<Value> values;
        for (unsigned i = first; i < first + width; ++i)
          llvm::append_range(
              values, emitIf(b, loc, masks[i], elemTypes,
                             [&] { return single(i); },
                             others.empty() ? ValueRange{} : others[i]));
        return values;
      };
      // A group whose bits are all equal is whole or not there at all.
      auto absent = [&] {
        return others.empty() ? SmallVector<Value>() : SmallVector<Value>(others.slice(first, width));
      };
      if (masks.empty())
        llvm::append_range(out, vector());
      else if (width == 1)
        llvm::append_range(out, tail());
      else
        llvm::append_range(out, emitIfElse(b, loc, groupMask(b, masks, first), groupTypes, vector,
                                           [&] { return wholeMasks ? absent() : tail(); }));
    }
    return out;
  }
};

struct TileLoadLowering : TileResultPattern<LoadOp> {
  using TileResultPattern::TileResultPattern;
  SmallVector<Value> lowerTile(LoadOp op, OpAdaptor adaptor,
                               ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type elemType = getTypeConverter()->convertType(
        getElementTypeOrSelf(op.getType()));
    auto access = TileAccess::of(tiles, op, elemType);
    SmallVector<Value> ptrs = unpackTile(rewriter, loc, adaptor.getPtr());
    SmallVector<Value> masks, others;
    if (adaptor.getMask())
      masks = unpackTile(rewriter, loc, adaptor.getMask());
    if (adaptor.getOther())
      others = unpackTile(rewriter, loc, adaptor.getOther());
    else
      others.assign(ptrs.size(), LLVM::ZeroOp::create(rewriter, loc, elemType));

    if (access.masksAsVectors(masks))
      return access.loadMasked(rewriter, ptrs, masks, others);
    SmallVector<Value> values = access.emitGroups(
        rewriter, ptrs.size(), masks, others,
        [&](unsigned first) { return access.loadGroup(rewriter, ptrs[first]); },
        [&](unsigned i) {
          return SmallVector<Value>{access.loadOne(rewriter, ptrs[i])};
        });
    if (op.getOrder() == MemOrder::acquire)
      tiles.lowering.fenceProgram(rewriter, loc, MemOrder::acquire,
                                  op.getScope());
    return values;
  }
};

struct TileStoreLowering : TilePattern<StoreOp> {
  using TilePattern::TilePattern;
  LogicalResult matchAndRewrite(StoreOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    if (!isDistributed(op.getPtr().getType()))
      return failure();
    Location loc = op.getLoc();
    Type elemType = getTypeConverter()->convertType(
        getElementTypeOrSelf(op.getValue().getType()));
    auto access = TileAccess::of(tiles, op, elemType);
    SmallVector<Value> ptrs = unpackTile(rewriter, loc, adaptor.getPtr());
    SmallVector<Value> values = unpackTile(rewriter, loc, adaptor.getValue());
    SmallVector<Value> masks;
    if (adaptor.getMask())
      masks = unpackTile(rewriter, loc, adaptor.getMask());

    if (op.getOrder() == MemOrder::release)
      tiles.lowering.fenceProgram(rewriter, loc, MemOrder::release,
                                  op.getScope());
    if (access.masksAsVectors(masks)) {
      access.storeMasked(rewriter, ptrs, values, masks);
      rewriter.eraseOp(op);
      return success();
    }
    access.emitGroups(
        rewriter, ptrs.size(), masks, /*others=*/{},
        [&](unsigned first) {
          access.storeGroup(rewriter,
                            ArrayRef(values).slice(first, access.width),
                            ptrs[first]);
          return SmallVector<Value>{};
        },
        [&](unsigned i) {
          access.storeOne(rewriter, values[i], ptrs[i]);
          return SmallVector<Value>{};
        });
    rewriter.eraseOp(op);
    return success();
  }
};

struct TileAddPtrLowering : TileResultPattern<AddPtrOp> {
  using TileResultPattern::TileResultPattern;
  SmallVector<Value> lowerTile(AddPtrOp op, OpAdaptor adaptor,
                               ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type pointee = cast<PtrType>(getElementTypeOrSelf(op.getType())).getPointee();
    Type elem = getTypeConverter()->convertType(pointee);
    SmallVector<Value> ptrs = unpackTile(rewriter, loc, adaptor.getPtr());
    SmallVector<Value> offsets = unpackTile(rewriter, loc, adaptor.getOffset());
    SmallVector<Value> out;
    for (auto [ptr, offset] : llvm::zip(ptrs, offsets))
      out.push_back(elementPtr(rewriter, loc, ptr, elem, offset));
    return out;
  }
};

/// One heap-base difference for the whole tile, added to every element.
struct TileTranslateLowering : TileResultPattern<TranslateOp> {
  using TileResultPattern::TileResultPattern;
  SmallVector<Value> lowerTile(TranslateOp op, OpAdaptor adaptor,
                               ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type i32 = rewriter.getI32Type(), i64 = rewriter.getI64Type();
    Value ctx = tiles.lowering.hiddenArgs(op).context;
    Value peer = adaptor.getPeer();
    if (tiles.target.getOptions().debug) {
      // A peer that is no rank would reach some other memory. The pointers
      // go unchecked (a compare per element), so the record names none.
      Value numRanks = loadParamField(
          rewriter, loc, ctx, offsetof(weft_kernel_context, num_ranks), i32);
      Value bad = LLVM::ICmpOp::create(rewriter, loc, LLVM::ICmpPredicate::uge,
                                       peer, numRanks);
      Value none = LLVM::ConstantOp::create(rewriter, loc,
                                            rewriter.getBoolAttr(false));
      tiles.lowering.stopUnlessValid(rewriter, loc, op, bad, none, peer,
                                     i64Const(rewriter, loc, 0));
    }
    Value rank = loadParamField(rewriter, loc, ctx,
                                offsetof(weft_kernel_context, rank), i32);
    Value delta = LLVM::SubOp::create(rewriter, loc,
                                      loadHeapBase(rewriter, loc, ctx, peer),
                                      loadHeapBase(rewriter, loc, ctx, rank));
    SmallVector<Value> out;
    for (Value ptr : unpackTile(rewriter, loc, adaptor.getPtr())) {
      Value addr = LLVM::PtrToIntOp::create(rewriter, loc, i64, ptr);
      out.push_back(LLVM::IntToPtrOp::create(
          rewriter, loc, ptr.getType(),
          LLVM::AddOp::create(rewriter, loc, addr, delta).getResult()));
    }
    return out;
  }
};

bool releases(MemOrder order) {
  return order == MemOrder::release || order == MemOrder::acq_rel;
}
bool acquires(MemOrder order) {
  return order == MemOrder::acquire || order == MemOrder::acq_rel;
}

/// Gives every thread holding a copy of an element the value its owner
/// computed, through shared memory.
SmallVector<Value> shareFromOwners(OpBuilder &b, Location loc, Operation *op,
                                   const TileLowering &tiles,
                                   RankedTensorType type, Type elemType,
                                   const TileLayout &layout,
                                   ArrayRef<Value> owned, ArrayRef<Value> values) {
  SmallVector<Value> slots;
  auto write = [&](Value buffer) {
    for (auto &coords : emitCoordinates(b, loc, layout, tiles.target))
      slots.push_back(elementPtr(b, loc, buffer, elemType,
                                 linearize(b, loc, coords, type.getShape())));
    for (auto [isOwner, value, slot] : llvm::zip(owned, values, slots))
      emitIf(b, loc, isOwner, {}, [&, value = value, slot = slot] {
        LLVM::StoreOp::create(b, loc, value, slot);
        return SmallVector<Value>{};
      }, {});
  };
  auto read = [&](Value) {
    SmallVector<Value> out;
    for (Value slot : slots)
      out.push_back(LLVM::LoadOp::create(b, loc, elemType, slot));
    return out;
  };
  return tiles.exchange(b, loc, op, write, read);
}

/// Atomics on a tile: one atomic per element, by the element's one owner
/// (a replicated tile must not add twice), under the mask. Like scalar
/// atomics they act for the program: a releasing atomic first joins the
/// threads, an acquiring one joins them after. Copies of an element get the
/// old value from its owner.
template <typename Op>
struct TileAtomicLowering : TileResultPattern<Op> {
  using TileResultPattern<Op>::TileResultPattern;

  /// The atomic on element `i`, returning the old value.
  virtual Value emitOne(OpBuilder &b, Op op, typename Op::Adaptor adaptor,
                        ArrayRef<Value> ptrs, unsigned i) const = 0;
  virtual Value getMask(typename Op::Adaptor adaptor) const = 0;

  SmallVector<Value>
  lowerTile(Op op, typename Op::Adaptor adaptor,
            ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    const TileLowering &tiles = this->tiles;
    auto ptrType = cast<RankedTensorType>(op.getPtr().getType());
    auto resultType = cast<RankedTensorType>(op.getType());
    Type elemType =
        this->getTypeConverter()->convertType(resultType.getElementType());
    TileLayout layout(ptrType);
    SmallVector<Value> ptrs = unpackTile(rewriter, loc, adaptor.getPtr());
    SmallVector<Value> masks;
    if (Value mask = getMask(adaptor))
      masks = unpackTile(rewriter, loc, mask);
    SmallVector<Value> owned;
    if (layout.isReplicated())
      owned = emitOwnership(rewriter, loc, layout, tiles.target);

    if (releases(op.getOrder()))
      tiles.lowering.joinProgram(rewriter, loc);
    SmallVector<Value> results;
    for (unsigned i = 0; i < ptrs.size(); ++i) {
      Value cond = masks.empty() ? Value() : masks[i];
      if (!owned.empty())
        cond = cond ? LLVM::AndOp::create(rewriter, loc, cond, owned[i]).getResult()
                    : owned[i];
      auto one = [&] {
        return SmallVector<Value>{emitOne(rewriter, op, adaptor, ptrs, i)};
      };
      results.push_back(
          cond ? emitIf(rewriter, loc, cond, {elemType}, one,
                        {LLVM::ZeroOp::create(rewriter, loc, elemType)})[0]
               : one()[0]);
    }
    if (acquires(op.getOrder()))
      tiles.lowering.joinProgram(rewriter, loc);
    if (!owned.empty())
      results = shareFromOwners(rewriter, loc, op, tiles, resultType, elemType,
                                layout, owned, results);
    return results;
  }
};

struct TileAtomicRMWLowering : TileAtomicLowering<AtomicRMWOp> {
  using TileAtomicLowering::TileAtomicLowering;

  SmallVector<Value> lowerTile(AtomicRMWOp op, OpAdaptor adaptor,
                               ConversionPatternRewriter &rewriter) const override {
    if (auto reduced = reduceInVectors(op, adaptor, rewriter))
      return *reduced;
    return TileAtomicLowering::lowerTile(op, adaptor, rewriter);
  }

  /// A relaxed atomic whose old values nobody reads, on a tile whose
  /// threads each own runs of consecutive elements, as one vector
  /// reduction per run where the target has them (f32 adds on sm_90:
  /// split-K's partial products). None where it does not apply.
  std::optional<SmallVector<Value>> reduceInVectors(AtomicRMWOp op, OpAdaptor adaptor,
                                                    OpBuilder &b) const {
    Location loc = op.getLoc();
    auto ptrType = cast<RankedTensorType>(op.getPtr().getType());
    Type elemType = getTypeConverter()->convertType(
        cast<RankedTensorType>(op.getType()).getElementType());
    TileLayout layout(ptrType);
    if (!op->use_empty() || op.getOrder() != MemOrder::relaxed || layout.isReplicated())
      return std::nullopt;
    unsigned width = std::min(vectorWidth(tiles, op.getPtr(), layout, elemType),
                              tiles.target.reductionWidth(op.getKind(), elemType));
    if (width < 2 || !wholeGroupMasks(tiles, op.getPtr(), op.getMask(), width))
      return std::nullopt;
    SmallVector<Value> ptrs = unpackTile(b, loc, adaptor.getPtr());
    SmallVector<Value> values = unpackTile(b, loc, adaptor.getValue());
    SmallVector<Value> masks;
    if (adaptor.getMask())
      masks = unpackTile(b, loc, adaptor.getMask());
    for (unsigned first = 0; first < ptrs.size(); first += width) {
      auto reduce = [&] {
        tiles.target.reduceVector(b, loc, op.getKind(), ptrs[first],
                                  ArrayRef<Value>(values).slice(first, width), op.getScope());
        return SmallVector<Value>();
      };
      if (masks.empty())
        reduce();
      else
        emitIf(b, loc, masks[first], {}, reduce, {});
    }
    // The old values, which nobody reads.
    return SmallVector<Value>(ptrs.size(), LLVM::PoisonOp::create(b, loc, elemType));
  }

  Value emitOne(OpBuilder &b, AtomicRMWOp op, OpAdaptor adaptor,
                ArrayRef<Value> ptrs, unsigned i) const override {
    Value value = LLVM::ExtractValueOp::create(b, op.getLoc(),
                                               adaptor.getValue(), i);
    return tiles.target.atomicRMW(b, op.getLoc(), op.getKind(), ptrs[i], value,
                                  op.getOrder(), op.getScope());
  }
  Value getMask(OpAdaptor adaptor) const override { return adaptor.getMask(); }
};

struct TileAtomicCASLowering : TileAtomicLowering<AtomicCASOp> {
  using TileAtomicLowering::TileAtomicLowering;
  Value emitOne(OpBuilder &b, AtomicCASOp op, OpAdaptor adaptor,
                ArrayRef<Value> ptrs, unsigned i) const override {
    Location loc = op.getLoc();
    Value cmp = LLVM::ExtractValueOp::create(b, loc, adaptor.getCmp(), i);
    Value value = LLVM::ExtractValueOp::create(b, loc, adaptor.getValue(), i);
    // A failed exchange only reads: it keeps the acquire part, if any.
    MemOrder failure =
        acquires(op.getOrder()) ? MemOrder::acquire : MemOrder::relaxed;
    auto xchg = LLVM::AtomicCmpXchgOp::create(
        b, loc, ptrs[i], cmp, value, toLLVMOrdering(op.getOrder()),
        toLLVMOrdering(failure), tiles.target.syncScope(op.getScope()));
    return LLVM::ExtractValueOp::create(b, loc, xchg, 0);
  }
  Value getMask(OpAdaptor) const override { return {}; }
};

/// weft.async_copy: per group of a thread's consecutive elements (the
/// loads' vector width), one asynchronous copy where the target has them,
/// the group is whole (every mask bit on) and 4, 8 or 16 aligned bytes;
/// otherwise the elements are loaded, zero where masked off, and stored.
struct AsyncCopyLowering : TilePattern<AsyncCopyOp> {
  using TilePattern::TilePattern;
  LogicalResult matchAndRewrite(AsyncCopyOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    if (!isDistributed(op.getPtr().getType()))
      return failure();
    Location loc = op.getLoc();
    auto ptrType = cast<RankedTensorType>(op.getPtr().getType());
    SharedType dstType = op.getDst().getType();
    Type elemType = getTypeConverter()->convertType(dstType.getElementType());
    TileLayout layout(ptrType);
    auto access = TileAccess::make(tiles, loc, op.getPtr(), op.getMask(), elemType,
                                   /*ordered=*/false, MemScope::sys);
    SmallVector<Value> ptrs = unpackTile(rewriter, loc, adaptor.getPtr());
    SmallVector<Value> masks;
    if (adaptor.getMask())
      masks = unpackTile(rewriter, loc, adaptor.getMask());
    unsigned bytes = access.alignment();
    // Every group starts at a multiple of its size within a row, so it
    // stays within one 16-byte chunk (which swizzling keeps whole), and
    // rows start 16-byte aligned when they are swizzled or their pitch is
    // a multiple of 16 bytes.
    bool rowsAligned = dstType.getLayout() ||
                       (sharedRowPitch(dstType) * naturalAlignment(elemType)) % 16 == 0;
    bool async = tiles.target.getSpec().hasAsyncCopy() && (bytes == 4 || bytes == 8 || bytes == 16) &&
                 rowsAligned;
    Value zero = LLVM::ZeroOp::create(rewriter, loc, elemType);
    auto coords = emitCoordinates(rewriter, loc, layout, tiles.target);
    auto at = [&](unsigned i) {
      return byteOffset(rewriter, loc, adaptor.getDst(),
                        sharedElementOffset(rewriter, loc, dstType, coords[i][0], coords[i][1]));
    };
    // Element i, zero where its mask bit is off.
    auto element = [&](unsigned i) {
      auto one = [&] { return SmallVector<Value>{access.loadOne(rewriter, ptrs[i])}; };
      return masks.empty() ? one().front()
                           : emitIf(rewriter, loc, masks[i], elemType, one, zero).front();
    };
    // Copies of an element (a layout wider than the tile) would write the
    // same shared bytes from several threads: its owner's is the one made.
    SmallVector<Value> owned;
    if (layout.isReplicated())
      owned = emitOwnership(rewriter, loc, layout, tiles.target);
    auto byOwner = [&](unsigned first, unsigned count, function_ref<void()> copy) {
      if (owned.empty())
        return copy();
      Value all = owned[first];
      for (unsigned i = first + 1; i < first + count; ++i)
        all = LLVM::AndOp::create(rewriter, loc, all, owned[i]);
      emitIf(rewriter, loc, all, {}, [&] {
        copy();
        return SmallVector<Value>{};
      }, {});
    };
    // A thread's consecutive elements run along the layout's order[0]; in
    // the row-major buffer they are consecutive only along its rows. A
    // column of them (a transposed operand, k^T in attention) is copied
    // element by element, each to its own place.
    if (layout.getBlocked().getOrder()[0] != 1) {
      for (unsigned i = 0; i < ptrs.size(); ++i)
        byOwner(i, 1, [&] { LLVM::StoreOp::create(rewriter, loc, element(i), at(i)); });
      rewriter.eraseOp(op);
      return success();
    }
    for (unsigned first = 0; first < ptrs.size(); first += access.width)
      byOwner(first, access.width, [&] {
        Value dst = at(first);
        auto storeAll = [&](ArrayRef<Value> values) {
          for (auto [k, value] : llvm::enumerate(values))
            LLVM::StoreOp::create(
                rewriter, loc, value,
                elementPtr(rewriter, loc, dst, elemType, i32Const(rewriter, loc, k)));
          return SmallVector<Value>{};
        };
        auto whole = [&] {
          if (!async)
            return storeAll(access.loadGroup(rewriter, ptrs[first]));
          tiles.target.asyncCopy(rewriter, loc, dst, ptrs[first], bytes);
          return SmallVector<Value>{};
        };
        // A group that is whole or absent: a copy of all its bytes or none
        // (which writes zeros), with no branch.
        if (async && !masks.empty() && access.wholeMasks) {
          Value srcBytes = LLVM::SelectOp::create(
              rewriter, loc, access.groupMask(rewriter, masks, first),
              i32Const(rewriter, loc, bytes), i32Const(rewriter, loc, 0));
          tiles.target.asyncCopy(rewriter, loc, dst, ptrs[first], bytes, srcBytes);
          return;
        }
        auto each = [&] {
          SmallVector<Value> values;
          for (unsigned i = first; i < first + access.width; ++i)
            values.push_back(element(i));
          return storeAll(values);
        };
        if (masks.empty())
          whole();
        else
          emitIfElse(rewriter, loc, access.groupMask(rewriter, masks, first), {}, whole, each);
      });
    rewriter.eraseOp(op);
    return success();
  }
};

} // namespace

void populateTileMemoryPatterns(const LLVMTypeConverter &converter,
                                const TileLowering &tiles,
                                RewritePatternSet &patterns) {
  patterns.add<TileLoadLowering, TileStoreLowering, TileAddPtrLowering,
               TileTranslateLowering, TileAtomicRMWLowering, TileAtomicCASLowering,
               AsyncCopyLowering>(converter, tiles);
}

} // namespace weft
