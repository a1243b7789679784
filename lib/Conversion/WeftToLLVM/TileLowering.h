//===- TileLowering.h - lowering distributed tiles --------------*- C++ -*-===//
//
// Patterns for tensors that weft-assign-layouts distributed: every such
// tensor becomes the struct of the elements one thread holds (TileLayout),
// and every tile op becomes per-element code, plus shuffles and shared
// memory where threads exchange elements.
//
//===----------------------------------------------------------------------===//
#ifndef WEFT_PASSES_WEFTTOLLVM_TILELOWERING_H
#define WEFT_PASSES_WEFTTOLLVM_TILELOWERING_H

#include "Lowering.h"
#include "TileLayout.h"

#include "weft/Analysis/AxisInfo.h"
#include "weft/Conversion/TensorMaps.h"

namespace weft {

class TileLowering {
public:
  TileLowering(const Lowering &lowering, const AxisInfoAnalysis &axis)
      : lowering(lowering), target(lowering.target), axis(axis) {}

  const Lowering &lowering;
  const TargetInfo &target;
  const AxisInfoAnalysis &axis;

  /// Threads exchange tile elements through the program's scratch area in
  /// shared memory (LDS): `write(buffer)` stores, the threads join,
  /// `read(buffer)` loads, and they join again, so that the next user may
  /// reuse the buffer at once. The area is one module-wide static buffer
  /// sized by its largest user (scratchUse).
  llvm::SmallVector<mlir::Value>
  exchange(mlir::OpBuilder &b, mlir::Location loc, mlir::Operation *op,
           llvm::function_ref<void(mlir::Value)> write,
           llvm::function_ref<llvm::SmallVector<mlir::Value>(mlir::Value)> read)
      const;

  /// Stores this thread's `elements` of a tile of `type` at their
  /// row-major positions from `base` (16-byte aligned; elements of
  /// `elemType`; rows `pitch` elements apart, 0: packed), and loads this
  /// thread's elements of `type` back from there: the two halves of an
  /// exchange by position, in vectors of up to 16 bytes.
  void storeRowMajor(mlir::OpBuilder &b, mlir::Location loc, mlir::Value base,
                     mlir::Type elemType, mlir::RankedTensorType type,
                     mlir::ValueRange elements, int64_t pitch = 0) const;
  llvm::SmallVector<mlir::Value> loadRowMajor(mlir::OpBuilder &b, mlir::Location loc,
                                              mlir::Value base, mlir::Type elemType,
                                              mlir::RankedTensorType type,
                                              int64_t pitch = 0) const;
};

/// Replaces `op` by the tile of `elements` (the struct its result becomes).
void replaceWithTile(mlir::ConversionPatternRewriter &rewriter,
                     mlir::Operation *op, const mlir::TypeConverter &converter,
                     mlir::ValueRange elements);

/// A distributed tensor type (one with a weft layout).
bool isDistributed(mlir::Type type);

template <typename Op>
class TilePattern : public mlir::ConvertOpToLLVMPattern<Op> {
public:
  /// Above the scalar weft patterns, which do not handle tiles.
  TilePattern(const mlir::LLVMTypeConverter &converter,
              const TileLowering &tiles)
      : mlir::ConvertOpToLLVMPattern<Op>(converter, /*benefit=*/2),
        tiles(tiles) {}

protected:
  const TileLowering &tiles;
};

/// A pattern for an op whose one result is a distributed tile: `lowerTile`
/// emits the elements this thread holds, which replace the op.
template <typename Op>
class TileResultPattern : public TilePattern<Op> {
public:
  using TilePattern<Op>::TilePattern;
  using OpAdaptor = typename Op::Adaptor;

  virtual llvm::SmallVector<mlir::Value>
  lowerTile(Op op, OpAdaptor adaptor,
            mlir::ConversionPatternRewriter &rewriter) const = 0;

  mlir::LogicalResult
  matchAndRewrite(Op op, OpAdaptor adaptor,
                  mlir::ConversionPatternRewriter &rewriter) const final {
    if (!isDistributed(op->getResult(0).getType()))
      return mlir::failure();
    replaceWithTile(rewriter, op, *this->getTypeConverter(),
                    lowerTile(op, adaptor, rewriter));
    return mlir::success();
  }
};

/// Reports tile ops the lowering cannot handle, before it starts.
mlir::LogicalResult checkTileLowerable(mlir::Operation *op,
                                       const TargetInfo &target);

/// The row pitch, in elements, of the exchange that moves a tile of `type`
/// from one layout to another: a 2-D tile of numbers has its rows padded
/// by 16 bytes (sharedRowPitch), so that layouts whose warps touch several
/// rows at once (an MMA accumulator: eight rows of a few columns) spread
/// them over the banks; 0 (packed) for other tiles.
int64_t conversionRowPitch(mlir::RankedTensorType type);
/// The bytes of that exchange.
int64_t conversionBytes(mlir::RankedTensorType type);

/// The tile whose elements the lowering of `op` exchanges through shared
/// memory, and the bytes it needs there (0: none). The limit check and the
/// buffer's size both come from here.
struct ScratchUse {
  mlir::RankedTensorType tile;
  int64_t bytes = 0;
};
ScratchUse scratchUse(mlir::Operation *op, const TargetInfo &target);
/// The most scratch `op` may use: the target's static shared memory less
/// the broadcast slot and, where they are static too, the function's
/// `!weft.shared` buffers; none: no limit.
std::optional<int64_t> scratchAllowed(mlir::Operation *op, const TargetInfo &target);
/// Reports an op that needs more shared memory than the target has.
mlir::LogicalResult checkScratchLimit(mlir::Operation *op,
                                      const TargetInfo &target);

void populateTileOpPatterns(const mlir::LLVMTypeConverter &converter,
                            const TileLowering &tiles,
                            mlir::RewritePatternSet &patterns);
/// `bytes` on the stack of the function around `op`, allocated at its
/// entry, 16-byte aligned: a host program's scratch and buffers (it is a
/// thread of its own, so module-wide buffers would be shared).
mlir::Value programStackBuffer(mlir::OpBuilder &b, mlir::Location loc, mlir::Operation *op,
                               int64_t bytes);
/// On targets with dynamic shared memory, gives every kernel's
/// `!weft.shared` buffers places there, in program order, and the kernel
/// the total (kDynamicSharedBytesAttrName), before the lowering. The
/// regions of an op that runs one of them (runsOneRegion) share their
/// room.
void placeSharedBuffers(mlir::ModuleOp module, const TargetInfo &target);
/// Whether `op` runs one of its regions at most (an scf.if's branches),
/// so that their buffers may share their room in dynamic shared memory:
/// placeSharedBuffers places them so, and weft-pipeline-dot-operands
/// budgets the rings of such regions' loops apart.
bool runsOneRegion(mlir::Operation *op);
/// `!weft.shared` buffers become shared-memory pointers (the host: plain
/// pointers to the program's stack).
void addSharedBufferConversion(mlir::LLVMTypeConverter &converter,
                               const TargetInfo &target);
void populateTileMemoryPatterns(const mlir::LLVMTypeConverter &converter,
                                const TileLowering &tiles,
                                mlir::RewritePatternSet &patterns);
void populateReducePatterns(const mlir::LLVMTypeConverter &converter,
                            const TileLowering &tiles,
                            mlir::RewritePatternSet &patterns);
/// A 2-D tile in shared memory as weft.dot reads it (SharedLayout.cpp):
/// a tile operand's scratch copy and a plain `!weft.shared` buffer have
/// rows of `sharedRowPitch` elements, the width plus 16 bytes, so that the
/// rows one ldmatrix reads fall in distinct banks; a #weft.swizzled buffer
/// is laid out as its attribute says. `sharedTileBytes` in all (a multiple
/// of 16), starting at a multiple of `sharedTileAlignment`;
/// `sharedElementOffset` is the byte offset of element (row, col) (i32).
int64_t sharedRowPitch(mlir::ShapedType tile);
int64_t sharedTileBytes(mlir::ShapedType tile);
int64_t sharedTileAlignment(mlir::ShapedType tile);
mlir::Value sharedElementOffset(mlir::OpBuilder &b, mlir::Location loc,
                                mlir::ShapedType tile, mlir::Value row,
                                mlir::Value col);
/// The plan for block offsets that are multiples of `divisibility` (rows,
/// columns): one box for the whole block where the view fits a tensor map
/// and the offsets are aligned to it, else a box per column block and run
/// of consecutive rows. None for buffers without a swizzled layout.
std::optional<TensorCopyPlan> tensorCopyPlan(SharedType buffer,
                                             std::array<int64_t, 2> divisibility);
/// The block's elements (row, column) the boxes of `dims` start from, one
/// box after another; each goes to the buffer's place of that element
/// (sharedElementOffset).
llvm::SmallVector<std::array<int64_t, 2>> tensorCopyOrigins(llvm::ArrayRef<TensorMapDim> dims,
                                                            mlir::ShapedType block);
/// The accumulator layout that warpgroup MMA fills when the rows of a are
/// interleaved for `warps` warps (#weft.swizzled).
BlockedEncodingAttr warpgroupAccumulatorLayout(mlir::MLIRContext *ctx,
                                               unsigned warps);
/// The layout `dot`'s accumulator should have so that its sums stay in
/// registers on `target` (warpgroup or warp-level MMA), or null.
BlockedEncodingAttr dotAccumulatorLayout(DotOp dot, const TargetInfo &target);
/// Scratch bytes weft.dot needs on `target` (its operands, and the
/// products of the warp-level path).
int64_t dotScratchBytes(DotOp op, const TargetInfo &target);
/// The masked tile load that `op` is on targets without bulk tensor
/// copies (weft-expand-tensor-descs), in its place.
LoadOp expandDescLoad(mlir::RewriterBase &rewriter, DescLoadOp op);
void populateDotPatterns(const mlir::LLVMTypeConverter &converter,
                         const TileLowering &tiles,
                         mlir::RewritePatternSet &patterns);

} // namespace weft

#endif
