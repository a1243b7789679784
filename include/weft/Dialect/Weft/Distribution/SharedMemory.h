//===- SharedMemory.h - what a program keeps in shared memory ---*- C++ -*-===//
//
// A program's shared memory (LDS) holds the scratch area through which its
// threads exchange tile elements, a slot for broadcasts, and the
// `!weft.shared` buffers and mbarriers of pipelined loops. Distribution
// sizes them against the target's limits (weft-assign-layouts,
// weft-pipeline-dot-operands) and places the buffers; the conversion
// addresses them the same way (lib/Conversion/WeftToLLVM). On the host a
// program is one thread and these are stack memory.
//
//===----------------------------------------------------------------------===//
#ifndef WEFT_DIALECT_WEFT_DISTRIBUTION_SHAREDMEMORY_H
#define WEFT_DIALECT_WEFT_DISTRIBUTION_SHAREDMEMORY_H

#include "weft/Dialect/Weft/IR/Dialect.h"
#include "weft/Target/Target.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"
#include <array>
#include <optional>

namespace weft {

/// The natural alignment in bytes of a scalar or vector access of `type`:
/// its size; 8 for pointers (global pointers are 64-bit on every weft
/// target).
unsigned naturalAlignment(mlir::Type type);

/// Bytes of the shared-memory slot through which one thread broadcasts a
/// value to its program.
constexpr int64_t kBroadcastSlotBytes = 8;

// ---- 2-D tiles in shared memory, as weft.dot reads them ----

/// A tile operand's scratch copy and a plain `!weft.shared` buffer have
/// rows of `sharedRowPitch` elements, the width plus 16 bytes, so that the
/// rows one ldmatrix reads fall in distinct banks; a #weft.swizzled buffer
/// is laid out as its attribute says. `sharedTileBytes` in all (a multiple
/// of 16), starting at a multiple of `sharedTileAlignment`.
int64_t sharedRowPitch(mlir::ShapedType tile);
int64_t sharedTileBytes(mlir::ShapedType tile);
int64_t sharedTileAlignment(mlir::ShapedType tile);

// ---- bulk tensor copies into swizzled buffers ----

/// One dimension of the tensor map bulk copies read: coordinate c along it
/// is element c * step along the block's dimension `dim` (0: rows, 1:
/// columns); `size` coordinates (0: the tensor's extent along dim over
/// step), `box` of them per copy.
struct TensorMapDim {
  int64_t dim, step, size, box;
};
/// How bulk tensor copies fill a #weft.swizzled buffer: boxes of a tensor
/// map of `dims` (innermost first; a view of the tensor whose boxes land
/// in the layout's order) under the hardware swizzle of `swizzle` bytes
/// (the layout's). The block's offsets must be multiples of `alignment`
/// (rows, columns).
struct TensorCopyPlan {
  llvm::SmallVector<TensorMapDim> dims;
  unsigned swizzle;
  std::array<int64_t, 2> alignment;
};
/// The plan for block offsets that are multiples of `divisibility` (rows,
/// columns): one box for the whole block where the view fits a tensor map
/// and the offsets are aligned to it, else a box per column block and run
/// of consecutive rows. None for buffers without a swizzled layout.
std::optional<TensorCopyPlan> tensorCopyPlan(SharedType buffer,
                                             std::array<int64_t, 2> divisibility);
/// The block's elements (row, column) the boxes of `dims` start from, one
/// box after another; each goes to the buffer's place of that element.
llvm::SmallVector<std::array<int64_t, 2>> tensorCopyOrigins(llvm::ArrayRef<TensorMapDim> dims,
                                                            mlir::ShapedType block);
/// The buffer a bulk weft.desc_store (weft-plan-bulk-stores) writes its
/// block into for the copy engine: swizzled column blocks of the widest
/// span that divides a row (no row interleaving), so that the rows of the
/// boxes land as the hardware swizzles them; none where a row is not a
/// multiple of 32 bytes.
SharedType bulkStoreBuffer(DescStoreOp store);
/// weft-pipeline-dot-operands records each plan on the kernel
/// (kTensorMapsAttrName) as [swizzle, then dim, step, size, box per
/// dimension, innermost first]; the lowering addresses the copies from it
/// and weft_compile reports it for the runtime's encoder. The alignment is
/// not recorded (the pass that planned the copies checked it): a decoded
/// plan's is {1, 1}.
mlir::DenseI64ArrayAttr encodeTensorCopyPlan(mlir::MLIRContext *ctx, const TensorCopyPlan &plan);
TensorCopyPlan decodeTensorCopyPlan(mlir::DenseI64ArrayAttr attr);

// ---- where buffers go ----

/// Steps of a function in program order (a pre-order walk), for the
/// liveness of its shared memory: an op's span covers its own step and
/// those of the ops nested in it, so a loop's span is every step of every
/// iteration.
class SharedLiveness {
public:
  struct Span {
    int64_t first = 0, last = -1;
    bool overlaps(Span other) const { return first <= other.last && other.first <= last; }
  };
  explicit SharedLiveness(mlir::Operation *func);
  Span span(mlir::Operation *op) const { return spans.lookup(op); }
  /// The steps during which the room of `alloc` (weft.alloc_shared,
  /// weft.alloc_mbarriers) is in use: from the allocation to its last use,
  /// lifted to the allocation's block, where one of the uses ends its life
  /// (weft.release_shared, weft.inval_mbarriers: the program joins there);
  /// otherwise to the function's end.
  Span life(mlir::Operation *alloc) const;

private:
  void number(mlir::Operation *op);
  mlir::Operation *func;
  llvm::DenseMap<mlir::Operation *, Span> spans;
  int64_t next = 0;
};
/// Where placeSharedBuffers put a buffer (or mbarriers) in its kernel's
/// dynamic shared memory, and the alignment that offset counts from where
/// it is more than 16.
constexpr llvm::StringLiteral kSharedOffsetAttrName = "weft.shared_offset";
constexpr llvm::StringLiteral kSharedBaseAlignAttrName = "weft.shared_base_align";
/// Bytes and alignment of a shared-memory allocation (a buffer, or
/// barriers of 8 bytes each).
std::pair<int64_t, int64_t> sharedFootprint(mlir::Operation *alloc);
/// Whether the async proxy writes the allocation (a bulk copies' buffer,
/// the barriers they complete on): placeSharedBuffers never lets it share
/// room with memory the threads use, whenever each is in use.
bool inAsyncProxy(mlir::Operation *alloc);
/// On targets with dynamic shared memory, gives every kernel's
/// `!weft.shared` buffers, mbarriers and exchanges (scratchUse) places
/// there, and the kernel the total (kDynamicSharedBytesAttrName), before
/// the lowering: in program order, each at the lowest offset that nothing
/// in use at the same time holds (SharedLiveness), so rings of loops that
/// run one after the other, of an scf.if's branches, and the exchanges
/// after a loop share their room. An error at the op that does not fit.
mlir::LogicalResult placeSharedBuffers(mlir::ModuleOp module, const CompileTarget &target);
/// "<op> of <type> needs <bytes> bytes of shared memory; the target
/// allows <allowed>", to be continued by the caller.
mlir::InFlightDiagnostic emitSharedOverflow(mlir::Operation *op, mlir::Type type, int64_t bytes,
                                            int64_t allowed);

// ---- the scratch area of tile exchanges ----

/// The row pitch, in elements, of the exchange that moves a tile of `type`
/// from one layout to another: a 2-D tile of numbers has its rows padded
/// by 16 bytes (sharedRowPitch), so that layouts whose warps touch several
/// rows at once (an MMA accumulator: eight rows of a few columns) spread
/// them over the banks; 0 (packed) for other tiles.
int64_t conversionRowPitch(mlir::RankedTensorType type);
/// The bytes of that exchange.
int64_t conversionBytes(mlir::RankedTensorType type);
/// What the warps of a weft.reduce or weft.scan (`op`) exchange along its
/// axis (TileLowering::acrossWarps): for every line along it, `slots`
/// tuples (a scan's repetitions of its layout; a reduction has one) from
/// each of the `warps` warps holding distinct parts of it. `offsets`: where
/// each operand's partials start in the scratch (bytes; every region
/// 16-byte aligned), the total last.
struct WarpPartials {
  unsigned axis;
  int64_t warps, slots;
  llvm::SmallVector<int64_t> offsets;
};
WarpPartials warpPartials(mlir::Operation *op);
/// The tile whose elements the lowering of `op` exchanges through shared
/// memory, and the bytes it needs there (0: none). The limit check and the
/// buffer's size both come from here.
struct ScratchUse {
  mlir::RankedTensorType tile;
  int64_t bytes = 0;
};
ScratchUse scratchUse(mlir::Operation *op, const CompileTarget &target);
/// The most scratch `op` may use: the target's static shared memory less
/// the broadcast slot and, where they are static too, the function's
/// `!weft.shared` buffers; none: no limit.
std::optional<int64_t> scratchAllowed(mlir::Operation *op, const TargetSpec &target);
/// Whether `op`'s function has its buffers and exchanges placed in dynamic
/// shared memory (placeSharedBuffers): a kernel, on a target that has it.
bool placedInDynamic(mlir::Operation *op, const TargetSpec &target);
/// Whether a conversion the layout assignment chooses for speed (a GEMM
/// epilogue's rounded sums, crossing to coalesced stores) may exchange
/// `bytes` at `op`: in dynamic shared memory a third of it at most, the
/// rest left to the pipeline's rings (ringBudget reserves the largest,
/// largestConversion, or static shared memory's size where that is more),
/// and only where placeSharedBuffers would find it room beside the
/// buffers there now (a config= with deeper rings); elsewhere
/// scratchAllowed.
bool conversionFits(mlir::Operation *op, int64_t bytes, const CompileTarget &target);
/// The bytes of the largest layout conversion's exchange in `func`, or of
/// a bulk store's buffer (an epilogue's too, which the rings leave room
/// for in the same way).
int64_t largestConversion(mlir::Operation *func, const CompileTarget &target);

} // namespace weft

#endif // WEFT_DIALECT_WEFT_DISTRIBUTION_SHAREDMEMORY_H
