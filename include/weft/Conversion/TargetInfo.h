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
  /// CTA scope. No-op on the host.
  virtual void programBarrier(mlir::OpBuilder &b, mlir::Location loc) const = 0;

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
  /// The i32 `value` of the lane whose index is this lane's xor `laneMask`
  /// (a butterfly step of a warp reduction). GPU targets only.
  virtual mlir::Value shuffleXor(mlir::OpBuilder &b, mlir::Location loc,
                                 mlir::Value value, unsigned laneMask) const;

  /// Waits until the kernels this launch depends on have completed and
  /// their writes are visible; nothing where launches never start early.
  virtual void waitForDependencies(mlir::OpBuilder &b, mlir::Location loc) const {}

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
  /// Warpgroup matrix multiply-accumulate (sm_90 wgmma), which reads both
  /// operands from shared memory by descriptor, in DotPlan.h's
  /// warpgroupOperandLayout: acc += a * b for one m64 x n x k16 step of the warpgroup: a K-major
  /// and b N-major in shared memory (64-bit descriptors), acc the n / 2
  /// f32 this thread holds. Asynchronous: warpgroupFence goes before the
  /// first, warpgroupCommit after the last, and warpgroupWait returns the
  /// accumulators once at most `pending` committed groups are in flight
  /// (on targets without warpgroup MMA: as they are).
  virtual llvm::SmallVector<mlir::Value>
  warpgroupMma(mlir::OpBuilder &b, mlir::Location loc, mlir::Type elemType, int64_t n,
               mlir::Value descA, mlir::Value descB, mlir::ValueRange acc) const;
  virtual void warpgroupFence(mlir::OpBuilder &b, mlir::Location loc) const;
  virtual void warpgroupCommit(mlir::OpBuilder &b, mlir::Location loc) const;
  virtual llvm::SmallVector<mlir::Value> warpgroupWait(mlir::OpBuilder &b, mlir::Location loc,
                                                       unsigned pending,
                                                       mlir::ValueRange acc) const;

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

  /// Bulk tensor copies (sm_90 TMA) and the barriers they complete on.
  /// tensorCopy starts copying the box at `coords` (i32, innermost
  /// dimension first) of the tensor map at `tensorMap` into shared `dst`,
  /// its bytes counted against `barrier`; with `ctaMask` (an i16 of
  /// cluster ranks) into `dst` and against `barrier` at the same places in
  /// each of those programs of the cluster. The barrier calls are what one
  /// thread does: initialise `barriers` for `arrivals` arrivals per phase
  /// (visible to the copy engine; the program joins after; with
  /// `afterReads`, the program's accesses before the last join are also
  /// ordered before the copies that follow: a pipeline run again over
  /// buffers it read), arrive expecting `bytes`
  /// more bytes in the phase, and invalidate; barrierWait is every
  /// thread's wait for the phase of parity `phase` (i32) to complete, and
  /// barrierArrive every thread's arrival (releasing its earlier accesses,
  /// also to the copies of whoever waits for the phase), which counts once
  /// per warp. asyncProxyFence is every thread's fence that orders what
  /// it acquired before its later copies (weft.async_proxy_fence). Only
  /// called when TargetSpec::hasTensorCopies().
  virtual void tensorCopy(mlir::OpBuilder &b, mlir::Location loc, mlir::Value dst,
                          mlir::Value tensorMap, mlir::ValueRange coords,
                          mlir::Value barrier, mlir::Value ctaMask = {}) const;
  virtual void barrierInit(mlir::OpBuilder &b, mlir::Location loc, mlir::ValueRange barriers,
                           unsigned arrivals, bool afterReads) const;
  virtual void barrierArriveExpect(mlir::OpBuilder &b, mlir::Location loc,
                                   mlir::Value barrier, int64_t bytes) const;
  virtual void barrierWait(mlir::OpBuilder &b, mlir::Location loc, mlir::Value barrier,
                           mlir::Value phase) const;
  virtual void barrierArrive(mlir::OpBuilder &b, mlir::Location loc, mlir::Value barrier) const;
  virtual void barrierInval(mlir::OpBuilder &b, mlir::Location loc,
                            mlir::Value barrier) const;
  virtual void asyncProxyFence(mlir::OpBuilder &b, mlir::Location loc) const;

  /// Clusters of programs launched together (sm_90 thread block clusters,
  /// weft.cluster): the program's rank in its cluster (i32), and every
  /// thread's arrival at (releasing its earlier accesses where `release`,
  /// weft.cluster_arrive) and wait on the cluster's barrier. Only called
  /// when TargetSpec::hasClusters(); elsewhere a cluster is one program.
  virtual mlir::Value clusterRank(mlir::OpBuilder &b, mlir::Location loc) const;
  virtual void clusterArrive(mlir::OpBuilder &b, mlir::Location loc, bool release) const;
  virtual void clusterWait(mlir::OpBuilder &b, mlir::Location loc) const;

  /// The multimem instruction for `op` (a weft.multimem_* op) on the
  /// multicast address `mptr`; returns the loaded value of an ld_reduce.
  /// Only called when TargetSpec::hasMultimem().
  virtual mlir::Value multimem(mlir::OpBuilder &b, mlir::Location loc,
                               mlir::Operation *op, mlir::Value mptr,
                               mlir::Value value) const;

protected:
  CompileTarget target;
};

} // namespace weft

#endif // WEFT_CONVERSION_TARGETINFO_H
