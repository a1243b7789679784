"""The tensor-parallel second layer: a GEMM whose K dimension is split over
the ranks, so the result is a sum over ranks, fused with the reduction that
follows it: weft.ops.matmul_reduce_scatter and weft.ops.matmul_all_reduce.

Design (deterministic, no atomics): every program computes partial output
blocks of its own a @ b and pushes each into the symmetric scratch `slots`
of the rank(s) that need it, at the slot of the source rank (slots is
num_ranks x rows x N f32 on every rank); one phase later each rank sums its
slots in rank order 0..R-1. Every element is therefore the same f32 sum, in
the same order, on every run and on every rank that holds it, like the
collectives' results. The partial products never pass through a separate
collective, and the reduction reads only local memory.
"""
from .. import _runtime as rt
from .. import language as wl
from .._jit import jit
from ..collectives._kernels import _begin, _end, _sync
from ..collectives import _get_comm
from ._gemm import BK, BM, BN, _block_product, _check_operands, _output, _programs


@jit
def matmul_reduce_kernel(a, b, c, slots, flags, epochs, rows, N, K,
                         SCATTER: wl.constexpr, BM: wl.constexpr, BN: wl.constexpr,
                         BK: wl.constexpr):
    """c = rows of sum over ranks p of a_p @ b_p (a_p: M x K, b_p: K x N).
    SCATTER: M = ranks * rows and rank r's c is rows [r*rows, (r+1)*rows)
    (reduce-scatter); else M = rows and every rank's c is all of it
    (all-reduce). Rank p's partial of a block goes to slot p of `slots` on
    the rank that owns the block's rows (SCATTER) or on every rank."""
    me = wl.rank()
    ranks = wl.num_ranks()
    pid = wl.program_id(0)
    step = wl.num_programs(0)
    epoch = _begin(epochs)
    tiles_n = (N + BN - 1) // BN
    blocks = ((rows + BM - 1) // BM) * tiles_n      # output blocks of one destination
    # Program i computes and then reduces blocks i, i + step, ... of every
    # destination, so what program i of a rank sums is exactly what program
    # i of every rank pushed to it: the pairwise phases are enough.
    for j in range(pid, blocks, step):
        rm = (j // tiles_n) * BM + wl.arange(0, BM)
        rn = (j % tiles_n) * BN + wl.arange(0, BN)
        mask = (rm[:, None] < rows) & (rn[None, :] < N)
        mine = slots + (me * rows + rm[:, None]) * N + rn[None, :]
        # Ranks start at different destinations (me + 1, ...), so they do not
        # all push into one rank's memory at once; the local slot comes last.
        if SCATTER:
            for s in range(1, ranks + 1):
                dest = (me + s) % ranks
                acc = _block_product(a + dest * rows * K, b, rm, rn, rows, N, K, 0, K, 0,
                                     False, BM, BN, BK)
                wl.store(mine, acc, mask=mask, peer=dest)
        else:
            acc = _block_product(a, b, rm, rn, rows, N, K, 0, K, 0, False, BM, BN, BK)
            for s in range(1, ranks + 1):
                wl.store(mine, acc, mask=mask, peer=(me + s) % ranks)
    _sync(flags, 1, epoch)                    # every partial of my blocks has arrived
    for j in range(pid, blocks, step):
        rm = (j // tiles_n) * BM + wl.arange(0, BM)
        rn = (j % tiles_n) * BN + wl.arange(0, BN)
        mask = (rm[:, None] < rows) & (rn[None, :] < N)
        offs = rm[:, None] * N + rn[None, :]
        acc = wl.load(slots + offs, mask=mask, other=0.0)
        for p in range(1, ranks):             # rank order: the same sum everywhere
            acc += wl.load(slots + p * rows * N + offs, mask=mask, other=0.0)
        wl.store(c + offs, acc, mask=mask)
    _sync(flags, 2, epoch)                    # nobody writes or reads my slots any more
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
    grid = _programs(num_programs, -(-rows // BM[backend]) * -(-n // BN[backend]))
    if rows * n == 0:
        return out
    comm = _get_comm()
    slots = comm.buffer("fused", ranks * rows * n, wl.float32)
    matmul_reduce_kernel[grid](a, b, out, slots, comm.flags, comm.epochs, rows, n, k,
                               SCATTER=scatter, BM=BM, BN=BN, BK=BK)
    return out


def matmul_reduce_scatter(a, b, out=None, num_programs=None):
    """The row-parallel second layer with its reduce-scatter: a is this
    rank's M x K slice (its share of the K dimension), b is K x N (both
    fp16, bf16 or fp32, one dtype; local or symmetric: only this rank reads
    them), M a multiple of num_ranks. Rank r's out ((M / num_ranks) x N
    fp32, local or symmetric; allocated when None) = rows [r*M/R,
    (r+1)*M/R) of the sum over ranks of a @ b, summed in rank order (the
    same bits on every run). Returns out."""
    return _matmul_reduce("matmul_reduce_scatter", a, b, out, num_programs, True)


def matmul_all_reduce(a, b, out=None, num_programs=None):
    """The row-parallel second layer with its all-reduce, for small M
    (decode): out (M x N fp32 on every rank, bit-identical) = the sum over
    ranks of a @ b, a (M x K) and b (K x N) as for matmul_reduce_scatter.
    Each partial block is pushed to every rank (one-shot): num_ranks x M x
    N f32 of scratch per rank, so it suits small M. Returns out."""
    return _matmul_reduce("matmul_all_reduce", a, b, out, num_programs, False)
