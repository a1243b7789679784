//===- TileLowering.h - lowering distributed tiles --------------*- C++ -*-===//
//
// Patterns for tensors that weft-assign-layouts distributed: every such
// tensor becomes the struct of the elements one thread holds (TileLayout),
// and every tile op becomes per-element code, plus shuffles and shared
// memory where threads exchange elements.
//
//===----------------------------------------------------------------------===//
#ifndef WEFT_CONVERSION_WEFTTOLLVM_TILELOWERING_H
#define WEFT_CONVERSION_WEFTTOLLVM_TILELOWERING_H

#include "Lowering.h"
#include "TileValues.h"

#include "weft/Analysis/AxisInfo.h"
#include "weft/Dialect/Weft/Distribution/DotPlan.h"
#include "weft/Dialect/Weft/Distribution/SharedMemory.h"

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

  /// The warps of a weft.reduce or weft.scan (`op`, of operands in
  /// `layout`) share their partials along its axis through the scratch
  /// (warpPartials: how many, where). `partials[l * slots + s]` is a tuple
  /// (an element per operand) of the line whose first element is
  /// `firsts[l]`, in slot s; every lane of a warp along the axis holds it,
  /// and one thread of the warp writes it. After the barrier, `gather`
  /// receives a slot's tuples of all the warps, in their order along the
  /// axis, and returns what the thread keeps of them: the results, in the
  /// order of `partials`.
  llvm::SmallVector<llvm::SmallVector<mlir::Value>>
  acrossWarps(mlir::OpBuilder &b, mlir::Location loc, mlir::Operation *op,
              const TileLayout &layout, llvm::ArrayRef<unsigned> firsts,
              llvm::ArrayRef<llvm::SmallVector<mlir::Value>> partials,
              llvm::function_ref<llvm::SmallVector<mlir::Value>(
                  llvm::ArrayRef<llvm::SmallVector<mlir::Value>>)>
                  gather) const;

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
  /// Stores this thread's `elements` of a 2-D tile of `type` into the
  /// shared buffer `buffer` at `base`, where sharedElementOffset places
  /// them (a bulk store's block, weft.desc_store with `bulk`).
  void storeShared(mlir::OpBuilder &b, mlir::Location loc, mlir::Value base,
                   SharedType buffer, mlir::RankedTensorType type,
                   mlir::ValueRange elements) const;

private:
  /// The stores of both: runs of consecutive elements along the row
  /// (rowVectorWidth of `shape`), each at `addressOf(its first element's
  /// coordinates)`.
  void storeRuns(mlir::OpBuilder &b, mlir::Location loc, mlir::Type elemType,
                 mlir::RankedTensorType type, mlir::ValueRange elements,
                 llvm::ArrayRef<int64_t> shape,
                 llvm::function_ref<mlir::Value(llvm::ArrayRef<mlir::Value>)> addressOf) const;
};

/// A reduce's or scan's combine region applied to two tuples of elements
/// (one per operand), its ops cloned at the builder's place.
class Combiner {
public:
  Combiner(mlir::OpBuilder &b, mlir::Block &body);
  llvm::SmallVector<mlir::Value> operator()(mlir::ValueRange lhs, mlir::ValueRange rhs);

private:
  mlir::OpBuilder &b;
  mlir::Block &body;
};

/// A scalar of any width up to 64 bits from the lane whose index differs
/// from this one's by xor `laneMask` (through 32-bit shuffles).
mlir::Value shuffleXor(mlir::OpBuilder &b, mlir::Location loc, const TargetInfo &target,
                       mlir::Value value, unsigned laneMask);
/// Product of `counts` over the dimensions before `dim` in `order`: the
/// stride between neighbours along `dim` in the linear lane/warp index.
unsigned strideOf(llvm::ArrayRef<unsigned> counts, llvm::ArrayRef<unsigned> order,
                  unsigned dim);
/// This thread's place along parent dimension `dim` of `layout`: its lane
/// among the lanes of its warp, and its warp among the warps of the
/// program, that hold distinct parts of `dim` (replicas share places).
struct PlaceAlong {
  mlir::Value lane, warp;
};
PlaceAlong placeAlong(mlir::OpBuilder &b, mlir::Location loc, const TileLayout &layout,
                      unsigned dim, const TargetInfo &target);

/// Replaces `op` by the tile of `elements` (the struct its result becomes).
void replaceWithTile(mlir::ConversionPatternRewriter &rewriter,
                     mlir::Operation *op, const mlir::TypeConverter &converter,
                     mlir::ValueRange elements);

/// The benefit of tile patterns: above the scalar weft patterns, which do
/// not handle tiles; and of a vendor's patterns (NVPTX/), above those
/// every target shares where both lower an op.
constexpr unsigned kTileBenefit = 2;
constexpr unsigned kVendorBenefit = 3;

template <typename Op>
class TilePattern : public mlir::ConvertOpToLLVMPattern<Op> {
public:
  TilePattern(const mlir::LLVMTypeConverter &converter, const TileLowering &tiles,
              unsigned benefit = kTileBenefit)
      : mlir::ConvertOpToLLVMPattern<Op>(converter, benefit), tiles(tiles) {}

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

/// The float8 formats (Float8ToLLVM.cpp): whether `op` is an extf, truncf
/// or bitcast with a float8 side; that op on one converted element; a
/// constant's attribute with float8 values as their bytes; arithmetic on
/// float8 refused; the scalar patterns.
bool isFloat8Conversion(mlir::Operation *op);
mlir::Value lowerFloat8Element(mlir::OpBuilder &b, mlir::Location loc, mlir::Operation *op,
                               mlir::Value in);
mlir::TypedAttr float8Bits(mlir::Builder &b, mlir::Attribute value);
mlir::LogicalResult checkFloat8(mlir::Operation *op);
void populateFloat8Patterns(const mlir::LLVMTypeConverter &converter,
                            mlir::RewritePatternSet &patterns);
/// Hints, assumptions, assertions, printing and inline assembly.
void populateProgramOpPatterns(const mlir::LLVMTypeConverter &converter,
                               const TileLowering &tiles, mlir::RewritePatternSet &patterns);

/// Reports tile ops the lowering cannot handle, before it starts.
mlir::LogicalResult checkTileLowerable(mlir::Operation *op,
                                       const TargetInfo &target);

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
/// The address of what placeSharedBuffers placed at `op` in its kernel's
/// dynamic shared memory (a buffer, barriers, an exchange's scratch);
/// null where it placed nothing.
mlir::Value dynamicSharedAddress(mlir::OpBuilder &b, mlir::Operation *op);
/// Where the shared-memory allocation `op` (weft.alloc_shared,
/// weft.alloc_mbarriers) lives: in a kernel on a target with dynamic shared
/// memory, its place there (placeSharedBuffers); elsewhere a static
/// shared-memory array of its own; on the host a stack slot of the program.
mlir::Value sharedAllocation(mlir::ConversionPatternRewriter &rewriter, mlir::Operation *op,
                             const TargetInfo &target);
/// `!weft.shared` buffers become shared-memory pointers (the host: plain
/// pointers to the program's stack).
void addSharedBufferConversion(mlir::LLVMTypeConverter &converter,
                               const TargetInfo &target);
/// Global tile accesses and atomics, and async copies into shared buffers.
void populateTileMemoryPatterns(const mlir::LLVMTypeConverter &converter,
                                const TileLowering &tiles,
                                mlir::RewritePatternSet &patterns);
/// Shared buffers, the groups of async copies, and the fallbacks of
/// sm_90's proxy fence and cluster barrier on other targets.
void populateSharedBufferPatterns(const mlir::LLVMTypeConverter &converter,
                                  const TileLowering &tiles, mlir::RewritePatternSet &patterns);
void populateReducePatterns(const mlir::LLVMTypeConverter &converter,
                            const TileLowering &tiles,
                            mlir::RewritePatternSet &patterns);
/// weft.scan, and weft.trans, join, split and flip.
void populateScanPatterns(const mlir::LLVMTypeConverter &converter, const TileLowering &tiles,
                          mlir::RewritePatternSet &patterns);
void populateRearrangePatterns(const mlir::LLVMTypeConverter &converter,
                               const TileLowering &tiles, mlir::RewritePatternSet &patterns);
/// The byte offset (i32) of element (row, col) of a 2-D tile in shared
/// memory as weft.dot reads it (SharedMemory.h: padded rows, or the
/// buffer's #weft.swizzled layout).
mlir::Value sharedElementOffset(mlir::OpBuilder &b, mlir::Location loc,
                                mlir::ShapedType tile, mlir::Value row,
                                mlir::Value col);
void populateDotPatterns(const mlir::LLVMTypeConverter &converter,
                         const TileLowering &tiles,
                         mlir::RewritePatternSet &patterns);

} // namespace weft

#endif
