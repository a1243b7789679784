"""Kernels on 1-4 ranks under weft-run (the host backend in CI, cuda on a
GPU machine), checked against numpy."""
import json
import os
import shutil
import tempfile

import numpy as np
import pytest

import weft
import weft.language as wl
from devices import BACKEND, buffer_of, compiler_available, host, local, rounded
from weft import _jit


@pytest.fixture
def ring():
    r, n = weft.rank(), weft.num_ranks()
    return r, n, (r + 1) % n, (r - 1) % n


@weft.jit
def put_signal(src, dst, flag, n, epoch, BLOCK: wl.constexpr):
    nxt = (wl.rank() + 1) % wl.num_ranks()
    offs = wl.program_id(0) * BLOCK + wl.arange(0, BLOCK)
    mask = offs < n
    wl.store(dst + offs, wl.load(src + offs, mask=mask), mask=mask, peer=nxt)
    wl.signal(flag, 1, peer=nxt, op="add")
    wl.wait(flag, epoch * wl.num_programs(0), cmp="ge")


def test_ring_put_with_signal_and_wait(ring):
    rank, ranks, nxt, prev = ring
    n, block = 1000, 128
    src = weft.empty((n,), wl.float32)
    dst = weft.zeros((n,), wl.float32)
    flag = weft.zeros((1,), wl.int64)
    weft.barrier()
    grid = lambda meta: ((n + meta["BLOCK"] - 1) // meta["BLOCK"],)
    for epoch in (1, 2, 3):  # flags count up: no re-zeroing between calls
        src.copy_from(np.arange(n) + 1000 * rank + epoch)
        put_signal[grid](src, dst, flag, n, epoch, BLOCK=block)
        np.testing.assert_array_equal(dst.to_numpy(), np.arange(n) + 1000 * prev + epoch)
        weft.barrier()  # nobody overwrites dst before its owner checked it


@weft.jit
def tile_copy_peer(src, dst, peer, COLS: wl.constexpr):
    rows = wl.program_id(0) * 16 + wl.arange(0, 16)
    offs = rows[:, None] * COLS + wl.arange(0, COLS)[None, :]
    wl.store(dst + offs, wl.load(src + offs), peer=peer, order="release")


def test_tile_copy_to_peer(ring):
    rank, ranks, nxt, prev = ring
    src = weft.empty((64, 32), wl.float32)
    dst = weft.zeros((64, 32), wl.float32)
    src.copy_from(np.random.default_rng(rank).standard_normal((64, 32)))
    weft.barrier()
    tile_copy_peer[(4,)](src, dst, nxt, COLS=32)
    weft.barrier()
    expect = np.random.default_rng(prev).standard_normal((64, 32)).astype(np.float32)
    np.testing.assert_array_equal(dst.to_numpy(), expect)


@weft.jit
def atomics_peer(counts, old, scalar, n):
    offs = wl.arange(0, 64)
    mask = offs < n
    nxt = (wl.rank() + 1) % wl.num_ranks()
    prev = wl.atomic_add(counts + offs, wl.rank() + 1, mask=mask, peer=nxt, scope="sys")
    wl.store(old + offs, prev, mask=mask)
    wl.atomic_max(scalar, wl.rank(), peer=0, scope="sys")
    wl.atomic_add(scalar + 1, 1, peer=0, order="relaxed", scope="sys")


def test_atomics_on_peer(ring):
    rank, ranks, nxt, prev = ring
    n = 45
    counts = weft.zeros((64,), wl.int32)
    old = weft.full((64,), -1, wl.int32)
    scalar = weft.zeros((2,), wl.int32)
    weft.barrier()
    atomics_peer[(1,)](counts, old, scalar, n)
    weft.barrier()
    expect = np.where(np.arange(64) < n, prev + 1, 0)
    np.testing.assert_array_equal(counts.to_numpy(), expect)
    assert (old.to_numpy()[:n] == 0).all() and (old.to_numpy()[n:] == -1).all()
    if rank == 0:
        assert scalar.to_numpy().tolist() == [ranks - 1, ranks]


@weft.jit
def reductions(x, sums, maxs, mins, total, COLS: wl.constexpr):
    rows = wl.arange(0, 16)
    t = wl.load(x + rows[:, None] * COLS + wl.arange(0, COLS)[None, :])
    wl.store(sums + rows, wl.sum(t, axis=1))
    wl.store(maxs + rows, wl.max(t, axis=1))
    wl.store(mins + wl.arange(0, COLS), wl.min(t, axis=0))
    wl.store(total, wl.sum(t))


def test_reductions_vs_numpy(ring):
    rank = ring[0]
    a = np.random.default_rng(10 + rank).integers(-50, 50, (16, 32)).astype(np.int32)
    sums, maxs = local(np.zeros(16, np.int32)), local(np.zeros(16, np.int32))
    mins, total = local(np.zeros(32, np.int32)), local(np.zeros(1, np.int32))
    reductions[(1,)](local(a), sums, maxs, mins, total, COLS=32)  # local arrays
    np.testing.assert_array_equal(host(sums), a.sum(1))
    np.testing.assert_array_equal(host(maxs), a.max(1))
    np.testing.assert_array_equal(host(mins), a.min(0))
    assert host(total)[0] == a.sum()


@weft.jit
def math_tail(x, out, n, BLOCK: wl.constexpr):
    offs = wl.program_id(0) * BLOCK + wl.arange(0, BLOCK)
    mask = offs < n
    v = wl.load(x + offs, mask=mask, other=1.0)
    r = wl.where(v > 0.5, wl.exp(v) + wl.log(v), wl.sqrt(v) * wl.rsqrt(v + 1.0))
    r = wl.maximum(r, wl.abs(v - 2.0)) + wl.minimum(v, 0.25)
    wl.store(out + offs, r, mask=mask)


@pytest.mark.parametrize("n", [1, 15, 16, 17, 63, 200])
def test_masked_tails_and_math_vs_numpy(n):
    x = np.linspace(0.01, 3.0, 256).astype(np.float32)
    dev = local(np.full(256, -7.0, np.float32))
    math_tail[(256 // 64,)](local(x), dev, n, BLOCK=64)
    out = host(dev)
    v = x[:n].astype(np.float64)
    r = np.where(v > 0.5, np.exp(v) + np.log(v), np.sqrt(v) / np.sqrt(v + 1.0))
    r = np.maximum(r, np.abs(v - 2.0)) + np.minimum(v, 0.25)
    np.testing.assert_allclose(out[:n], r, rtol=1e-5)
    assert (out[n:] == -7.0).all()


@weft.jit
def loops(out, n):
    total = 0
    for i in range(n):
        total += i
    j = 0
    while j * j < n:
        j += 1
    if total > 10:
        total = total * 2
    wl.store(out, total)
    wl.store(out + 1, j)


def test_scalar_control_flow():
    out = local(np.zeros(2, np.int32))
    loops[(1,)](out, 30)
    assert host(out).tolist() == [2 * sum(range(30)), 6]


@weft.jit
def board(marks, epoch):
    me = wl.rank() * wl.num_programs(0) + wl.program_id(0)
    for peer in range(wl.num_ranks()):
        wl.store(marks + me, epoch, peer=peer)
    wl.barrier()


def test_device_barrier(ring):
    rank, ranks = ring[0], ring[1]
    marks = weft.zeros((4 * ranks,), wl.int32)
    weft.barrier()
    for epoch in (1, 2):
        board[(4,)](marks, epoch)
        assert (marks.to_numpy() == epoch).all()
        weft.barrier()


@pytest.mark.skipif(BACKEND != "host", reason="numpy views are the host backend's")
def test_buffer_views():
    buf = weft.full((4, 8), 2.5, wl.float32)
    assert buf.shape == (4, 8) and buf.dtype is wl.float32
    view = np.asarray(buf)
    view[0, 0] = 7
    assert buf.numpy()[0, 0] == 7 and buf.numpy().sum() == 7 + 2.5 * 31
    with pytest.raises(AttributeError):
        buf.__cuda_array_interface__


def test_buffer_copies():
    """to_numpy/copy_from/full/zeros on every backend: copies, not views."""
    buf = weft.full((3, 5), 1.5, wl.float32)
    np.testing.assert_array_equal(buf.to_numpy(), np.full((3, 5), 1.5, np.float32))
    got = buf.to_numpy()
    got[0, 0] = 9  # a copy: the buffer keeps its value
    assert buf.to_numpy()[0, 0] == 1.5
    buf.copy_from(np.arange(5))  # broadcast over the rows, converted to fp32
    np.testing.assert_array_equal(buf.to_numpy(), np.tile(np.arange(5, dtype=np.float32), (3, 1)))
    # bf16 converts numerically (issue 36: full(..., 1.5, bf16) stored 0x0001,
    # copy_from of -3.0 gave 65533); the bits stay at hand with raw=True
    bits = weft.full((4,), 1.5, wl.bfloat16)
    assert bits.to_numpy().dtype == np.float32 and (bits.to_numpy() == 1.5).all()
    assert (bits.to_numpy(raw=True) == 0x3FC0).all()
    bits.copy_from(np.array([-3.0, 0.1, 1e30, np.inf], np.float32))
    assert bits.to_numpy(raw=True).tolist() == [0xC040, 0x3DCD, 0x714A, 0x7F80]  # to even
    bits.copy_from(np.full(4, 0x4000, np.uint16), raw=True)
    assert (bits.to_numpy() == 2.0).all()
    with pytest.raises(TypeError, match="raw=True"):
        bits.copy_from(np.full(4, 0x4000, np.uint16))  # bits or integers? ask
    zeros = weft.zeros((1000,), wl.int64)
    assert (zeros.to_numpy() == 0).all()
    with pytest.raises(ValueError):
        buf.copy_from(np.zeros(4))  # does not broadcast to (3, 5)
    for b in (buf, bits, zeros):
        b.free()
    with pytest.raises(weft.WeftError, match="was freed"):
        buf.to_numpy()


@weft.jit(do_not_specialize=("epoch",))
def stamp(dst, epoch, BLOCK: wl.constexpr):
    offs = wl.arange(0, BLOCK)
    wl.store(dst + offs, offs + epoch)


def test_do_not_specialize_and_per_backend():
    """An epoch counter picks no new specialisation at multiples of 16, and
    a PerBackend constexpr takes the run's backend's value."""
    dst = weft.zeros((64,), wl.int32)
    block = weft.PerBackend(host=16, cuda=32, hip=32)
    width = block[BACKEND]
    first = stamp[(1,)](dst, 16, BLOCK=block)
    got = dst.to_numpy()
    np.testing.assert_array_equal(got[:width], np.arange(width) + 16)
    assert (got[width:] == 0).all()
    assert stamp[(1,)](dst, 17, BLOCK=block) is first
    np.testing.assert_array_equal(dst.to_numpy()[:width], np.arange(width) + 17)
    dst.free()


@weft.jit
def store_at(out, i, value, stride):
    wl.store(out + wl.program_id(0) * stride + i, value)


@pytest.mark.parametrize("synchronize_every", [1, 4, 0])
def test_repeated_launches_take_their_own_arguments(synchronize_every):
    """On CUDA launches alike go through a graph of that one launch, its
    arguments set each time, while earlier launches of it may still run
    (docs/runtime.md): each stores its own value, the stream idle (a
    synchronize before) or busy, with two grids taking turns."""
    n = 300
    out = weft.full((2, n), -1, wl.int32)
    for i in range(n):
        store_at[(1 + i % 2,)](out, i, 7 * i + 1, n)
        if synchronize_every and i % synchronize_every == 0:
            weft.synchronize()
    got = out.to_numpy()
    np.testing.assert_array_equal(got[0], 7 * np.arange(n) + 1)
    np.testing.assert_array_equal(got[1], np.where(np.arange(n) % 2, 7 * np.arange(n) + 1, -1))
    out.free()


@weft.jit
def add_at(out, i, value):
    wl.atomic_add(out + i, value)


def test_repeated_launches_with_repeating_arguments():
    """A launch with the arguments its one-launch graph holds launches it
    without setting them (docs/runtime.md): runs of launches alike, the
    runs' arguments changing in one argument or in all, sum as numpy says."""
    rng = np.random.default_rng(5)
    out = weft.zeros((8,), wl.int32)
    want = np.zeros(8, np.int64)
    for _ in range(40):
        i, value, repeats = int(rng.integers(2)), int(rng.integers(1, 3)), int(rng.integers(1, 5))
        for _ in range(repeats):
            add_at[(1,)](out, i, value)
        want[i] += value * repeats
    np.testing.assert_array_equal(out.to_numpy(), want)
    out.free()


@weft.jit
def scaled(dst, SCALE: wl.constexpr):
    offs = wl.arange(0, 16)
    wl.store(dst + offs, offs * SCALE)


def test_launches_find_their_kernels():
    """A launch finds the kernel of an earlier one that named the same
    arguments (a PerBackend made anew is the same object), but not one
    whose constexpr is equal in value and of another type: 2 and 2.0 are
    an i32 and an f32 product."""
    dst = weft.zeros((64,), wl.int32)
    first = stamp[(1,)](dst, 3, BLOCK=weft.PerBackend(host=16, cuda=32, hip=32))
    assert stamp[(1,)](dst, 4, BLOCK=weft.PerBackend(hip=32, cuda=32, host=16)) is first
    out = weft.zeros((16,), wl.float32)
    ints = scaled[(1,)](out, SCALE=2)
    floats = scaled[(1,)](out, SCALE=2.0)
    assert ints is not floats and "arith.mulf" in floats.ir
    np.testing.assert_array_equal(out.to_numpy(), np.arange(16) * 2.0)
    assert scaled[(1,)](out, 2) is ints
    dst.free()
    out.free()


def test_warm_target_compiles_the_target_value(monkeypatch):
    """WEFT_WARM_TARGET: a launch here also compiles for the warmed target,
    its PerBackend constexprs resolved for that target's backend."""
    if not compiler_available():
        pytest.skip("warming compiles: it runs where the compiler is")
    root = tempfile.mkdtemp(prefix="weft-warm-")
    try:
        monkeypatch.setenv("WEFT_CACHE_DIR", root)
        monkeypatch.setattr(_jit, "WARM_TARGET", "cuda:90")
        dst = weft.zeros((64,), wl.int32)
        fresh = weft.jit(do_not_specialize=("epoch",))(stamp.fn)
        fresh[(1,)](dst, 5, BLOCK=weft.PerBackend(cuda=64, default=8))
        np.testing.assert_array_equal(dst.to_numpy()[:8], np.arange(8) + 5)
        entries = {}
        for version in os.listdir(root):
            for key in os.listdir(os.path.join(root, version)):
                with open(os.path.join(root, version, key, "index.json")) as f:
                    entries[json.load(f)["target"]] = os.path.join(root, version, key)
        assert set(entries) == {"cuda:90", _jit._target_of_backend(BACKEND)}
        with open(os.path.join(entries["cuda:90"], "weft")) as f:
            assert "64xi32" in f.read()
        weft.barrier()
        dst.free()
    finally:
        shutil.rmtree(root, ignore_errors=True)


def test_local_arrays_must_be_reachable():
    """A numpy array on a GPU backend (host memory), or a GPU tensor on the
    host backend, is refused before launch instead of faulting."""
    dst = weft.zeros((4,), wl.int32)
    if BACKEND == "host":
        torch = pytest.importorskip("torch")
        if not torch.cuda.is_available():
            pytest.skip("no GPU tensor to misplace")
        wrong = torch.zeros(2, dtype=torch.int32, device="cuda")
    else:
        wrong = np.zeros(2, np.int32)
    with pytest.raises(TypeError, match="argument out is .* memory, which kernels on the"):
        loops[(1,)](wrong, 30)
    dst.free()


@pytest.mark.parametrize("dtype", [wl.float32, wl.float16, wl.bfloat16])
@pytest.mark.parametrize("m,n,k", [(1, 1, 1), (17, 9, 33), (40, 24, 70), (130, 70, 100),
                                   (32, 48, 64), (128, 128, 128), (70, 40, 700)])
def test_dot_vs_numpy(m, n, k, dtype):
    """wl.dot with masked odd shapes, through weft.ops.matmul, and shapes
    the blocks tile exactly (its unmasked EVEN kernel). On sm_90, K = 700 is
    11 steps of 64: two rounds of the K loop unrolled by its five-buffer
    rings, and one step of the remainder loop."""
    rng = np.random.default_rng(m * 100 + n * 10 + k + weft.rank())
    a = rng.integers(-4, 5, (m, k)).astype(np.float32)  # exact in every dtype
    b = rng.integers(-4, 5, (k, n)).astype(np.float32)

    ab = buffer_of(a, dtype), buffer_of(b, dtype)
    c = local(np.full((m, n), -1.0, np.float32))
    # weft.ops.matmul: wl.dot in a K loop, blocks of 64x64x32 on GPUs
    # (wgmma on sm_90), 16 on the host, where 130 rows are two groups of
    # block rows (GROUP_M = 8), the second of one.
    assert weft.ops.matmul(*ab, c) is c
    np.testing.assert_array_equal(host(c), a @ b)
    for buf in ab:
        buf.free()


@pytest.mark.parametrize("dtype", [wl.float16, wl.bfloat16])
@pytest.mark.parametrize("m,n,k", [(17, 9, 30), (32, 48, 32)])
def test_matmul_16bit_out(m, n, k, dtype):
    """An out of a's 16-bit dtype: f32 sums rounded once (exact here:
    every sum is an integer of magnitude at most 128); one piece of K."""
    rng = np.random.default_rng(m + k)
    a = rng.integers(-2, 3, (m, k)).astype(np.float32)
    b = rng.integers(-2, 3, (k, n)).astype(np.float32)
    ab = [buffer_of(a, dtype), buffer_of(b, dtype)]
    c = weft.empty((m, n), dtype)
    assert weft.ops.matmul(*ab, c) is c
    np.testing.assert_array_equal(c.to_numpy(), rounded(a @ b, dtype))
    with pytest.raises(ValueError, match="split_k=2 needs an fp32 out"):
        weft.ops.matmul(*ab, c, split_k=2)
    wide = [weft.empty((m, k), wl.float32), weft.empty((k, n), wl.float32)]
    with pytest.raises(ValueError, match=f"out must hold {m} x {n} fp32 elements"):
        weft.ops.matmul(*wide, c)  # fp32 operands: only an fp32 out
    for buf in ab + wide + [c]:
        buf.free()


@pytest.mark.parametrize("cluster", [2, 4])
def test_matmul_clusters(cluster):
    """Programs of neighbouring column blocks launched in clusters (on
    sm_90 they share the bulk copies of a's blocks, each copying its slice
    into all of them): the same products. A cluster that does not divide
    the column blocks, or a grid that is no whole number of clusters, is
    an error (the runtime's, for the grid), and nothing runs."""
    bm = _jit.PerBackend(host=16, default=64)  # the host run warms the GPU's kernel
    m, n, k = 256, 512, 384
    rng = np.random.default_rng(cluster)
    a = rng.integers(-2, 3, (m, k)).astype(np.float32)
    b = rng.integers(-2, 3, (k, n)).astype(np.float32)
    ab = [buffer_of(a, wl.bfloat16), buffer_of(b, wl.bfloat16)]
    c = weft.empty((m, n), wl.float32)
    weft.ops.matmul(*ab, c, config=(bm, bm, bm, 4, 3, cluster))
    np.testing.assert_array_equal(c.to_numpy(), a @ b)
    with pytest.raises(ValueError, match="clusters of 3 programs do not divide the [0-9]+ column"):
        weft.ops.matmul(*ab, c, config=(bm, bm, bm, 4, 3, 3))
    # Row blocks pair only in persistent programs (these 32 blocks are not).
    with pytest.raises(ValueError, match="clusters of row blocks need persistent programs"):
        weft.ops.matmul(*ab, c, config=(bm, bm, bm, 4, 3, (2, 1)))
    with pytest.raises(weft.WeftError, match="grid 3x1x1 is not a whole number of clusters "
                                             "of 2x1x1"):
        _jit_fill[(3,)](c, 1.0, cluster=(2,))


@pytest.mark.parametrize("cluster", [1, 2, (2, 1)], ids=["alone", "columns", "rows"])
@pytest.mark.parametrize("m,n,k,descriptors", [(1152, 1024, 192, None), (1144, 992, 200, True),
                                               (2176, 512, 64, None)])
def test_matmul_persistent(m, n, k, descriptors, cluster):
    """More blocks than a wave of programs (on GPUs 64x64 blocks, 256 a
    wave: 288, 288 and 272 here), as bulk copies: matmul's programs each take
    several blocks in turn (PERSISTENT), on sm_90 copying the next block's
    first stages before storing this one's. Edges past M, N and K (the
    second shape, descriptors forced) read zeros and are not written;
    K = 64 is one step a block, fewer than the ring's stages. Clusters pair
    column blocks (sharing a's copies) or row blocks (sharing b's)."""
    bm = _jit.PerBackend(host=16, default=64)  # the host run warms the GPU's kernel
    config = (bm, bm, bm, 4, 3, cluster)
    programs = cluster[0] if isinstance(cluster, tuple) else cluster
    plan = weft.ops._gemm.matmul_plan(m, n, k, BACKEND, None, config, descriptors)
    assert plan[2]["PERSISTENT"] and plan[3]["cluster"] == (programs,)
    rng = np.random.default_rng(m + n + programs)
    a = rng.integers(-2, 3, (m, k)).astype(np.float32)
    b = rng.integers(-2, 3, (k, n)).astype(np.float32)
    ab = [buffer_of(a, wl.bfloat16), buffer_of(b, wl.bfloat16)]
    c = local(np.full((m, n), -1.0, np.float32))
    weft.ops.matmul(*ab, c, config=config, descriptors=descriptors)
    np.testing.assert_array_equal(host(c), a @ b)
    # Split K: a program per block and piece, as before (where row blocks
    # pair, an error).
    if isinstance(cluster, tuple):
        with pytest.raises(ValueError, match="clusters of row blocks need persistent"):
            weft.ops._gemm.matmul_plan(m, n, k, BACKEND, 2, config, descriptors)
    else:
        assert "PERSISTENT" not in weft.ops._gemm.matmul_plan(m, n, k, BACKEND, 2, config,
                                                              descriptors)[2]
    for buf in ab:
        buf.free()


@pytest.mark.parametrize("dtype", [wl.float16, wl.bfloat16])
@pytest.mark.parametrize("m,n", [(1160, 4000), (200, 992)])
def test_matmul_bulk_stores(m, n, dtype):
    """A 16-bit out in the large blocks (on GPUs 128x256) with a and b as
    descriptors goes to the kernel as a descriptor too (DESC_OUT): on
    sm_90 each block leaves through a bulk store, whose copies leave out
    the rows past M and the columns past N. 160 blocks (more than a wave:
    persistent programs, each store waiting for the one before to have
    read the buffer) and 8 (a program per block); K = 40 ends inside a
    step. A product of the result launched right behind it (on sm_90 it
    starts as the first's programs exit) sees every block: the copies
    complete with the kernel."""
    k = 40
    bm, bn, bk = (_jit.PerBackend(host=16, default=size) for size in (128, 256, 32))
    config = (bm, bn, bk, 8, 5, 2)
    grid, _, constexprs, _ = weft.ops._gemm.matmul_plan(m, n, k, BACKEND, None, config, True)
    assert weft.ops._gemm._desc_out(constexprs, grid, dtype)
    assert constexprs.get("PERSISTENT", False) == (m > 1024)
    rng = np.random.default_rng(m)
    a = rng.integers(-2, 3, (m, k)).astype(np.float32)
    b = rng.integers(-2, 3, (k, n)).astype(np.float32)
    ab = [buffer_of(a, dtype), buffer_of(b, dtype)]
    c = weft.empty((m, n), dtype)
    weft.ops.matmul(*ab, c, config=config, descriptors=True)
    e = rng.integers(-1, 2, (n, 64)).astype(np.float32)
    be = buffer_of(e, dtype)
    d = weft.ops.matmul(c, be)  # f32, exact: |sums| <= 160 * n < 2^24
    np.testing.assert_array_equal(c.to_numpy(), a @ b)  # |sums| <= 160: exact in 16 bits
    np.testing.assert_array_equal(d.to_numpy(), (a @ b) @ e)
    for buf in ab + [c, be, d]:
        buf.free()


@pytest.mark.parametrize("dtype", [wl.float16, wl.bfloat16])
@pytest.mark.parametrize("m,n,k", [(130, 70, 100), (256, 256, 320), (128, 128, 2048)])
def test_matmul_warp_mma(m, n, k, dtype):
    """warp_mma=True in blocks where wgmma would run (128x128x64 on 8
    warps): mma.sync from rows swizzled for ldmatrix, filled by cp.async
    where masks cut the blocks (130 x 70 x 100), by bulk tensor copies
    where they tile the product (K = 320: five steps through three-stage
    rings; K = 2048: 32 steps, the rings' full and empty barriers going
    round ten times). The same products as numpy."""
    wide = _jit.PerBackend(host=16, default=128)
    rng = np.random.default_rng(m + n + k)
    a = rng.integers(-3, 4, (m, k)).astype(np.float32)
    b = rng.integers(-3, 4, (k, n)).astype(np.float32)
    ab = [buffer_of(a, dtype), buffer_of(b, dtype)]
    c = weft.empty((m, n), wl.float32)
    config = (wide, wide, _jit.PerBackend(host=16, default=64), 8, 3)
    assert weft.ops.matmul(*ab, c, config=config, warp_mma=True) is c
    np.testing.assert_array_equal(c.to_numpy(), a @ b)
    for buf in ab + [c]:
        buf.free()


def test_matmul_warp_mma_refills():
    """mma.sync on four warps, two 128x128 blocks per SM on a GPU, two
    stages: each warp arrives at a buffer's empty barrier once its
    ldmatrix loads of it are done, and the copying thread refills the
    buffer with a bulk copy as soon as all four have. Until the arrival
    got its proxy fence, ptxas let it overtake the warp's last loads and
    the copy overwrote some of them: on an H100, 59-125 wrong sums in
    about one launch in five of this product, which takes four waves of
    programs (one wave never failed; docs/tile-ir.md, "Empty barriers").
    Twenty launches, each exact. The host's smaller product has the same
    specialisation (extents that 256 divides), so it warms the GPU's kernel."""
    m = n = 256 if BACKEND == "host" else 4096
    k = 1024
    rng = np.random.default_rng(7)
    a = rng.integers(-2, 3, (m, k)).astype(np.float32)
    b = rng.integers(-2, 3, (k, n)).astype(np.float32)
    ab = [buffer_of(a, wl.bfloat16), buffer_of(b, wl.bfloat16)]
    c = weft.empty((m, n), wl.float32)
    block = _jit.PerBackend(host=16, default=128)
    config = (block, block, _jit.PerBackend(host=16, default=64), 4, 2)
    expect = a @ b
    for launch in range(20):
        weft.ops.matmul(*ab, c, config=config, warp_mma=True)
        wrong = int(np.count_nonzero(c.to_numpy() != expect))
        assert wrong == 0, f"launch {launch}: {wrong} of {m * n} sums wrong"
    for buf in ab + [c]:
        buf.free()


@weft.jit
def _jit_fill(c, value):
    wl.store(c + wl.program_id(0), value)


def test_matmul_out_none():
    """Without out, matmul returns a new local fp32 buffer: no collective
    allocation, so ranks may multiply different shapes."""
    m, n, k = (64, 128, 1024) if weft.rank() == 0 else (32, 64, 1024)
    rng = np.random.default_rng(weft.rank())
    a = rng.integers(-2, 3, (m, k)).astype(np.float32)
    b = rng.integers(-2, 3, (k, n)).astype(np.float32)
    ab = [weft.empty(x.shape, wl.bfloat16, local=True) for x in (a, b)]
    for buf, x in zip(ab, (a, b)):
        buf.copy_from(x)
    out = weft.ops.matmul(*ab)
    assert out.local and out.dtype is wl.float32 and out.shape == (m, n)
    np.testing.assert_array_equal(out.to_numpy(), a @ b)
    for buf in ab + [out]:
        buf.free()


def test_kept_matmul_reads_its_own_inputs():
    """With out given, a repeat on the same buffers is a kept call
    (weft/_plans.py): its launches read the inputs of their own time,
    split-K's out zeroed again; other options or another out are other
    calls. Rank 0 alone calls: keeping a matmul is not collective."""
    from weft import _plans
    m, k, n = 17, 100, 9
    a, b = (weft.empty(shape, wl.float32, local=True) for shape in ((m, k), (k, n)))
    outs = [weft.empty((m, n), wl.float32, local=True) for _ in range(2)]
    if weft.rank() == 0:
        rng = np.random.default_rng(11)
        for _ in range(3):
            x = rng.integers(-4, 5, (m, k)).astype(np.float32)
            w = rng.integers(-4, 5, (k, n)).astype(np.float32)
            a.copy_from(x)
            b.copy_from(w)
            for split_k, c in ((None, outs[0]), (3, outs[0]), (3, outs[1])):
                assert weft.ops.matmul(a, b, c, split_k=split_k) is c
                np.testing.assert_array_equal(c.to_numpy(), x @ w)
        kept = _plans.local().kept
        assert len(kept[_plans.key("matmul", (a, b, outs[0]), (None, None, None, False))].launches) == 1
        split = kept[_plans.key("matmul", (a, b, outs[1]), (3, None, None, False))]
        assert len(split.launches) == 2
        # Its third call launched the zeroing and the product as one graph.
        assert (split.graph is not None) == (BACKEND == "cuda")
    weft.barrier()
    for buf in (a, b, *outs):
        buf.free()


@pytest.mark.parametrize("m,k,n", [(0, 64, 8), (4, 64, 0), (4, 0, 8)])
def test_matmul_empty(m, k, n):
    """No rows or no columns: nothing to compute, out is returned as is; no
    K: out is all zeros."""
    a = np.ones((m, k), np.float32)
    b = np.ones((k, n), np.float32)
    c = local(np.full((m, n), 7.0, np.float32))
    assert weft.ops.matmul(local(a), local(b), c, split_k=2 if k else None) is c
    np.testing.assert_array_equal(host(c), np.zeros((m, n), np.float32))


@pytest.mark.parametrize("split_k", [2, 3, 7])
@pytest.mark.parametrize("m,k,n", [(17, 100, 9), (64, 256, 64)])
def test_matmul_split_k(split_k, m, k, n):
    """Pieces of K in separate programs, added into out with atomics (the
    second shape unmasked, EVEN, on every backend)."""
    rng = np.random.default_rng(split_k)
    a = rng.integers(-4, 5, (m, k)).astype(np.float32)
    b = rng.integers(-4, 5, (k, n)).astype(np.float32)
    c = local(np.full((m, n), 5.0, np.float32))  # zeroed by matmul
    assert weft.ops.matmul(local(a), local(b), c, split_k=split_k) is c
    np.testing.assert_array_equal(host(c), a @ b)
    with pytest.raises(ValueError, match="split_k must be at least 1"):
        weft.ops.matmul(local(a), local(b), c, split_k=0)
