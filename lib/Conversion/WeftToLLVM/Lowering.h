//===- Lowering.h - shared state of the weft -> LLVM patterns ---*- C++ -*-===//
#ifndef WEFT_PASSES_WEFTTOLLVM_LOWERING_H
#define WEFT_PASSES_WEFTTOLLVM_LOWERING_H

#include "weft/Conversion/TargetInfo.h"
#include "weft/Dialect/Weft/Distribution/SharedMemory.h"

#include "mlir/Conversion/LLVMCommon/Pattern.h"
#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Transforms/DialectConversion.h"

namespace weft {

/// What every weft op pattern needs: the target and the helpers that turn
/// program-level semantics into per-thread code.
class Lowering {
public:
  explicit Lowering(const TargetInfo &target) : target(target) {}

  const TargetInfo &target;

  /// The hidden arguments of the function around `op`.
  HiddenArgs hiddenArgs(mlir::Operation *op) const;

  /// Runs `body` in one thread of the program (of a weft.warp_specialize's
  /// region, where `b` inserts into one) and gives its results to every
  /// thread. With `releaseBefore`, the program's threads join first so
  /// that a release in `body` covers all of their writes; with `joinAfter`
  /// they join afterwards so that what `body` acquired is visible to all.
  llvm::SmallVector<mlir::Value>
  oncePerProgram(mlir::OpBuilder &b, mlir::Location loc,
                 mlir::TypeRange resultTypes, bool releaseBefore,
                 bool joinAfter,
                 llvm::function_ref<llvm::SmallVector<mlir::Value>()> body) const;

  /// Joins the program's threads (nothing on the host): where `b` inserts
  /// into a weft.warp_specialize, those of the region's warps.
  void joinProgram(mlir::OpBuilder &b, mlir::Location loc) const;
  /// A fence for the whole program: every thread fences at `scope`, and the
  /// threads join before it when it releases (so it covers all of their
  /// earlier writes) and after it when it acquires (so what it acquired is
  /// visible to all of them).
  void fenceProgram(mlir::OpBuilder &b, mlir::Location loc, MemOrder order,
                    MemScope scope) const;

  /// Polls `*flag <pred> expected` with relaxed loads at `scope` until it
  /// holds and returns the value seen. If the context has a wait timeout
  /// and it expires (or another wait of this rank already gave up), records
  /// the wait in the reserved region's weft_wait_error and returns.
  mlir::Value poll(mlir::OpBuilder &b, mlir::Location loc, mlir::Operation *op,
                   mlir::Value flag, mlir::Value expected, WaitPredicate pred,
                   MemScope scope) const;

  /// `for (i = 0; i < upper; ++i) body(i)`, with LLVM blocks; i has
  /// upper's type (i32 or i64).
  void forEach(mlir::OpBuilder &b, mlir::Location loc, mlir::Value upper,
               llvm::function_ref<void(mlir::Value)> body) const;
  /// The same loop carrying values: starts from `inits`, `body(i, carried)`
  /// returns the next ones; returns the values after the last iteration.
  /// Keeps accumulators in registers (no alloca, whose address space
  /// differs between targets).
  llvm::SmallVector<mlir::Value>
  forEach(mlir::OpBuilder &b, mlir::Location loc, mlir::Value upper,
          mlir::ValueRange inits,
          llvm::function_ref<llvm::SmallVector<mlir::Value>(mlir::Value,
                                                            mlir::ValueRange)>
              body) const;

  /// Address of `ptr`'s copy on `peer`: ptr - heap_base[rank] + heap_base[peer].
  /// With debug checks, a peer of another node (heap_base[peer] 0) stops
  /// the program too.
  mlir::Value translate(mlir::OpBuilder &b, mlir::Location loc,
                        mlir::Operation *op, mlir::Value ptr,
                        mlir::Value peer) const;

  /// Whether `peer` (i32) is on this rank's node: its heap is mapped here.
  mlir::Value inNode(mlir::OpBuilder &b, mlir::Location loc, mlir::Operation *op,
                     mlir::Value peer) const;
  /// The program's threads copy `nbytes` (i64) from `src` to `dst` (weak
  /// accesses, 16 bytes at a time where all three allow it).
  void copyBytes(mlir::OpBuilder &b, mlir::Location loc, mlir::Value dst,
                 mlir::Value src, mlir::Value nbytes) const;
  /// With debug checks: stops the program unless `peer` is a rank and
  /// [ptr, ptr + nbytes) lies in this rank's heap (`ptr` then names the
  /// same range of `peer`'s); a null `nbytes` checks `ptr` alone.
  void checkRange(mlir::OpBuilder &b, mlir::Location loc, mlir::Operation *op,
                  mlir::Value ptr, mlir::Value nbytes, mlir::Value peer) const;
  /// An engine operation's i32 status (TargetInfo::offNode*; null where the
  /// engine has none): a non-zero one is the kind of the debug record the
  /// program writes before it stops.
  void stopOnStatus(mlir::OpBuilder &b, mlir::Location loc, mlir::Operation *op,
                    mlir::Value status, mlir::Value peer, mlir::Value ptr) const;
  /// The engine completes the program's off-node puts (TargetInfo::
  /// offNodeQuiet, with its status checked): by every thread, or by one
  /// after the threads joined.
  void quietEngine(mlir::OpBuilder &b, mlir::Location loc, mlir::Operation *op) const;
  /// Sets or adds `value` to the flag at `ptr` (this node's memory) with a
  /// weft order and scope: a signal's one operation.
  void signalFlag(mlir::OpBuilder &b, mlir::Location loc, SignalKind kind,
                  mlir::Value ptr, mlir::Value value, MemOrder order,
                  MemScope scope) const;
  /// `inNode()` where every peer is on this node (a module without
  /// weft.multinode); else a uniform branch on whether `peer`'s heap is
  /// mapped here, between it and `offNode()`.
  void byPlacement(mlir::OpBuilder &b, mlir::Location loc, mlir::Operation *op,
                   mlir::Value peer, llvm::function_ref<void()> inNode,
                   llvm::function_ref<void()> offNode) const;
  /// One thread sets or adds `value` to `peer`'s copy of the flag at `ptr`
  /// (this rank's address): signalFlag through the translated address on
  /// this node, the engine's signal beyond it (after the engine completes
  /// the program's puts when `quietFirst`).
  void signalPeer(mlir::OpBuilder &b, mlir::Location loc, mlir::Operation *op,
                  mlir::Value ptr, mlir::Value value, mlir::Value peer,
                  SignalKind kind, MemOrder order, MemScope scope,
                  bool quietFirst) const;
  /// The debug checks' failure path: when `badPeer` or `badPtr` holds, the
  /// first failure of the launch on this rank fills weft_debug_error (with
  /// `peer`, the i64 `pointer` and the op's location) and the program
  /// returns; the builder ends on the path where both are false.
  void stopUnlessValid(mlir::OpBuilder &b, mlir::Location loc,
                       mlir::Operation *op, mlir::Value badPeer,
                       mlir::Value badPtr, mlir::Value peer,
                       mlir::Value pointer) const;
  /// The same for any failure `failed` of kind `kind` (weft_debug_error's,
  /// i32), its record's location naming `message` too (weft.assert).
  void stopIf(mlir::OpBuilder &b, mlir::Location loc, mlir::Operation *op, mlir::Value failed,
              mlir::Value kind, mlir::Value peer, mlir::Value pointer,
              llvm::StringRef message) const;
  /// This rank's runtime-reserved region (weft_reserved), as a global pointer.
  mlir::Value reservedRegion(mlir::OpBuilder &b, mlir::Location loc,
                             mlir::Operation *op) const;
  mlir::Value contextField(mlir::OpBuilder &b, mlir::Location loc,
                           mlir::Operation *op, size_t offset,
                           mlir::Type type) const;
  /// Atomic load/store of a scalar with a weft order and scope.
  mlir::Value load(mlir::OpBuilder &b, mlir::Location loc, mlir::Type type,
                   mlir::Value ptr, MemOrder order, MemScope scope) const;
  void store(mlir::OpBuilder &b, mlir::Location loc, mlir::Value value,
             mlir::Value ptr, MemOrder order, MemScope scope) const;
};

/// Base of the weft op patterns: an LLVM conversion pattern with access to
/// the shared Lowering.
template <typename Op>
class WeftPattern : public mlir::ConvertOpToLLVMPattern<Op> {
public:
  WeftPattern(const mlir::LLVMTypeConverter &converter, const Lowering &lowering)
      : mlir::ConvertOpToLLVMPattern<Op>(converter), lowering(lowering) {}

protected:
  const Lowering &lowering;
};

/// !weft.ptr<T> (any pointee) becomes the target's global pointer, a
/// !weft.tensordesc the pointer to the by-value parameter.
void addPointerConversion(mlir::LLVMTypeConverter &converter,
                          const TargetInfo &target);

void populateMemoryPatterns(const mlir::LLVMTypeConverter &converter,
                            const Lowering &lowering,
                            mlir::RewritePatternSet &patterns);
void populateSynchronizationPatterns(const mlir::LLVMTypeConverter &converter,
                                     const Lowering &lowering,
                                     mlir::RewritePatternSet &patterns);
void populateMultimemPatterns(const mlir::LLVMTypeConverter &converter,
                              const Lowering &lowering,
                              mlir::RewritePatternSet &patterns);
void populateTransferPatterns(const mlir::LLVMTypeConverter &converter,
                              const Lowering &lowering,
                              mlir::RewritePatternSet &patterns);

} // namespace weft

#endif
