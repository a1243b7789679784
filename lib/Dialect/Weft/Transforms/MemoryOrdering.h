//===- MemoryOrdering.h - what the co-optimisations know about memory -----===//
//
// The weft memory ops declare no MemoryEffects (MLIR would then treat a
// relaxed load like a plain one and CSE polling loops away), so for MLIR
// they have unknown effects. The passes use these helpers instead: which
// ops touch memory at all, which write, and the lattice of orders and
// scopes used to merge fences and signals.
//
//===----------------------------------------------------------------------===//
#ifndef WEFT_LIB_DIALECT_WEFT_TRANSFORMS_MEMORYORDERING_H
#define WEFT_LIB_DIALECT_WEFT_TRANSFORMS_MEMORYORDERING_H

#include "weft/Dialect/Weft/IR/Dialect.h"

namespace weft {

/// Least upper bound in  weak < relaxed < {acquire, release} < acq_rel <
/// seq_cst: an op with the joined order orders at least what either did.
MemOrder joinOrders(MemOrder a, MemOrder b);
/// The wider of two scopes: cta < gpu < sys.
MemScope joinScopes(MemScope a, MemScope b);
/// `a` covers at least the threads `b` covers.
inline bool scopeCovers(MemScope a, MemScope b) {
  return static_cast<int>(a) >= static_cast<int>(b);
}

/// Neither reads nor writes memory, also in nested regions (pure
/// arithmetic, address computation, rank queries): such ops never separate
/// two memory operations.
bool isMemoryFree(mlir::Operation *op);

/// The nearest op before / after `op` in its block that is not memory-free,
/// or null when there is none (the block's start; its end, a memory-free
/// terminator included).
mlir::Operation *prevMemoryOp(mlir::Operation *op);
mlir::Operation *nextMemoryOp(mlir::Operation *op);

/// May `op` (or an op nested in it) write memory without itself being a
/// release of at least `scope`? A release write (release store, signal,
/// atomic; weft.barrier, which releases at sys) orders every earlier write
/// of the program before it for whoever observes it; any other write, a
/// call or an op of unknown effect returns true. Loads, waits and fences
/// return false (a wait's timeout record belongs to the runtime).
bool writesWithoutRelease(mlir::Operation *op, MemScope scope);

/// A `weft.wait` with the given order whose result nobody reads: only its
/// termination matters, not which of the satisfying values it saw.
bool isWaitWithUnusedResult(mlir::Operation *op,
                            std::optional<MemOrder> order = std::nullopt);

} // namespace weft

#endif // WEFT_LIB_DIALECT_WEFT_TRANSFORMS_MEMORYORDERING_H
