"""Tensor-parallel GEMMs with their communication fused in:
weft.ops.all_gather_matmul (the first, column-parallel layer) and
weft.ops.matmul_reduce_scatter / weft.ops.matmul_all_reduce (the second,
row-parallel layer, whose K dimension is split over the ranks).

First layer. By default the all-gather and the GEMM are two launches: the
ranks push their A into a symmetric scratch of every rank at NVLink speed
(weft.collectives.all_gather), then weft.ops.matmul runs with the blocks
it picks for the shape, so every A tile crosses NVLink once. The "pull"
algorithm keeps the communication in the GEMM instead: its programs load
their A tiles from the owner straight into wl.dot (peer=owner), which
costs a crossing per column block of the output.

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
from ..collectives._kernels import FUSED_BLOCKS, _begin, _end, _push, _sync
from ..collectives import _dtype_of, _get_comm, all_gather
from ._gemm import (BK, BLOCKS, BM, BN, DEFAULT_PROGRAMS, _block_product, _check_operands,
                    _config_for, _grouped, _output, _piece_product, _pieces, _programs, _wave,
                    blocks_of, even_blocks, matmul, matmul_signature, tensor_maps_fit,
                    zero_f32)


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


def all_gather_matmul(a, b, out=None, num_programs=None, algorithm="gather"):
    """out = all_gather(a) @ b, in f32: a is this rank's rows x K (a
    symmetric weft.Buffer, f16, bf16 or f32), b is K x N (local or
    symmetric, a's dtype), out (num_ranks * rows) x N f32 (local or
    symmetric; a new local weft.Buffer when None). Returns out.

    algorithm "gather" (default): every rank pushes its a into a symmetric
    scratch of every rank (weft.collectives.all_gather), then weft.ops.matmul
    multiplies the gathered rows with the blocks it picks for the shape:
    each A tile crosses NVLink once. "pull": one GEMM whose programs load
    their A tiles from the owner straight into wl.dot, so a remote tile
    crosses once per column block of out (fine while A is a few rows). With
    split-K (small grids) the sum's rounding order varies, as in
    weft.ops.matmul. num_programs: the all-gather's programs ("gather"), or
    those of the two phase launches around the GEMM ("pull", default 1:
    one program meeting every rank is a full barrier)."""
    if not isinstance(a, rt.Buffer) or len(a.shape) != 2:
        raise ValueError("all_gather_matmul: a must be a 2-D symmetric weft.Buffer "
                         "(peers read it)")
    if algorithm not in ("gather", "pull"):
        raise ValueError(f"all_gather_matmul: algorithm must be 'gather' or 'pull', "
                         f"not {algorithm!r}")
    rows, k, n = _check_operands("all_gather_matmul", a, b)
    ranks = rt.num_ranks()
    out = _output("all_gather_matmul", out, ranks * rows, n)
    phases = _programs(num_programs, 1)
    if rows * n == 0:
        return out
    comm = _get_comm()
    if algorithm == "gather":
        gathered = comm.buffer("gathered", ranks * rows * k, a.dtype)
        all_gather(a, gathered, num_programs=num_programs)
        gathered.shape = (ranks * rows, k)
        return matmul(gathered, b, out)
    backend = rt.backend()
    tiles_m, tiles_n = -(-rows // BM[backend]), -(-n // BN[backend])
    pieces, steps = _pieces(ranks * tiles_m * tiles_n, k, BK[backend], _wave(BM[backend]))
    if pieces > 1:
        zero_f32(out, ranks * rows * n)
    phase_kernel[phases](comm.flags, comm.epochs, PHASE=0)     # every rank's a is ready
    all_gather_matmul_kernel[(ranks * tiles_m, tiles_n, pieces)](
        a, b, out, rows, n, k, steps, **BLOCKS)
    phase_kernel[phases](comm.flags, comm.epochs, PHASE=1)     # nobody reads my a any more
    return out


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
def matmul_reduce_kernel(a, b, c, slots, sync, rows, N, K, k_steps, SCATTER: wl.constexpr,
                         BM: wl.constexpr, BN: wl.constexpr, BK: wl.constexpr,
                         EVEN: wl.constexpr, DESC: wl.constexpr, GROUP_M: wl.constexpr = 8):
    """The second layer in one launch: c (rows x N, this rank's) = the sum
    over ranks r and pieces z of K of partial (r, z) of the block, added
    in one fixed order. Programs are resident together (a resident launch)
    and take items i, i + num_programs, ... of this rank's list:

    1. Partials for others: each product of a block of a (its rows of rank
       `dest` when SCATTER) and b over piece z goes into slot (me, z) of
       the block on `dest` (SCATTER: the rank owning the rows, the next
       rank's first and this rank's own last, so the partials cross while
       the others compute theirs; else every rank), and counts there on
       the block's counter. The count for one partial is made after the
       next product, so that its stores drain under that product rather
       than stall the program.
    2. Sums: SCATTER, the last piece of each of this rank's blocks, which
       then waits for the other ranks * pieces - 1 partials and adds them
       to its own; else, once the program has counted its last partial,
       each block of c waits for all ranks * pieces partials (every rank
       sums every block: one-shot).

    Programs wait only after counting every partial they made, so while
    they are all resident every wait ends. slots (f32) and the counters
    alternate between two sets by the parity of the rank's calls (sync[0];
    the last program to finish, counted in sync[1], moves it on): a rank
    can start its next call while another is still summing this one, but
    not the one after (that needs this rank's partials of the next call,
    made after this call has finished here). The summing program zeroes
    its counter."""
    me = wl.rank()
    ranks = wl.num_ranks()
    blocks_m = (rows + BM - 1) // BM
    blocks_n = (N + BN - 1) // BN
    blocks = blocks_m * blocks_n
    # rows, written so that the compiler sees whole blocks where they are:
    # a's row offsets then stay multiples of BM, and each block of a is
    # one bulk copy (docs/tile-ir.md, "Views").
    rows_even = rows // BM * BM if EVEN else rows
    k_chunk = k_steps * BK                    # whole BK steps: aligned offsets
    pieces = wl.maximum(1, (K + k_chunk - 1) // k_chunk)
    count = ranks * pieces                    # partials per block
    size = rows * N                           # one slot
    calls = wl.load(sync)
    parity = calls % 2
    counters = sync + 2 + parity * FUSED_BLOCKS
    base = slots + parity * count * size
    own = me * pieces + pieces - 1            # SCATTER: the summing program's own
    per_dest = pieces * blocks
    items = per_dest * ranks if SCATTER else per_dest
    pending = -1                              # the block of an uncounted partial
    pending_dest = 0
    for i in range(wl.program_id(0), items, wl.num_programs(0)):
        dest = (me + 1 + i // per_dest) % ranks if SCATTER else me
        z = i % per_dest // blocks
        block = i % blocks
        block_m, block_n = _grouped(block, blocks_m, blocks_n, GROUP_M)
        acc = _piece_product(a, b, dest * rows_even if SCATTER else 0, block_m * BM,
                             block_n * BN, rows, N, K, z * k_chunk, k_chunk, BM, BN, BK,
                             EVEN, DESC)
        if pending >= 0:
            _signal_partial(counters, pending, pending_dest, SCATTER)
        if i >= items - blocks if SCATTER else False:     # my block's last piece
            _sum_partials(acc, base, c, counters, block, block_m * BM, block_n * BN, rows, N,
                          size, own, count, SCATTER, BM, BN, EVEN)
            pending = -1
        else:
            rm = block_m * BM + wl.arange(0, BM)
            rn = block_n * BN + wl.arange(0, BN)
            offs = (me * pieces + z) * size + rm[:, None] * N + rn[None, :]
            mask = None if EVEN else (rm[:, None] < rows) & (rn[None, :] < N)
            if SCATTER:
                wl.store(base + offs, acc, mask=mask, peer=dest)
            else:
                _push(base + offs, acc, mask, me)  # the next rank first, this one last
            pending = block
            pending_dest = dest
    if pending >= 0:
        _signal_partial(counters, pending, pending_dest, SCATTER)
    if not SCATTER:
        for block in range(wl.program_id(0), blocks, wl.num_programs(0)):
            block_m, block_n = _grouped(block, blocks_m, blocks_n, GROUP_M)
            _sum_partials(None, base, c, counters, block, block_m * BM, block_n * BN, rows, N,
                          size, own, count, SCATTER, BM, BN, EVEN)
    if wl.atomic_add(sync + 1, 1) == wl.num_programs(0) - 1:   # the last program
        wl.store(sync + 1, 0)
        wl.store(sync, calls + 1)


@jit
def _sum_partials(acc, base, c, counters, block, m0, n0, rows, N, size, own, count,
                  SCATTER: wl.constexpr, BM: wl.constexpr, BN: wl.constexpr,
                  EVEN: wl.constexpr):
    """c's block at m0, n0 = the sum of its `count` partials once they have
    all landed: SCATTER, acc (partial `own`, in registers) and then the
    others in order (one rank sums a block: the same bits on every run);
    else all of them in order (every rank sums every block: the same bits
    on every rank). Zeroes the block's counter for the next call of this
    parity."""
    wl.wait(counters + block, count - 1 if SCATTER else count, cmp="ge")
    rm = m0 + wl.arange(0, BM)
    rn = n0 + wl.arange(0, BN)
    offs = rm[:, None] * N + rn[None, :]
    mask = None if EVEN else (rm[:, None] < rows) & (rn[None, :] < N)
    zero = None if EVEN else 0.0
    if SCATTER:
        total = acc
        for s in range(own):
            total += wl.load(base + s * size + offs, mask=mask, other=zero)
        for s in range(own + 1, count):
            total += wl.load(base + s * size + offs, mask=mask, other=zero)
    else:
        total = wl.load(base + offs, mask=mask, other=zero)
        for s in range(1, count):
            total += wl.load(base + s * size + offs, mask=mask, other=zero)
    wl.store(c + offs, total, mask=mask)
    wl.store(counters + block, 0)


def _reduce_plan(rows, n, k, ranks, scatter, backend, dtype, descriptors=None):
    """How matmul_reduce_kernel runs the second layer for `rows` x n x k
    products on `ranks` ranks on `backend`: (constexprs, launch options,
    output blocks, pieces of K, BK steps per piece). matmul's blocks for the product
    (no clusters: a resident launch takes none); descriptors: a and b go
    as tensor descriptors (None: where the blocks tile the product)."""
    constexprs, warps, stages, wave, (bm, bn, bk), _ = _config_for(rows, n, k, backend, dtype)
    blocks = -(-rows // bm) * -(-n // bn)
    pieces, steps = _pieces((ranks if scatter else 1) * blocks, k, bk, wave)
    even = even_blocks(rows, n, k, constexprs)
    if descriptors is None:
        descriptors = even[backend] and k > 0
    constexprs = dict(constexprs, SCATTER=scatter, EVEN=even, DESC=descriptors)
    return constexprs, dict(num_warps=warps, num_stages=stages), blocks, pieces, steps


def compile_matmul_reduce(m, n, k, ranks, scatter, target):
    """Compiles for `target`, without launching, what matmul_reduce_scatter
    (scatter) or matmul_all_reduce launches on `ranks` ranks for a bf16 a
    (m x k, 16-byte aligned) and b (k x n) (warming a kernel cache)."""
    backend = target.split(":")[0]
    rows = m // ranks if scatter else m
    constexprs, options, _, _, _ = _reduce_plan(rows, n, k, ranks, scatter, backend,
                                                wl.bfloat16)
    sig = matmul_signature(rows, n, k, constexprs, backend, "*fp32:16")
    compile_kernel(matmul_reduce_kernel,
                   dict(a=sig["a"], b=sig["b"], c=sig["c"], slots="*fp32:16", sync="*i64:16",
                        rows=sig["M"], N=sig["N"], K=sig["K"], k_steps="i32"),
                   constexprs, target=target, **options)


def _matmul_reduce(op, a, b, out, num_programs, scatter):
    m, k, n = _check_operands(op, a, b)
    ranks = rt.num_ranks()
    if scatter and m % ranks:
        raise ValueError(f"{op}: a has {m} rows, which num_ranks = {ranks} does not "
                         f"divide (rank r gets rows [r*M/{ranks}, (r+1)*M/{ranks}))")
    if num_programs is not None and int(num_programs) < 1:
        raise ValueError(f"{op}: num_programs must be at least 1, got {num_programs}")
    rows = m // ranks if scatter else m
    out = _output(op, out, rows, n)
    if rows * n == 0:
        return out
    backend = rt.backend()
    constexprs, options, blocks, pieces, steps = _reduce_plan(
        rows, n, k, ranks, scatter, backend, _dtype_of(a, "a"),
        None if tensor_maps_fit(a, b) else False)
    if blocks > FUSED_BLOCKS:
        raise ValueError(f"{op}: {rows} x {n} is {blocks} output blocks, more than the "
                         f"{FUSED_BLOCKS} the kernel counts")
    count = 2 * ranks * pieces * rows * n     # both parities' slots
    if count >= 1 << 31:
        raise ValueError(f"{op}: {rows} x {n} needs {count} f32 of scratch, more than a "
                         f"kernel addresses (2^31)")
    comm = _get_comm()
    slots = comm.buffer("fused", count, wl.float32, drain=True)
    if constexprs["DESC"]:
        a, b = blocks_of(a, b, constexprs)
    # The kernel's longer loop, over every piece of every destination's
    # blocks, bounds the programs (a resident launch cuts them to those
    # that fit the GPU at once).
    items = (ranks if scatter else 1) * pieces * blocks
    if num_programs is None:
        num_programs = DEFAULT_PROGRAMS["host"] if backend == "host" else items
    matmul_reduce_kernel[(min(items, int(num_programs)),)](
        a, b, out, slots, comm.fused_sync, rows, n, k, steps, resident=True, **options,
        **constexprs)
    return out


def matmul_reduce_scatter(a, b, out=None, num_programs=None):
    """The row-parallel second layer with its reduce-scatter: a is this
    rank's M x K slice (its share of the K dimension), b is K x N (both
    fp16, bf16 or fp32, one dtype; local or symmetric: only this rank reads
    them), M a multiple of num_ranks. Rank r's out ((M / num_ranks) x N
    fp32, local or symmetric; allocated when None) = rows [r*M/R,
    (r+1)*M/R) of the sum over ranks of a @ b, summed in one order (the
    same bits on every run). num_programs: at most that many programs
    (default: all that run at once). Returns out."""
    return _matmul_reduce("matmul_reduce_scatter", a, b, out, num_programs, True)


def matmul_all_reduce(a, b, out=None, num_programs=None):
    """The row-parallel second layer with its all-reduce, for small M
    (decode): out (M x N fp32 on every rank, bit-identical) = the sum over
    ranks of a @ b, a (M x K) and b (K x N) as for matmul_reduce_scatter.
    Each partial block is pushed to every rank (one-shot): 2 x num_ranks x
    pieces x M x N f32 of scratch per rank, so it suits small M. Returns
    out."""
    return _matmul_reduce("matmul_all_reduce", a, b, out, num_programs, False)
