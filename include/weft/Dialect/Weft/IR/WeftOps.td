//===- WeftOps.td - weft operations ------------------------*- tablegen -*-===//
//
// Every op whose operands are pointers accepts a scalar `!weft.ptr<T>` or a
// ranked tensor of them (a tile); masks, values and results then take the
// tile's shape. Memory orders and scopes default to the weakest meaningful
// choice and are printed only when they differ from it.
//
//===----------------------------------------------------------------------===//
#ifndef WEFT_OPS_TD
#define WEFT_OPS_TD

include "weft/Dialect/Weft/IR/WeftDialect.td"
include "weft/Dialect/Weft/IR/WeftAttrs.td"
include "weft/Dialect/Weft/IR/WeftTypes.td"
include "weft/Dialect/Weft/IR/WeftLayouts.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"

// Every weft op's tiles follow the shape rule (weft::verifyTileShapes).
def Weft_TileShapes : NativeOpTrait<"TileShapes"> { let cppNamespace = "::weft"; }

class Weft_Op<string mnemonic, list<Trait> traits = []>
    : Op<Weft_Dialect, mnemonic, !listconcat(traits, [Weft_TileShapes])>;

// Loads and stores print `order scope` only for ordered accesses: a scope
// means nothing to a weak access.

// Type relations shared by the memory ops.
class PointeeOf<string ptr, string value>
    : TypesMatchWith<value # " has the element type and shape of " # ptr,
                     ptr, value, "::weft::getPointeeType($_self)">;
class MaskOf<string ptr>
    : OptionalTypesMatchWith<"mask has the shape of " # ptr, ptr, "mask",
                     "::weft::getMaskType($_self)">;

//===----------------------------------------------------------------------===//
// Program and job queries. Pure: a launch never changes them.
//===----------------------------------------------------------------------===//

def Weft_RankOp : Weft_Op<"rank", [Pure]> {
  let summary = "this process's rank in the job";
  let results = (outs I32:$result);
  let assemblyFormat = "attr-dict `:` type($result)";
}

def Weft_NumRanksOp : Weft_Op<"num_ranks", [Pure]> {
  let summary = "number of ranks in the job";
  let results = (outs I32:$result);
  let assemblyFormat = "attr-dict `:` type($result)";
}

// The node layout (docs/multinode.md): the job's ranks in order form nodes
// of local_size ranks; loads, stores and atomics reach the ranks of this
// node only.
def Weft_LocalRankOp : Weft_Op<"local_rank", [Pure]> {
  let summary = "this rank's index within its node";
  let results = (outs I32:$result);
  let assemblyFormat = "attr-dict `:` type($result)";
}

def Weft_LocalSizeOp : Weft_Op<"local_size", [Pure]> {
  let summary = "number of ranks per node";
  let results = (outs I32:$result);
  let assemblyFormat = "attr-dict `:` type($result)";
}

def Weft_NodeOp : Weft_Op<"node", [Pure]> {
  let summary = "this rank's node: rank / local_size";
  let results = (outs I32:$result);
  let assemblyFormat = "attr-dict `:` type($result)";
}

def Weft_ProgramIdOp : Weft_Op<"program_id", [Pure]> {
  let summary = "index of this program along a grid axis";
  let arguments = (ins Weft_Axis:$axis);
  let results = (outs I32:$result);
  let assemblyFormat = "$axis attr-dict `:` type($result)";
}

def Weft_NumProgramsOp : Weft_Op<"num_programs", [Pure]> {
  let summary = "number of programs along a grid axis";
  let arguments = (ins Weft_Axis:$axis);
  let results = (outs I32:$result);
  let assemblyFormat = "$axis attr-dict `:` type($result)";
}

//===----------------------------------------------------------------------===//
// Address arithmetic. Pure, so CSE and loop-invariant code motion see them.
//===----------------------------------------------------------------------===//

def Weft_AddPtrOp : Weft_Op<"addptr", [Pure, AllTypesMatch<["ptr", "result"]>]> {
  let summary = "advance a pointer by a number of elements";
  let arguments = (ins Weft_PtrLike:$ptr, Weft_IntLike:$offset);
  let results = (outs Weft_PtrLike:$result);
  let assemblyFormat = "$ptr `,` $offset attr-dict `:` type($ptr) `,` type($offset)";
  let hasVerifier = 1;
}

def Weft_TranslateOp : Weft_Op<"translate", [Pure, AllTypesMatch<["ptr", "result"]>]> {
  let summary = "address of a peer's copy of a symmetric object";
  let description = [{
    `p - heap_base[rank] + heap_base[peer]`, computed from the kernel
    context in registers. Pure: hoisting and CSE apply as to any arithmetic.
    The pointer must point into the symmetric heap.
  }];
  let arguments = (ins Weft_PtrLike:$ptr, I32:$peer);
  let results = (outs Weft_PtrLike:$result);
  let assemblyFormat = "$ptr `,` $peer attr-dict `:` type($ptr)";
  let hasVerifier = 1;
}

def Weft_MulticastOp : Weft_Op<"multicast", [Pure,
    TypesMatchWith<"result is the multicast form of ptr", "ptr", "result",
                   "::weft::PtrType::get(::llvm::cast<::weft::PtrType>($_self).getPointee(), true)">]> {
  let summary = "multicast address of a symmetric object";
  let description = [{
    With NVLS enabled, the address in the multicast mapping that reaches
    every rank's copy; otherwise the pointer itself, and the multimem ops
    that use it fall back to one unicast access per peer.
  }];
  let arguments = (ins Weft_ScalarPtr:$ptr);
  let results = (outs Weft_MulticastPtr:$result);
  let assemblyFormat = "$ptr attr-dict `:` qualified(type($ptr))";
}

//===----------------------------------------------------------------------===//
// Memory accesses.
//===----------------------------------------------------------------------===//

def Weft_LoadOp : Weft_Op<"load", [AttrSizedOperandSegments,
    PointeeOf<"ptr", "result">, MaskOf<"ptr">,
    OptionalTypesMatchWith<"other has the type of the result", "ptr", "other",
                   "::weft::getPointeeType($_self)">]> {
  let summary = "load through a pointer or a tile of pointers";
  let description = [{
    Lanes whose mask is false are not accessed and yield `other` (zero when
    absent). Orders: weak (plain), relaxed, acquire. A weak load may be
    `volatile` (every access happens, none merged) and carry a cache
    modifier (ca, cg, cv, cs) and an eviction policy, hints that targets
    without them ignore.

    ```mlir
    %v = weft.load %p : !weft.ptr<f32>
    %f = weft.load acquire sys %flag : !weft.ptr<i32>
    %t = weft.load %ps, mask %m, other %z : tensor<128x!weft.ptr<f16>>
    %s = weft.load cache cg evict evict_first %ps : tensor<128x!weft.ptr<f16>>
    ```
  }];
  let arguments = (ins Weft_PtrLike:$ptr, Optional<Weft_BoolLike>:$mask,
                   Optional<Weft_ValueLike>:$other,
                   DefaultValuedAttr<Weft_MemOrder, "::weft::MemOrder::weak">:$order,
                   DefaultValuedAttr<Weft_MemScope, "::weft::MemScope::sys">:$scope,
                   OptionalAttr<Weft_CacheModifier>:$cache,
                   OptionalAttr<Weft_EvictionPolicy>:$evict,
                   UnitAttr:$isVolatile);
  let results = (outs Weft_ValueLike:$result);
  let assemblyFormat = [{
    ($order^ $scope)? (`volatile` $isVolatile^)? (`cache` $cache^)? (`evict` $evict^)?
    $ptr (`,` `mask` $mask^)? (`,` `other` $other^)? attr-dict `:` type($ptr)
  }];
  // Passes that make loads carry no hints.
  let builders = [
    OpBuilder<(ins "::mlir::Type":$result, "::mlir::Value":$ptr,
                   "::mlir::Value":$mask, "::mlir::Value":$other,
                   "::weft::MemOrder":$order, "::weft::MemScope":$scope), [{
      build($_builder, $_state, result, ptr, mask, other, order, scope,
            CacheModifierAttr(), EvictionPolicyAttr(), false);
    }]>];
  let hasVerifier = 1;
}

def Weft_StoreOp : Weft_Op<"store", [
    PointeeOf<"ptr", "value">, MaskOf<"ptr">]> {
  let summary = "store through a pointer or a tile of pointers";
  let description = [{
    Orders: weak (plain), relaxed, release. A weak store may be `volatile`
    and carry a cache modifier (wb, cg, cs, wt) and an eviction policy.

    ```mlir
    weft.store %p, %v : !weft.ptr<f32>
    weft.store release sys %ps, %t, mask %m : tensor<64x!weft.ptr<f32>>
    ```
  }];
  let arguments = (ins Weft_PtrLike:$ptr, Weft_ValueLike:$value,
                   Optional<Weft_BoolLike>:$mask,
                   DefaultValuedAttr<Weft_MemOrder, "::weft::MemOrder::weak">:$order,
                   DefaultValuedAttr<Weft_MemScope, "::weft::MemScope::sys">:$scope,
                   OptionalAttr<Weft_CacheModifier>:$cache,
                   OptionalAttr<Weft_EvictionPolicy>:$evict,
                   UnitAttr:$isVolatile);
  let assemblyFormat = [{
    ($order^ $scope)? (`volatile` $isVolatile^)? (`cache` $cache^)? (`evict` $evict^)?
    $ptr `,` $value (`,` `mask` $mask^)? attr-dict `:` type($ptr)
  }];
  let builders = [
    OpBuilder<(ins "::mlir::Value":$ptr, "::mlir::Value":$value,
                   "::mlir::Value":$mask, "::weft::MemOrder":$order,
                   "::weft::MemScope":$scope), [{
      build($_builder, $_state, ptr, value, mask, order, scope,
            CacheModifierAttr(), EvictionPolicyAttr(), false);
    }]>];
  let hasVerifier = 1;
}

def Weft_AtomicRMWOp : Weft_Op<"atomic_rmw", [
    PointeeOf<"ptr", "value">, PointeeOf<"ptr", "result">, MaskOf<"ptr">]> {
  let summary = "atomic read-modify-write; returns the old value";
  let description = [{
    Orders relaxed, acquire, release, acq_rel. Integer kinds need an integer
    element type, `fadd` a float one; `xchg` takes either. On a scalar
    pointer the op executes once per program and every thread sees the
    result.

    ```mlir
    %old = weft.atomic_rmw add acq_rel gpu %p, %one : !weft.ptr<i32>
    ```
  }];
  let arguments = (ins Weft_RMWKind:$kind, Weft_MemOrder:$order,
                   Weft_MemScope:$scope, Weft_PtrLike:$ptr,
                   Weft_ValueLike:$value, Optional<Weft_BoolLike>:$mask);
  let results = (outs Weft_ValueLike:$result);
  let assemblyFormat = [{
    $kind $order $scope $ptr `,` $value (`,` `mask` $mask^)? attr-dict `:` type($ptr)
  }];
  let hasVerifier = 1;
}

def Weft_AtomicCASOp : Weft_Op<"atomic_cas", [
    PointeeOf<"ptr", "cmp">, PointeeOf<"ptr", "value">,
    PointeeOf<"ptr", "result">]> {
  let summary = "atomic compare-and-swap; returns the old value";
  let arguments = (ins Weft_MemOrder:$order, Weft_MemScope:$scope,
                   Weft_PtrLike:$ptr, Weft_ValueLike:$cmp, Weft_ValueLike:$value);
  let results = (outs Weft_ValueLike:$result);
  let assemblyFormat = [{
    $order $scope $ptr `,` $cmp `,` $value attr-dict `:` type($ptr)
  }];
  let hasVerifier = 1;
}

def Weft_FenceOp : Weft_Op<"fence"> {
  let summary = "memory fence";
  let description = [{
    Orders acquire, release, acq_rel, seq_cst. On NVPTX (PTX ISA 8.6):
    `fence.acquire`, `fence.release`, `fence.acq_rel` and `fence.sc` at the
    scope.

    Like every weft op, a fence acts for the whole program: a releasing
    fence orders the earlier accesses of all the program's threads before
    the later writes of any of them, and an acquiring fence makes what any
    thread read before it (the poll of a relaxed `weft.wait`, a tile of
    flags) acquire for all of them. So `wait acquire` is `wait relaxed`
    followed by `fence acquire`. The lowering joins the threads (a CTA
    barrier) before a fence that releases and after one that acquires, and
    every thread fences.
  }];
  let arguments = (ins Weft_MemOrder:$order, Weft_MemScope:$scope);
  let assemblyFormat = "$order $scope attr-dict";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Program-level synchronisation.
//===----------------------------------------------------------------------===//

def Weft_SignalOp : Weft_Op<"signal", [PointeeOf<"ptr", "value">]> {
  let summary = "set or add to a flag, releasing the program's writes";
  let description = [{
    Executes once per program. With `release`, every write the program made
    before the signal (by any of its threads) is visible to whoever acquires
    the flag: the lowering joins the program's threads, then one thread
    performs the release operation.

    With `peer`, the flag is `peer`'s copy of the symmetric object at
    `ptr`: in-node an atomic on the translated address; in a module
    compiled `weft.multinode`, a peer on another node gets the engine's
    signal (NVSHMEM on NVPTX, the runtime's MPI engine on the host), which
    with `release` first completes the program's earlier puts.

    ```mlir
    weft.signal add release sys %flag, %one : !weft.ptr<i64>
    weft.signal set release sys %flag, %epoch peer %p : !weft.ptr<i64>
    ```
  }];
  let arguments = (ins Weft_SignalKind:$kind, Weft_MemOrder:$order,
                   Weft_MemScope:$scope, Weft_ScalarPtr:$ptr,
                   AnySignlessInteger:$value, Optional<I32>:$peer);
  let assemblyFormat = [{
    $kind $order $scope $ptr `,` $value (`peer` $peer^)? attr-dict `:` qualified(type($ptr))
  }];
  let hasVerifier = 1;
}

def Weft_WaitOp : Weft_Op<"wait", [PointeeOf<"ptr", "value">,
                                   PointeeOf<"ptr", "result">]> {
  let summary = "wait until a flag satisfies a condition; returns the value seen";
  let description = [{
    One thread polls `*ptr <cmp> value` with relaxed loads; with `acquire`
    it then acquires, and the program's threads join, so everything
    released before the awaited signal is visible to all of them. If the
    runtime set a wait timeout, an expired wait records the flag, the
    expected and the last seen value for the runtime and returns.

    ```mlir
    %seen = weft.wait ge acquire sys %flag, %epoch : !weft.ptr<i64>
    ```
  }];
  let arguments = (ins Weft_WaitPredicate:$cmp, Weft_MemOrder:$order,
                   Weft_MemScope:$scope, Weft_ScalarPtr:$ptr,
                   AnySignlessInteger:$value);
  let results = (outs AnySignlessInteger:$result);
  let assemblyFormat = "$cmp $order $scope $ptr `,` $value attr-dict `:` qualified(type($ptr))";
  let hasVerifier = 1;
}

def Weft_BarrierOp : Weft_Op<"barrier"> {
  let summary = "barrier across every program of the launch on every rank";
  let description = [{
    Every program of the grid, on every rank, must reach it (all programs
    must be resident). Writes before the barrier are visible to every
    program after it, on every rank. Counters live in the runtime-reserved
    region of the heap and are never reset, so launches need no re-zeroing.
  }];
  let assemblyFormat = "attr-dict";
}

//===----------------------------------------------------------------------===//
// Bulk one-sided transfers: what reaches a peer on another node.
//===----------------------------------------------------------------------===//

def Weft_PutOp : Weft_Op<"put", [AttrSizedOperandSegments]> {
  let summary = "copy bytes into a peer's copy of a symmetric object";
  let description = [{
    The whole program copies `nbytes` from this rank's `src` (any memory of
    this rank) into `peer`'s copy of the symmetric object at `dst`. The put
    is non-blocking: neither `src` may change nor `peer`'s `dst` be read
    until a `weft.quiet` (or a releasing fence) of this program, or until
    the receiver acquires the signal. With `signal`, `peer`'s copy of the
    64-bit flag at `signal` is set to, or added `value`, once the bytes are
    there, so a `weft.wait ... acquire` on it makes them visible
    (docs/memory-model.md, "Across nodes").

    A peer of this node is reached by the program's stores (and the signal
    by a release atomic); in a module compiled `weft.multinode`, a peer on
    another node by the engine: NVSHMEM's `nvshmemx_putmem[_signal]_nbi_block`
    on NVPTX, the runtime's `weft_host_engine` on the host.

    ```mlir
    weft.put %dst, %src, %nbytes, %peer : !weft.ptr<f32>, !weft.ptr<f32>
    weft.put %dst, %src, %nbytes, %peer signal set %flag, %epoch : !weft.ptr<f32>, !weft.ptr<f32>
    ```
  }];
  let arguments = (ins Weft_ScalarPtr:$dst, Weft_ScalarPtr:$src, I64:$nbytes, I32:$peer,
                   OptionalAttr<Weft_SignalKind>:$signal_kind,
                   Optional<Weft_ScalarPtr>:$signal, Optional<I64>:$signal_value);
  let assemblyFormat = [{
    $dst `,` $src `,` $nbytes `,` $peer
    (`signal` $signal_kind^ $signal `,` $signal_value)?
    attr-dict `:` qualified(type($dst)) `,` qualified(type($src)) (`,` qualified(type($signal))^)?
  }];
  let hasVerifier = 1;
}

def Weft_GetOp : Weft_Op<"get"> {
  let summary = "copy bytes out of a peer's copy of a symmetric object";
  let description = [{
    The whole program copies `nbytes` of `peer`'s copy of the symmetric
    object at `src` into this rank's `dst` (any memory of this rank); the
    bytes are there for every thread of the program when it returns. In
    node: the program's loads; off node (`weft.multinode`): NVSHMEM's
    `nvshmemx_getmem_block`, or the host engine's get.

    ```mlir
    weft.get %dst, %src, %nbytes, %peer : !weft.ptr<f32>, !weft.ptr<f32>
    ```
  }];
  let arguments = (ins Weft_ScalarPtr:$dst, Weft_ScalarPtr:$src, I64:$nbytes, I32:$peer);
  let assemblyFormat = [{
    $dst `,` $src `,` $nbytes `,` $peer attr-dict `:` qualified(type($dst)) `,` qualified(type($src))
  }];
}

def Weft_QuietOp : Weft_Op<"quiet"> {
  let summary = "complete every earlier put of the program";
  let description = [{
    Every put the program made before is complete: its bytes are at the
    peer, and its source may be reused. Every thread fences at system scope
    (the in-node puts' stores) and, in a `weft.multinode` module, the
    engine completes its transfers (`nvshmem_quiet`, the host engine's
    quiet); the threads then join.
  }];
  let assemblyFormat = "attr-dict";
}

def Weft_DependencyWaitOp : Weft_Op<"dependency_wait"> {
  let summary = "wait for the kernels this launch depends on";
  let description = [{
    A launch that starts early (the runtime's WEFT_LAUNCH_EARLY_START) may
    begin while the kernel before it on its stream is still running. This
    op waits until that kernel has completed and its writes are visible,
    for every thread of the program. weft-early-start puts one in each
    kernel ahead of its first access to memory other than the program's
    own shared memory. sm_90: `griddepcontrol.wait`; on targets whose
    launches never start early, nothing.
  }];
  let assemblyFormat = "attr-dict";
}

//===----------------------------------------------------------------------===//
// NVSwitch multimem (NVLS). Values are vectors of the pointee type whose
// width is one the hardware has; see the verifier.
//===----------------------------------------------------------------------===//

def Weft_MultimemLdReduceOp : Weft_Op<"multimem_ld_reduce"> {
  let summary = "load from every rank's copy and reduce";
  let description = [{
    f16/bf16 reductions accumulate in f32 (`.acc::f32`). Orders relaxed,
    acquire; scope sys (the copies live on other GPUs).

    ```mlir
    %s = weft.multimem_ld_reduce add relaxed sys %m : !weft.ptr<bf16, multicast> -> vector<8xbf16>
    ```
  }];
  let arguments = (ins Weft_MultimemReduce:$kind, Weft_MemOrder:$order,
                   Weft_MemScope:$scope, Weft_MulticastPtr:$ptr);
  let results = (outs AnyType:$result);
  let assemblyFormat = "$kind $order $scope $ptr attr-dict `:` qualified(type($ptr)) `->` type($result)";
  let hasVerifier = 1;
}

def Weft_MultimemStoreOp : Weft_Op<"multimem_store"> {
  let summary = "store the same value to every rank's copy";
  let arguments = (ins Weft_MemOrder:$order, Weft_MemScope:$scope,
                   Weft_MulticastPtr:$ptr, AnyType:$value);
  let assemblyFormat = "$order $scope $ptr `,` $value attr-dict `:` qualified(type($ptr)) `,` type($value)";
  let hasVerifier = 1;
}

def Weft_MultimemRedOp : Weft_Op<"multimem_red"> {
  let summary = "reduce a value into every rank's copy";
  let arguments = (ins Weft_MultimemReduce:$kind, Weft_MemOrder:$order,
                   Weft_MemScope:$scope, Weft_MulticastPtr:$ptr, AnyType:$value);
  let assemblyFormat = "$kind $order $scope $ptr `,` $value attr-dict `:` qualified(type($ptr)) `,` type($value)";
  let hasVerifier = 1;
}

include "weft/Dialect/Weft/IR/WeftTileOps.td"
include "weft/Dialect/Weft/IR/WeftProgramOps.td"

#endif // WEFT_OPS_TD
