"""Tensor-parallel GEMMs with their communication fused in: the first,
column-parallel layer, weft.ops.all_gather_matmul, and what the second
layer (_second_layer.py) shares with it: the fused plan, the resident
grid and the copy engine's flagged puts.

By default ("overlap") one resident launch (ag_matmul_kernel) multiplies
while every rank's A goes, a chunk of rows at a time, into a symmetric
scratch of every other rank, each chunk flagged there: moved by the copy
engine beside the kernel (large A) or by a few of its programs while the
others multiply; a product waits only for its rows' flags (a rank
multiplies its own rows from A). Where matmul would split K (decode),
"gather" runs the all-gather (weft.collectives.all_gather) and then
weft.ops.matmul. Every A tile crosses NVLink once in both. "pull" loads
the A tiles from their owner straight into wl.dot (peer=owner): a
crossing per column block of the output.

"pull"'s synchronisation uses the collectives' flags, and a phase's waits
need every program of its launch resident at once (a GEMM grid is not),
so it runs in small launches of its own around the GEMM, on the same
stream: when a phase launch (program i of every rank meets program i of
every other rank) has finished on a rank, every rank's phase launch has
started, so everything each rank launched before it is complete, and its
release covers those earlier launches' writes.
"""
from .. import _runtime as rt
from .. import language as wl
from .._jit import compile as compile_kernel, jit
from .._jit import PerBackend, TensorDescriptor
from ..collectives._kernels import (FUSED_ARRIVALS, FUSED_BLOCKS, FUSED_DONE, FUSED_EPOCH,
                                    FUSED_LAST, _begin, _end, _fused_call_done, _sync)
from ..collectives import _dtype_of, _get_comm, _is_symmetric, _kept, _node_comm, all_gather
from ._gemm import (BK, BLOCKS, BM, BN, DEFAULT_PROGRAMS, _block_product, _check_operands,
                    _config_for, _grouped, _output, _piece_product, _pieces, _programs, _wave,
                    blocks_of, even_blocks, int_type, matmul, matmul_signature, out_dtypes,
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
# copy engine moves the rows"). The second layer's partials go the same
# way from the same size (per destination).
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
def put_entry_kernel(sync):
    """Before a fused call's puts by the copy engine (one program, on the
    call's stream): waits until every rank has finished my last call of a
    kernel that flags FUSED_DONE (a peer may still read the scratch the
    puts write, for it), then leaves this call's epoch where the puts copy
    their arrival flags from (_flagged_puts)."""
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
    put_entry_kernel) or, with SM_COPIES, by the programs themselves, CM (=
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
    set by its last program; put_entry_kernel waits so before the puts).
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


def _fused_plan(m, rows, n, k, sources, backend, dtype, descriptors, rounds=1):
    """How a fused GEMM runs products of `rows` x n x k from each of
    `sources` ranks on `backend`, with matmul's blocks and clusters for an
    m x n x k product (_config_for's, `rounds` as there): (constexprs with
    EVEN, DESC and CLUSTER_N, launch options, output blocks per source,
    pieces of K, BK steps per piece). descriptors: the operands go as
    tensor descriptors (None: where the blocks tile the product)."""
    constexprs, warps, stages, wave, (bm, bn, bk), cluster = _config_for(
        m, n, k, backend, dtype, rounds=rounds)
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
    rank, pieces of K matmul would split the product into). The large
    blocks take two waves or more (rounds=2): at one, every program
    multiplies a single block, and those of the peers' rows wait out the
    whole crossing (ag_gemm 1024 x 8192 on 2 H200s: 129-132 us against
    103 in two waves of 128 x 128; bench/README.md, "Prefill: the first
    layer's blocks by waves, the two-shot from 512 rows")."""
    constexprs, options, blocks, pieces, _ = _fused_plan(ranks * rows, rows, n, k, ranks,
                                                         backend, dtype, descriptors,
                                                         rounds=2)
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
    flag_rows = int_type(_flag_rows(rows, constexprs, backend))
    compile_kernel(ag_matmul_kernel,
                   dict(a="*bf16:16", a_blocks=sig["a"], g="*bf16:16", g_blocks=g_blocks,
                        b=sig["b"], c=sig["c"], sync="*i64:16", rows=sig["M"], N=sig["N"],
                        K=sig["K"], flag_rows=flag_rows),
                   constexprs, target=target, **options)
    if not constexprs["SM_COPIES"]:
        compile_kernel(put_entry_kernel, dict(sync="*i64:16"), {}, target=target)


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
        put_entry_kernel[(1,)](comm.fused_sync)
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
    other rank's g, flag_rows at a time (the next rank first)."""
    me, ranks = rt.rank(), rt.num_ranks()
    row = k * dtype.bits // 8                 # bytes
    return rt.Puts([put for d in range(1, ranks) for put in _flagged_puts(
        sync, rt.data_ptr(g) + me * rows * row, rt.data_ptr(a), rows, row, flag_rows,
        me * -(-rows // flag_rows), (me + d) % ranks)])


def _flagged_puts(sync, dst, src, rows, row, chunk_rows, first_flag, peer):
    """(dst, src, size, signal, signal_src, peer) of the copy engine's puts
    of `rows` rows of `row` bytes from src to dst on `peer`, chunk_rows at
    a time, each setting arrival flag first_flag + its chunk there (from
    FUSED_ARRIVALS of sync) to the epoch put_entry_kernel left."""
    flags = rt.data_ptr(sync) + 8 * (FUSED_ARRIVALS + first_flag)
    epoch = rt.data_ptr(sync) + 8 * FUSED_EPOCH
    return [(dst + r * row, src + r * row, min(chunk_rows, rows - r) * row,
             flags + 8 * (r // chunk_rows), epoch, peer) for r in range(0, rows, chunk_rows)]
