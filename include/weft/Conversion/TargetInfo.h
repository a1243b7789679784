//===- TargetInfo.h - what differs between NVPTX, AMDGPU and host -*- C++ -*-===//
//
// The weft -> LLVM lowering is written once; every place where the three
// targets differ (how a program finds its id, how threads of a program
// synchronise, how an ordered atomic is spelled, how a wait passes time) is
// a virtual method here, implemented in lib/Conversion/WeftToLLVM/
// TargetInfo*.cpp. What a target has, and the layouts its instructions
// want, are TargetSpec's and DotPlan.h's, which distribution reads too.
//
//===----------------------------------------------------------------------===//
#ifndef WEFT_CONVERSION_TARGETINFO_H
#define WEFT_CONVERSION_TARGETINFO_H

#include "weft/Dialect/Weft/IR/Dialect.h"
#include "weft/Target/Target.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"
#include <array>
#include <memory>
#include <optional>

namespace weft {

/// Values every lowered function receives as hidden trailing arguments.
struct HiddenArgs {
  mlir::Value context; ///< `ptr` to the weft_kernel_context.
  mlir::Value program; ///< host only: `ptr` to the weft_host_program.
};

/// The hints of a weak global access (weft.load and weft.store's cache,
/// evict and volatile).
struct AccessHints {
  std::optional<CacheModifier> cache;
  std::optional<EvictionPolicy> evict;
  bool isVolatile = false;

  template <typename Op>
  static AccessHints of(Op op) {
    return {op.getCache(), op.getEvict(), op.getIsVolatile()};
  }
  bool any() const { return cache || evict || isVolatile; }
};

class TargetInfo {
public:
  explicit TargetInfo(const CompileTarget &target) : target(target) {}
  virtual ~TargetInfo();

  static std::unique_ptr<TargetInfo> create(const CompileTarget &target);
  /// The TargetInfo of the target stamped on the module holding `op`
  /// (weft/Dialect/Weft/IR/CompileTarget.h); an error on `op` if invalid.
  static mlir::FailureOr<std::unique_ptr<TargetInfo>> forModule(mlir::Operation *op);

  const CompileTarget &getCompileTarget() const { return target; }
  const TargetSpec &getSpec() const { return target.spec; }
  const KernelOptions &getOptions() const { return target.options; }
  /// One thread per program (the host): no leader election, broadcast or
  /// intra-program barriers are needed.
  bool singleThreadPrograms() const { return target.threadsPerProgram() == 1; }
  /// The threads of `split`'s producer warps, which follow the program's
  /// own (their ids start at threadsPerProgram).
  int64_t producerThreads(WarpSpecializeOp split) const {
    return split.getProducerWarps() * getSpec().warpSize();
  }

  mlir::LLVM::LLVMPointerType globalPtrType(mlir::MLIRContext *ctx) const;
  /// What a function holds of a parameter the runtime passes by value (the
  /// kernel context, tensor descriptors): a pointer to it.
  virtual mlir::LLVM::LLVMPointerType byValueParamType(mlir::MLIRContext *ctx) const;
  /// Types of the hidden trailing arguments of every function.
  virtual llvm::SmallVector<mlir::Type> hiddenArgTypes(mlir::MLIRContext *ctx) const;
  /// Marks a lowered kernel as an entry point and sets the attributes of its
  /// by-value parameters (byval + grid_constant, byref, ...): the context
  /// (the last) and those marked kTensorDescArgAttrName. The host target
  /// instead emits the weft_host_kernel_fn wrapper.
  virtual void finalizeKernel(mlir::LLVM::LLVMFuncOp kernel,
                              mlir::OpBuilder &b) const = 0;

  virtual mlir::Value programId(mlir::OpBuilder &b, mlir::Location loc,
                                Axis axis, const HiddenArgs &hidden) const = 0;
  virtual mlir::Value numPrograms(mlir::OpBuilder &b, mlir::Location loc,
                                  Axis axis, const HiddenArgs &hidden) const = 0;
  /// Linear thread index within the program (0 on the host).
  virtual mlir::Value threadId(mlir::OpBuilder &b, mlir::Location loc) const = 0;
  /// Joins every thread of the program, ordering their memory accesses at
  /// CTA scope; with `threads`, only that many, which meet at hardware
  /// barrier `id` (the warps of one of weft.warp_specialize's regions).
  /// No-op on the host.
  virtual void programBarrier(mlir::OpBuilder &b, mlir::Location loc, int64_t threads = 0,
                              unsigned id = 0) const = 0;

  /// LLVM syncscope for a weft scope ("" = system).
  virtual llvm::StringRef syncScope(MemScope scope) const = 0;
  /// An atomic read-modify-write with the given order and scope.
  virtual mlir::Value atomicRMW(mlir::OpBuilder &b, mlir::Location loc,
                                RMWKind kind, mlir::Value ptr, mlir::Value value,
                                MemOrder order, MemScope scope) const;
  virtual void fence(mlir::OpBuilder &b, mlir::Location loc, MemOrder order,
                     MemScope scope) const;
  /// The most consecutive elements of `elemType` that one relaxed
  /// reduction (an atomic whose old values nobody reads) may update: 1
  /// where the target has no vector form of `kind`.
  virtual unsigned reductionWidth(RMWKind kind, mlir::Type elemType) const { return 1; }
  /// That reduction: `values` (at most reductionWidth of them) into the
  /// consecutive elements from `ptr`, each a relaxed atomic at `scope`.
  virtual void reduceVector(mlir::OpBuilder &b, mlir::Location loc, RMWKind kind,
                            mlir::Value ptr, mlir::ValueRange values, MemScope scope) const {}

  /// A tile access: a load or store of a vector (or scalar) `type` whose
  /// every element is a relaxed access at `scope`, with no order between the
  /// elements. The default is a volatile access (each aligned element is
  /// single-copy atomic on AMDGPU and x86, which is all relaxed asks for).
  virtual mlir::Value loadRelaxed(mlir::OpBuilder &b, mlir::Location loc,
                                  mlir::Type type, mlir::Value ptr,
                                  unsigned alignment, MemScope scope) const;
  virtual void storeRelaxed(mlir::OpBuilder &b, mlir::Location loc,
                            mlir::Value value, mlir::Value ptr,
                            unsigned alignment, MemScope scope) const;
  /// A weak global access of `type` (a scalar, or a vector of at most 16
  /// bytes) with `hints`. The default is a plain access, volatile where
  /// asked; cache hints are the targets' that have them.
  virtual mlir::Value loadHinted(mlir::OpBuilder &b, mlir::Location loc, mlir::Type type,
                                 mlir::Value ptr, unsigned alignment,
                                 const AccessHints &hints) const;
  virtual void storeHinted(mlir::OpBuilder &b, mlir::Location loc, mlir::Value value,
                           mlir::Value ptr, unsigned alignment,
                           const AccessHints &hints) const;
  /// Whether a weak masked access is one llvm.masked.load/store per group
  /// of elements, which the code generator expands after the optimiser: a
  /// host program holds a whole tile, and the optimiser's time grows
  /// faster than the branches of element-wise predication (a masked
  /// 1024-element tile: 23 s against 0.5 s). GPU threads hold a few
  /// elements each and keep the explicit form (one vector when every lane
  /// is on).
  virtual bool masksAccessesAsVectors() const { return false; }
  /// Prints `format` (a C format string) with `args` (i32, i64 or f64)
  /// from this thread: the C library's printf on the host, vprintf on
  /// NVPTX, OCKL's hostcall printf on AMDGPU. `op` is the printing op.
  virtual void printf(mlir::OpBuilder &b, mlir::Location loc, mlir::Operation *op,
                      llvm::StringRef format, mlir::ValueRange args) const = 0;
  /// The i32 `value` of the lane whose index is this lane's xor `laneMask`
  /// (a butterfly step of a warp reduction). GPU targets only.
  virtual mlir::Value shuffleXor(mlir::OpBuilder &b, mlir::Location loc,
                                 mlir::Value value, unsigned laneMask) const;

  /// Nanoseconds from a clock that advances while the program spins.
  virtual mlir::Value timerNs(mlir::OpBuilder &b, mlir::Location loc) const = 0;
  /// Inside a polling loop: lets other work (host threads) make progress.
  virtual void pollPause(mlir::OpBuilder &b, mlir::Location loc) const = 0;

  /// The warp-level matrix multiply-accumulate (tensor cores) of
  /// weft/Dialect/Weft/Distribution/DotPlan.h's mmaShape and mmaFragments:
  /// d = a * b + c for one warp, in the instruction's fragment layout: a
  /// and b as packed i32 registers (4 and 2 for m16n8k16) or vectors of 4
  /// elements (LaneBlocks), c and the result 4 f32 per lane. Only called
  /// when mmaShape(elemType).
  virtual llvm::SmallVector<mlir::Value> mma(mlir::OpBuilder &b, mlir::Location loc,
                                             mlir::Type elemType, mlir::ValueRange a,
                                             mlir::ValueRange bRegs,
                                             mlir::ValueRange c) const;

  /// mma()'s a and b registers straight from shared memory: `count` 8x8
  /// matrices of 16-bit elements, one register each, every lane giving
  /// the address of one matrix row (lanes 8i..8i+7 for matrix i), and
  /// transposed when `transpose` (NVPTX: ldmatrix). Only called when
  /// mmaShape().
  virtual llvm::SmallVector<mlir::Value> loadMatrices(mlir::OpBuilder &b, mlir::Location loc,
                                                      mlir::Value rowAddress, unsigned count,
                                                      bool transpose) const;
  /// Asynchronous global-to-shared copies (cp.async on sm_90): asyncCopy
  /// starts copying `bytes` (4, 8 or 16, aligned) from global `src` to
  /// shared `dst`, of which only the first `srcBytes` (an i32, when given)
  /// are read and the rest are zeros; asyncCommit closes the group of copies started since the
  /// last; asyncWait waits until at most `pending` groups are incomplete.
  /// Without them (TargetSpec::hasAsyncCopy) weft.async_copy copies at once.
  virtual void asyncCopy(mlir::OpBuilder &b, mlir::Location loc, mlir::Value dst,
                         mlir::Value src, unsigned bytes,
                         mlir::Value srcBytes = {}) const;
  virtual void asyncCommit(mlir::OpBuilder &b, mlir::Location loc) const {}
  virtual void asyncWait(mlir::OpBuilder &b, mlir::Location loc, unsigned pending) const {}

  /// The multimem instruction for `op` (a weft.multimem_* op) on the
  /// multicast address `mptr`; returns the loaded value of an ld_reduce.
  /// Only called when TargetSpec::hasMultimem().
  virtual mlir::Value multimem(mlir::OpBuilder &b, mlir::Location loc,
                               mlir::Operation *op, mlir::Value mptr,
                               mlir::Value value) const;

  /// The job's engine, for a peer on another node (weft.multinode modules;
  /// docs/multinode.md): NVSHMEM's device functions on NVPTX, the runtime's
  /// weft_host_engine on the host. Addresses are this rank's addresses of
  /// symmetric objects (dst of a put, src of a get, flags), the other side
  /// any memory of this rank; nbytes is an i64, peer an i32. Each returns an
  /// i32 status where the engine has one (the host's: 0, else a
  /// WEFT_DEBUG_* kind whose record the caller writes), else null. `op` is
  /// the operation lowered (for declarations).
  ///
  /// offNodePut and offNodeGet are called by every thread of the program
  /// (NVSHMEM's block-wide calls). The put is non-blocking; with a `flag`
  /// (i64), peer's copy of it is then set to or increased by `value` (i64)
  /// once the bytes are there. The get's bytes are in dst on return.
  virtual mlir::Value offNodePut(mlir::OpBuilder &b, mlir::Location loc,
                                 mlir::Operation *op, const HiddenArgs &hidden,
                                 mlir::Value dst, mlir::Value src, mlir::Value nbytes,
                                 mlir::Value peer, mlir::Value flag, mlir::Value value,
                                 SignalKind kind) const;
  virtual mlir::Value offNodeGet(mlir::OpBuilder &b, mlir::Location loc,
                                 mlir::Operation *op, const HiddenArgs &hidden,
                                 mlir::Value dst, mlir::Value src, mlir::Value nbytes,
                                 mlir::Value peer) const;
  /// One thread: sets or adds `value` (the flag's width) to peer's copy of
  /// `flag`; with `release`, the program's earlier puts complete first.
  virtual mlir::Value offNodeSignal(mlir::OpBuilder &b, mlir::Location loc,
                                    mlir::Operation *op, const HiddenArgs &hidden,
                                    mlir::Value flag, mlir::Value value, mlir::Value peer,
                                    SignalKind kind, bool release) const;
  /// Completes the program's earlier puts; called by every thread.
  virtual mlir::Value offNodeQuiet(mlir::OpBuilder &b, mlir::Location loc,
                                   mlir::Operation *op, const HiddenArgs &hidden) const;

protected:
  CompileTarget target;
};

} // namespace weft

#endif // WEFT_CONVERSION_TARGETINFO_H
