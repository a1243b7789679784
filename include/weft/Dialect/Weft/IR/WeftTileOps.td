//===- WeftTileOps.td - tile (tensor) operations -----------*- tablegen -*-===//
//
// The shape operations a Triton-like frontend needs besides upstream
// arith/math on tensors. Results are spelled out rather than inferred: after
// weft-assign-layouts they carry layouts the op constrains but does not
// determine (a make_range may take any layout), and the verifiers check the
// constraints.
//
//===----------------------------------------------------------------------===//
#ifndef WEFT_TILE_OPS_TD
#define WEFT_TILE_OPS_TD

include "mlir/Interfaces/ControlFlowInterfaces.td"

def Weft_Scalar : AnyTypeOf<[AnySignlessInteger, AnyFloat, Weft_PtrType],
                            "integer, float or weft pointer">;
def Weft_Tile : RankedTensorOf<[AnySignlessInteger, AnyFloat, Weft_PtrType]>;
def Weft_NumericTile : RankedTensorOf<[AnySignlessInteger, AnyFloat]>;

def Weft_MakeRangeOp : Weft_Op<"make_range", [Pure]> {
  let summary = "the 1-D tile of i32 values start, start+1, ..., end-1";
  let description = [{
    ```mlir
    %offs = weft.make_range 0, 128 : tensor<128xi32>
    ```
  }];
  let arguments = (ins I32Attr:$start, I32Attr:$end);
  let results = (outs RankedTensorOf<[I32]>:$result);
  let assemblyFormat = "$start `,` $end attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Weft_SplatOp : Weft_Op<"splat", [Pure]> {
  let summary = "a tile whose every element is one scalar";
  let description = [{
    ```mlir
    %ps = weft.splat %p : !weft.ptr<f32> -> tensor<128x!weft.ptr<f32>>
    ```
  }];
  let arguments = (ins Weft_Scalar:$src);
  let results = (outs Weft_Tile:$result);
  let assemblyFormat = "$src attr-dict `:` type($src) `->` type($result)";
  let hasVerifier = 1;
}

def Weft_BroadcastOp : Weft_Op<"broadcast", [Pure]> {
  let summary = "repeat a tile along its dimensions of size 1";
  let description = [{
    Every dimension of the result equals the source's, or the source's is 1.

    ```mlir
    %b = weft.broadcast %row : tensor<1x128xf32> -> tensor<64x128xf32>
    ```
  }];
  let arguments = (ins Weft_Tile:$src);
  let results = (outs Weft_Tile:$result);
  let assemblyFormat = "$src attr-dict `:` type($src) `->` type($result)";
  let hasVerifier = 1;
}

def Weft_ExpandDimsOp : Weft_Op<"expand_dims", [Pure]> {
  let summary = "insert a dimension of size 1 (x[:, None])";
  let description = [{
    ```mlir
    %col = weft.expand_dims %r axis = 1 : tensor<64xi32> -> tensor<64x1xi32>
    ```
  }];
  let arguments = (ins Weft_Tile:$src, I32Attr:$axis);
  let results = (outs Weft_Tile:$result);
  let assemblyFormat = [{
    $src `axis` `=` $axis attr-dict `:` type($src) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Weft_ReshapeOp : Weft_Op<"reshape", [Pure]> {
  let summary = "the same elements, in row-major order, in another shape";
  let description = [{
    ```mlir
    %m = weft.reshape %v : tensor<128xf32> -> tensor<8x16xf32>
    ```
  }];
  let arguments = (ins Weft_Tile:$src);
  let results = (outs Weft_Tile:$result);
  let assemblyFormat = "$src attr-dict `:` type($src) `->` type($result)";
  let hasVerifier = 1;
}

def Weft_ConvertLayoutOp : Weft_Op<"convert_layout", [Pure]> {
  let summary = "redistribute a tile over the program's threads";
  let description = [{
    Same shape and elements, another layout; lowered through shared memory
    when threads must exchange elements.

    ```mlir
    %b = weft.convert_layout %a : tensor<128xf32, #A> -> tensor<128xf32, #B>
    ```
  }];
  let arguments = (ins Weft_Tile:$src);
  let results = (outs Weft_Tile:$result);
  let assemblyFormat = "$src attr-dict `:` type($src) `->` type($result)";
  let hasVerifier = 1;
}

def Weft_ReduceOp : Weft_Op<"reduce", [RecursiveMemoryEffects,
                                       SingleBlock]> {
  let summary = "combine tiles' elements along one axis";
  let description = [{
    The combine region takes two elements of each operand (all of the first
    element's, then all of the second's) and yields their combination with
    `weft.reduce.return`; it must be associative and commutative, since the
    order in which threads combine is the lowering's choice. The operands
    share a shape (and layout); several are reduced together, as an argmax
    reduces values with their indices. Reducing 1-D tiles yields scalars,
    shared by every thread of the program.

    ```mlir
    %sums = weft.reduce %t axis = 1 : tensor<64x128xf32> -> tensor<64xf32> {
    ^bb0(%a: f32, %b: f32):
      %s = arith.addf %a, %b : f32
      weft.reduce.return %s : f32
    }
    ```
  }];
  let arguments = (ins Variadic<Weft_NumericTile>:$srcs, I32Attr:$axis);
  let results = (outs Variadic<AnyTypeOf<[AnySignlessInteger, AnyFloat,
                                          Weft_NumericTile]>>:$results);
  let regions = (region SizedRegion<1>:$combine);
  let assemblyFormat = [{
    $srcs `axis` `=` $axis attr-dict `:` type($srcs) `->` type($results) $combine
  }];
  let hasRegionVerifier = 1;
  let extraClassDeclaration = [{
    /// The first operand: its shape and layout are every operand's.
    mlir::RankedTensorType getSrcType() {
      return mlir::cast<mlir::RankedTensorType>(getSrcs().front().getType());
    }
  }];
}

def Weft_ScanOp : Weft_Op<"scan", [RecursiveMemoryEffects, SingleBlock]> {
  let summary = "inclusive scans of tiles along one axis";
  let description = [{
    Element i of each result along `axis` combines elements 0..i of the
    operands (i..n-1 with `reverse`), with the combine region as
    weft.reduce has it; the region must be associative (not necessarily
    commutative: the scan keeps the order). Results have the operands'
    shapes.

    ```mlir
    %c = weft.scan %t axis = 0 : tensor<128xi32> -> tensor<128xi32> {
    ^bb0(%a: i32, %b: i32):
      %s = arith.addi %a, %b : i32
      weft.scan.return %s : i32
    }
    ```
  }];
  let arguments = (ins Variadic<Weft_NumericTile>:$srcs, I32Attr:$axis, UnitAttr:$reverse);
  let results = (outs Variadic<Weft_NumericTile>:$results);
  let regions = (region SizedRegion<1>:$combine);
  let assemblyFormat = [{
    $srcs `axis` `=` $axis (`reverse` $reverse^)? attr-dict `:` type($srcs) `->` type($results)
    $combine
  }];
  let hasRegionVerifier = 1;
  let extraClassDeclaration = [{
    mlir::RankedTensorType getSrcType() {
      return mlir::cast<mlir::RankedTensorType>(getSrcs().front().getType());
    }
  }];
}

def Weft_TransOp : Weft_Op<"trans", [Pure]> {
  let summary = "a tile with its dimensions permuted";
  let description = [{
    Result dimension d is source dimension `order[d]` (`x.T` of a 2-D tile
    is order [1, 0]). A distributed result has the source's layout with its
    dimensions permuted the same way, so no element moves between threads.

    ```mlir
    %t = weft.trans %x, [1, 0] : tensor<16x64xf32> -> tensor<64x16xf32>
    ```
  }];
  let arguments = (ins Weft_Tile:$src, DenseI32ArrayAttr:$order);
  let results = (outs Weft_Tile:$result);
  let assemblyFormat = "$src `,` $order attr-dict `:` type($src) `->` type($result)";
  let hasVerifier = 1;
}

def Weft_JoinOp : Weft_Op<"join", [Pure, AllTypesMatch<["lhs", "rhs"]>]> {
  let summary = "two tiles as one with a new last dimension of 2";
  let description = [{
    Element (i..., 0) of the result is lhs's (i...), (i..., 1) rhs's. A
    distributed result has the operands' layout with the new dimension
    held within each thread, so no element moves between threads.

    ```mlir
    %j = weft.join %a, %b : tensor<64xf32> -> tensor<64x2xf32>
    ```
  }];
  let arguments = (ins Weft_Tile:$lhs, Weft_Tile:$rhs);
  let results = (outs Weft_Tile:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($lhs) `->` type($result)";
  let hasVerifier = 1;
}

def Weft_SplitOp : Weft_Op<"split", [Pure, AllTypesMatch<["lhs", "rhs"]>]> {
  let summary = "the two halves of a tile whose last dimension is 2";
  let description = [{
    weft.join undone: lhs (i...) is the source's (i..., 0), rhs its
    (i..., 1). A distributed source holds its last dimension within each
    thread (weft-assign-layouts converts it there).

    ```mlir
    %a, %b = weft.split %j : tensor<64x2xf32> -> tensor<64xf32>
    ```
  }];
  let arguments = (ins Weft_Tile:$src);
  let results = (outs Weft_Tile:$lhs, Weft_Tile:$rhs);
  let assemblyFormat = "$src attr-dict `:` type($src) `->` type($lhs)";
  let hasVerifier = 1;
}

def Weft_FlipOp : Weft_Op<"flip", [Pure, AllTypesMatch<["src", "result"]>]> {
  let summary = "a tile reversed along one axis";
  let description = [{
    Element i along `axis` of the result is element n - 1 - i of the
    source; elements move between threads through shared memory.

    ```mlir
    %r = weft.flip %x axis = 0 : tensor<64xf32>
    ```
  }];
  let arguments = (ins Weft_Tile:$src, I32Attr:$axis);
  let results = (outs Weft_Tile:$result);
  let assemblyFormat = "$src `axis` `=` $axis attr-dict `:` type($src)";
  let hasVerifier = 1;
}

def Weft_DotOperand : AnyTypeOf<[Weft_NumericTile, Weft_SharedType],
                                "tile or shared-memory buffer">;

def Weft_DotOp : Weft_Op<"dot", [Pure]> {
  let summary = "tile matrix multiply-accumulate: result = c + a @ b";
  let description = [{
    `a` is MxK, `b` KxN, `c` and the result MxN. `a` and `b` share one
    element type, f16, bf16 or f32; `c` and the result are f32, and the
    products are summed in f32. `a` and `b` may have any layouts; the
    result has `c`'s. `a` and `b` may instead be shared-memory buffers
    (`!weft.shared`, filled by `weft.async_copy` and made visible by
    `weft.async_wait`): the product reads its fragments from there.

    ```mlir
    %d = weft.dot %a, %b, %c : tensor<64x32xbf16>, tensor<32x16xbf16>,
                               tensor<64x16xf32> -> tensor<64x16xf32>
    ```
  }];
  let arguments = (ins Weft_DotOperand:$a, Weft_DotOperand:$b,
                       Weft_NumericTile:$c);
  let results = (outs Weft_NumericTile:$result);
  let assemblyFormat = [{
    $a `,` $b `,` $c attr-dict `:` qualified(type($a)) `,` qualified(type($b)) `,` type($c)
    `->` type($result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Tensor descriptors: blocks of a strided tensor, bounds-checked by the
// hardware where it has bulk tensor copies and by masks elsewhere.
//===----------------------------------------------------------------------===//

def Weft_DescLoadOp : Weft_Op<"desc_load", [MemoryEffects<[MemRead]>]> {
  let summary = "load one block of a tensor descriptor";
  let description = [{
    Element `idx` of the result is the tensor's element `offsets + idx`
    (one offset per dimension, outermost first), or zero where that lies
    outside the tensor (negative coordinates included). A weak load.

    ```mlir
    %t = weft.desc_load %a[%m, %k] : !weft.tensordesc<128x64xbf16> -> tensor<128x64xbf16>
    ```
  }];
  let arguments = (ins Weft_TensorDescType:$desc, Variadic<I32>:$offsets);
  let results = (outs Weft_NumericTile:$result);
  let assemblyFormat = [{
    $desc `[` $offsets `]` attr-dict `:` qualified(type($desc)) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Weft_DescStoreOp : Weft_Op<"desc_store", [MemoryEffects<[MemWrite]>]> {
  let summary = "store one block of a tensor descriptor";
  let description = [{
    The tensor's element `offsets + idx` receives element `idx` of `value`
    where it lies inside the tensor; nothing is written elsewhere. A weak
    store.

    With `bulk` (weft-plan-bulk-stores, sm_90), the threads write the
    block into shared memory and one of them starts a bulk tensor copy of
    it to global memory, which completes asynchronously: the program goes
    on while the copy engine writes. Such a store's shared memory is
    rewritten only once the program's earlier bulk stores have read it,
    and the program ends only after that (`weft.bulk_store_wait`).

    ```mlir
    weft.desc_store %c[%m, %n], %t : !weft.tensordesc<128x64xbf16>, tensor<128x64xbf16>
    ```
  }];
  let arguments = (ins Weft_TensorDescType:$desc, Variadic<I32>:$offsets,
                       Weft_NumericTile:$value, UnitAttr:$bulk);
  let assemblyFormat = [{
    $desc `[` $offsets `]` `,` $value attr-dict `:` qualified(type($desc)) `,` type($value)
  }];
  let hasVerifier = 1;
}

def Weft_BulkStoreWaitOp : Weft_Op<"bulk_store_wait", [MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "wait until the program's bulk stores have read their shared memory";
  let description = [{
    The thread that started the program's bulk stores (`weft.desc_store`
    with `bulk`) waits until each has read the shared memory it copies
    from, which may then be reused or released. weft-plan-bulk-stores puts
    one before each return of a kernel with bulk stores. With `written`
    it waits until they have written global memory and orders those
    writes before its later accesses (a proxy fence): what a release after
    it (a `weft.signal` or `weft.fence` that releases, which joins the
    program first) then publishes; weft-plan-bulk-stores puts one before
    each.

    ```mlir
    weft.bulk_store_wait
    weft.bulk_store_wait written
    ```
  }];
  let arguments = (ins UnitAttr:$written);
  let assemblyFormat = "(`written` $written^)? attr-dict";
}

def Weft_DescBaseOp : Weft_Op<"desc_base", [Pure]> {
  let summary = "the address of a tensor descriptor's element 0";
  let description = [{
    16-byte aligned (the runtime checks it). With `weft.desc_dim` and
    `weft.desc_stride`, what the block accesses of targets without bulk
    tensor copies are computed from.

    ```mlir
    %p = weft.desc_base %a : !weft.tensordesc<128x64xbf16> -> !weft.ptr<bf16>
    ```
  }];
  let arguments = (ins Weft_TensorDescType:$desc);
  let results = (outs Weft_PtrType:$result);
  let assemblyFormat = "$desc attr-dict `:` qualified(type($desc)) `->` qualified(type($result))";
  let hasVerifier = 1;
}

class Weft_DescFieldOp<string mnemonic, string what> : Weft_Op<mnemonic, [Pure]> {
  let summary = "the " # what # " of a tensor descriptor along one dimension";
  let arguments = (ins Weft_TensorDescType:$desc, ConfinedAttr<I32Attr, [IntNonNegative]>:$dim);
  let results = (outs I64:$result);
  let assemblyFormat = "$desc `,` $dim attr-dict `:` qualified(type($desc))";
  let hasVerifier = 1;
}

def Weft_DescDimOp : Weft_DescFieldOp<"desc_dim", "elements"> {
  let description = [{
    ```mlir
    %rows = weft.desc_dim %a, 0 : !weft.tensordesc<128x64xbf16>
    ```
  }];
}

def Weft_DescStrideOp : Weft_DescFieldOp<"desc_stride", "elements between neighbours"> {
  let description = [{
    Every stride but the last (which is 1) spans a multiple of 16 bytes
    (the runtime checks it).

    ```mlir
    %pitch = weft.desc_stride %a, 0 : !weft.tensordesc<128x64xbf16>
    ```
  }];
}

//===----------------------------------------------------------------------===//
// Asynchronous copies into shared memory: what weft-pipeline-dot-operands
// makes of a K loop's operand loads. Program-level like every weft op: the
// copies of all the program's threads form one group.
//===----------------------------------------------------------------------===//

def Weft_AllocSharedOp : Weft_Op<"alloc_shared", [MemoryEffects<[MemAlloc]>]> {
  let summary = "a buffer for one tile in the program's shared memory";
  let description = [{
    With `bulk`, bulk copies (`weft.desc_async_copy`) fill it: the async
    proxy writes it, so placeSharedBuffers gives it room that memory the
    threads access never shares.
  }];
  let arguments = (ins UnitAttr:$bulk);
  let results = (outs Weft_SharedType:$result);
  let assemblyFormat = "attr-dict `:` qualified(type($result))";
}

def Weft_AsyncCopyOp : Weft_Op<"async_copy", [
    MemoryEffects<[MemRead, MemWrite]>, MaskOf<"ptr">]> {
  let summary = "start copying a tile from global memory into a shared buffer";
  let description = [{
    Element (i, j) of `dst` receives `*ptr[i, j]`, or zero where `mask` is
    false (nothing is read there). The copy is asynchronous: it belongs to
    the group the next `weft.async_commit` closes, and `dst` may be read
    only after a `weft.async_wait` that leaves that group complete. Where
    the target has no asynchronous copies it completes at once.

    ```mlir
    weft.async_copy %ptrs, %buf, mask %m : tensor<64x32x!weft.ptr<bf16>>, !weft.shared<64x32xbf16>
    ```
  }];
  let arguments = (ins RankedTensorOf<[Weft_PtrType]>:$ptr, Weft_SharedType:$dst,
                       Optional<RankedTensorOf<[I1]>>:$mask);
  let assemblyFormat = [{
    $ptr `,` $dst (`,` `mask` $mask^)? attr-dict `:` type($ptr) `,` qualified(type($dst))
  }];
  let hasVerifier = 1;
}

def Weft_AsyncCommitOp : Weft_Op<"async_commit", [MemoryEffects<[MemWrite]>]> {
  let summary = "close the group of the copies started since the last one";
  let assemblyFormat = "attr-dict";
}

def Weft_AsyncWaitOp : Weft_Op<"async_wait", [MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "wait until at most `pending` copy groups are incomplete";
  let description = [{
    Then the program joins, so that every thread's completed copies are
    visible to all and every thread is done with what it read before (the
    buffers of older groups may be refilled). Groups complete in order.

    ```mlir
    weft.async_wait 1
    ```
  }];
  let arguments = (ins ConfinedAttr<I32Attr, [IntNonNegative]>:$pending);
  let assemblyFormat = "$pending attr-dict";
}

def Weft_ReleaseSharedOp : Weft_Op<"release_shared", [MemoryEffects<[MemFree]>]> {
  let summary = "end the life of shared buffers";
  let description = [{
    Every copy into the buffers completes, then the program joins, so that
    no thread still reads or writes them. From here on their room may hold
    other buffers and exchanges (placeSharedBuffers); a buffer never
    released keeps its room to the end of its function.

    ```mlir
    weft.release_shared %a, %b : !weft.shared<64x32xbf16>, !weft.shared<32x64xbf16>
    ```
  }];
  let arguments = (ins Variadic<Weft_SharedType>:$buffers);
  let assemblyFormat = "$buffers attr-dict `:` qualified(type($buffers))";
}

def Weft_AllocMBarriersOp : Weft_Op<"alloc_mbarriers", [MemoryEffects<[MemAlloc, MemWrite]>]> {
  let summary = "barriers in the program's shared memory, ready for use";
  let description = [{
    Each expects `arrivals` arrivals per phase and starts in phase 0. One
    thread initialises them and the program joins, so every thread may use
    them after the op. `weft.inval_mbarriers` ends their life.

    With `after_reads`, the buffers that the copies completing on them
    fill were read by the program before (an earlier run of a pipeline in
    a loop, ended by a join): the initialisation orders those reads before
    the copies, which on sm_90 write through another proxy.

    ```mlir
    %b:2 = weft.alloc_mbarriers {arrivals = 2 : i32} : !weft.mbarrier, !weft.mbarrier
    ```
  }];
  let arguments = (ins ConfinedAttr<I32Attr, [IntPositive]>:$arrivals, UnitAttr:$after_reads);
  let results = (outs Variadic<Weft_MBarrierType>:$barriers);
  let assemblyFormat = "attr-dict `:` type($barriers)";
}

def Weft_InvalMBarriersOp : Weft_Op<"inval_mbarriers", [MemoryEffects<[MemFree]>]> {
  let summary = "end the life of barriers";
  let description = [{
    The program joins, so that no thread still waits or arrives, and no
    arrival or wait may follow. Their memory may then be initialised
    again (a loop around the pipelined one allocates them anew).

    ```mlir
    weft.inval_mbarriers %b#0, %b#1 : !weft.mbarrier, !weft.mbarrier
    ```
  }];
  let arguments = (ins Variadic<Weft_MBarrierType>:$barriers);
  let assemblyFormat = "$barriers attr-dict `:` type($barriers)";
}

def Weft_DescAsyncCopyOp : Weft_Op<"desc_async_copy", [MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "start copying a block of a tensor descriptor into a shared buffer";
  let description = [{
    If `pred` holds, the program starts copying the block at `offsets`
    (zeros outside the tensor, as `weft.desc_load`) into `dst` and
    arrives at `barrier` once; the phase that arrival belongs to completes
    only when the copy's bytes have landed, after which `weft.mbarrier_wait`
    makes them visible. Without `pred` nothing happens. Only targets with
    bulk tensor copies (sm_90) have it.

    With `multicast`, the programs of the kernel's cluster (`weft.cluster`)
    share the copy: the block, `pred`, and the places of `dst` and
    `barrier` must be the same in each of them. Each program copies its
    share of the block (a slice of the tensor map's outermost box
    dimension, which the map's box already is) into every program's
    `dst`, and each program's `barrier` still counts the whole block's
    bytes. A program may then start a shared copy only once every program
    of the cluster is done with the buffers it refills (`weft.cluster_arrive`
    and `weft.cluster_wait`, or an empty barrier that every program's
    warps arrive at: `weft.mbarrier_arrive` with `cluster`).

    ```mlir
    weft.desc_async_copy %a[%m, %k], %buf, %bar, %in_range
        : !weft.tensordesc<128x64xbf16>, !weft.shared<128x64xbf16, #weft.swizzled<bytes = 128, warps = 8>>
    ```
  }];
  let arguments = (ins Weft_TensorDescType:$desc, Variadic<I32>:$offsets,
                       Weft_SharedType:$dst, Weft_MBarrierType:$barrier, I1:$pred,
                       UnitAttr:$multicast);
  let assemblyFormat = [{
    $desc `[` $offsets `]` `,` $dst `,` $barrier `,` $pred attr-dict `:`
    qualified(type($desc)) `,` qualified(type($dst))
  }];
  let hasVerifier = 1;
}

def Weft_AsyncProxyFenceOp : Weft_Op<"async_proxy_fence", [MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "order what the program acquired before its later bulk tensor copies";
  let description = [{
    Bulk tensor copies (`weft.desc_async_copy` on sm_90) read global
    memory through the async proxy, which an acquire (a `weft.wait`, an
    acquiring fence, load or atomic, a `weft.barrier`) does not order: the
    writes it made visible are visible to the program's generic loads
    only. After this op, every thread's later copies also see them.
    weft-fence-tensor-copies puts one after each acquire that such a copy
    may follow. sm_90: `fence.proxy.async.global` in every thread;
    on targets without tensor copies, nothing.

    ```mlir
    %seen = weft.wait ge acquire sys %flag, %epoch : !weft.ptr<i64>
    weft.async_proxy_fence
    ```
  }];
  let assemblyFormat = "attr-dict";
}

def Weft_MBarrierWaitOp : Weft_Op<"mbarrier_wait", [MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "wait for a barrier's phase, then join the program";
  let description = [{
    Every thread waits until the phase of `barrier` whose parity is
    `phase` (0 or 1) has completed, which makes the bytes copied into it
    visible, and what the threads that arrived at it (`weft.mbarrier_arrive`)
    did before; then, unless `join` is false, the program joins, so that
    every thread is done with what it read before (a buffer read earlier
    may be refilled). A pipeline orders its refills otherwise where it
    does not join: with barriers the readers arrive at, or with the
    cluster's barrier where copies are shared across a cluster.

    With `copier`, only the thread that starts the program's copies
    (`weft.desc_async_copy`) waits, so that those it starts next follow
    the phase while the others go on; it cannot join the program.

    ```mlir
    weft.mbarrier_wait %bar, %parity
    weft.mbarrier_wait %empty, %parity {copier, join = false}
    ```
  }];
  let arguments = (ins Weft_MBarrierType:$barrier, I32:$phase,
                       DefaultValuedAttr<BoolAttr, "true">:$join, UnitAttr:$copier);
  let assemblyFormat = "$barrier `,` $phase attr-dict";
  let hasVerifier = 1;
}

def Weft_MBarrierArriveOp : Weft_Op<"mbarrier_arrive", [MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "arrive at a barrier once done with what was read before";
  let description = [{
    Every thread of the program arrives at `barrier`, releasing its
    earlier accesses (loads included: a buffer it read may then be
    refilled by a thread that waits for the phase, bulk copies included,
    which on sm_90 write through another proxy). The barrier counts one
    arrival per warp, once all the warp's threads have arrived: a barrier
    the whole program arrives at expects `num_warps` arrivals per phase.
    With `async_reads`, the threads read the buffers they are done with
    only through the async proxy (warpgroup MMA, retired by its wait), as
    the copies that refill them write: no proxy fence orders them.
    With `cluster`, each warp arrives at the barrier in the same place of
    every program of the kernel's cluster (`weft.cluster`), its own
    included, so that a copy shared across the cluster may refill the
    buffer everywhere once all of them are done with it: such a barrier
    expects `num_warps` arrivals per program of the cluster. No program
    may then return while another may still arrive at its barriers (a
    cluster barrier at the end orders that).

    ```mlir
    weft.mbarrier_arrive %empty
    weft.mbarrier_arrive %empty {async_reads}
    weft.mbarrier_arrive %empty {async_reads, cluster}
    ```
  }];
  let arguments = (ins Weft_MBarrierType:$barrier, UnitAttr:$async_reads, UnitAttr:$cluster);
  let assemblyFormat = "$barrier attr-dict";
}

def Weft_ClusterArriveOp : Weft_Op<"cluster_arrive", [MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "arrive at the barrier of the program's cluster";
  let description = [{
    Every thread of the program arrives. The arrival is relaxed: it tells
    the cluster that reads the thread has seen complete (as `wgmma`'s,
    retired by its wait) are done, so that a buffer they read may be
    refilled by another program of the cluster; writes it must publish
    need a releasing fence before it (as the initialisation of
    `weft.alloc_mbarriers` has). With `release` it also orders the
    thread's own earlier accesses before the arrival and the copies that
    follow it (shared-memory loads such as `ldmatrix`'s, which a relaxed
    arrival would let complete after it). Each thread alternates arrivals
    and `weft.cluster_wait`s, starting with an arrival. In a kernel
    without `weft.cluster` (or on targets without clusters) the cluster is
    the program alone.
  }];
  let arguments = (ins UnitAttr:$release);
  let assemblyFormat = "(`release` $release^)? attr-dict";
}

def Weft_ClusterWaitOp : Weft_Op<"cluster_wait", [MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "wait until every thread of the cluster has arrived";
  let description = [{
    Every thread of the program waits until every thread of every program
    in its cluster has made its latest `weft.cluster_arrive`, acquiring
    what they released.
  }];
  let assemblyFormat = "attr-dict";
}

def Weft_WarpSpecializeOp : Weft_Op<"warp_specialize", [RecursiveMemoryEffects,
    SingleBlockImplicitTerminator<"WarpYieldOp">]> {
  let summary = "the program's warps run one region, producer warps another";
  let description = [{
    The program's own `num_warps` warps run `default`, which may hold any
    ops; `producer_warps` more warps, which the kernel launches beside them
    (a warpgroup on sm_90), run `producer`, which holds no tiles: its bulk
    copies (`weft.desc_async_copy`) and the waits of its copier
    (`weft.mbarrier_wait` with `copier`) are the first producer thread's.
    The regions meet only through shared buffers and barriers allocated
    before the op; joins in `default` join the program's own warps. The op
    is the last of its kernel, after the ops that both kinds of warps run.
    weft-pipeline-dot-operands makes it for a loop marked
    `weft.warp_specialize` (docs/tile-ir.md, "Warp specialisation");
    only targets with bulk tensor copies (sm_90) have it.

    ```mlir
    weft.warp_specialize producer_warps = 4 default {
      ... the products, waiting for their stages ...
    } producer {
      ... the copies, waiting for free buffers ...
    }
    ```
  }];
  let arguments = (ins ConfinedAttr<I32Attr, [IntPositive]>:$producer_warps);
  let regions = (region SizedRegion<1>:$defaultRegion, SizedRegion<1>:$producerRegion);
  let assemblyFormat = [{
    `producer_warps` `=` $producer_warps attr-dict `default` $defaultRegion
    `producer` $producerRegion
  }];
  let hasRegionVerifier = 1;
}

def Weft_WarpYieldOp : Weft_Op<"warp_yield", [Pure, Terminator,
    HasParent<"WarpSpecializeOp">]> {
  let summary = "the end of a weft.warp_specialize region";
  let assemblyFormat = "attr-dict";
}

def Weft_DotWaitOp : Weft_Op<"dot_wait", [MemoryEffects<[MemRead]>,
    AllTypesMatch<["src", "result"]>]> {
  let summary = "wait for the products of asynchronous weft.dot ops";
  let description = [{
    Where tile products run asynchronously (sm_90's warpgroup MMA), a
    `weft.dot` whose only user is a `weft.dot_wait` leaves the waiting to
    it: `result` is `src` once at most `pending` of the program's dots are
    still in flight, so the dot's sums may be used. With pending = 1 a K
    loop overlaps each step's products with the next step's (its operand
    buffers must outlive them: weft-pipeline-dot-operands inserts these,
    with a spare buffer per ring); after the loop a `weft.dot_wait` with
    pending = 0 completes them. Elsewhere it is `src`.

    ```mlir
    %s = weft.dot_wait %d, 1 : tensor<128x128xf32>
    ```
  }];
  let arguments = (ins RankedTensorOf<[F32]>:$src, ConfinedAttr<I32Attr, [IntNonNegative]>:$pending);
  let results = (outs RankedTensorOf<[F32]>:$result);
  let assemblyFormat = "$src `,` $pending attr-dict `:` type($src)";
}

def Weft_ReduceReturnOp : Weft_Op<"reduce.return", [Pure, Terminator,
    ReturnLike, HasParent<"ReduceOp">]> {
  let summary = "the combined elements of a weft.reduce region";
  let arguments = (ins Variadic<AnyType>:$results);
  let assemblyFormat = "$results attr-dict `:` type($results)";
}

def Weft_ScanReturnOp : Weft_Op<"scan.return", [Pure, Terminator,
    ReturnLike, HasParent<"ScanOp">]> {
  let summary = "the combined elements of a weft.scan region";
  let arguments = (ins Variadic<AnyType>:$results);
  let assemblyFormat = "$results attr-dict `:` type($results)";
}

#endif // WEFT_TILE_OPS_TD
