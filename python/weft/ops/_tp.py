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

Second layer. The GEMM runs on a full grid (a program per output block and
piece of K, like weft.ops.matmul) and pushes each partial block into the
symmetric scratch of the rank that needs it (wl.store(..., peer=dest)).

Only the synchronisation uses the collectives' flags, and a phase's waits
need every program of its launch resident at once (a GEMM grid is not), so
it runs in small launches of its own around the GEMM, on the same stream:
when a phase launch (program i of every rank meets program i of every
other rank) has finished on a rank, every rank's phase launch has started,
so everything each rank launched before it is complete, and its release
covers those earlier launches' writes.

Second layer, deterministic: slots is (num_ranks * pieces) x rows x N f32
on every rank; slot (p, piece) holds rank p's partial product over that
piece of its K. The reduce launch waits for every rank's pushes, sums the
slots in order (rank-major, then piece) and frees them with an exit phase,
so every element is the same f32 sum, in the same order, on every run and
on every rank that holds it. No atomics, no separate collective.
"""
from .. import _runtime as rt
from .. import language as wl
from .._jit import jit
from ..collectives._kernels import _begin, _end, _sync
from ..collectives import BLOCK, _dtype_of, _get_comm, all_gather
from ._gemm import (BK, BLOCKS, BM, BN, _block_product, _check_operands, _config_for,
                    _output, _pieces, _programs, _wave, even_blocks, matmul, zero_f32)


@jit
def phase_kernel(flags, epochs, PHASE: wl.constexpr):
    """One phase of the collectives' flags as a launch of its own: the
    entry (0: every rank's earlier work, e.g. writing `a`, is done) or the
    exit (2: every rank's earlier work, e.g. reading my `a`, is done)."""
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
    phase_kernel[phases](comm.flags, comm.epochs, PHASE=2)     # nobody reads my a any more
    return out


@jit(do_not_specialize=("k_steps",))
def matmul_push_kernel(a, b, slots, rows, N, K, k_steps, SCATTER: wl.constexpr,
                       BM: wl.constexpr, BN: wl.constexpr, BK: wl.constexpr,
                       EVEN: wl.constexpr):
    """The partial product of this rank's a (M x K) and b (K x N) over one
    piece of K (grid axis 2) for one output block, pushed into slot (me,
    piece) of its destination's slots. SCATTER: the destination is the
    rank owning the block's rows (axis 0: the destinations' row blocks);
    else every rank, starting with the next one (ranks push to different
    ranks at once), this one last."""
    me = wl.rank()
    ranks = wl.num_ranks()
    pieces = wl.num_programs(2)
    tiles_m = (rows + BM - 1) // BM
    dest = wl.program_id(0) // tiles_m if SCATTER else 0
    rm = (wl.program_id(0) % tiles_m) * BM + wl.arange(0, BM)
    rn = wl.program_id(1) * BN + wl.arange(0, BN)
    k_chunk = k_steps * BK
    k_lo = wl.program_id(2) * k_chunk
    acc = _block_product(a + dest * rows * K, b, rm, rn, rows, N, K, k_lo,
                         wl.minimum(K, k_lo + k_chunk), 0, False, BM, BN, BK, EVEN)
    slot = slots + ((me * pieces + wl.program_id(2)) * rows + rm[:, None]) * N + rn[None, :]
    mask = (rm[:, None] < rows) & (rn[None, :] < N)
    if SCATTER:
        wl.store(slot, acc, mask=mask, peer=dest)
    else:
        for s in range(1, ranks + 1):
            wl.store(slot, acc, mask=mask, peer=(me + s) % ranks)


@jit
def slots_reduce_kernel(slots, c, flags, epochs, n, count, BLOCK: wl.constexpr):
    """c[:n] = the sum of the `count` slots of n f32 each, in slot order,
    between the phase that makes every rank's pushes (its previous launch)
    visible and the one after which they may push again."""
    pid = wl.program_id(0)
    epoch = _begin(epochs)
    _sync(flags, 1, epoch)                    # every rank's partials have landed here
    for start in range(pid * BLOCK, n, wl.num_programs(0) * BLOCK):
        offs = start + wl.arange(0, BLOCK)
        mask = offs < n
        acc = wl.load(slots + offs, mask=mask, other=0.0)
        for s in range(1, count):
            acc += wl.load(slots + s * n + offs, mask=mask, other=0.0)
        wl.store(c + offs, acc, mask=mask)
    _sync(flags, 2, epoch)                    # nobody reads my slots any more
    _end(epochs, epoch)


def _matmul_reduce(op, a, b, out, num_programs, scatter):
    m, k, n = _check_operands(op, a, b)
    ranks = rt.num_ranks()
    if scatter and m % ranks:
        raise ValueError(f"{op}: a has {m} rows, which num_ranks = {ranks} does not "
                         f"divide (rank r gets rows [r*M/{ranks}, (r+1)*M/{ranks}))")
    rows = m // ranks if scatter else m
    out = _output(op, out, rows, n)
    backend = rt.backend()
    grid = _programs(num_programs, -(-rows * n // BLOCK[backend]))
    if rows * n == 0:
        return out
    # matmul's blocks for each destination's rows x n x k product.
    # (No clusters: the push kernel's programs read their own blocks.)
    constexprs, warps, stages, wave, (bm, bn, bk), _ = _config_for(rows, n, k, backend,
                                                                   _dtype_of(a, "a"))
    tiles_m, tiles_n = -(-rows // bm), -(-n // bn)
    dests = ranks if scatter else 1
    pieces, steps = _pieces(dests * tiles_m * tiles_n, k, bk, wave)
    comm = _get_comm()
    slots = comm.buffer("fused", ranks * pieces * rows * n, wl.float32)
    matmul_push_kernel[(dests * tiles_m, tiles_n, pieces)](
        a, b, slots, rows, n, k, steps, SCATTER=scatter, num_warps=warps, num_stages=stages,
        EVEN=even_blocks(rows, n, k, constexprs), **constexprs)
    slots_reduce_kernel[grid](slots, out, comm.flags, comm.epochs, rows * n,
                              ranks * pieces, BLOCK=BLOCK)
    return out


def matmul_reduce_scatter(a, b, out=None, num_programs=None):
    """The row-parallel second layer with its reduce-scatter: a is this
    rank's M x K slice (its share of the K dimension), b is K x N (both
    fp16, bf16 or fp32, one dtype; local or symmetric: only this rank reads
    them), M a multiple of num_ranks. Rank r's out ((M / num_ranks) x N
    fp32, local or symmetric; allocated when None) = rows [r*M/R,
    (r+1)*M/R) of the sum over ranks of a @ b, summed in rank order (the
    same bits on every run). num_programs: of the reduce launch. Returns
    out."""
    return _matmul_reduce("matmul_reduce_scatter", a, b, out, num_programs, True)


def matmul_all_reduce(a, b, out=None, num_programs=None):
    """The row-parallel second layer with its all-reduce, for small M
    (decode): out (M x N fp32 on every rank, bit-identical) = the sum over
    ranks of a @ b, a (M x K) and b (K x N) as for matmul_reduce_scatter.
    Each partial block is pushed to every rank (one-shot): num_ranks x
    pieces x M x N f32 of scratch per rank, so it suits small M. Returns
    out."""
    return _matmul_reduce("matmul_all_reduce", a, b, out, num_programs, False)
