"""The second, row-parallel layer of tensor parallelism, whose K
dimension is split over the ranks: weft.ops.matmul_reduce_scatter and
weft.ops.matmul_all_reduce.

By default one resident launch (matmul_reduce_kernel). Its programs
compute the partial products for the other ranks first and push each into
a symmetric scratch of the rank that needs it (wl.store(..., peer=dest)),
counting it there on the block's counter; then each rank's own blocks wait
for their counts and add the partials to their own, in one order, so the
partials cross NVLink while the GEMM goes on. No phase launch, no host
barrier and no atomics on the data: every element is the same f32 sum, in
the same order, on every run and on every rank that holds it.

Where each rank's partial for another holds COPY_ENGINE_BYTES or more
(prefill), matmul_reduce_scatter hands the crossing to the copy engine
instead (_scatter_by_puts): the products of every other rank's rows come
first, as weft.ops.matmul launches into a local scratch, and the copy
engine puts each, a group of block rows at a time, into its owner's
scratch while this rank multiplies its own rows (own_rows_kernel), each
block adding the partials that have arrived for it. No program stores
across NVLink and none waits for another: the GEMM keeps every
multiprocessor (bench/README.md, "Prefill: the partials on the copy
engine"). matmul_all_reduce does the like from twice that size
(_all_reduce_by_puts), one-shot: each group of rows' product goes into
this rank's slot of a symmetric scratch and the copy engine puts it into
the same slot of every other rank's while the next group is multiplied;
after that product, all_reduce_sum_kernel adds the group's slots in rank
order (bench/README.md, "Prefill: the all-reduce on the copy engine").
Into a symmetric out with TWO_SHOT_ROWS rows a rank or more it is
two-shot instead: the reduce-scatter's path, the other ranks' rows
multiplied and put in two halves, its own rows summed into out a wave of
block rows a launch and each launch's rows put into every other rank's
out (bench/README.md, "Prefill: the all-reduce in two shots").
"""
from .. import _runtime as rt
from .. import language as wl
from .._jit import PerBackend, compile as compile_kernel, jit
from ..collectives._kernels import (FUSED_ARRIVALS, FUSED_BLOCKS, FUSED_COUNTERS, FUSED_EPOCH,
                                    _fused_call_done, _last_to_finish, _push)
from ..collectives import _dtype_of, _is_symmetric, _kept, _node_comm
from ._gemm import (DEFAULT_PROGRAMS, _check_operands, _grouped, _matmul, _output,
                    _piece_product, _wave, blocks_of, compile_matmul, int_type,
                    matmul_signature, out_dtypes, plan_memo, tensor_maps_fit)
from . import _tp
from ._tp import _flagged_puts, _fused_plan, _resident_grid, put_entry_kernel


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


@jit(do_not_specialize=("first_m",))
def own_rows_kernel(a, b, c, recv, sync, rows, N, K, first_m, BM: wl.constexpr,
                    BN: wl.constexpr, BK: wl.constexpr, EVEN: wl.constexpr,
                    DESC: wl.constexpr, PARTIAL: wl.constexpr, DONE: wl.constexpr = True,
                    GROUP_M: wl.constexpr = 8, CLUSTER_N: wl.constexpr = 1):
    """_scatter_by_puts' own rows: c (this rank's rows x N) = this rank's
    own partial of each block (its rows of a @ b, rounded to PARTIAL as
    the others' were) plus, in rank order from the next rank on, every
    other rank r's partial (slot r of recv, summed in f32), which the copy
    engine puts there a group of GROUP_M block rows at a time, flagged
    (FUSED_ARRIVALS + r * groups + group) with the call's epoch. A program
    per output block of the block rows from first_m on that the grid
    covers, numbered as in matmul_kernel (GROUP_M block rows by every
    column, in clusters of CLUSTER_N neighbouring column blocks along grid
    axis 0, which share a's copies): the blocks that start first need the
    groups that are put first. DONE: the call's last launch, whose last
    program to finish flags the call done on every rank (FUSED_DONE),
    which lets their next call's puts into recv in (put_entry_kernel)."""
    me = wl.rank()
    ranks = wl.num_ranks()
    blocks_m = (rows + BM - 1) // BM
    blocks_n = (N + BN - 1) // BN // CLUSTER_N   # of clusters
    launched = wl.num_programs(0) // CLUSTER_N // blocks_n   # block rows
    block = wl.program_id(0)
    block_m, block_n = _grouped(block // CLUSTER_N, launched, blocks_n, GROUP_M)
    block_m += first_m
    block_n = block_n * CLUSTER_N + block % CLUSTER_N
    rows_even = rows // BM * BM if EVEN else rows   # as in matmul_reduce_kernel
    acc = _piece_product(a, b, me * rows_even, block_m * BM, block_n * BN, rows, N, K, 0, K,
                         BM, BN, BK, EVEN, DESC)
    epoch = wl.load(sync + FUSED_EPOCH)
    groups = (blocks_m + GROUP_M - 1) // GROUP_M
    rm = block_m * BM + wl.arange(0, BM)
    rn = block_n * BN + wl.arange(0, BN)
    offs = rm[:, None] * N + rn[None, :]
    mask = None if EVEN else (rm[:, None] < rows) & (rn[None, :] < N)
    total = acc.to(PARTIAL).to(wl.float32)
    for j in range(1, ranks):
        r = (me + j) % ranks
        wl.wait(sync + FUSED_ARRIVALS + r * groups + block_m // GROUP_M, epoch, cmp="ge")
        total += wl.load(recv + r * rows * N + offs, mask=mask,
                         other=None if EVEN else 0.0).to(wl.float32)
    wl.store(c + offs, total, mask=mask)
    if DONE:
        _fused_call_done(sync, epoch)


@jit(do_not_specialize=("first", "groups"))
def gathered_kernel(sync, first, groups):
    """The all-reduce's last launch on the two-shot path (_scatter_by_puts
    gathering; one program): waits until every other rank r's copy engine
    has put all its summed rows here, flagged (FUSED_ARRIVALS + first + r
    * groups + group) with the call's epoch, then flags the call done on
    every rank (FUSED_DONE)."""
    me = wl.rank()
    epoch = wl.load(sync + FUSED_EPOCH)
    for r in range(wl.num_ranks()):
        if r != me:
            for g in range(groups):
                wl.wait(sync + FUSED_ARRIVALS + first + r * groups + g, epoch, cmp="ge")
    _fused_call_done(sync, epoch)


# Elements all_reduce_sum_kernel adds a program: 32 a thread of four
# warps, in 16-byte loads (memory-bound, as the push all-reduce's blocks).
SUM_BLOCK = PerBackend(host=64, default=4096)


@jit(do_not_specialize=("flag", "flags"))
def all_reduce_sum_kernel(recv, c, sync, first, count, size, flag, flags, DONE: wl.constexpr,
                          BLOCK: wl.constexpr):
    """_all_reduce_by_puts' sums: elements first.. first + count of c = the
    sum in f32, in rank order, of every rank r's partial there (slot r of
    recv, `size` elements each), once the copy engine has flagged the
    other ranks' (FUSED_ARRIVALS + r * flags + flag, the call's epoch): the
    same bits on every rank. DONE: the call's last launch, whose last
    program flags the call done on every rank (FUSED_DONE), which lets
    their next call's puts into recv in (put_entry_kernel)."""
    me = wl.rank()
    ranks = wl.num_ranks()
    epoch = wl.load(sync + FUSED_EPOCH)
    for r in range(ranks):
        if r != me:
            wl.wait(sync + FUSED_ARRIVALS + r * flags + flag, epoch, cmp="ge")
    offs = first + wl.program_id(0) * BLOCK + wl.arange(0, BLOCK)
    mask = offs < first + count
    total = wl.load(recv + offs, mask=mask, other=0.0).to(wl.float32)
    for r in range(1, ranks):
        total += wl.load(recv + r * size + offs, mask=mask, other=0.0).to(wl.float32)
    wl.store(c + offs, total, mask=mask)
    if DONE:
        _fused_call_done(sync, epoch)


# What `partials=` names: the dtype partial products cross between ranks in.
PARTIALS = {"f32": wl.float32, "bf16": wl.bfloat16}


@plan_memo
def _reduce_plan(rows, n, k, ranks, scatter, backend, dtype, partials, descriptors=None,
                 whole=False):
    """How matmul_reduce_kernel runs the second layer for `rows` x n x k
    products on `ranks` ranks on `backend` (_fused_plan's), its partials
    as `partials` names (PARTIAL: their dtype). whole: with matmul's
    blocks for the product of every rank's rows (ranks x rows), as the
    first layer's are (_tp._gather_plan), for _scatter_by_puts (its
    products of each rank's rows, and own_rows_kernel's); otherwise large
    blocks only where they are two waves or more, for
    matmul_reduce_kernel's programs, whose partials cross while they
    multiply their next blocks (at one wave they would all cross at the
    end: gemm_ar at 1024 x 4096 keeps 128 x 128 blocks)."""
    constexprs, options, blocks, pieces, steps = _fused_plan(
        rows * ranks if whole else rows, rows, n, k, ranks if scatter else 1, backend, dtype,
        descriptors, rounds=1 if whole else 2)
    # On one rank no partial crosses: bf16 would round for nothing.
    partial = PARTIALS[partials] if ranks > 1 else wl.float32
    return (dict(constexprs, SCATTER=scatter, SC=SUM_COLS, PARTIAL=partial), options, blocks,
            pieces, steps)


def _product_alone(ranks, pieces):
    """Whether the second layer is weft.ops.matmul alone: one rank, K in
    one piece (nothing to sum)."""
    return ranks == 1 and pieces == 1


def _by_puts(rows, n, ranks, scatter, pieces, constexprs, dtype, backend):
    """Whether the second layer's partials go by the copy engine
    (_scatter_by_puts, _all_reduce_by_puts): on several ranks, K whole
    (one piece), in a dtype weft.ops.matmul writes for these operands,
    each partial for another rank (rows x n) of _tp.COPY_ENGINE_BYTES or
    more; for the all-reduce twice that, so that each of its two groups
    at least fills the GPU once (at 8 MiB, 1024 x 4096 bf16, it was level
    with the resident kernel: bench/README.md, "Prefill: the all-reduce
    on the copy engine")."""
    partial = constexprs["PARTIAL"]
    least = _tp.COPY_ENGINE_BYTES[backend] * (1 if scatter else 2)
    return (ranks > 1 and pieces == 1 and partial in out_dtypes(dtype)
            and rows * n * partial.bits // 8 >= least)


# The all-reduce is two-shot (reduce-scatter, then the sums gathered) from
# TWO_SHOT_ROWS rows a rank on. At 512 (1024 x 8192 on 2 H200s), in the
# whole product's blocks, it is 133.6-134.9 us against the one-shot's
# 137.3-140.3 (bench/README.md, "Prefill: the first layer's blocks by
# waves, the two-shot from 512 rows").
TWO_SHOT_ROWS = PerBackend(host=1, default=512)


def _two_shot_plan(m, n, k, ranks, backend, dtype, partials, descriptors=None):
    """The all-reduce's two-shot plan by the copy engine (_scatter_by_puts
    gathering): _reduce_plan's for the reduce-scatter of m / ranks rows a
    rank, where ranks divides m into TWO_SHOT_ROWS rows or more and that
    reduce-scatter goes by the copy engine; else None."""
    if m % ranks or m // ranks < TWO_SHOT_ROWS[backend]:
        return None
    plan = _reduce_plan(m // ranks, n, k, ranks, True, backend, dtype, partials, descriptors,
                        whole=True)
    constexprs, _, _, pieces, _ = plan
    return plan if _by_puts(m // ranks, n, ranks, True, pieces, constexprs, dtype,
                            backend) else None


# _all_reduce_by_puts multiplies AR_GROUP_ROWS rows at a time (whole
# blocks, and at most half the rows: a group's crossing hides under the
# next group's product, the last one's under nothing).
AR_GROUP_ROWS = PerBackend(host=32, default=1024)


def _group_config(constexprs, options):
    """weft.ops.matmul's config for the products of a part of the rows
    (_all_reduce_by_puts' groups, _scatter_by_puts' of each rank's):
    the whole product's blocks (_reduce_plan's), which a part of whole
    blocks fills as well; its own shape could pick narrower ones (512 x
    8192 is 128 blocks of 128 x 256, fewer than _config_for's large blocks
    ask: gemm_rs 106 against 122 us at 1024 x 8192 on 2 H200s,
    bench/README.md, "Prefill: the all-reduce in two shots")."""
    return (constexprs["BM"], constexprs["BN"], constexprs["BK"], options["num_warps"],
            options["num_stages"], constexprs["CLUSTER_N"])


def _groups(m, constexprs, backend):
    """(first row, rows) of each of _all_reduce_by_puts' groups for an
    m-row product in _reduce_plan's blocks."""
    bm = constexprs["BM"][backend]
    rows = max(bm, min(AR_GROUP_ROWS[backend], m // 2 // bm * bm))
    return [(first, min(rows, m - first)) for first in range(0, m, rows)]


def compile_matmul_reduce(m, n, k, ranks, scatter, target, partials="f32"):
    """Compiles for `target`, without launching, what matmul_reduce_scatter
    (scatter) or matmul_all_reduce launches on `ranks` ranks for a bf16 a
    (m x k, 16-byte aligned) and b (k x n) into an f32 out (warming a
    kernel cache)."""
    backend = target.split(":")[0]
    rows = m // ranks if scatter else m
    constexprs, options, _, pieces, _ = _reduce_plan(rows, n, k, ranks, scatter, backend,
                                                     wl.bfloat16, partials)
    sig = matmul_signature(rows, n, k, constexprs, backend, "*fp32:16")
    partial = f"*{constexprs['PARTIAL'].name}:16"
    # The fused kernels take the whole of a (m rows), whatever rows they
    # multiply.
    common = dict(a=matmul_signature(m, n, k, constexprs, backend, "*fp32:16")["a"],
                  b=sig["b"], c=sig["c"])
    ints = dict(rows=sig["M"], N=sig["N"], K=sig["K"])
    if _product_alone(ranks, pieces):
        compile_matmul(m, n, k, target, "*fp32:16", split_k=1)
        return
    if _by_puts(rows, n, ranks, scatter, pieces, constexprs, wl.bfloat16, backend):
        compile_kernel(put_entry_kernel, dict(sync="*i64:16"), {}, target=target)
        if scatter:
            _compile_scatter_by_puts(m, n, k, ranks, *_reduce_plan(
                rows, n, k, ranks, True, backend, wl.bfloat16, partials, whole=True)[:2],
                target, False)
            return
        two_shot = _two_shot_plan(m, n, k, ranks, backend, wl.bfloat16, partials)
        if two_shot:  # a symmetric out takes it, any other the one-shot below
            _compile_scatter_by_puts(m, n, k, ranks, *two_shot[:2], target, True)
        groups = _groups(m, constexprs, backend)
        for g, (first, group) in enumerate(groups):
            compile_matmul(group, n, k, target, partial, split_k=1,
                           config=_group_config(constexprs, options))
            compile_kernel(all_reduce_sum_kernel,
                           dict(recv=partial, c=sig["c"], sync="*i64:16",
                                first=int_type(first * n), count=int_type(group * n),
                                size=int_type(m * n), flag="i32", flags="i32"),
                           dict(DONE=g == len(groups) - 1, BLOCK=SUM_BLOCK), target=target)
        return
    compile_kernel(matmul_reduce_kernel,
                   dict(common, slots=partial, half="i32:16", sync="*i64:16", **ints,
                        k_steps="i32"),
                   constexprs, target=target, **options)


def _compile_scatter_by_puts(m, n, k, ranks, constexprs, options, target, gather):
    """compile_matmul_reduce's part for _scatter_by_puts (gather: the
    all-reduce's two-shot path) with _reduce_plan's constexprs and options
    for m / ranks rows a rank."""
    backend = target.split(":")[0]
    rows = m // ranks
    sig = matmul_signature(rows, n, k, constexprs, backend, "*fp32:16")
    partial = f"*{constexprs['PARTIAL'].name}:16"
    group_m = (_gather_group_m(n, constexprs, backend) if gather
               else own_rows_kernel.defaults["GROUP_M"])
    part = _scatter_part(rows, group_m * constexprs["BM"][backend], gather)
    for count in {min(part, rows - first) for first in range(0, rows, part)}:
        compile_matmul(count, n, k, target, partial, split_k=1,
                       config=_group_config(constexprs, options))
    # The kernel takes the whole of a (m rows), whatever rows it multiplies.
    compile_kernel(own_rows_kernel,
                   dict(a=matmul_signature(m, n, k, constexprs, backend, "*fp32:16")["a"],
                        b=sig["b"], c=sig["c"], recv=partial, sync="*i64:16", rows=sig["M"],
                        N=sig["N"], K=sig["K"], first_m="i32"),
                   dict(_own_rows_constexprs(constexprs), GROUP_M=group_m, DONE=not gather),
                   target=target, **options)
    if gather:
        compile_kernel(gathered_kernel, dict(sync="*i64:16", first="i32", groups="i32"), {},
                       target=target)


def _own_rows_constexprs(constexprs):
    """own_rows_kernel's constexprs of _reduce_plan's."""
    return {name: constexprs[name]
            for name in ("BM", "BN", "BK", "EVEN", "DESC", "PARTIAL", "CLUSTER_N")}


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
    dtype = _dtype_of(a, "a")
    out = _output(op, out, rows, n, out_dtypes(dtype))
    if rows * n == 0:
        return out
    backend = rt.backend()
    fit = None if tensor_maps_fit(a, b) else False
    constexprs, options, blocks, pieces, steps = _reduce_plan(
        rows, n, k, ranks, scatter, backend, dtype, partials, fit)
    if _product_alone(ranks, pieces):
        return _matmul(a, b, out, 1, None, fit, False)
    if num_programs is None and _by_puts(rows, n, ranks, scatter, pieces, constexprs, dtype,
                                         backend):
        # The reduce-scatter's path (the all-reduce's two-shot where it
        # takes one), in the whole product's blocks.
        plan = (_reduce_plan(rows, n, k, ranks, True, backend, dtype, partials, fit, whole=True)
                if scatter else _is_symmetric(out) and _two_shot_plan(
                    m, n, k, ranks, backend, dtype, partials, fit))
        if plan:
            return _scatter_by_puts(a, b, out, _node_comm(op), *plan[:3], m // ranks, n, k, fit,
                                    gather=not scatter)
        return _all_reduce_by_puts(a, b, out, _node_comm(op), constexprs, options, m, n, k,
                                   fit)
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


def _received(op, comm, rows, n, groups, partial):
    """The copy engine paths' scratch of every rank's partial (rows x n of
    `partial` each; a slot a rank) and `groups` arrival flags per rank,
    checked against what the kernels address and count."""
    ranks = rt.num_ranks()
    if ranks * groups > FUSED_BLOCKS:
        raise ValueError(f"{op}: {rows} rows a partial are {ranks * groups} arrival flags, "
                         f"more than the {FUSED_BLOCKS} the kernel has")
    if ranks * rows * n >= 1 << 31:
        raise ValueError(f"{op}: {ranks} x {rows} x {n} needs {ranks * rows * n} partials of "
                         f"scratch, more than a kernel addresses (2^31)")
    # A peer may still sum from it for its last call: growing it drains
    # first.
    return comm.buffer("fused_received", ranks * rows * n, partial, drain=True)


def _gather_group_m(n, constexprs, backend):
    """Block rows an own_rows_kernel launch of the two-shot all-reduce
    multiplies before the copy engine gathers them: as many as fill the
    GPU once (_wave) in the plan's blocks, n columns wide, so that each
    launch's rows cross while the next launch multiplies; on the host as
    many as its default programs (a test's rows then cross in several
    groups)."""
    bm, bn = constexprs["BM"][backend], constexprs["BN"][backend]
    wave = DEFAULT_PROGRAMS["host"] if backend == "host" else _wave(bm)
    return max(1, wave // -(-n // bn))


def _scatter_part(rows, group_rows, gather):
    """Rows of another rank _scatter_by_puts multiplies (and then puts) a
    launch: all of them; for the two-shot all-reduce, whose crossings
    (the partials, then the sums) carry twice the reduce-scatter's bytes,
    half of them in whole groups, so that the first half crosses while
    the second is multiplied (hidden 4096 on 2 H200s: 7 % faster; level
    at 8192; bench/README.md, "Prefill: the all-reduce in two shots")."""
    return -(-rows // group_rows // 2) * group_rows if gather else rows


def _scatter_by_puts(a, b, out, comm, constexprs, options, blocks, rows, n, k, fit,
                     gather=False):
    """matmul_reduce_scatter with the copy engine carrying the partials:
    put_entry_kernel; for each other rank d, the next first, the product
    of d's rows of a (weft.ops.matmul in the whole product's blocks,
    _group_config, into a local scratch, as PARTIAL)
    and then its puts into slot `me` of d's recv, GROUP_M block rows at a
    time, flagged there; own_rows_kernel; the puts joined. The puts start
    once the product they carry has finished and run beside the launches
    after it. Every rank waits in put_entry_kernel for every rank to have
    finished its last fused call (FUSED_DONE), so no put lands in a recv
    that a peer still sums from.

    gather: matmul_all_reduce's two-shot path (out: the symmetric M x N,
    `rows` = M / ranks a rank): each other rank's rows multiplied and put
    in two parts (_scatter_part); own_rows_kernel sums this rank's rows of
    out a group of _gather_group_m block rows a launch, and after each the
    copy engine puts them into every other rank's out, flagged there, so
    that the crossing of a group hides under the next group's sums; then
    gathered_kernel waits for the other ranks' rows. A rank's puts into a
    peer's out follow its own_rows_kernel, which has seen every rank's
    partial of this call: every peer has entered the call and is done with
    what it did before with out."""
    me, ranks = rt.rank(), rt.num_ranks()
    backend = rt.backend()
    partial, dtype = constexprs["PARTIAL"], _dtype_of(a, "a")
    bm = constexprs["BM"][backend]
    group_m = (_gather_group_m(n, constexprs, backend) if gather
               else own_rows_kernel.defaults["GROUP_M"])
    group_rows = group_m * bm
    groups = -(-rows // group_rows)
    op = "matmul_all_reduce" if gather else "matmul_reduce_scatter"
    recv = _received(op, comm, rows, n, 2 * groups if gather else groups, partial)
    size, row = rows * n, n * partial.bits // 8
    # Only this rank's copy engine reads the stage, and this rank's next
    # launches wait for it (the join): it grows without a barrier.
    staged = comm.buffer("fused_staged", (ranks - 1) * size, partial)
    sync = comm.fused_sync
    put_entry_kernel[(1,)](sync)
    part = _scatter_part(rows, group_rows, gather)
    for j in range(1, ranks):
        dest = (me + j) % ranks
        for first in range(0, rows, part):
            count = min(part, rows - first)
            theirs = rt.Buffer.view(rt.data_ptr(a) + (dest * rows + first) * k * dtype.bits // 8,
                                    (count, k), dtype, local=True)
            staging = rt.Buffer.view(staged.ptr + ((j - 1) * size + first * n) * partial.bits
                                     // 8, (count, n), partial, local=True)
            _matmul(theirs, b, staging, 1, _group_config(constexprs, options), fit, False)
            rt.PutFork().launch()
            rt.Puts(_flagged_puts(sync, recv.ptr + (me * rows + first) * row, staging.ptr,
                                  count, row, group_rows, me * groups + first // group_rows,
                                  dest)).launch()
    if constexprs["DESC"]:
        a, b = blocks_of(a, b, constexprs)
    own = dict(options, **_own_rows_constexprs(constexprs), GROUP_M=group_m, DONE=not gather)
    if not gather:
        own_rows_kernel[(blocks,)](a, b, out, recv, sync, rows, n, k, 0, **own)
        rt.PutJoin().launch()
        return out
    out_row = n * _dtype_of(out, "out").bits // 8
    mine = rt.data_ptr(out) + me * rows * out_row
    c = rt.Buffer.view(mine, (rows, n), _dtype_of(out, "out"), local=True)
    width = -(-n // constexprs["BN"][backend])   # blocks a block row
    for g, first in enumerate(range(0, rows, group_rows)):
        count = min(group_rows, rows - first)
        own_rows_kernel[(-(-count // bm) * width,)](a, b, c, recv, sync, rows, n, k,
                                                     g * group_m, **own)
        rt.PutFork().launch()
        rt.Puts([put for j in range(1, ranks) for put in _flagged_puts(
            sync, mine + first * out_row, mine + first * out_row, count, out_row, count,
            (ranks + me) * groups + g, (me + j) % ranks)]).launch()
    gathered_kernel[(1,)](sync, ranks * groups, groups)
    rt.PutJoin().launch()
    return out


def _all_reduce_by_puts(a, b, out, comm, constexprs, options, m, n, k, fit):
    """matmul_all_reduce with the copy engine carrying the partials, one
    group of rows (_groups) at a time: put_entry_kernel; the group's
    product (weft.ops.matmul, as PARTIAL, into slot `me` of this rank's
    recv) and the copy engine's puts of it into the same slot of every
    other rank's recv (the next rank first), flagged there; after the
    next group's product, all_reduce_sum_kernel of the group; the puts
    joined. Every rank waits in put_entry_kernel for every rank to have
    finished its last fused call (FUSED_DONE), so no put lands in a recv
    that a peer still sums from."""
    me, ranks = rt.rank(), rt.num_ranks()
    backend = rt.backend()
    partial, dtype = constexprs["PARTIAL"], _dtype_of(a, "a")
    groups, config = _groups(m, constexprs, backend), _group_config(constexprs, options)
    recv = _received("matmul_all_reduce", comm, m, n, len(groups), partial)
    size, row = m * n, n * partial.bits // 8
    mine = recv.ptr + me * size * partial.bits // 8
    sync = comm.fused_sync
    put_entry_kernel[(1,)](sync)

    def add(g):  # the sums of group g, once its partials have landed
        first, rows = groups[g]
        all_reduce_sum_kernel[(-(-rows * n // SUM_BLOCK[backend]),)](
            recv, out, sync, first * n, rows * n, size, g, len(groups),
            DONE=g == len(groups) - 1, BLOCK=SUM_BLOCK)

    for g, (first, rows) in enumerate(groups):
        group = rt.Buffer.view(rt.data_ptr(a) + first * k * dtype.bits // 8, (rows, k), dtype,
                               local=True)
        stage = rt.Buffer.view(mine + first * row, (rows, n), partial, local=True)
        _matmul(group, b, stage, 1, config, fit, False)
        rt.PutFork().launch()
        rt.Puts([put for j in range(1, ranks) for put in _flagged_puts(
            sync, stage.ptr, stage.ptr, rows, row, rows, me * len(groups) + g,
            (me + j) % ranks)]).launch()
        if g:
            add(g - 1)
    add(len(groups) - 1)
    rt.PutJoin().launch()
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
    programs of the resident kernel (default: all that run at once; on one
    rank, where K is not split, the call is weft.ops.matmul's, whose grid
    is the output's blocks). With num_programs None, where K is whole and
    a partial for one rank holds COPY_ENGINE_BYTES or more (prefill), the
    copy engine carries the partials instead (the module's docstring):
    kernels whose grids are the output's blocks. Returns out."""
    return _kept_matmul_reduce("matmul_reduce_scatter", a, b, out, num_programs, True, partials)


def matmul_all_reduce(a, b, out=None, num_programs=None, partials="f32"):
    """The row-parallel second layer with its all-reduce: out (M x N on
    every rank, bit-identical) = the sum over ranks of a @ b, a (M x K)
    and b (K x N) as for matmul_reduce_scatter, partials too. Each
    partial is sent whole to every rank (one-shot), which sums them all in
    rank order: by the resident kernel's programs (2 x num_ranks x pieces
    x M x N partials of scratch per rank), or, with num_programs None,
    where K is whole and a rank's partial holds twice COPY_ENGINE_BYTES or
    more (prefill), by the copy engine a group of rows at a time (the
    module's docstring; num_ranks x M x N partials of scratch). There,
    where out is symmetric (the same buffer on every rank), num_ranks
    divides M into TWO_SHOT_ROWS rows or more, it is two-shot: each rank sums
    its M / num_ranks rows and the copy engine puts them into the other
    ranks' out (as many partials of scratch). Returns out."""
    return _kept_matmul_reduce("matmul_all_reduce", a, b, out, num_programs, False, partials)


def _kept_matmul_reduce(op, a, b, out, num_programs, scatter, partials):
    """_matmul_reduce, as a kept call (weft/_plans.py) where out is given
    (otherwise every call allocates its out)."""
    if out is None:
        return _matmul_reduce(op, a, b, out, num_programs, scatter, partials)
    _kept(op, (a, b, out), (num_programs, partials), _matmul_reduce, op, a, b, out,
          num_programs, scatter, partials)
    return out
