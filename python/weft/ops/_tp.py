"""Tensor-parallel GEMMs with their communication fused in:
weft.ops.all_gather_matmul (the first, column-parallel layer) and
weft.ops.matmul_reduce_scatter / weft.ops.matmul_all_reduce (the second,
row-parallel layer, whose K dimension is split over the ranks).

First layer. By default ("overlap") one resident launch
(ag_matmul_kernel) multiplies while every rank's A goes, a chunk of rows
at a time, into a symmetric scratch of every other rank, each chunk
flagged there: moved by the copy engine beside the kernel (large A) or
by a few of its programs while the others multiply; a product waits only
for its rows' flags (a rank multiplies its own rows from A). Where
matmul would split K (decode), "gather" runs the all-gather
(weft.collectives.all_gather) and then weft.ops.matmul. Every A tile crosses NVLink once in both.
"pull" loads the A tiles from their owner straight into wl.dot
(peer=owner): a crossing per column block of the output.

Second layer: one resident launch (matmul_reduce_kernel). Its programs
compute the partial products for the other ranks first and push each into
a symmetric scratch of the rank that needs it (wl.store(..., peer=dest)),
counting it there on the block's counter; then each rank's own blocks wait
for their counts and add the partials to their own, in one order, so the
partials cross NVLink while the GEMM goes on. No phase launch, no
host barrier and no atomics on the data: every element is the same f32
sum, in the same order, on every run and on every rank that holds it.

The first layer's "pull" synchronisation uses the collectives' flags, and
a phase's waits need every program of its launch resident at once (a GEMM
grid is not), so it runs in small launches of its own around the GEMM, on
the same stream: when a phase launch (program i of every rank meets
program i of every other rank) has finished on a rank, every rank's phase
launch has started, so everything each rank launched before it is
complete, and its release covers those earlier launches' writes.
"""
from .. import _runtime as rt
from .. import language as wl
from .._jit import compile as compile_kernel, jit
from .._jit import PerBackend, TensorDescriptor
from ..collectives._kernels import (FUSED_ARRIVALS, FUSED_BLOCKS, FUSED_COUNTERS, FUSED_DONE,
                                    FUSED_EPOCH, FUSED_LAST, _begin, _end, _fused_call_done,
                                    _last_to_finish, _push, _sync)
from ..collectives import _dtype_of, _get_comm, _is_symmetric, _kept, _node_comm, all_gather
from ._gemm import (BK, BLOCKS, BM, BN, DEFAULT_PROGRAMS, _block_product, _check_operands,
                    _config_for, _grouped, _matmul, _output, _piece_product, _pieces, _programs,
                    _wave, blocks_of, even_blocks, matmul, matmul_signature, out_dtypes,
                    plan_memo, tensor_maps_fit, zero_f32)


@jit
def phase_kernel(flags, epochs, PHASE: wl.constexpr):
    """One phase of the collectives' flags as a launch of its own: the
    entry (0: every rank's earlier work, e.g. writing `a`, is done) or the
    exit (1: every rank's earlier work, e.g. reading my `a`, is done)."""
    epoch = _begin(epochs)
    _sync(flags, PHASE, epoch)
    _end(epochs, epoch)


@jit(do_not_specialize=("k_steps",))
def all_gather_matmul_kernel(a, b, c, rows, N, K, k_steps, BM: wl.constexpr,
                             BN: wl.constexpr, BK: wl.constexpr):
    """c[(r * rows + i), :] = sum over k of rank r's a[i, k] * b[k, :]: a
    program per output block (grid axis 0: the owner's row blocks, so a
    block never straddles two ranks' rows; axis 1: column blocks) and piece
    of K (axis 2), its A tiles pulled straight from the owner into wl.dot:
    the gathered A never exists in memory. Several pieces add into c (zeroed
    before) with relaxed atomics."""
    tiles_m = (rows + BM - 1) // BM
    owner = wl.program_id(0) // tiles_m
    rm = (wl.program_id(0) % tiles_m) * BM + wl.arange(0, BM)
    rn = wl.program_id(1) * BN + wl.arange(0, BN)
    k_chunk = k_steps * BK                    # whole BK steps: aligned offsets
    k_lo = wl.program_id(2) * k_chunk
    acc = _block_product(a, b, rm, rn, rows, N, K, k_lo, wl.minimum(K, k_lo + k_chunk),
                         owner, True, BM, BN, BK)
    offs = c + (owner * rows + rm[:, None]) * N + rn[None, :]
    mask = (rm[:, None] < rows) & (rn[None, :] < N)
    if k_chunk < K:
        wl.atomic_add(offs, acc, mask=mask, order="relaxed")
    else:
        wl.store(offs, acc, mask=mask)


# The first layer's copies of a: COPY_ROWS rows (one arrival flag each, so
# a product waits for BM / COPY_ROWS of them), in tiles of COPY_ROWS x
# COPY_COLS elements (16 KiB of bf16 on GPUs).
COPY_ROWS = PerBackend(host=4, default=16)
COPY_COLS = PerBackend(host=16, default=512)
# Where a holds at least COPY_ENGINE_BYTES per rank, the copy engine moves
# it instead (weft_put_signal_async), leaving every program to the
# products, in PUT_CHUNKS puts per destination of whole row blocks, each
# flagged: a put costs the copy engine microseconds, more of them cost
# more than the earlier arrival saves (bench/README.md, "Prefill: the
# copy engine moves the rows").
COPY_ENGINE_BYTES = PerBackend(host=1 << 12, default=8 << 20)
PUT_CHUNKS = 2


@jit
def _copy_rows(a, g, dest, chunk, rows, K, flag, epoch, CM: wl.constexpr, CK: wl.constexpr):
    """Rows chunk * CM.. of a (this rank's) into the same rows of g on
    `dest` (g: this rank's slot), then sets `flag` there to the call's
    epoch (a release: the rows land first)."""
    rm = chunk * CM + wl.arange(0, CM)
    for k0 in range(0, K, CK):
        rk = k0 + wl.arange(0, CK)
        offs = rm[:, None] * K + rk[None, :]
        mask = (rm[:, None] < rows) & (rk[None, :] < K)
        wl.store(g + offs, wl.load(a + offs, mask=mask), mask=mask, peer=dest)
    wl.signal(flag, epoch, peer=dest)


@jit
def gather_entry_kernel(sync):
    """Before the copy engine's puts of ag_matmul_kernel's rows (one
    program, on the call's stream): waits until every rank has finished my
    last call of a kernel that flags FUSED_DONE (a peer may still read g
    for it), then leaves this call's epoch where the puts copy their
    arrival flags from."""
    last = wl.load(sync + FUSED_LAST)
    for p in range(wl.num_ranks()):
        wl.wait(sync + FUSED_DONE + p, last, cmp="ge")
    wl.store(sync + FUSED_EPOCH, wl.load(sync) + 1)


@jit
def _taken(count, first, stride):
    """How many of items first, first + stride, ... lie below count (first
    < stride): a program's share of a list dealt out in turns."""
    return (count - first + stride - 1) // stride


@jit
def ag_matmul_kernel(a, a_blocks, g, g_blocks, b, c, sync, rows, N, K, flag_rows,
                     BM: wl.constexpr, BN: wl.constexpr, BK: wl.constexpr, CM: wl.constexpr,
                     CK: wl.constexpr, EVEN: wl.constexpr, DESC: wl.constexpr,
                     SM_COPIES: wl.constexpr, GROUP_M: wl.constexpr = 8,
                     CLUSTER_N: wl.constexpr = 1):
    """The first layer in one launch: c[(s * rows + i), :] = rank s's a[i, :] @ b
    for every rank s. Every rank's a goes, flag_rows rows at a time, into slot
    s (rows s * rows..) of every other rank's symmetric g, each chunk flagged
    on arrival (a flag per source and chunk, holding the call's epoch: none is
    reset): by the copy engine (puts made around the launch, after
    gather_entry_kernel) or, with SM_COPIES, by the programs themselves, CM (=
    flag_rows) rows at a time. A product of a block of c waits for its rows'
    flags, then multiplies from g, or from a where the rows are mine (my own
    slot of g stays unused: copying a there would only cost memory traffic).
    The programs, resident together in clusters of CLUSTER_N (a resident
    launch in clusters=(CLUSTER_N,)), deal the copies to the other ranks (the
    next rank first) and the products (my own rows first, then the others',
    the previous rank's first: the first to arrive) out in turns, a cluster
    taking every clusters-th of each (the products from the first cluster on,
    the copies from the last back); a cluster's copies are spread among its
    products of my own rows, so that a few programs push while the rest
    compute. An item is a chunk for each program of the cluster, or
    neighbouring column blocks of one block row (whose programs then share the
    copies of g's blocks, as in matmul_kernel). A rank may start a call while
    another still multiplies its last one from g, so a copy to another rank
    first waits until that rank has finished my last call (its done flag here,
    set by its last program; gather_entry_kernel waits so before the puts).
    Copies wait only for earlier calls and a product of others' rows only for
    copies, which every cluster makes before its first such product, so every
    wait ends. a_blocks and g_blocks are a and g as the products read them:
    tensor descriptors (DESC) or a and g themselves. The two products' K loops
    sit in the branches of one if, so their rings of shared memory share their
    room (docs/tile-ir.md, "Pipelining")."""
    me = wl.rank()
    ranks = wl.num_ranks()
    column = wl.program_id(0) % CLUSTER_N     # my chunk or column block in the cluster's
    blocks_m = (rows + BM - 1) // BM
    blocks_n = (N + BN - 1) // BN // CLUSTER_N   # of clusters
    blocks = blocks_m * blocks_n              # product items per source rank
    chunks = (rows + flag_rows - 1) // flag_rows     # flags per source
    copies = (chunks + CLUSTER_N - 1) // CLUSTER_N   # copy items per destination
    rows_even = rows // BM * BM if EVEN else rows
    epoch = wl.load(sync) + 1
    last = wl.load(sync + FUSED_LAST)         # the epoch of my last call of this kernel
    done = sync + FUSED_DONE                  # each rank's last call finished there
    arrivals = sync + FUSED_ARRIVALS
    mine = g + me * rows * K                  # my slot, and my chunks' flags, on the others
    my_flags = arrivals + me * chunks
    pushes = (ranks - 1) * copies if SM_COPIES else 0
    # Each cluster takes every clusters-th product from the first cluster
    # on and every clusters-th copy from the last one back (a static
    # share: the clusters left a product short take the copies first, and
    # where there are clusters for every item each has one), its copies
    # spread among its products of my rows from a point that differs
    # between clusters, so that about as many copy at any time. (One list
    # dealt out in turns instead put every copy on the clusters whose
    # number shared a residue with the copies' period: at 8192 x 8192 on
    # 2 ranks a third of them copied while the rest made 10 products where
    # 7.8 was the mean.)
    clusters = wl.num_programs(0) // CLUSTER_N
    cluster = wl.program_id(0) // CLUSTER_N
    backward = clusters - 1 - cluster         # the cluster's number counted from the last
    my_pushes = _taken(pushes, backward, clusters)
    spread = wl.maximum(my_pushes + _taken(blocks, cluster, clusters), 1)
    start = cluster % spread                  # where in its spread the cluster's copies fall
    for i in range(0, my_pushes + _taken(ranks * blocks, cluster, clusters)):
        pushed = wl.minimum((i * my_pushes + start) // spread, my_pushes)  # before item i
        if (i < spread) & (((i + 1) * my_pushes + start) // spread > pushed):
            push = backward + pushed * clusters
            dest = (me + 1 + push // copies) % ranks
            chunk = push % copies * CLUSTER_N + column
            if chunk < chunks:
                wl.wait(done + dest, last, cmp="ge")
                _copy_rows(a, mine, dest, chunk, rows, K, my_flags + chunk, epoch, CM, CK)
        else:
            product = cluster + (i - pushed) * clusters
            src = (me + ranks - product // blocks) % ranks
            block_m, block_n = _grouped(product % blocks, blocks_m, blocks_n, GROUP_M)
            m0 = block_m * BM
            n0 = (block_n * CLUSTER_N + column) * BN
            if src == me:
                acc = _piece_product(a_blocks, b, 0, m0, n0, rows, N, K, 0, K,
                                     BM, BN, BK, EVEN, DESC)
            else:
                flags = arrivals + src * chunks
                for chunk in range(m0 // flag_rows,
                                   wl.minimum(chunks, (m0 + BM - 1) // flag_rows + 1)):
                    wl.wait(flags + chunk, epoch, cmp="ge")
                acc = _piece_product(g_blocks, b, src * rows_even, m0, n0, rows, N, K, 0, K,
                                     BM, BN, BK, EVEN, DESC)
            rm = m0 + wl.arange(0, BM)
            rn = n0 + wl.arange(0, BN)
            mask = None if EVEN else (rm[:, None] < rows) & (rn[None, :] < N)
            wl.store(c + (src * rows + rm[:, None]) * N + rn[None, :], acc, mask=mask)
    _fused_call_done(sync, epoch)             # every program has read g


def _fused_plan(m, rows, n, k, sources, backend, dtype, descriptors):
    """How a fused GEMM runs products of `rows` x n x k from each of
    `sources` ranks on `backend`, with matmul's blocks and clusters for an
    m x n x k product: (constexprs with EVEN, DESC and CLUSTER_N, launch
    options, output blocks per source, pieces of K, BK steps per piece).
    descriptors: the operands go as tensor descriptors (None: where the
    blocks tile the product)."""
    constexprs, warps, stages, wave, (bm, bn, bk), cluster = _config_for(m, n, k, backend,
                                                                         dtype)
    blocks = -(-rows // bm) * -(-n // bn)
    pieces, steps = _pieces(sources * blocks, k, bk, wave)
    even = even_blocks(rows, n, k, constexprs)
    if descriptors is None:
        descriptors = even[backend] and k > 0
    return (dict(constexprs, EVEN=even, DESC=descriptors, CLUSTER_N=cluster),
            dict(num_warps=warps, num_stages=stages, cluster=(cluster,)), blocks, pieces,
            steps)


def _resident_grid(items, num_programs, cluster, backend):
    """The programs a resident launch of `items` cluster items asks for:
    one per item and program of its cluster, at most num_programs
    (default: the backend's own on the host, else all that fit, the
    launch cutting them), in whole clusters."""
    if num_programs is None:
        num_programs = DEFAULT_PROGRAMS["host"] if backend == "host" else items * cluster
    return max(1, min(items, int(num_programs) // cluster)) * cluster


@plan_memo
def _gather_plan(rows, n, k, ranks, backend, dtype, descriptors=None):
    """How ag_matmul_kernel runs the first layer for ranks x `rows` rows
    of a (k wide) and an n-wide b on `backend`, with matmul's blocks for
    the gathered product: (constexprs, launch options, output blocks per
    rank, pieces of K matmul would split the product into)."""
    constexprs, options, blocks, pieces, _ = _fused_plan(ranks * rows, rows, n, k, ranks,
                                                         backend, dtype, descriptors)
    sm_copies = rows * k * dtype.bits // 8 < COPY_ENGINE_BYTES[backend]
    return (dict(constexprs, CM=COPY_ROWS, CK=COPY_COLS, SM_COPIES=sm_copies), options, blocks,
            pieces)


def _flag_rows(rows, constexprs, backend):
    """The rows of a that one arrival flag of ag_matmul_kernel covers."""
    if constexprs["SM_COPIES"]:
        return constexprs["CM"][backend]
    bm = constexprs["BM"][backend]
    return -(-rows // (PUT_CHUNKS * bm)) * bm


def compile_all_gather_matmul(m, n, k, ranks, target):
    """Compiles for `target`, without launching, what all_gather_matmul's
    "overlap" launches on `ranks` ranks for bf16 operands, a (m / ranks x
    k, 16-byte aligned) and b (k x n) (warming a kernel cache)."""
    backend = target.split(":")[0]
    rows = m // ranks
    constexprs, options, _, _ = _gather_plan(rows, n, k, ranks, backend, wl.bfloat16)
    sig = matmul_signature(rows, n, k, constexprs, backend, "*fp32:16")
    g_blocks = matmul_signature(m, n, k, constexprs, backend, "*fp32:16")["a"]
    flag_rows = "i32:16" if _flag_rows(rows, constexprs, backend) % 16 == 0 else "i32"
    compile_kernel(ag_matmul_kernel,
                   dict(a="*bf16:16", a_blocks=sig["a"], g="*bf16:16", g_blocks=g_blocks,
                        b=sig["b"], c=sig["c"], sync="*i64:16", rows=sig["M"], N=sig["N"],
                        K=sig["K"], flag_rows=flag_rows),
                   constexprs, target=target, **options)
    if not constexprs["SM_COPIES"]:
        compile_kernel(gather_entry_kernel, dict(sync="*i64:16"), {}, target=target)


def all_gather_matmul(a, b, out=None, num_programs=None, algorithm="auto"):
    """out = all_gather(a) @ b, in f32: a is this rank's rows x K (f16,
    bf16 or f32; local or symmetric, a symmetric weft.Buffer for "pull"), b is K x N
    (local or symmetric, a's dtype), out (num_ranks * rows) x N f32 or a's
    16-bit dtype, the f32 sums rounded once (local or symmetric; a new local
    f32 weft.Buffer when None). Returns out.

    algorithm "overlap": one resident launch (ag_matmul_kernel) in which
    the ranks push their a into each other's symmetric scratch while the
    GEMM runs, each product starting as soon as its rows have arrived.
    "gather": weft.collectives.all_gather, then weft.ops.matmul (two
    launches; split-K where the blocks do not fill the GPU). "auto"
    (default): "overlap" unless matmul would split K (decode shapes), on
    any number of ranks (on one it is the product alone, from a).
    Each A tile crosses NVLink once in both. "pull": one GEMM whose
    programs load their A tiles from the owner straight into wl.dot, so a
    remote tile crosses once per column block of out (fine while A is a
    few rows). num_programs: at most that many programs ("overlap";
    default: all that fit the GPU at once), the all-gather's ("gather"),
    or those of the two phase launches around the GEMM ("pull", default 1:
    one program meeting every rank is a full barrier)."""
    if out is None:  # every call allocates its out: not kept (weft/_plans.py)
        return _all_gather_matmul(a, b, out, num_programs, algorithm)
    _kept("all_gather_matmul", (a, b, out), (num_programs, algorithm), _all_gather_matmul, a,
          b, out, num_programs, algorithm)
    return out


def _all_gather_matmul(a, b, out, num_programs, algorithm):
    if algorithm not in ("auto", "overlap", "gather", "pull"):
        raise ValueError(f"all_gather_matmul: algorithm must be 'auto', 'overlap', 'gather' "
                         f"or 'pull', not {algorithm!r}")
    if len(getattr(a, "shape", ())) != 2:
        raise ValueError("all_gather_matmul: a must be 2-D (a weft.Buffer, or an array "
                         "kernels take)")
    if algorithm == "pull" and not _is_symmetric(a):
        raise ValueError("all_gather_matmul: algorithm 'pull' needs a symmetric weft.Buffer "
                         "a (peers read it)")
    if num_programs is not None and int(num_programs) < 1:
        raise ValueError(f"all_gather_matmul: num_programs must be at least 1, "
                         f"got {num_programs}")
    rows, k, n = _check_operands("all_gather_matmul", a, b)
    ranks = rt.num_ranks()
    dtype = _dtype_of(a, "a")
    out = _output("all_gather_matmul", out, ranks * rows, n, out_dtypes(dtype))
    if rows * n == 0:
        return out
    comm = _get_comm()
    backend = rt.backend()
    if comm.nodes > 1:  # only the gather (a hierarchical all_gather) crosses nodes
        if algorithm in ("overlap", "pull"):
            _node_comm(f"all_gather_matmul (algorithm {algorithm!r})")
        algorithm = "gather"
    if algorithm in ("auto", "overlap"):
        constexprs, options, blocks, pieces = _gather_plan(
            rows, n, k, ranks, backend, dtype,
            None if tensor_maps_fit(a, b) else False)
        if algorithm == "overlap" or pieces == 1:
            return _all_gather_overlap(a, b, out, num_programs, comm, constexprs, options,
                                       blocks, rows, n, k, dtype)
        algorithm = "gather"
    if algorithm == "gather":
        gathered = comm.buffer("gathered", ranks * rows * k, dtype)
        all_gather(a, gathered, num_programs=num_programs)
        gathered.shape = (ranks * rows, k)
        return matmul(gathered, b, out)
    tiles_m, tiles_n = -(-rows // BM[backend]), -(-n // BN[backend])
    # Pieces of K meet in f32 atomics: a 16-bit out takes one.
    pieces, steps = _pieces(ranks * tiles_m * tiles_n, k, BK[backend], _wave(BM[backend]),
                            None if _dtype_of(out, "out") is wl.float32 else 1)
    if pieces > 1:
        zero_f32(out, ranks * rows * n)
    phases = _programs(num_programs, 1)
    phase_kernel[phases](comm.flags, comm.epochs, PHASE=0)     # every rank's a is ready
    all_gather_matmul_kernel[(ranks * tiles_m, tiles_n, pieces)](
        a, b, out, rows, n, k, steps, **BLOCKS)
    phase_kernel[phases](comm.flags, comm.epochs, PHASE=1)     # nobody reads my a any more
    return out


def _all_gather_overlap(a, b, out, num_programs, comm, constexprs, options, blocks, rows, n,
                        k, dtype):
    ranks = rt.num_ranks()
    backend = rt.backend()
    flag_rows = _flag_rows(rows, constexprs, backend)
    chunks = -(-rows // flag_rows)
    if ranks * chunks > FUSED_BLOCKS:
        raise ValueError(f"all_gather_matmul: {rows} rows per rank are {ranks * chunks} "
                         f"arrival flags, more than the {FUSED_BLOCKS} the kernel has")
    count = ranks * rows * k
    if count >= 1 << 31:
        raise ValueError(f"all_gather_matmul: {ranks} x {rows} x {k} needs {count} elements "
                         f"of scratch, more than a kernel addresses (2^31)")
    # A peer may still read g for its last call: growing it drains first.
    g = comm.buffer("fused_gather", count, dtype, drain=True)
    g.shape = (ranks * rows, k)
    a_blocks, g_blocks = a, g
    if constexprs["DESC"]:
        g_blocks = TensorDescriptor(g, (constexprs["BM"], constexprs["BK"]))
        a_blocks, b = blocks_of(a, b, constexprs)
    cluster = constexprs["CLUSTER_N"]
    copies = -(-chunks // cluster) if constexprs["SM_COPIES"] else 0
    items = (ranks - 1) * copies + ranks * blocks // cluster
    puts = None
    if not constexprs["SM_COPIES"] and ranks > 1:
        gather_entry_kernel[(1,)](comm.fused_sync)
        rt.PutFork().launch()
        puts = _row_puts(a, g, comm.fused_sync, rows, k, dtype, flag_rows)
        # The host backend's launch returns when the kernel has finished,
        # which needs the peers' rows: its puts go first. On GPUs they go
        # while the kernel starts (issuing them takes the host longer).
        if backend == "host":
            puts.launch()
    ag_matmul_kernel[(_resident_grid(items, num_programs, cluster, backend),)](
        a, a_blocks, g, g_blocks, b, out, comm.fused_sync, rows, n, k, flag_rows,
        resident=True, **options, **constexprs)
    if puts is not None:
        if backend != "host":
            puts.launch()
        rt.PutJoin().launch()
    return out


def _row_puts(a, g, sync, rows, k, dtype, flag_rows):
    """The copy engine's puts of a's rows into this rank's slot of every
    other rank's g, flag_rows at a time (the next rank first), each
    flagging its arrival there with the epoch gather_entry_kernel left."""
    me, ranks = rt.rank(), rt.num_ranks()
    row = k * dtype.bits // 8                 # bytes
    arrivals = rt.data_ptr(sync) + 8 * (FUSED_ARRIVALS + me * -(-rows // flag_rows))
    epoch = rt.data_ptr(sync) + 8 * FUSED_EPOCH
    src, dst = rt.data_ptr(a), rt.data_ptr(g) + me * rows * row
    return rt.Puts([(dst + r * row, src + r * row, min(flag_rows, rows - r) * row,
                     arrivals + 8 * (r // flag_rows), epoch, (me + d) % ranks)
                    for d in range(1, ranks) for r in range(0, rows, flag_rows)])


@jit
def _signal_partial(counters, block, dest, SCATTER: wl.constexpr):
    """Tells `dest` (SCATTER), else every rank, that this program's partial
    of `block` has landed there: one release for every store the program
    made before, then relaxed counts."""
    wl.fence(order="release", scope="sys")
    if SCATTER:
        wl.signal(counters + block, 1, peer=dest, op="add", order="relaxed")
    else:
        for p in range(wl.num_ranks()):
            wl.signal(counters + block, 1, peer=p, op="add", order="relaxed")


@jit(do_not_specialize=("k_steps",))
def matmul_reduce_kernel(a, b, c, slots, half, sync, rows, N, K, k_steps, SCATTER: wl.constexpr,
                         BM: wl.constexpr, BN: wl.constexpr, BK: wl.constexpr,
                         EVEN: wl.constexpr, DESC: wl.constexpr, SC: wl.constexpr,
                         PARTIAL: wl.constexpr,
                         GROUP_M: wl.constexpr = 8, CLUSTER_N: wl.constexpr = 1):
    """The second layer in one launch: c (rows x N, this rank's) = the sum
    over ranks r and pieces z of K of partial (r, z) of the block, added
    in one fixed order. Programs are resident together (a resident launch)
    and take items i, i + num_programs, ... of this rank's list:

    1. Partials: each product of a block of a (its rows of rank `dest`
       when SCATTER) and b over piece z goes into slot (me, z) of the
       block on `dest` (SCATTER: the rank owning the rows; else every
       rank), and counts there on the block's counter. SCATTER's
       destinations take turns item by item, the next rank first and this
       rank among them (its own partial stored locally like the others;
       a partial is stored as PARTIAL, f32 or bf16, and summed in f32),
       so that the partials cross NVLink all through the product instead
       of in a burst at its start, which NVLink could not carry under the
       GEMM (bench/README.md, "Prefill"). The count for one partial is
       made after the next product, so that its stores drain under that
       product rather than stall the program.
    2. Sums: once the program has counted its last partial, each block of
       c waits for its ranks * pieces partials and adds them in order
       (SCATTER: one rank sums a block; else every rank sums every block:
       one-shot, the same bits on every rank).

    Programs wait only after counting every partial they made, so while
    they are all resident every wait ends. Items are counted in clusters
    of CLUSTER_N programs (a resident launch in clusters=(CLUSTER_N,)):
    the programs of a cluster take neighbouring column blocks of one block
    row, so that they share the copies of a's blocks (matmul_kernel's
    CLUSTER_N). The halves of slots (f32, half elements each) and the
    counters alternate between two sets by the parity of the rank's calls
    (sync[0]; the last program to finish, counted in sync[1], moves it
    on). A rank can start its next call while another is still summing
    this one, but not the one after (that needs this rank's partials of
    the next call, made after this call has finished here). The summing
    program zeroes its counter."""
    me = wl.rank()
    ranks = wl.num_ranks()
    blocks_m = (rows + BM - 1) // BM
    blocks_n = (N + BN - 1) // BN // CLUSTER_N   # of clusters
    blocks = blocks_m * blocks_n
    column = wl.program_id(0) % CLUSTER_N     # my column block in the cluster's
    # rows, written so that the compiler sees whole blocks where they are:
    # a's row offsets then stay multiples of BM, and each block of a is
    # one bulk copy (docs/tile-ir.md, "Views").
    rows_even = rows // BM * BM if EVEN else rows
    k_chunk = k_steps * BK                    # whole BK steps: aligned offsets
    pieces = wl.maximum(1, (K + k_chunk - 1) // k_chunk)
    size = rows * N                           # one slot
    calls = wl.load(sync)
    parity = calls % 2
    counters = sync + FUSED_COUNTERS + parity * FUSED_BLOCKS
    base = slots + parity * half
    dests = ranks if SCATTER else 1
    pending = -1                              # the block of an uncounted partial
    pending_dest = 0
    for i in range(wl.program_id(0) // CLUSTER_N, pieces * blocks * dests,
                   wl.num_programs(0) // CLUSTER_N):
        dest = (me + 1 + i) % ranks if SCATTER else me
        item = i // dests                     # its piece and block
        z = item // blocks
        block_m, block_n = _grouped(item % blocks, blocks_m, blocks_n, GROUP_M)
        block = item % blocks * CLUSTER_N + column   # its counter
        block_n = block_n * CLUSTER_N + column
        acc = _piece_product(a, b, dest * rows_even if SCATTER else 0, block_m * BM,
                             block_n * BN, rows, N, K, z * k_chunk, k_chunk, BM, BN, BK,
                             EVEN, DESC)
        if pending >= 0:
            _signal_partial(counters, pending, pending_dest, SCATTER)
        rm = block_m * BM + wl.arange(0, BM)
        rn = block_n * BN + wl.arange(0, BN)
        offs = (me * pieces + z) * size + rm[:, None] * N + rn[None, :]
        mask = None if EVEN else (rm[:, None] < rows) & (rn[None, :] < N)
        partial = acc.to(PARTIAL)
        if SCATTER:
            wl.store(base + offs, partial, mask=mask, peer=dest)
        else:
            _push(base + offs, partial, mask, me)  # the next rank first, this one last
        pending = block
        pending_dest = dest
    if pending >= 0:
        _signal_partial(counters, pending, pending_dest, SCATTER)
    for block in range(wl.program_id(0), blocks * CLUSTER_N, wl.num_programs(0)):
        block_m, block_n = _grouped(block // CLUSTER_N, blocks_m, blocks_n, GROUP_M)
        block_n = block_n * CLUSTER_N + block % CLUSTER_N
        _sum_partials(base, c, counters, block, block_m * BM, block_n * BN, rows, N, size,
                      ranks * pieces, BM, BN, EVEN, SC)
    if _last_to_finish(sync + 1):
        wl.store(sync, calls + 1)


# Columns the partials are summed in at a time: two such tiles are all the
# summing keeps in registers (a block's sums and a loaded partial of the
# whole block would take 256 registers a thread on GPUs: spills in the K
# loop, bench/README.md).
SUM_COLS = PerBackend(host=8, default=64)


@jit
def _sum_partials(base, c, counters, block, m0, n0, rows, N, size, count,
                  BM: wl.constexpr, BN: wl.constexpr, EVEN: wl.constexpr, SC: wl.constexpr):
    """c's block at m0, n0 = the sum of its `count` partials in slot order
    once they have all landed, SC columns at a time (one order: the same
    bits on every run, and on every rank that sums the block). Zeroes the
    block's counter for the next call of this parity."""
    rm = m0 + wl.arange(0, BM)
    wl.wait(counters + block, count, cmp="ge")
    zero = None if EVEN else 0.0
    for j in range(0, BN, SC):
        rn = n0 + j + wl.arange(0, SC)
        offs = rm[:, None] * N + rn[None, :]
        mask = None if EVEN else (rm[:, None] < rows) & (rn[None, :] < N)
        total = wl.load(base + offs, mask=mask, other=zero).to(wl.float32)
        for s in range(1, count):
            total += wl.load(base + s * size + offs, mask=mask, other=zero).to(wl.float32)
        wl.store(c + offs, total, mask=mask)
    wl.store(counters + block, 0)


# What `partials=` names: the dtype partial products cross between ranks in.
PARTIALS = {"f32": wl.float32, "bf16": wl.bfloat16}


@plan_memo
def _reduce_plan(rows, n, k, ranks, scatter, backend, dtype, partials, descriptors=None):
    """How matmul_reduce_kernel runs the second layer for `rows` x n x k
    products on `ranks` ranks on `backend` (_fused_plan's), its partials
    as `partials` names (PARTIAL: their dtype)."""
    constexprs, options, blocks, pieces, steps = _fused_plan(
        rows, rows, n, k, ranks if scatter else 1, backend, dtype, descriptors)
    # On one rank no partial crosses: bf16 would round for nothing.
    partial = PARTIALS[partials] if ranks > 1 else wl.float32
    return (dict(constexprs, SCATTER=scatter, SC=SUM_COLS, PARTIAL=partial), options, blocks,
            pieces, steps)


def compile_matmul_reduce(m, n, k, ranks, scatter, target, partials="f32"):
    """Compiles for `target`, without launching, what matmul_reduce_scatter
    (scatter) or matmul_all_reduce launches on `ranks` ranks for a bf16 a
    (m x k, 16-byte aligned) and b (k x n) (warming a kernel cache)."""
    backend = target.split(":")[0]
    rows = m // ranks if scatter else m
    constexprs, options, _, _, _ = _reduce_plan(rows, n, k, ranks, scatter, backend,
                                                wl.bfloat16, partials)
    sig = matmul_signature(rows, n, k, constexprs, backend, "*fp32:16")
    compile_kernel(matmul_reduce_kernel,
                   dict(a=sig["a"], b=sig["b"], c=sig["c"],
                        slots=f"*{constexprs['PARTIAL'].name}:16",
                        half="i32:16",
                        sync="*i64:16", rows=sig["M"], N=sig["N"], K=sig["K"], k_steps="i32"),
                   constexprs, target=target, **options)


def _matmul_reduce(op, a, b, out, num_programs, scatter, partials):
    if partials not in PARTIALS:
        raise ValueError(f"{op}: partials must be one of {', '.join(map(repr, PARTIALS))}, "
                         f"not {partials!r}")
    m, k, n = _check_operands(op, a, b)
    ranks = rt.num_ranks()
    if scatter and m % ranks:
        raise ValueError(f"{op}: a has {m} rows, which num_ranks = {ranks} does not "
                         f"divide (rank r gets rows [r*M/{ranks}, (r+1)*M/{ranks}))")
    if num_programs is not None and int(num_programs) < 1:
        raise ValueError(f"{op}: num_programs must be at least 1, got {num_programs}")
    rows = m // ranks if scatter else m
    out = _output(op, out, rows, n, out_dtypes(_dtype_of(a, "a")))
    if rows * n == 0:
        return out
    backend = rt.backend()
    fit = None if tensor_maps_fit(a, b) else False
    constexprs, options, blocks, pieces, steps = _reduce_plan(
        rows, n, k, ranks, scatter, backend, _dtype_of(a, "a"), partials, fit)
    if ranks == 1 and pieces == 1:  # nothing to sum: the product alone, in one piece of K
        return _matmul(a, b, out, 1, None, fit, False)
    if blocks > FUSED_BLOCKS:
        raise ValueError(f"{op}: {rows} x {n} is {blocks} output blocks, more than the "
                         f"{FUSED_BLOCKS} the kernel counts")
    count = ranks * pieces * rows * n         # one parity's slots
    if 2 * count >= 1 << 31:
        raise ValueError(f"{op}: {rows} x {n} needs {count} {partials} of scratch, more than "
                         f"a kernel addresses (2^31)")
    comm = _node_comm(op)
    # Either dtype's halves split the same bytes in the same place, so calls
    # of both kinds share the scratch (_Comm.halves).
    slots, half = comm.halves("fused", count, constexprs["PARTIAL"])
    if constexprs["DESC"]:
        a, b = blocks_of(a, b, constexprs)
    # The kernel's longer loop, over every piece of every destination's
    # blocks, bounds the programs (a resident launch cuts them to those
    # that fit the GPU at once).
    cluster = constexprs["CLUSTER_N"]
    items = (ranks if scatter else 1) * pieces * blocks // cluster
    matmul_reduce_kernel[(_resident_grid(items, num_programs, cluster, backend),)](
        a, b, out, slots, half, comm.fused_sync, rows, n, k, steps, resident=True, **options,
        **constexprs)
    return out


def matmul_reduce_scatter(a, b, out=None, num_programs=None, partials="f32"):
    """The row-parallel second layer with its reduce-scatter: a is this
    rank's M x K slice (its share of the K dimension), b is K x N (both
    fp16, bf16 or fp32, one dtype; local or symmetric: only this rank reads
    them), M a multiple of num_ranks. Rank r's out ((M / num_ranks) x N
    fp32 or a's 16-bit dtype, local or symmetric; fp32, allocated, when
    None) = rows [r*M/R, (r+1)*M/R) of the sum over ranks of a @ b, summed
    in f32 in one order (the same bits on every run), rounded once to a
    16-bit out. partials: the dtype the partial products
    cross between ranks in, "f32" (default: out is the f32 sum of the f32
    products) or "bf16" (half the bytes; each partial rounded once to
    bf16, so |error| <= 2^-8 x the sum over ranks of |partial|, before
    f32's own rounding of the sum; on one rank, where nothing crosses,
    the partials stay f32). num_programs: at most that many
    programs (default: all that run at once; on one rank, where K is not
    split, the call is weft.ops.matmul's, whose grid is the output's
    blocks). Returns out."""
    return _kept_matmul_reduce("matmul_reduce_scatter", a, b, out, num_programs, True, partials)


def matmul_all_reduce(a, b, out=None, num_programs=None, partials="f32"):
    """The row-parallel second layer with its all-reduce, for small M
    (decode): out (M x N on every rank, bit-identical) = the sum over
    ranks of a @ b, a (M x K) and b (K x N) as for matmul_reduce_scatter,
    partials too. Each partial block is pushed to every rank (one-shot): 2
    x num_ranks x pieces x M x N partials of scratch per rank, so it suits
    small M. Returns out."""
    return _kept_matmul_reduce("matmul_all_reduce", a, b, out, num_programs, False, partials)


def _kept_matmul_reduce(op, a, b, out, num_programs, scatter, partials):
    """_matmul_reduce, as a kept call (weft/_plans.py) where out is given
    (otherwise every call allocates its out)."""
    if out is None:
        return _matmul_reduce(op, a, b, out, num_programs, scatter, partials)
    _kept(op, (a, b, out), (num_programs, partials), _matmul_reduce, op, a, b, out,
          num_programs, scatter, partials)
    return out
