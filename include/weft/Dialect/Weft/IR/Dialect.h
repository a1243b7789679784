//===- Dialect.h - the weft dialect -----------------------------*- C++ -*-===//
#ifndef WEFT_DIALECT_WEFT_IR_DIALECT_H
#define WEFT_DIALECT_WEFT_IR_DIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/TensorEncoding.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include <array>

#include "weft/Dialect/Weft/IR/WeftDialect.h.inc"
#include "weft/Dialect/Weft/IR/WeftEnums.h.inc"

// Attributes first: !weft.shared carries a #weft.swizzled layout.
#define GET_ATTRDEF_CLASSES
#include "weft/Dialect/Weft/IR/WeftAttrDefs.h.inc"

#define GET_TYPEDEF_CLASSES
#include "weft/Dialect/Weft/IR/WeftTypes.h.inc"

namespace weft {

/// The limit on the elements of one tile: 2^16, not Triton's 2^20. Each
/// thread's elements are unrolled (a host program holds the whole tile),
/// so a 2^20-element tile takes minutes to compile and spills on a GPU
/// anyway. The frontend's MAX_TILE_ELEMENTS (python/weft/_semantics.py) is
/// the same number, which python/test/unit/test_language.py checks
/// through the compiler.
constexpr int64_t kMaxTileElements = int64_t(1) << 16;

/// Every tensor among `op`'s operands and results is a tile the compiler
/// can distribute: each dimension a power of two (layouts split dimensions
/// by powers of two), at most kMaxTileElements elements.
mlir::LogicalResult verifyTileShapes(mlir::Operation *op);

/// Every weft op verifies its tiles with verifyTileShapes.
template <typename ConcreteType>
class TileShapes : public mlir::OpTrait::TraitBase<ConcreteType, TileShapes> {
public:
  static mlir::LogicalResult verifyTrait(mlir::Operation *op) {
    return verifyTileShapes(op);
  }
};

} // namespace weft

#define GET_OP_CLASSES
#include "weft/Dialect/Weft/IR/WeftOps.h.inc"

namespace weft {

/// For `!weft.ptr<T>` returns T; for `tensor<SxN!weft.ptr<T>>` returns
/// `tensor<SxNxT>`. Null for anything else.
mlir::Type getPointeeType(mlir::Type ptrLike);
/// i1, or a tensor of i1 shaped like `ptrLike`.
mlir::Type getMaskType(mlir::Type ptrLike);

/// The layouts of the ops that rearrange a tile without moving elements
/// between threads; the verifiers, weft-assign-layouts and the lowering
/// share them. weft.trans's result: `src`'s dimensions permuted as the
/// result's dimension d is the source's order[d].
BlockedEncodingAttr transposedLayout(BlockedEncodingAttr src, llvm::ArrayRef<int32_t> order);
/// weft.join's result: the operands' layout with a new last dimension of 2
/// held within each thread.
BlockedEncodingAttr joinedLayout(BlockedEncodingAttr src);
/// weft.split's results for a source in `src`, or null unless the source's
/// last dimension is held within each thread (as joinedLayout makes it).
BlockedEncodingAttr splitLayout(BlockedEncodingAttr src);

/// Whether `op` takes or makes a tile (a ranked tensor), whose elements
/// layouts distribute over the program's threads.
bool holdsTiles(mlir::Operation *op);

/// acquire, acq_rel, seq_cst.
bool hasAcquire(MemOrder order);
/// release, acq_rel, seq_cst.
bool hasRelease(MemOrder order);
/// `op` acquires: its order does, or it is a weft.barrier (which makes
/// every rank's earlier writes visible).
bool acquires(mlir::Operation *op);

/// Name of the unit attribute that marks a func.func as a kernel entry point.
constexpr llvm::StringLiteral kKernelAttrName = "weft.kernel";
/// On a kernel: its cluster shape, array<i32: x, y, z> (programs launched
/// together whose copies may be shared: weft.desc_async_copy's multicast).
/// The grid must be a whole number of clusters along each axis. Targets
/// without clusters run the programs alone; the results are the same.
constexpr llvm::StringLiteral kClusterAttrName = "weft.cluster";
/// The largest cluster every sm_90 GPU launches.
constexpr int64_t kMaxClusterSize = 8;
/// The cluster shape of `kernel` (1, 1, 1 without the attribute), and the
/// programs in one cluster.
std::array<int64_t, 3> clusterShape(mlir::Operation *kernel);
int64_t clusterSize(mlir::Operation *kernel);
/// On a lowered kernel: the bytes of dynamic shared memory its launches
/// need (its `!weft.shared` buffers); the "kernels" artifact reports it.
constexpr llvm::StringLiteral kDynamicSharedBytesAttrName = "weft.dynamic_shared_bytes";
/// On a lowered kernel whose program has producer warps beside its own
/// (weft.warp_specialize): the threads its launches start, all of them;
/// the "kernels" artifact reports it.
constexpr llvm::StringLiteral kThreadsAttrName = "weft.threads";
/// On a kernel (set by weft-early-start): it waits for the grids its
/// launch depends on before it touches memory, so it may be launched
/// before they finish (weft_launch_config.flags, WEFT_LAUNCH_EARLY_START);
/// the "kernels" artifact reports it.
constexpr llvm::StringLiteral kEarlyStartAttrName = "weft.early_start";

/// On the arguments of a function being lowered: a tensor descriptor, which
/// kernels receive by value (abi.h, weft_tensor_desc).
constexpr llvm::StringLiteral kTensorDescArgAttrName = "weft.tensor_desc";
/// On a kernel: the tensor maps its pipelined loops' bulk copies read from
/// tensor descriptor arguments, {"<argument index>" = plan} (plans encoded
/// by weft/Dialect/Weft/Distribution/SharedMemory.h); the "kernels"
/// artifact reports them for the runtime's encoder.
constexpr llvm::StringLiteral kTensorMapsAttrName = "weft.tensor_maps";

} // namespace weft

#endif // WEFT_DIALECT_WEFT_IR_DIALECT_H
