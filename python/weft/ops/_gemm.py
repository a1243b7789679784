"""The local GEMM, weft.ops.matmul, and the pieces the fused GEMMs
(_tp.py) share with it: _block_product, _check_operands, _output,
_programs and the split-K rule."""
import functools

from .. import _plans, _runtime as rt
from .. import language as wl
from .._jit import (PerBackend, TensorDescriptor, _for_backend, _resolve, _shape_divisibility,
                    compile as compile_kernel, jit)
from ..collectives import _dtype_of, _grid_of, _size

# Output block per program step (GPUs: mma tiles of 4 warps; host programs
# are one thread and compile small tiles fast).
BM = PerBackend(host=16, default=64)
BN = PerBackend(host=16, default=64)
BK = PerBackend(host=16, default=32)
BLOCKS = dict(BM=BM, BN=BN, BK=BK)  # the constexprs of the default blocks
DEFAULT_PROGRAMS = {"host": 4, "cuda": 64, "hip": 64}

# The plans of the ops (matmul_plan, _tp's) are pure functions of the
# shape, and an op's calls repeat its shapes: they are memoised, since
# planning costs more than launching. What they return is shared, never
# changed in place.
plan_memo = functools.lru_cache(maxsize=1024)


@jit
def _block_product(a, b, rm, rn, rows, N, K, k_lo, k_hi, owner, REMOTE: wl.constexpr,
                   BM: wl.constexpr, BN: wl.constexpr, BK: wl.constexpr,
                   EVEN: wl.constexpr = False):
    """The f32 BMxBN block rows rm by columns rn of a @ b over k in
    [k_lo, k_hi) (a rows x K, b K x N, row-major, tails masked), a read from
    rank `owner` if REMOTE. EVEN: the blocks tile rows, N and [k_lo, k_hi)
    exactly, so no load needs a mask (the K loop's copies then compute no
    per-group bounds; bench/README.md, "GEMM")."""
    acc = wl.zeros((BM, BN), wl.float32)
    zero = None if EVEN else 0.0
    for k0 in range(k_lo, k_hi, BK):
        rk = k0 + wl.arange(0, BK)
        a_mask = None if EVEN else (rm[:, None] < rows) & (rk[None, :] < k_hi)
        b_mask = None if EVEN else (rk[:, None] < k_hi) & (rn[None, :] < N)
        x = wl.load(a + rm[:, None] * K + rk[None, :], mask=a_mask, other=zero,
                    peer=owner if REMOTE else None)
        y = wl.load(b + rk[:, None] * N + rn[None, :], mask=b_mask, other=zero)
        acc = wl.dot(x, y, acc)
    return acc


@jit
def _desc_block_product(a, b, m0, n0, k_lo, k_hi, BM: wl.constexpr, BN: wl.constexpr,
                        BK: wl.constexpr):
    """_block_product from tensor descriptors of a (BM x BK blocks) and b
    (BK x BN): the block at rows m0.., columns n0.. over k in [k_lo,
    k_hi), a multiple of BK apart, the tensors' edges zero. On sm_90 the
    K loop's blocks are bulk tensor copies (TMA)."""
    acc = wl.zeros((BM, BN), wl.float32)
    for k0 in range(k_lo, k_hi, BK):
        acc = wl.dot(a.load([m0, k0]), b.load([k0, n0]), acc)
    return acc


@jit
def _piece_product(a, b, row0, m0, n0, rows, N, K, k_lo, k_chunk, BM: wl.constexpr,
                   BN: wl.constexpr, BK: wl.constexpr, EVEN: wl.constexpr,
                   DESC: wl.constexpr):
    """The f32 block at rows row0 + m0.. (of `rows` from row0), columns
    n0.. of a @ b over k in [k_lo, k_lo + k_chunk), from tensor
    descriptors (DESC) or pointers."""
    k_hi = wl.minimum(K, k_lo + k_chunk)
    if DESC:
        acc = _desc_block_product(a, b, row0 + m0, n0, k_lo, k_hi, BM, BN, BK)
    else:
        acc = _block_product(a + row0 * K, b, m0 + wl.arange(0, BM), n0 + wl.arange(0, BN),
                             rows, N, K, k_lo, k_hi, 0, False, BM, BN, BK, EVEN)
    return acc


ZERO_BLOCK = 4096


@jit
def _zero_kernel(out, n, BLOCK: wl.constexpr):
    """out[:n] = 0 (f32), BLOCK elements per program."""
    offs = wl.program_id(0) * BLOCK + wl.arange(0, BLOCK)
    wl.store(out + offs, wl.zeros((BLOCK,), wl.float32), mask=offs < n)


def zero_f32(out, count):
    """Zeroes the first `count` f32 elements of out in stream order, for
    pieces of K to add into. A kernel rather than a memset: its launch
    and the product's after it may start early (WEFT_LAUNCH_EARLY_START,
    docs/runtime.md), which a memset between two kernels prevents."""
    _zero_kernel[(-(-count // ZERO_BLOCK),)](out, count, BLOCK=ZERO_BLOCK)


def tensor_maps_fit(*tensors):
    """Every tensor (row-major, 2-D) meets what tensor descriptors need: a
    16-byte aligned start and rows of whole 16-byte chunks."""
    for t in tensors:
        width = t.shape[-1] * _dtype_of(t, "operand").bits // 8
        if rt.data_ptr(t) % 16 or width % 16:
            return False
    return True


def blocks_of(a, b, constexprs):
    """Tensor descriptors of a (BM x BK blocks) and b (BK x BN) in
    constexprs' blocks."""
    return (TensorDescriptor(a, (constexprs["BM"], constexprs["BK"])),
            TensorDescriptor(b, (constexprs["BK"], constexprs["BN"])))


def out_blocks(out, constexprs):
    """A tensor descriptor of out in constexprs' BM x BN blocks."""
    return TensorDescriptor(out, (constexprs["BM"], constexprs["BN"]))


def _desc_out(constexprs, grid, out_dtype):
    """Whether matmul_kernel stores through a descriptor of out (DESC_OUT),
    which sm_90 makes bulk stores: with a and b's descriptors, one piece
    of K and a 16-bit out (a block of f32 sums would take more shared
    memory than a bulk store may), in the large blocks (decided on the
    GPU's blocks, as _persists is). There the epilogue it replaces is the
    largest, a 66 KiB exchange through shared memory and 64 KiB of stores
    a block: up to 4.5 % faster at K <= 4096 on an H200, where 128x64 blocks at
    1024^3 were 5 % slower (bench/README.md, "Bulk stores")."""
    large = all(_for_backend(constexprs[name], "cuda") == _for_backend(_LARGE[name], "cuda")
                for name in ("BM", "BN"))
    return bool(constexprs["DESC"]) and grid[2] == 1 and out_dtype.bits == 16 and large


def even_blocks(m, n, k, constexprs):
    """EVEN for an m x n x k product in constexprs' blocks: per backend
    where the blocks are (PerBackend)."""
    def even(backend):
        bm, bn, bk = (_for_backend(constexprs[name], backend) for name in ("BM", "BN", "BK"))
        return m % bm == 0 and n % bn == 0 and k % bk == 0
    return PerBackend(**{backend: even(backend) for backend in DEFAULT_PROGRAMS})


@jit
def _grouped(block, blocks_m, blocks_n, GROUP_M: wl.constexpr):
    """(row block, column block) of output block number `block` of
    blocks_m x blocks_n, numbered GROUP_M block rows by every column: the
    blocks that neighbouring numbers take share their rows of a and
    columns of b, which then stay in L2 while they last."""
    group = block // (GROUP_M * blocks_n)
    first_m = group * GROUP_M
    rows = wl.minimum(blocks_m - first_m, GROUP_M)
    in_group = block % (GROUP_M * blocks_n)
    return first_m + in_group % rows, in_group // rows


@jit
def _block_into(a, b, c, m0, n0, M, N, K, k_lo, k_chunk, BM: wl.constexpr, BN: wl.constexpr,
                BK: wl.constexpr, EVEN: wl.constexpr, DESC: wl.constexpr,
                DESC_OUT: wl.constexpr):
    """c's BMxBN block at rows m0.., columns n0.. = a @ b over k in [k_lo,
    k_lo + k_chunk), stored, or added into c where that is a piece of K;
    DESC_OUT: c is a tensor descriptor of BMxBN blocks (one piece of K)."""
    acc = _piece_product(a, b, 0, m0, n0, M, N, K, k_lo, k_chunk, BM, BN, BK, EVEN, DESC)
    if DESC_OUT:
        c.store([m0, n0], acc.to(c.dtype))
    else:
        rm = m0 + wl.arange(0, BM)
        rn = n0 + wl.arange(0, BN)
        offs = c + rm[:, None] * N + rn[None, :]
        mask = None if EVEN else (rm[:, None] < M) & (rn[None, :] < N)
        if k_chunk < K:
            wl.atomic_add(offs, acc, mask=mask, order="relaxed")
        else:
            wl.store(offs, acc, mask=mask)


@jit(do_not_specialize=("k_steps",))
def matmul_kernel(a, b, c, M, N, K, k_steps, BM: wl.constexpr, BN: wl.constexpr,
                  BK: wl.constexpr, EVEN: wl.constexpr = False, GROUP_M: wl.constexpr = 8,
                  DESC: wl.constexpr = False, CLUSTER_N: wl.constexpr = 1,
                  PERSISTENT: wl.constexpr = False, DESC_OUT: wl.constexpr = False,
                  WARP_SPECIALIZE: wl.constexpr = False, CLUSTER_M: wl.constexpr = 1):
    """c = a @ b: a program per BMxBN block of c and piece of K of k_steps
    BK steps (grid axis 2); with several pieces (split-K) each adds its
    partial product into c, which starts at zero. Pieces counted in steps
    keep their offsets provably multiples of BK (aligned vector loads).
    Programs launched together take GROUP_M block rows by as many columns
    (grid axes 0 and 1 renumbered by _grouped), so the blocks of a and b
    they read stay in L2 while they last. CLUSTER_N programs along grid
    axis 1 (a cluster=(1, CLUSTER_N) launch) take neighbouring columns of
    one block row, so a's blocks are the same in each: the compiler shares
    their copies. CLUSTER_M (PERSISTENT only) programs of a cluster take
    neighbouring rows of one block column instead, sharing b's. EVEN: BM,
    BN and BK divide M, N and K (pieces are whole BK steps, so none ends
    inside a step). DESC: a and b are tensor
    descriptors (blocks_of), else pointers. DESC_OUT (one piece of K): c
    is a tensor descriptor of BMxBN blocks too (out_blocks), which sm_90
    stores with bulk copies: the threads write each block into shared
    memory and go on while the copy engine writes it out.

    PERSISTENT (one piece of K, c not a or b): a resident 1-D launch
    (clusters of CLUSTER_M * CLUSTER_N) whose programs each take several blocks in
    turn, blocks p, p + programs, ... of _grouped's order for program p
    (by clusters); each block's K loop copies the next block's first
    stages before this block's store (wl.range's prefetch), so the store
    overlaps them, where a program per block fills its rings only after
    the store of the block before. WARP_SPECIALIZE (PERSISTENT): a
    warpgroup of producer warps makes the copies, running ahead of the
    products (wl.range's warp_specialize)."""
    blocks_m = (M + BM - 1) // BM // CLUSTER_M  # of clusters
    blocks_n = (N + BN - 1) // BN // CLUSTER_N
    if PERSISTENT:
        # The program's place in its cluster: rows first (x % 1 and x // 1
        # fold away, so what the cluster shares stays provably the same).
        rank = wl.program_id(0) % (CLUSTER_M * CLUSTER_N)
        for block in wl.range(wl.program_id(0) // (CLUSTER_M * CLUSTER_N), blocks_m * blocks_n,
                              wl.num_programs(0) // (CLUSTER_M * CLUSTER_N), prefetch=True,
                              warp_specialize=WARP_SPECIALIZE):
            cluster_m, cluster_n = _grouped(block, blocks_m, blocks_n, GROUP_M)
            _block_into(a, b, c, (cluster_m * CLUSTER_M + rank % CLUSTER_M) * BM,
                        (cluster_n * CLUSTER_N + rank // CLUSTER_M % CLUSTER_N) * BN, M, N, K,
                        0, K, BM, BN, BK, EVEN, DESC, DESC_OUT)
    else:
        block_m, cluster_n = _grouped(
            wl.program_id(1) // CLUSTER_N * blocks_m + wl.program_id(0), blocks_m, blocks_n,
            GROUP_M)
        k_chunk = k_steps * BK
        _block_into(a, b, c, block_m * BM,
                    (cluster_n * CLUSTER_N + wl.program_id(1) % CLUSTER_N) * BN, M, N, K,
                    wl.program_id(2) * k_chunk, k_chunk, BM, BN, BK, EVEN, DESC, DESC_OUT)


def _check_operands(op, a, b):
    dtype = _dtype_of(a, "a")
    if dtype not in (wl.float16, wl.bfloat16, wl.float32):
        raise ValueError(f"{op}: a has dtype {dtype.name}; it takes fp16, bf16 or fp32")
    if _dtype_of(b, "b") is not dtype:
        raise ValueError(f"{op}: b has dtype {_dtype_of(b, 'b').name} but a has {dtype.name}")
    shape_a, shape_b = tuple(a.shape), tuple(b.shape)
    if len(shape_a) != 2 or len(shape_b) != 2 or shape_b[0] != shape_a[1]:
        raise ValueError(f"{op}: b has shape {shape_b}; it needs ({shape_a[-1]}, N)")
    return shape_a[0], shape_a[1], shape_b[1]


def _output(op, out, rows, n, dtypes=(wl.float32,)):
    """out, checked to hold rows x n elements of one of dtypes; a new local
    weft.Buffer of the first of them when None (local: the ops write their
    out on this rank only, and ranks may ask for different shapes)."""
    if out is None:
        return rt.empty((rows, n), dtypes[0], local=True)
    if _dtype_of(out, "out") not in dtypes or _size(out) != rows * n:
        names = " or ".join(d.name for d in dtypes)
        raise ValueError(f"{op}: out must hold {rows} x {n} {names} elements")
    return out


def out_dtypes(dtype):
    """The dtypes a product of `dtype` operands may write: fp32, or the
    operands' own 16-bit dtype (the f32 sums rounded once, at the store)."""
    return (wl.float32,) if dtype is wl.float32 else (wl.float32, dtype)


def _programs(num_programs, work):
    """The 1-D grid of a fused kernel: num_programs, or the backend's
    default but no more programs than `work` units (each program takes
    part in every phase, so idle ones only cost synchronisation)."""
    if num_programs is None:
        num_programs = max(1, min(DEFAULT_PROGRAMS.get(rt.backend(), 4), work))
    return _grid_of(num_programs)


def _wave(bm):
    """Programs that fill an H200's 132 multiprocessors once where a
    configuration does not say (_config_for): two of 64-row blocks fit
    one, one of 128-row blocks."""
    return 256 if bm <= 64 else 128


def _split_k(blocks, k, bk, wave):
    """Pieces of K for a grid of `blocks` output blocks: `wave` programs
    in all (decode shapes stream b, and each program keeps its stages of it
    in flight; the best count at the decode shapes of bench/gemm.py with
    bulk tensor copies), each piece at least 4 K steps long; one where the
    blocks alone are that many. The same rule on every backend, so a host
    run launches what a GPU run will (cache warming)."""
    return max(1, min(16, wave // max(1, blocks), k // (4 * bk)))


# Large products take 128x256x32 blocks on eight warps (two warpgroups of
# wgmma m64n256k16 on sm_90) with five stages, in clusters of two programs
# of neighbouring column blocks, which share a's copies, where there are
# 128 such blocks or more, as for the other blocks below (at exactly 128,
# e.g. 1024 x 4096 or 512 x 8192, 6-16 % faster than 256 of 128x128x64:
# the same two waves' work in one, with twice the reuse), or fewer where
# 128x128 blocks would take a second wave (more than an H200's 132
# multiprocessors: 5-9 % faster at 80-100 of 128x256). Decode products (64 or 128
# rows) that 64x64x128 blocks divide, so that every block is one bulk
# copy, stream b through deep rings, one program per multiprocessor:
# 128x64x64 blocks on eight warps with eight stages where b outgrows L2
# (more than 64 MiB: two 64-row blocks would each read it from memory),
# else 64x64x128 blocks on four warps with six. The rest take the widest
# blocks of which there are still 128 (one program per multiprocessor of
# an H200), on eight warps: 128x128x64 with four stages, else 128x64x64
# with five, or four where K is at most 1024 (filling the ring is then a
# larger part of the time); else 64x64x64 on four warps with four stages,
# two programs per multiprocessor (masked rows, as at 16, lose the deep
# rings' gain). Where 128x64 blocks would take a second wave but 128x128
# ones not a whole first, one wave of 128x128 does a program's share of
# two waves of 128x64 with more reuse: 128x128 (30-42 % faster at 80-100
# such blocks, 1024 x 1536 x 4096 and its neighbours on an H200; measured
# for wgmma only). K is split where the blocks are fewer than the programs
# that fill the GPU once. The fastest of the configurations swept on an
# H200 (bench/README.md, "GEMM"). Host programs keep 16x16x16.
#
# Warp-level MMA (warp_mma) reads its operands from shared memory with
# ldmatrix, so it wants the fewest loads per product, not wgmma's shapes:
# large products take 128x256x64 blocks on eight warps (64x64 per warp)
# with two stages and no clusters (a cluster's arrivals must then release
# the loads); where 128x64 blocks fill the GPU once, 128x64x128 on four
# warps with two stages (half the K steps). The rest as above
# (bench/README.md, "mma.sync").
_LARGE = dict(BM=PerBackend(host=16, default=128), BN=PerBackend(host=16, default=256),
              BK=BK)
_ROWS128 = dict(BM=PerBackend(host=16, default=128), BN=BN,
                BK=PerBackend(host=16, default=64))
_STREAM = dict(BM=BM, BN=BN, BK=PerBackend(host=16, default=128))
_WIDE = dict(BM=PerBackend(host=16, default=128), BN=PerBackend(host=16, default=128),
             BK=PerBackend(host=16, default=64))
_SMALL = dict(BM=BM, BN=BN, BK=PerBackend(host=16, default=64))
_MMA_LARGE = dict(_LARGE, BK=PerBackend(host=16, default=64))
_MMA_ROWS128 = dict(_ROWS128, BK=PerBackend(host=16, default=128))


def _config_for(m, n, k, backend, dtype, warp_mma=False, rounds=1):
    """(constexprs, num_warps, num_stages, wave, (BM, BN, BK) on `backend`,
    cluster) for an m x n x k product of `dtype` operands, by warp-level
    MMA where warp_mma; wave: the programs that fill the GPU once
    (_split_k); cluster: programs of neighbouring column blocks launched
    together (matmul_kernel's CLUSTER_N), which divides the column blocks
    on every backend. rounds: the waves of large blocks the caller needs
    before it takes them (the fused resident kernels ask two: the second
    layer's programs send each block's partial while they multiply their
    next, the first layer's multiply their own rows while the peers'
    arrive)."""
    # The wide blocks are for tensor cores (16-bit operands): elsewhere the
    # product's sums cross shared memory, which they would overflow.
    tensor_cores = dtype.bits == 16
    streams = m in (64, 128) and n % 64 == 0 and k % 128 == 0

    def blocks(bm, bn):  # whole output blocks of bm x bn
        return (m // bm) * (n // bn)

    cluster = 1
    # A wave of the widest blocks beats two of the next (above and below).
    second_wave = rounds == 1 and not warp_mma and blocks(128, 128) > 132
    large = tensor_cores and m * n * k >= 1 << 33 and (blocks(128, 256) >= 128 * rounds or
                                                       second_wave)
    if large and warp_mma:
        constexprs, warps, stages, wave = _MMA_LARGE, 8, 2, 128
    elif large:
        constexprs, warps, stages, wave = _LARGE, 8, 5, 128
        cluster = 2 if n % 512 == 0 else 1
    elif tensor_cores and streams and m == 128 and n * k * dtype.bits // 8 > 64 << 20:
        constexprs, warps, stages, wave = _ROWS128, 8, 8, 128
    elif tensor_cores and streams:
        constexprs, warps, stages, wave = _STREAM, 4, 6, 128
    elif tensor_cores and (blocks(128, 128) >= 128 or (blocks(128, 64) > 132 and not warp_mma)):
        constexprs, warps, stages, wave = _WIDE, 8, 4, 128
    elif tensor_cores and blocks(128, 64) >= 128 and warp_mma:
        constexprs, warps, stages, wave = _MMA_ROWS128, 4, 2, 128
    elif tensor_cores and blocks(128, 64) >= 128:
        constexprs, warps, stages, wave = _ROWS128, 8, 4 if k <= 1024 else 5, 128
    else:
        constexprs, warps, stages, wave = _SMALL, 4, 4, 256
    return (constexprs, warps, stages, wave,
            tuple(constexprs[name][backend] for name in ("BM", "BN", "BK")), cluster)


def _pieces(blocks, k, bk, wave, split_k=None):
    """(pieces, BK steps per piece) of K for a grid of `blocks` output
    blocks: split_k pieces, by default _split_k's for `wave` programs."""
    if split_k is None:
        split_k = _split_k(blocks, k, bk, wave)
    if int(split_k) < 1:
        raise ValueError(f"matmul: split_k must be at least 1, got {split_k}")
    steps = -(-max(1, -(-k // int(split_k))) // bk)
    return max(1, -(-k // (steps * bk))), steps


@plan_memo
def matmul_plan(m, n, k, backend, split_k=None, config=None, descriptors=None,
                dtype=wl.bfloat16, warp_mma=False):
    """How matmul launches an m x n x k product of `dtype` operands on
    `backend`: (grid, k_steps, constexprs, launch options); config = (BM,
    BN, BK, num_warps[, num_stages[, cluster[, warp_specialize]]])
    overrides what the shape picks (the blocks may be PerBackend; cluster:
    programs of neighbouring column blocks launched together, which share
    a's copies, or (rows, columns): of row blocks, which share b's, where
    the programs are persistent; warp_specialize: producer warps copy the
    persistent programs' stages, matmul_kernel's WARP_SPECIALIZE);
    descriptors: a and b go as tensor descriptors (None: where
    the blocks tile the product, so that every block is one bulk copy on
    sm_90; the operands must meet tensor_maps_fit); warp_mma: the
    launch's option (warp-level MMA even where warpgroup MMA applies)."""
    if config is None:
        constexprs, warps, stages, wave, (bm, bn, bk), cluster = _config_for(m, n, k, backend,
                                                                             dtype, warp_mma)
    else:
        # Blocks may be PerBackend, as _config_for's are (cache warming
        # then compiles the GPU's kernel from a host run).
        constexprs = dict(zip(("BM", "BN", "BK"), config[:3]))
        bm, bn, bk = (int(_for_backend(v, backend)) for v in config[:3])
        warps, rest = int(config[3]), config[4:]
        stages, wave = int(rest[0]) if rest else 3, _wave(bm)
        cluster = rest[1] if len(rest) > 1 else 1
        if len(rest) > 2 and rest[2]:
            constexprs["WARP_SPECIALIZE"] = True
    rows, columns = (int(v) for v in cluster) if isinstance(cluster, tuple) else (1, int(cluster))
    even = even_blocks(m, n, k, constexprs)
    constexprs = dict(constexprs, EVEN=even, DESC=even[backend] if descriptors is None
                      else descriptors)
    blocks_m, blocks_n = -(-m // bm), -(-n // bn)
    if blocks_n % columns:
        raise ValueError(f"matmul: clusters of {columns} programs do not divide the "
                         f"{blocks_n} column blocks of {n} columns")
    if blocks_m % rows:
        raise ValueError(f"matmul: clusters of {rows} programs do not divide the "
                         f"{blocks_m} row blocks of {m} rows")
    if columns > 1:
        constexprs["CLUSTER_N"] = columns
    if rows > 1:
        constexprs["CLUSTER_M"] = rows
    pieces, steps = _pieces(blocks_m * blocks_n, k, bk, wave, split_k)
    options = dict(num_warps=warps, num_stages=stages, cluster=(1, columns), warp_mma=warp_mma)
    if dtype.bits == 16 and not warp_mma and _persists(m, n, constexprs, descriptors, split_k):
        constexprs["PERSISTENT"] = True
        constexprs["GROUP_M"] = _group_rows(n, constexprs)
        options["cluster"] = (rows * columns,)
    elif rows > 1:
        raise ValueError("matmul: clusters of row blocks need persistent programs (16-bit "
                         "operands as descriptors, more blocks than a wave, K whole)")
    return (blocks_m, blocks_n, pieces), steps, constexprs, options


def _persists(m, n, constexprs, descriptors, split_k):
    """Whether matmul_kernel's programs take several blocks each
    (PERSISTENT) for an m x n product of 16-bit operands (whose rings
    wgmma reads in place) in constexprs' blocks: on a GPU its blocks would
    be bulk copies (tensor descriptors), more of them than one wave of
    programs (so K is not split unless split_k says). Each program's next
    block then starts copying under this one's store: 1-3 % faster at the
    fused ops' products on an H200 (bench/README.md, "GEMM"). Decided on
    the GPU's blocks for every backend, as _config_for decides, so that a
    host run launches what a GPU run will (cache warming)."""
    gpu = "cuda"
    bm, bn = (int(_for_backend(constexprs[name], gpu)) for name in ("BM", "BN"))
    blocks = -(-m // bm) * -(-n // bn)
    desc = constexprs["EVEN"][gpu] if descriptors is None else descriptors
    return bool(desc) and blocks > _wave(bm) and split_k in (None, 1)


def _group_rows(n, constexprs):
    """GROUP_M of persistent programs (the block rows _grouped numbers
    together), decided on a GPU's blocks as _persists is: where 256-wide
    blocks make 32 columns or more, 16 rows, so that a wave of programs
    reads fewer of b's columns (0.5-1 % faster at 4096 x 8192 x 4096,
    2048 x 8192 x 4096 and 8192 x 8192 x 2048 on an H200, level at the
    other shapes of N = 8192; 0.1-0.6 % slower at N = 4096, where the rows
    stay 8: bench/README.md, "Block order")."""
    bn = int(_for_backend(constexprs["BN"], "cuda"))
    return 16 if bn == 256 and -(-n // bn) >= 32 else 8


def _pointee(pointer):
    """The dtype a pointer type ("*bf16", "*fp32:16") points to."""
    return wl.DTYPES[pointer[1:].split(":")[0]]


def int_type(value):
    """weft.compile's type of an i32 argument of this value (the
    specialisation a launch with it takes)."""
    return "i32:16" if value % 16 == 0 else "i32"


def matmul_signature(m, n, k, constexprs, backend, out, dtype=wl.bfloat16):
    """The run-time argument types of matmul_kernel for an m x n x k product
    under matmul_plan's `constexprs` for `backend` (weft.compile's
    signature: what warming a kernel cache for it takes), with contiguous,
    16-byte aligned operands of `dtype` and an `out` type ("*fp32",
    "*bf16")."""
    blocks = _resolve(constexprs, backend)

    def block(names, extents, elem=dtype.name):  # a descriptor of these blocks and extents
        sizes = [blocks[name] for name in names]
        divs = [_shape_divisibility(e) for e in extents]
        return f"tensordesc<{elem}[{sizes[0]},{sizes[1]}]>:{divs[0]},{divs[1]}"

    operands = ((block(("BM", "BK"), (m, k)), block(("BK", "BN"), (k, n)))
                if constexprs["DESC"] else ("*" + dtype.name,) * 2)
    if constexprs.get("DESC_OUT"):
        out = block(("BM", "BN"), (m, n), _pointee(out).name)
    return dict(a=operands[0], b=operands[1], c=out, M=int_type(m), N=int_type(n),
                K=int_type(k), k_steps="i32")


def compile_matmul(m, n, k, target, out, split_k=None, config=None, descriptors=None,
                   warp_mma=False):
    """Compiles for `target`, without launching, what matmul launches for
    an m x n x k bf16 product into an `out` of type "*fp32" or "*bf16"
    (matmul_signature's operands), under matmul's options: the product,
    and where K is split the zeroing of out (warming a kernel cache)."""
    backend = target.split(":")[0]
    if not out.startswith("*fp32"):
        split_k = 1  # as matmul: pieces of K meet in f32
    grid, _, constexprs, options = matmul_plan(m, n, k, backend, split_k, config,
                                               descriptors=descriptors, warp_mma=warp_mma)
    constexprs = dict(constexprs, DESC_OUT=_desc_out(constexprs, grid, _pointee(out)))
    compile_kernel(matmul_kernel, matmul_signature(m, n, k, constexprs, backend, out),
                   constexprs, target=target, **options)
    if grid[2] > 1:
        compile_kernel(_zero_kernel, dict(out="*fp32", n=int_type(m * n)),
                       dict(BLOCK=ZERO_BLOCK), target=target)


def matmul(a, b, out=None, split_k=None, config=None, descriptors=None, warp_mma=False):
    """out = a @ b, accumulated in f32 (a M x K, b K x N, both fp16, bf16
    or fp32: weft buffers, numpy arrays on the host, tensors on GPUs; out
    M x N fp32 or a's 16-bit dtype, rounded once at the end; a new local
    fp32 weft.Buffer when None). Local: no communication. split_k: pieces
    of K computed by separate programs and added into an fp32 out (None: chosen
    by the shape and the block size; a 16-bit out takes one piece). config:
    (BM, BN, BK, num_warps[, num_stages[, cluster[, warp_specialize]]]) of
    the kernel (None: chosen by the shape; bench/gemm.py --configs compares
    them; matmul_plan says what each means; a cluster must divide the
    blocks). descriptors: a and
    b go to the kernel as tensor descriptors (on sm_90 its K loop then
    loads them with bulk tensor copies), else as pointers; None: where
    they meet tensor_maps_fit and the blocks tile the product. warp_mma:
    warp-level MMA (mma.sync on sm_90) instead of warpgroup MMA, for
    comparison (the launch option of that name; config=None then picks
    blocks for it). With out given, a repeat on the same buffers is a kept
    call (weft/_plans.py): the first call's launches without its checks
    and planning."""
    if out is None:  # every call allocates its out: not kept
        return _matmul(a, b, out, split_k, config, descriptors, warp_mma)
    _plans.kept(_plans.local(), _plans.local, "matmul", (a, b, out),
                (split_k, config, descriptors, warp_mma), _matmul, a, b, out, split_k, config,
                descriptors, warp_mma)
    return out


def _matmul(a, b, out, split_k, config, descriptors, warp_mma):
    m, k, n = _check_operands("matmul", a, b)
    dtype = _dtype_of(a, "a")
    out = _output("matmul", out, m, n, out_dtypes(dtype))
    out_dtype = _dtype_of(out, "out")
    if m * n == 0:  # no output block: no program would have a block to write
        return out
    if out_dtype is not wl.float32:
        # The pieces of K meet in f32 atomics; 16 bits would round each.
        if split_k not in (None, 1):
            raise ValueError(f"matmul: split_k={split_k} needs an fp32 out, got "
                             f"{out_dtype.name}")
        split_k = 1
    backend = rt.backend()
    if descriptors is None and not tensor_maps_fit(a, b):
        descriptors = False
    grid, steps, constexprs, options = matmul_plan(
        m, n, k, backend, split_k, None if config is None else tuple(config), descriptors,
        dtype, warp_mma)
    if grid[2] > 1:  # the pieces add into zeros
        zero_f32(out, m * n)
    if constexprs["DESC"]:
        a, b = blocks_of(a, b, constexprs)
    c, desc_out = out, _desc_out(constexprs, grid, out_dtype) and tensor_maps_fit(out)
    if desc_out:
        c = out_blocks(out, constexprs)
    persistent = constexprs.get("PERSISTENT", False)
    launch = (grid[0] * grid[1],) if persistent else grid
    matmul_kernel[launch](a, b, c, m, n, k, steps, resident=persistent, DESC_OUT=desc_out,
                          **options, **constexprs)
    return out

