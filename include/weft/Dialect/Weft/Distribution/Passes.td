//===- Passes.td - distribution of tiles over threads ------*- tablegen -*-===//
//
// Between co-optimisation (weft-optimize) and the conversion to LLVM: the
// passes that decide how tiles live on a program's threads and in its
// shared memory, for the target weft-set-target stamped on the module.
//
//===----------------------------------------------------------------------===//
#ifndef WEFT_DISTRIBUTION_PASSES_TD
#define WEFT_DISTRIBUTION_PASSES_TD

include "mlir/Pass/PassBase.td"

def WeftSetTarget : Pass<"weft-set-target", "mlir::ModuleOp"> {
  let summary = "Stamp the compile target and options on the module";
  let description = [{
    The first pass of weft-lower: records the target and the options of
    the compile on the module (`weft.target`, `weft.num_warps`,
    `weft.num_stages`, `weft.warp_mma`, `weft.debug`, `weft.multinode`),
    from which every
    later pass reads them (weft/Dialect/Weft/IR/CompileTarget.h), so they
    are parsed and checked once. A bad target or option is an error here,
    as is a tile of the upstream ops (arith, math, scf) that breaks the
    shape rule the weft ops verify (weft::verifyTileShapes).
  }];
  let options = [
    Option<"target", "target", "std::string", /*default=*/"\"host\"",
           "Target: cuda:90, hip:gfx942 or host">,
    Option<"numWarps", "num-warps", "unsigned", /*default=*/"4",
           "Warps per program (GPU targets)">,
    Option<"numStages", "num-stages", "unsigned", /*default=*/"3",
           "Buffers per operand of a pipelined K loop (1: no pipelining)">,
    Option<"warpMma", "warp-mma", "bool", /*default=*/"false",
           "wl.dot takes warp-level MMA even where warpgroup MMA applies">,
    Option<"debug", "debug", "bool", /*default=*/"false",
           "Bounds checks on peer ids and heap ranges">,
    Option<"multinode", "multinode", "bool", /*default=*/"false",
           "The kernel runs in a job across nodes (peers on other nodes "
           "through the engine)">,
  ];
}

def WeftPlanBulkStores : Pass<"weft-plan-bulk-stores", "mlir::ModuleOp"> {
  let summary = "Make a kernel's tensor-descriptor stores bulk tensor copies";
  let description = [{
    On targets with bulk tensor copies (sm_90), a `weft.desc_store` in a
    kernel becomes `bulk`: the program writes the block into shared memory
    (`bulkStoreBuffer`: swizzled column blocks) and one thread starts a
    bulk tensor copy of it, so the global stores leave the threads, which
    go on (a persistent GEMM's next block) while the copy engine writes.
    The descriptor's tensor map is recorded on the kernel
    (`weft.tensor_maps`, as for bulk loads), and a `weft.bulk_store_wait`
    goes before each return.

    Only where nothing in the kernel could see the stores early or late:
    the descriptor is a kernel argument that only stores use, every access
    of the kernel is weak (no fence, signal, wait or ordered atomic, which
    would have to wait for the copies first), it reads global memory only
    through descriptors (a pointer might read back a stored block the copy
    has not written yet; descriptors of one launch that overlap a stored
    one are the caller's error, docs/python.md), the block is 2-D and its
    buffer takes at most a third of dynamic shared memory, and the
    descriptor's map is the one its other stores need. Elsewhere the store
    stays, and weft-expand-tensor-descs makes it a masked tile store.
  }];
  let dependentDialects = ["::weft::WeftDialect"];
}

def WeftPipelineDotOperands : Pass<"weft-pipeline-dot-operands", "mlir::ModuleOp"> {
  let summary = "Copy a K loop's dot operands into shared memory stages ahead";
  let description = [{
    Software pipelining of `scf.for` loops that only read memory (every op
    in the body is a weak `weft.load` or has no memory effects) and
    multiply tiles they load: each `weft.dot` operand that is a weak tile
    load used only by that dot, whose address, mask and `other` (zero or
    none) depend only on the induction variable and values from outside
    the loop, becomes a ring of S `!weft.shared` buffers (S: the loop's
    `weft.num_stages` attribute, else the module's; below 2 the loop is
    left alone). In
    front of the loop, the copies of the first S - 1 iterations
    start (`weft.async_copy`, one `weft.async_commit` group per
    iteration); every iteration waits for its own group
    (`weft.async_wait S - 2`, which also joins the program, so
    the buffer the previous iteration read is free), starts the copies of
    the iteration S - 1 ahead into that buffer, and multiplies
    from shared memory. Copies past the upper bound are masked off (they
    read nothing and write zeros); after the loop every group is waited
    for. On sm_90 the copies are cp.async, so global-memory latency
    overlaps the math of the stages in between; elsewhere they complete
    at once (same results). Fewer stages are used where the buffers (of
    all the function's pipelined loops together) would not fit: in a
    kernel on a target with dynamic shared memory (sm_90) its limit;
    elsewhere the static limit less 8 KiB for the program's other uses and
    the scratch of the function's other dots. None below two. Where the
    target has warpgroup MMA for a dot's shape (sm_90 wgmma, with
    `weft.num_warps` a multiple of 4, unless `weft.warp_mma`), its buffers get the
    `#weft.swizzled` layouts that wgmma reads in place; otherwise, where
    the target's warp-level MMA reads its fragments with ldmatrix, the
    swizzled layouts with rows in order, which ldmatrix and the copies
    both access without bank conflicts. If a warpgroup dot's sums only feed the
    dot of the next iteration, a `weft.dot_wait 1` after it lets each
    step's products run while the next step starts (`weft.dot_wait 0`
    after the loop), and every ring gets one spare buffer, so that the
    copies go to the buffer read two steps back, which every warpgroup
    is done with. Where every operand of the loop is a block of one of
    the kernel's tensor descriptors and the target has bulk tensor copies
    (sm_90), the blocks become `weft.desc_async_copy`s completing on a
    ring of mbarriers (shared across a `weft.cluster` where every program
    copies the same block, the cluster's barrier then ordering refills).
    Where no products stay in flight past their step and no cluster
    shares the copies, the step does not join: every warp arrives at a
    second ring of barriers once done with its buffer
    (`weft.mbarrier_arrive`), only the copying thread waits there
    before refilling one, and the step waits for its own stage after its
    copies. Where the copies are asynchronous (sm_90) and the loop does
    one product, it is then unrolled by the ring's size (`unroll-rings`),
    so that every unrolled step addresses fixed buffers instead of
    rotating the rings through the loop's arguments; a remainder loop
    takes the last steps. After the loop the products complete and
    `weft.release_shared` ends the rings' life: what follows may take
    their room (placeSharedBuffers).
  }];
  let options = [
    Option<"unrollRings", "unroll-rings", "bool", /*default=*/"true",
           "Unroll pipelined loops of one product by their rings' size where copies are "
           "asynchronous">,
  ];
  let dependentDialects = ["::weft::WeftDialect", "::mlir::arith::ArithDialect"];
}

def WeftExpandTensorDescs : Pass<"weft-expand-tensor-descs", "mlir::ModuleOp"> {
  let summary = "Turn tensor-descriptor block accesses into masked tile accesses";
  let description = [{
    Every `weft.desc_load` and `weft.desc_store` that is left (on sm_90,
    weft-pipeline-dot-operands has made the operand loads of pipelined K
    loops bulk tensor copies, and weft-plan-bulk-stores some stores bulk)
    becomes a `weft.load` / `weft.store` through
    the tile `base + sum(coordinate_d * stride_d)` of the block's
    coordinates, masked to the tensor's shape (zeros read outside it),
    from `weft.desc_base`, `weft.desc_dim` and `weft.desc_stride`. The
    axis analysis knows what the runtime guarantees of those (an aligned
    base, strides of whole 16-byte chunks, the last one 1), so the
    accesses are vectors.
  }];
  let dependentDialects = ["::weft::WeftDialect", "::mlir::arith::ArithDialect"];
}

def WeftFenceTensorCopies : Pass<"weft-fence-tensor-copies", "mlir::ModuleOp"> {
  let summary = "Order acquires before the bulk tensor copies after them";
  let description = [{
    A bulk tensor copy (`weft.desc_async_copy` on a target with them)
    reads global memory through the async proxy, which an acquire does not
    order: a program that waits for a peer's signal and then copies the
    rows the peer pushed could copy stale bytes. In every function with
    such a copy, each op that acquires (a `weft.wait`, fence, load or
    atomic whose order has acquire; a `weft.barrier`) and that a copy may
    follow (later in its block or an enclosing one, a call, or anywhere in
    a loop around it) is followed by a `weft.async_proxy_fence`.
    Elsewhere the pass does nothing.
  }];
  let dependentDialects = ["::weft::WeftDialect"];
}

def WeftAssignLayouts : Pass<"weft-assign-layouts", "mlir::ModuleOp"> {
  let summary = "Distribute tiles over the threads of a program";
  let description = [{
    Gives every tensor a layout (`#weft.blocked` or `#weft.slice`). Loads,
    stores and atomics on tiles of pointers anchor the choice: the axis
    analysis finds the contiguous, aligned dimension, and each thread gets
    as many consecutive elements of it as make one 16-byte access. The
    layouts flow backwards to the values that feed the access and forwards
    through element-wise ops; reductions yield slices of their operand's
    layout. Where a producer and a consumer disagree, a
    `weft.convert_layout` joins them. On the host a program is one thread
    and holds the whole tile. Functions whose tensors already have layouts
    are left alone.
  }];
  let dependentDialects = ["::weft::WeftDialect"];
}

def WeftEarlyStart : Pass<"weft-early-start", "mlir::ModuleOp"> {
  let summary = "Let kernels start before the kernel ahead of them completes";
  let description = [{
    Where launches may start early (sm_90: programmatic dependent launch,
    the runtime's WEFT_LAUNCH_EARLY_START), every kernel (`weft.kernel`)
    gets a `weft.dependency_wait` in its entry block, in front of the
    first op that may access memory other than the program's own shared
    memory, and is marked `weft.early_start` (the "kernels" artifact
    reports it). The ops before the wait are free of memory effects or
    allocate shared buffers and barriers (`weft.alloc_shared`,
    `weft.alloc_mbarriers`): the program's set-up, its index arithmetic,
    barrier initialisation and the join after it, then overlaps the end of
    the kernel ahead. An op whose regions hold an access (a loop, an
    `scf.if`) or a call gets the wait in front of it; a kernel with no
    access at all waits before it returns, so that the kernel after it
    still waits for the one before. With `weft.debug`, a `weft.translate`
    counts as an access: its bounds check may write the error record.
    Elsewhere the pass does nothing.
  }];
  let dependentDialects = ["::weft::WeftDialect"];
}

#endif // WEFT_DISTRIBUTION_PASSES_TD
