//===- SharedMemory.cpp - what a program keeps in shared memory -----------===//
#include "weft/Dialect/Weft/Distribution/SharedMemory.h"
#include "weft/Dialect/Weft/Distribution/DotPlan.h"
#include "weft/Dialect/Weft/Distribution/TileLayout.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;

namespace weft {

unsigned naturalAlignment(Type type) {
  if (isa<LLVM::LLVMPointerType>(type))
    return 8;
  if (auto vec = dyn_cast<VectorType>(type))
    return vec.getNumElements() * naturalAlignment(vec.getElementType());
  return std::max(1u, type.getIntOrFloatBitWidth() / 8);
}

namespace {

SwizzledSharedAttr swizzleOf(ShapedType tile) {
  auto shared = dyn_cast<SharedType>(tile);
  return shared ? shared.getLayout() : SwizzledSharedAttr();
}

/// Bytes of one element of `tile` in shared memory (pointers are 64-bit).
int64_t elementBytes(RankedTensorType tile) {
  Type elem = tile.getElementType();
  return isa<PtrType>(elem) ? 8 : naturalAlignment(elem);
}

/// A factor of a block dimension in a tensor-map view: coordinates step
/// `step` elements, `size` of them.
struct Factor {
  int64_t step, size;
};

/// The rows of a buffer interleaved for `warps` warps (#weft.swizzled) as
/// factors in shared-memory order, outermost first: row 8W t + 8 i + g
/// (i < W, t < 2R) sits at 64 (R (i / 4) + t / 2) + 16 (i mod 4) +
/// 8 (t mod 2) + g, so with i = 4 ih + il and t = 2 th + tl the order is
/// ih, th, il, tl, g. Factors of one coordinate are dropped, and an outer
/// factor that continues the next inner one merges with it.
SmallVector<Factor> interleavedRows(int64_t rows, int64_t warps) {
  int64_t perWarpgroup = rows / (16 * warps);
  SmallVector<Factor> order = {{32, warps / 4}, {16 * warps, perWarpgroup}, {8, 4}, {8 * warps, 2},
                               {1, 8}};
  SmallVector<Factor> merged;
  for (Factor f : order) {
    if (f.size == 1)
      continue;
    if (!merged.empty() && merged.back().step == f.step * f.size) {
      merged.back() = {f.step, f.size * merged.back().size};
      continue;
    }
    merged.push_back(f);
  }
  return merged;
}

/// The bytes of the function's `!weft.shared` buffers where they are
/// static (not placed in dynamic shared memory by placeSharedBuffers).
int64_t staticBufferBytes(Operation *op, const TargetSpec &target) {
  int64_t buffers = 0;
  auto func = op->getParentOfType<FunctionOpInterface>();
  if (func && !placedInDynamic(op, target))
    func->walk([&](AllocSharedOp alloc) { buffers += sharedTileBytes(alloc.getType()); });
  return buffers;
}

} // namespace

int64_t sharedRowPitch(ShapedType tile) {
  return tile.getDimSize(1) + 16 / naturalAlignment(tile.getElementType());
}

int64_t sharedTileBytes(ShapedType tile) {
  int64_t elementBytes = naturalAlignment(tile.getElementType());
  if (swizzleOf(tile)) // whole 8-row blocks: a multiple of the alignment
    return tile.getNumElements() * elementBytes;
  return llvm::alignTo(tile.getDimSize(0) * sharedRowPitch(tile) * elementBytes, 16);
}

int64_t sharedTileAlignment(ShapedType tile) {
  // The hardware swizzles by address bits: a block of 8 rows must start
  // where the pattern does.
  if (SwizzledSharedAttr layout = swizzleOf(tile))
    return 8 * layout.getBytes();
  return 16;
}

SharedType bulkStoreBuffer(DescStoreOp store) {
  auto block = cast<RankedTensorType>(store.getValue().getType());
  Type elem = block.getElementType();
  unsigned span = swizzleSpan(block.getDimSize(block.getRank() - 1) * naturalAlignment(elem));
  if (!span)
    return {};
  return SharedType::get(store.getContext(), block.getShape(), elem,
                         SwizzledSharedAttr::get(store.getContext(), span, 0));
}

std::optional<TensorCopyPlan> tensorCopyPlan(SharedType buffer,
                                             std::array<int64_t, 2> divisibility) {
  SwizzledSharedAttr layout = buffer.getLayout();
  if (!layout)
    return std::nullopt;
  int64_t rows = buffer.getDimSize(0), cols = buffer.getDimSize(1);
  // A box row is at most one column block: the swizzle's span, which the
  // hardware swizzles as the layout does. Column blocks lie one after
  // another in shared memory, each all rows deep.
  int64_t span = layout.getBytes() / naturalAlignment(buffer.getElementType());
  int64_t colBlocks = cols / span;

  // One box for the whole block: the columns within a block, the rows in
  // shared-memory order, then the blocks. The row factor that spans the
  // block walks the rest of the tensor (the block's row offset a multiple
  // of its step), and so do the column blocks (a multiple of the span).
  SmallVector<Factor> rowFactors =
      layout.getWarps() ? interleavedRows(rows, layout.getWarps()) : SmallVector<Factor>{{1, rows}};
  auto spanning = llvm::find_if(rowFactors, [&](Factor f) { return f.step * f.size == rows; });
  if (spanning != rowFactors.end()) {
    TensorCopyPlan plan{{}, layout.getBytes(), {spanning->step, colBlocks > 1 ? span : 1}};
    plan.dims.push_back({1, 1, colBlocks > 1 ? span : 0, span});
    for (auto f = rowFactors.rbegin(); f != rowFactors.rend(); ++f)
      plan.dims.push_back({0, f->step, &*f == &*spanning ? 0 : f->size, f->size});
    if (colBlocks > 1)
      plan.dims.push_back({1, span, 0, colBlocks});
    bool boxesFit = llvm::all_of(plan.dims, [](const TensorMapDim &d) { return d.box <= 256; });
    if (plan.dims.size() <= 5 && boxesFit && divisibility[0] % plan.alignment[0] == 0 &&
        divisibility[1] % plan.alignment[1] == 0)
      return plan;
  }
  // Otherwise a box per column block and run of consecutive rows (8 where
  // they are interleaved), anywhere in the tensor.
  int64_t boxRows = layout.getWarps() ? 8 : rows;
  if (boxRows > 256)
    return std::nullopt;
  return TensorCopyPlan{{{1, 1, 0, span}, {0, 1, 0, boxRows}}, layout.getBytes(), {1, 1}};
}

SmallVector<std::array<int64_t, 2>> tensorCopyOrigins(ArrayRef<TensorMapDim> dims,
                                                      ShapedType block) {
  // What one box covers along each block dimension, then boxes side by side.
  std::array<int64_t, 2> extent = {1, 1};
  for (const TensorMapDim &d : dims)
    extent[d.dim] += (d.box - 1) * d.step;
  SmallVector<std::array<int64_t, 2>> origins;
  for (int64_t col = 0; col < block.getDimSize(1); col += extent[1])
    for (int64_t row = 0; row < block.getDimSize(0); row += extent[0])
      origins.push_back({row, col});
  return origins;
}

DenseI64ArrayAttr encodeTensorCopyPlan(MLIRContext *ctx, const TensorCopyPlan &plan) {
  SmallVector<int64_t> values = {plan.swizzle};
  for (const TensorMapDim &d : plan.dims)
    values.append({d.dim, d.step, d.size, d.box});
  return DenseI64ArrayAttr::get(ctx, values);
}

TensorCopyPlan decodeTensorCopyPlan(DenseI64ArrayAttr attr) {
  ArrayRef<int64_t> values = attr.asArrayRef();
  TensorCopyPlan plan{{}, static_cast<unsigned>(values.front()), {1, 1}};
  for (size_t i = 1; i + 3 < values.size(); i += 4)
    plan.dims.push_back({values[i], values[i + 1], values[i + 2], values[i + 3]});
  return plan;
}

std::pair<int64_t, int64_t> sharedFootprint(Operation *op) {
  if (auto alloc = dyn_cast<AllocSharedOp>(op))
    return {sharedTileBytes(alloc.getType()), sharedTileAlignment(alloc.getType())};
  return {8 * cast<AllocMBarriersOp>(op).getNumResults(), 8};
}

bool inAsyncProxy(Operation *alloc) {
  auto buffer = dyn_cast<AllocSharedOp>(alloc);
  return isa<AllocMBarriersOp>(alloc) || (buffer && buffer.getBulk());
}

SharedLiveness::SharedLiveness(Operation *func) : func(func) { number(func); }

void SharedLiveness::number(Operation *op) {
  int64_t first = next++;
  for (Region &region : op->getRegions())
    for (Block &block : region)
      for (Operation &inner : block)
        number(&inner);
  spans[op] = {first, next - 1};
}

SharedLiveness::Span SharedLiveness::life(Operation *alloc) const {
  Span steps = span(alloc);
  bool released = false;
  for (Operation *user : alloc->getUsers()) {
    if (Operation *inBlock = alloc->getBlock()->findAncestorOpInBlock(*user))
      steps.last = std::max(steps.last, span(inBlock).last);
    released |= isa<ReleaseSharedOp, InvalMBarriersOp>(user);
  }
  if (!released)
    steps.last = span(func).last;
  return steps;
}

InFlightDiagnostic emitSharedOverflow(Operation *op, Type type, int64_t bytes, int64_t allowed) {
  std::string what; // unquoted, as the source spells it
  llvm::raw_string_ostream(what) << type;
  return op->emitError() << op->getName().stripDialect() << " of " << what << " needs " << bytes
                         << " bytes of shared memory; the target allows " << allowed;
}

namespace {
/// The outermost loop around `op` in its function, else `op`.
Operation *outermostLoop(Operation *op) {
  Operation *outermost = op;
  for (Operation *parent = op->getParentOp(); parent && !isa<FunctionOpInterface>(parent);
       parent = parent->getParentOp())
    if (isa<LoopLikeOpInterface>(parent))
      outermost = parent;
  return outermost;
}

/// What placeSharedBuffers does with a kernel's buffers and exchanges, in
/// program order: each at the lowest offset (of its alignment) that no
/// buffer or exchange in use at the same time holds, the first fit.
/// Memory the async proxy writes (bulk copies' buffers, the barriers they
/// complete on) never takes room the threads wrote or read through the
/// generic proxy, nor the other way round: a loop around both would need a
/// proxy fence from every thread between them. With `extraOp`, only the
/// buffers and an exchange of `extraBytes` there (conversionFits' question,
/// asked before the tiles have the layouts the other exchanges' sizes
/// depend on; those live at their own ops only).
class FirstFit {
public:
  FirstFit(FunctionOpInterface func, const CompileTarget &target, Operation *extraOp = nullptr,
           int64_t extraBytes = 0)
      : func(func), target(target), liveness(func), extraOp(extraOp), extraBytes(extraBytes) {}

  /// Places everything, calling `placedAt(op, offset)` for each but the
  /// extra exchange; false, after `overflow(op, type, bytes, inUse)`,
  /// where something does not fit.
  bool run(function_ref<void(Operation *, int64_t)> placedAt,
           function_ref<void(Operation *, Type, int64_t, int64_t)> overflow) {
    int64_t limit = *target.spec.dynamicSharedMemoryBytes();
    WalkResult walk = func->walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (op == extraOp && !place(liveness.span(op), false, extraBytes, 16, limit))
        return WalkResult::interrupt();
      int64_t size, align = 16;
      SharedLiveness::Span steps;
      Type what;
      bool async = inAsyncProxy(op);
      if (isa<AllocSharedOp, AllocMBarriersOp>(op)) {
        std::tie(size, align) = sharedFootprint(op);
        steps = liveness.life(op);
        what = op->getResult(0).getType();
      } else if (auto store = dyn_cast<DescStoreOp>(op); store && store.getBulk()) {
        // The copy engine reads the buffer after the op, until the next
        // bulk store or the return waits (weft.bulk_store_wait): nothing
        // from the outermost loop around it on takes its room.
        SharedType buffer = bulkStoreBuffer(store);
        size = sharedTileBytes(buffer);
        align = sharedTileAlignment(buffer);
        what = buffer;
        steps = liveness.span(outermostLoop(op));
        steps.last = liveness.span(func).last;
        async = true;
      } else if (ScratchUse use = extraOp ? ScratchUse() : scratchUse(op, target); use.bytes) {
        size = use.bytes;
        what = use.tile;
        steps = liveness.span(op);
      } else {
        return WalkResult::advance();
      }
      if (!place(steps, async, size, align, limit)) {
        if (overflow)
          overflow(op, what, size, inUse);
        return WalkResult::interrupt();
      }
      if (placedAt)
        placedAt(op, items.back().begin);
      return WalkResult::advance();
    });
    return !walk.wasInterrupted();
  }

  int64_t alignment = 16, bytes = 0;

private:
  struct Item {
    SharedLiveness::Span steps;
    bool async;
    int64_t begin, end;
  };

  bool place(SharedLiveness::Span steps, bool async, int64_t size, int64_t align,
             int64_t limit) {
    SmallVector<std::pair<int64_t, int64_t>> busy;
    inUse = 0;
    for (const Item &p : items)
      if (p.steps.overlaps(steps) || p.async != async) {
        busy.push_back({p.begin, p.end});
        inUse += p.end - p.begin;
      }
    llvm::sort(busy);
    int64_t offset = 0;
    for (auto [begin, end] : busy) {
      if (int64_t(llvm::alignTo(offset, align)) + size <= begin)
        break;
      offset = std::max(offset, end);
    }
    offset = llvm::alignTo(offset, align);
    alignment = std::max(alignment, align);
    // The dynamic area itself is only 16-byte aligned.
    if (offset + size + (alignment - 16) > limit)
      return false;
    items.push_back({steps, async, offset, offset + size});
    bytes = std::max(bytes, offset + size);
    return true;
  }

  FunctionOpInterface func;
  const CompileTarget &target;
  SharedLiveness liveness;
  Operation *extraOp;
  int64_t extraBytes;
  SmallVector<Item> items;
  int64_t inUse = 0;
};
} // namespace

LogicalResult placeSharedBuffers(ModuleOp module, const CompileTarget &target) {
  std::optional<int64_t> limit = target.spec.dynamicSharedMemoryBytes();
  if (!limit)
    return success();
  Builder b(module.getContext());
  for (auto func : module.getOps<FunctionOpInterface>()) {
    // Other functions' buffers and scratch stay static: their callers'
    // would overlap.
    if (!func->hasAttr(kKernelAttrName))
      continue;
    SmallVector<Operation *> ops;
    FirstFit fit(func, target);
    bool placed = fit.run(
        [&](Operation *op, int64_t offset) {
          op->setAttr(kSharedOffsetAttrName, b.getI64IntegerAttr(offset));
          ops.push_back(op);
        },
        [&](Operation *op, Type what, int64_t size, int64_t inUse) {
          emitSharedOverflow(op, what, size, *limit - inUse)
              << " (" << *limit << " of dynamic shared memory less " << inUse
              << " in use there)";
        });
    if (!placed)
      return failure();
    int64_t alignment = fit.alignment, bytes = fit.bytes;
    if (alignment > 16) {
      for (Operation *op : ops)
        op->setAttr(kSharedBaseAlignAttrName, b.getI64IntegerAttr(alignment));
      bytes += alignment - 16;
    }
    if (bytes)
      func->setAttr(kDynamicSharedBytesAttrName, b.getI64IntegerAttr(bytes));
  }
  return success();
}

int64_t conversionRowPitch(RankedTensorType type) {
  if (type.getRank() != 2 || isa<PtrType>(type.getElementType()))
    return 0;
  return sharedRowPitch(type);
}

int64_t conversionBytes(RankedTensorType type) {
  int64_t pitch = conversionRowPitch(type);
  int64_t elements = pitch ? type.getDimSize(0) * pitch : type.getNumElements();
  return elements * elementBytes(type);
}

WarpPartials warpPartials(Operation *op) {
  auto src = cast<RankedTensorType>(op->getOperand(0).getType());
  auto scan = dyn_cast<ScanOp>(op);
  unsigned axis = scan ? scan.getAxis() : cast<ReduceOp>(op).getAxis();
  TileLayout layout(src);
  WarpPartials out{axis, layout.distinctWarps(axis), scan ? layout.repetitions(axis) : 1, {0}};
  int64_t partials = src.getNumElements() / src.getDimSize(axis) * out.slots * out.warps;
  for (Value operand : op->getOperands())
    out.offsets.push_back(out.offsets.back() +
                          llvm::alignTo(partials * elementBytes(cast<RankedTensorType>(
                                                       operand.getType())),
                                        16));
  return out;
}

ScratchUse scratchUse(Operation *op, const CompileTarget &target) {
  auto use = [](RankedTensorType tile, int64_t elements) {
    return ScratchUse{tile, elements * elementBytes(tile)};
  };
  if (isa<ConvertLayoutOp, ReshapeOp, FlipOp>(op)) {
    auto src = cast<RankedTensorType>(op->getOperand(0).getType());
    auto dst = cast<RankedTensorType>(op->getResult(0).getType());
    if (TileLayout(src).isThreadLocal() && TileLayout(dst).isThreadLocal())
      return {};
    if (isa<ConvertLayoutOp>(op))
      return ScratchUse{src, conversionBytes(src)};
    return use(src, src.getNumElements());
  }
  if (isa<AtomicRMWOp, AtomicCASOp>(op)) {
    auto ptrs = dyn_cast<RankedTensorType>(op->getOperand(0).getType());
    if (!ptrs || !TileLayout(ptrs).isReplicated())
      return {};
    auto result = cast<RankedTensorType>(op->getResult(0).getType());
    return use(result, result.getNumElements());
  }
  if (auto dot = dyn_cast<DotOp>(op))
    return ScratchUse{dot.getC().getType(), dotScratchBytes(dot, target)};
  if (isa<ReduceOp, ScanOp>(op)) {
    WarpPartials partials = warpPartials(op);
    if (target.threadsPerProgram() == 1 || partials.warps == 1)
      return {};
    return ScratchUse{cast<RankedTensorType>(op->getOperand(0).getType()),
                      partials.offsets.back()};
  }
  return {};
}

std::optional<int64_t> scratchAllowed(Operation *op, const TargetSpec &target) {
  // The broadcast slot of oncePerProgram and the static buffers live
  // beside the scratch buffer.
  if (std::optional<int64_t> limit = target.staticSharedMemoryBytes())
    return *limit - kBroadcastSlotBytes - staticBufferBytes(op, target);
  return std::nullopt;
}

bool placedInDynamic(Operation *op, const TargetSpec &target) {
  auto func = dyn_cast<FunctionOpInterface>(op);
  if (!func)
    func = op->getParentOfType<FunctionOpInterface>();
  return func && target.dynamicSharedMemoryBytes() && func->hasAttr(kKernelAttrName);
}

bool conversionFits(Operation *op, int64_t bytes, const CompileTarget &target) {
  if (!placedInDynamic(op, target.spec)) {
    std::optional<int64_t> allowed = scratchAllowed(op, target.spec);
    return !allowed || bytes <= *allowed;
  }
  // Placed as placeSharedBuffers will place it, beside everything there
  // now: rings of exclusive branches share room with each other, never
  // with the exchange.
  if (bytes > *target.spec.dynamicSharedMemoryBytes() / 3)
    return false;
  return FirstFit(op->getParentOfType<FunctionOpInterface>(), target, op, bytes).run({}, {});
}

int64_t largestConversion(Operation *func, const CompileTarget &target) {
  int64_t largest = 0;
  func->walk([&](ConvertLayoutOp op) { largest = std::max(largest, scratchUse(op, target).bytes); });
  func->walk([&](DescStoreOp op) {
    if (op.getBulk())
      largest = std::max(largest, sharedTileBytes(bulkStoreBuffer(op)));
  });
  return largest;
}

} // namespace weft
