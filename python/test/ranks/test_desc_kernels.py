"""Kernels with tensor descriptors (weft.TensorDescriptor; desc.load,
desc.store, desc.shape) checked against numpy: blocks of strided views,
edges that read zeros and are not written, ranks 1 to 3, and a K loop of
wl.dot on descriptor blocks (on sm_90 bulk tensor copies into wgmma's
rings, elsewhere masked tile loads)."""
import json

import numpy as np
import pytest

import weft
import weft.language as wl
from devices import BACKEND, buffer_of, compiler_available, host, local, rounded
from weft import CompilationError, PerBackend, TensorDescriptor, WeftError


@weft.jit
def scale_blocks(src, dst, BM: wl.constexpr, BN: wl.constexpr):
    i = wl.program_id(0) * BM
    j = wl.program_id(1) * BN
    dst.store([i, j], src.load([i, j]) * 3 + 1)


@pytest.mark.parametrize("rows,cols,block", [(37, 45, (8, 16)), (16, 32, (16, 32)),
                                             (5, 7, (8, 8)), (64, 20, (32, 4))])
def test_blocks_of_strided_views(rows, cols, block):
    """A view of every other row of a wider array: the rows' pitch is the
    descriptor's stride. Blocks past the edges read zeros (the last row and
    column blocks) and write nothing outside the view (the array's other
    rows and columns keep their values)."""
    pitch = 48  # int32 rows of 192 bytes: whole 16-byte chunks
    whole = np.arange(2 * rows * pitch, dtype=np.int32).reshape(2 * rows, pitch)
    out = np.full((2 * rows, pitch), -7, np.int32)
    src, dst = local(whole), local(out)
    view = dict(shape=(rows, cols), strides=(2 * pitch, 1))
    grid = (-(-rows // block[0]), -(-cols // block[1]))
    scale_blocks[grid](TensorDescriptor(src, block, **view),
                       TensorDescriptor(dst, block, **view), BM=block[0], BN=block[1])
    expected = np.full_like(out, -7)
    expected[0:2 * rows:2, :cols] = whole[0:2 * rows:2, :cols] * 3 + 1
    np.testing.assert_array_equal(host(dst), expected)


@weft.jit
def shifted_copy(src, dst, DI: wl.constexpr, DJ: wl.constexpr, B: wl.constexpr):
    """dst's block at (i, j) is src's at (i + DI, j + DJ): negative and
    past-the-end origins read zeros where they leave the tensor."""
    i = wl.program_id(0) * B
    j = wl.program_id(1) * B
    dst.store([i, j], src.load([i + DI, j + DJ]))


@pytest.mark.parametrize("di,dj", [(-3, 0), (0, -5), (2, 3)])
def test_negative_and_far_origins_read_zeros(di, dj):
    n, block = 20, 8
    a = np.arange(n * 24, dtype=np.float32).reshape(n, 24)[:, :n]
    src, dst = local(np.ascontiguousarray(a)), local(np.zeros((n, n), np.float32))
    grid = (-(-n // block), -(-n // block))
    shifted_copy[grid](TensorDescriptor(src, (block, block)),
                       TensorDescriptor(dst, (block, block)), DI=di, DJ=dj, B=block)
    padded = np.zeros((n + 20, n + 20), np.float32)
    padded[10:10 + n, 10:10 + n] = a
    expected = padded[10 + di:10 + di + n, 10 + dj:10 + dj + n]
    np.testing.assert_array_equal(host(dst), expected)


@weft.jit
def rank3_and_shape(src, dst, dims, B0: wl.constexpr, B1: wl.constexpr, B2: wl.constexpr):
    """A 3-D descriptor, block by block over axis 0; the tensor's shape
    read back through desc.shape."""
    i = wl.program_id(0) * B0
    dst.store([i, 0, 0], src.load([i, 0, 0]) + 1)
    if wl.program_id(0) == 0:
        shape = src.shape
        wl.store(dims + 0, shape[0])
        wl.store(dims + 1, shape[1])
        wl.store(dims + 2, shape[2])


def test_rank3_and_shape():
    a = np.arange(5 * 3 * 8, dtype=np.int16).reshape(5, 3, 8)
    src, dst = local(a), local(np.zeros_like(a))
    dims = local(np.zeros(3, np.int64))
    rank3_and_shape[(3,)](TensorDescriptor(src, (2, 4, 8)), TensorDescriptor(dst, (2, 4, 8)),
                          dims, B0=2, B1=4, B2=8)
    np.testing.assert_array_equal(host(dst), a + 1)
    np.testing.assert_array_equal(host(dims), [5, 3, 8])


@weft.jit
def desc_matmul(a, b, c, M, N, BM: wl.constexpr, BN: wl.constexpr, BK: wl.constexpr):
    """c = a @ b from descriptor blocks in a K loop (c masked by hand)."""
    m0 = wl.program_id(0) * BM
    n0 = wl.program_id(1) * BN
    acc = wl.zeros((BM, BN), wl.float32)
    for k0 in range(0, a.shape[1], BK):
        acc = wl.dot(a.load([m0, k0]), b.load([k0, n0]), acc)
    rm = m0 + wl.arange(0, BM)
    rn = n0 + wl.arange(0, BN)
    wl.store(c + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


@pytest.mark.parametrize("warps", [4, 8])
@pytest.mark.parametrize("dtype", [wl.float16, wl.bfloat16])
@pytest.mark.parametrize("m,n,k", [(70, 40, 104), (128, 128, 256), (200, 72, 712)])
def test_dot_of_descriptor_blocks(m, n, k, dtype, warps):
    """On sm_90 with 64x64x64 blocks (8 warps: 128 rows) the loads are bulk
    tensor copies into wgmma's swizzled rings: rows and columns past M, N
    and K arrive as zeros from the copy engine; 712 is 11 steps and a
    partial one."""
    rng = np.random.default_rng(m + n + k + warps)
    a = rng.integers(-4, 5, (m, k)).astype(np.float32)
    b = rng.integers(-4, 5, (k, n)).astype(np.float32)
    bufs = [buffer_of(a, dtype), buffer_of(b, dtype)]
    c = local(np.full((m, n), -1.0, np.float32))
    bm = PerBackend(host=16, default=16 * warps)
    bn, bk = PerBackend(host=16, default=64), PerBackend(host=16, default=64)
    blocks = {"host": (16, 16, 16)}.get(BACKEND, (16 * warps, 64, 64))
    grid = (-(-m // blocks[0]), -(-n // blocks[1]))
    desc_matmul[grid](TensorDescriptor(bufs[0], (bm, bk)), TensorDescriptor(bufs[1], (bk, bn)),
                      c, m, n, BM=bm, BN=bn, BK=bk, num_warps=warps)
    np.testing.assert_array_equal(host(c), a @ b)
    for buf in bufs:
        buf.free()


# Persistent matmuls: shapes of an even number of row and column blocks on
# every backend (16x16 blocks on the host, 128x64 elsewhere), with edges,
# so that clusters may pair either; programs with several blocks, one step
# per block (k = 64), and idle programs (16 for 4 blocks).
PERSISTENT_SHAPES = [(216, 96, 328, 6), (256, 256, 64, 4), (224, 128, 712, 8),
                     (216, 96, 104, 16)]
# Clusters (rows, columns): none, column blocks in pairs (sharing a's
# copies), row blocks in pairs (sharing b's).
CLUSTERS = [(1, 1), (1, 2), (2, 1)]


@pytest.mark.parametrize("cluster", CLUSTERS, ids=lambda c: "cluster{}x{}".format(*c))
@pytest.mark.parametrize("m,n,k,programs", PERSISTENT_SHAPES)
def test_persistent_matmul_prefetches(m, n, k, programs, cluster):
    """weft.ops' matmul_kernel with PERSISTENT: each program takes several
    blocks in turn (or none: 16 programs for 6 blocks or fewer), and on
    sm_90 each block's K loop copies the next block's first stages before
    its own store (wl.range's prefetch): the copies of a program's next
    block land in the rings its last steps read, past the edges of M, N
    and K as zeros, where the next block has fewer steps than the ring has
    stages (64: one step) and after the last block (none). Clusters take
    column or row blocks in pairs."""
    from weft.ops._gemm import matmul_kernel
    rng = np.random.default_rng(m + n + k + programs + sum(cluster))
    a = rng.integers(-4, 5, (m, k)).astype(np.float32)
    b = rng.integers(-4, 5, (k, n)).astype(np.float32)
    bufs = [buffer_of(a, wl.bfloat16), buffer_of(b, wl.bfloat16)]
    c = local(np.full((m, n), -1.0, np.float32))
    bm, bn = PerBackend(host=16, default=128), PerBackend(host=16, default=64)
    bk = PerBackend(host=16, default=64)
    matmul_kernel[(programs,)](
        TensorDescriptor(bufs[0], (bm, bk)), TensorDescriptor(bufs[1], (bk, bn)), c, m, n, k, 0,
        BM=bm, BN=bn, BK=bk, GROUP_M=2, DESC=True, CLUSTER_M=cluster[0], CLUSTER_N=cluster[1],
        PERSISTENT=True, num_warps=8, num_stages=3, cluster=(cluster[0] * cluster[1],))
    np.testing.assert_array_equal(host(c), a @ b)
    for buf in bufs:
        buf.free()


@pytest.mark.parametrize("cluster", CLUSTERS, ids=lambda c: "cluster{}x{}".format(*c))
@pytest.mark.parametrize("out_dtype", [wl.float32, wl.bfloat16])
@pytest.mark.parametrize("m,n,k,programs,stages",
                         [shape + (stages,) for shape, stages in zip(PERSISTENT_SHAPES,
                                                                    (3, 2, 4, 3))])
def test_warp_specialized_matmul(m, n, k, programs, stages, out_dtype, cluster):
    """matmul_kernel with PERSISTENT and WARP_SPECIALIZE (wl.range's
    warp_specialize): on sm_90 a warpgroup of producer warps copies every
    block's stages, running ahead into the program's next block while its
    warps multiply and store (a bf16 out by bulk stores), past the edges of
    M, N and K as zeros; programs with no block (16 for 6 blocks or fewer)
    and blocks with fewer steps than stages (64: one step). In clusters of
    two the producers share a's copies (column blocks in pairs) or b's (row
    blocks), and a buffer is refilled once both programs' warps are done
    with it. Elsewhere the hint is ignored."""
    from weft.ops._gemm import matmul_kernel, out_blocks
    rng = np.random.default_rng(m + n + k + programs + stages + sum(cluster))
    a = rng.integers(-4, 5, (m, k)).astype(np.float32)
    b = rng.integers(-4, 5, (k, n)).astype(np.float32)
    bufs = [buffer_of(a, wl.bfloat16), buffer_of(b, wl.bfloat16)]
    bm, bn = PerBackend(host=16, default=128), PerBackend(host=16, default=64)
    bk = PerBackend(host=16, default=64)
    if out_dtype is wl.float32:
        out = local(np.full((m, n), -1.0, np.float32))
        c = out
    else:
        out = buffer_of(np.full((m, n), -1.0, np.float32), wl.bfloat16)
        c = out_blocks(out, dict(BM=bm, BN=bn))
    matmul_kernel[(programs,)](
        TensorDescriptor(bufs[0], (bm, bk)), TensorDescriptor(bufs[1], (bk, bn)), c, m, n, k, 0,
        BM=bm, BN=bn, BK=bk, GROUP_M=2, DESC=True, PERSISTENT=True, CLUSTER_M=cluster[0],
        CLUSTER_N=cluster[1], DESC_OUT=out_dtype is wl.bfloat16, WARP_SPECIALIZE=True,
        num_warps=8, num_stages=stages, cluster=(cluster[0] * cluster[1],))
    np.testing.assert_array_equal(host(out), rounded(a @ b, out_dtype))
    for buf in bufs + ([] if out_dtype is wl.float32 else [out]):
        buf.free()
    # On sm_90 the producer warps are there: the kernel asks launches for them.
    if compiler_available():
        from weft.ops._gemm import matmul_signature
        constexprs = dict(BM=bm, BN=bn, BK=bk, GROUP_M=2, DESC=True, PERSISTENT=True,
                          CLUSTER_M=cluster[0], CLUSTER_N=cluster[1],
                          DESC_OUT=out_dtype is wl.bfloat16, WARP_SPECIALIZE=True)
        kernel = weft.compile(matmul_kernel, matmul_signature(m, n, k, constexprs, "cuda",
                                                              "*" + out_dtype.name),
                              constexprs, target="cuda:90", num_warps=8, num_stages=stages,
                              cluster=(cluster[0] * cluster[1],))
        assert json.loads(kernel.asm["kernels"])["matmul_kernel"]["threads"] == 384


@weft.jit
def counted_product(a, b, c, counts, BM: wl.constexpr, BN: wl.constexpr, BK: wl.constexpr,
                    GROUP: wl.constexpr):
    """c's block = a @ b from descriptor blocks, stored through c's
    descriptor (bulk stores on sm_90), then counted in its group of GROUP
    block rows: the signal's release orders the block before the count
    (a bulk store is first waited for until written)."""
    m0 = wl.program_id(0) * BM
    n0 = wl.program_id(1) * BN
    acc = wl.zeros((BM, BN), wl.float32)
    for k0 in range(0, a.shape[1], BK):
        acc = wl.dot(a.load([m0, k0]), b.load([k0, n0]), acc)
    c.store([m0, n0], acc.to(c.dtype))
    wl.signal(counts + wl.program_id(0) // GROUP, 1, op="add")


@pytest.mark.parametrize("edge", [0, 5])
def test_puts_wait_for_a_kernels_counts(edge):
    """weft_put_wait: the copy engine puts each group of 8 block rows of a
    kernel's product into the next rank's recv (this rank's own on one
    rank) as soon as the group's blocks have counted themselves written,
    while the kernel still runs. Three groups, the last a part (edge: five
    rows short of a whole block, which the stores leave out), three calls
    with new data, the third replayed from a graph where there are graphs.
    The stage holds the last call's product when a call starts, so a put
    made before its group is written would land stale rows."""
    from weft import _runtime as rt
    me, ranks = weft.rank(), weft.num_ranks()
    dest, source = (me + 1) % ranks, (me - 1) % ranks
    gpu = BACKEND != "host"
    (bm, bn, bk), n, k = ((128, 128, 64), 1024, 2048) if gpu else ((16, 16, 16), 64, 48)
    group, rows = 8, 18 * bm - edge
    groups, width = 3, n // bn
    a, b = weft.empty((rows, k), wl.bfloat16), weft.empty((k, n), wl.bfloat16)
    stage = weft.empty((rows, n), wl.bfloat16, local=True)
    recv, flags = weft.zeros((rows, n), wl.bfloat16), weft.zeros((groups,), wl.int64)
    counts, epoch = weft.zeros((groups,), wl.int64, local=True), weft.zeros((1,), wl.int64)
    descs = (TensorDescriptor(a, (bm, bk)), TensorDescriptor(b, (bk, bn)),
             TensorDescriptor(stage, (bm, bn)))
    row = 2 * n

    def call():
        rt.memset_async(counts, 0, 8 * groups)
        rt.PutFork().launch()
        counted_product[(-(-rows // bm), width)](*descs, counts, BM=bm, BN=bn, BK=bk,
                                                  GROUP=group, num_warps=8)
        for g, first in enumerate(range(0, rows, group * bm)):
            count = min(group * bm, rows - first)
            rt.PutWait(counts.ptr + 8 * g, -(-count // bm) * width).launch()
            rt.Puts([(recv.ptr + first * row, stage.ptr + first * row, count * row,
                      flags.ptr + 8 * g, epoch.ptr, dest)]).launch()
        rt.PutJoin().launch()

    def operands(seed, rank):
        rng = np.random.default_rng([seed, rank])
        return rng.integers(-3, 4, (rows, k)), rng.integers(-3, 4, (k, n))

    def check(seed, launch):
        x, w = operands(seed, me)
        a.copy_from(x)
        b.copy_from(w)
        epoch.copy_from([seed])
        launch()
        weft.barrier()                              # every rank's puts have landed
        x, w = operands(seed, source)
        np.testing.assert_array_equal(host(recv), rounded(x @ w, wl.bfloat16))
        assert (host(flags) == seed).all()
        weft.barrier()                              # read before the next call's puts

    check(1, call)
    check(2, call)
    graph = rt.capture(call) if gpu else None
    if graph is not None:
        check(3, lambda: graph.launch(rt.state.stream))
    for buf in (a, b, stage, recv, flags, counts, epoch):
        buf.free()


def test_errors():
    buf = weft.empty((4, 6), wl.float32)  # rows of 24 bytes
    with pytest.raises(WeftError, match=r"strides\[0\] = 6 elements of 4 bytes"):
        scale_blocks[(1, 1)](TensorDescriptor(buf, (4, 8)), TensorDescriptor(buf, (4, 8)),
                             BM=4, BN=8)
    with pytest.raises(ValueError, match="need 1 to 5 dimensions each"):
        TensorDescriptor(buf, (4,))
    with pytest.raises(CompilationError, match=r"desc.load takes a list of 2 offsets"):
        weft.compile(_one_offset, {"src": "tensordesc<fp32[4,8]>"}, target="host")
    with pytest.raises(CompilationError, match="bad tensor descriptor type"):
        weft.compile(_one_offset, {"src": "tensordesc<fp32>"}, target="host")
    buf.free()


@weft.jit
def _one_offset(src):
    src.load([0])
