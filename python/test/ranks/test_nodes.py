"""Jobs across nodes (docs/multinode.md): the node layout, wl.put / wl.get
/ wl.signal to any rank, and the hierarchical collectives, against numpy.

CI runs this file at 4 host ranks as 2 simulated nodes of 2 and at 6 ranks
as 3 nodes of 2 (`weft-run --local-size 2`: other nodes are reached through
MPI), the whole rank suite at 1-8 ranks on one node (the hierarchical
kernels then forced, their puts in-node stores), and the GPU machines with
every rank its own node (`--local-size 1`: NVSHMEM for every peer)."""
import numpy as np
import pytest

import weft
import weft.language as wl
from weft import collectives as C
from devices import BACKEND, host, local
from test_collectives import DTYPES, buffer, inputs

SIZES = [1, 7, 1000, 4099]


@pytest.fixture
def across_nodes(runtime):
    """Skips a test that needs a job across nodes (weft-run --local-size)."""
    if weft.num_nodes() == 1:
        pytest.skip("needs a job across nodes (weft-run --local-size)")


def hierarchical():
    """The algorithm name that takes the hierarchical kernels here."""
    return "hierarchical"


@weft.jit
def _layout(out):
    wl.store(out + 0, wl.rank())
    wl.store(out + 1, wl.local_rank())
    wl.store(out + 2, wl.local_size())
    wl.store(out + 3, wl.node())


def test_layout():
    me, size = weft.rank(), weft.local_size()
    assert weft.num_ranks() % size == 0
    assert weft.node() == me // size and weft.num_nodes() == weft.num_ranks() // size
    out = weft.zeros((4,), wl.int32)
    _layout[(1,)](out)
    assert list(out.to_numpy()) == [me, me % size, size, me // size]


# --- wl.put / wl.get / wl.signal to every rank, in node and across ---------

@weft.jit
def _put_all(src, dst, flags, n, epoch, HOW: wl.constexpr):
    """Rank me puts its src into slot `me` of every rank's dst and tells
    it in flags[me]: with the put's own signal (HOW 0 set, 1 add), or a
    signal after the puts (HOW 2 release, 3 relaxed after a quiet)."""
    me, ranks = wl.rank(), wl.num_ranks()
    for i in range(ranks):
        p = (me + i) % ranks
        if HOW == 0:
            wl.put(dst + me * n, src, n * 4, p, signal=flags + me, signal_value=epoch)
        elif HOW == 1:
            wl.put(dst + me * n, src, n * 4, p, signal=flags + me, signal_value=1,
                   signal_op="add")
        else:
            wl.put(dst + me * n, src, n * 4, p)
    if HOW >= 2:
        if HOW == 3:
            wl.quiet()
        for i in range(ranks):
            wl.signal(flags + me, epoch, peer=(me + i) % ranks,
                      order="release" if HOW == 2 else "relaxed")


@weft.jit
def _await_all(flags, epoch, ACQUIRE: wl.constexpr):
    """Every rank's flag reaches epoch: acquired by the wait, or by a
    relaxed wait and an acquiring fence."""
    for p in range(wl.num_ranks()):
        if ACQUIRE:
            wl.wait(flags + p, epoch, cmp="ge")
        else:
            wl.wait(flags + p, epoch, cmp="ge", order="relaxed")
    if not ACQUIRE:
        wl.fence(order="acquire", scope="sys")


@weft.jit
def _get_all(dst, src, n):
    for p in range(wl.num_ranks()):
        wl.get(dst + p * n, src, n * 4, p)


@pytest.mark.parametrize("n", [1, 33, 4096])
@pytest.mark.parametrize("acquire", [True, False])
@pytest.mark.parametrize("how", [0, 1, 2, 3], ids=["signal-set", "signal-add",
                                                  "release-signal", "quiet-relaxed-signal"])
def test_put_signal_orders(how, acquire, n):
    me, ranks = weft.rank(), weft.num_ranks()
    src = weft.empty((n,), wl.float32)
    dst = weft.zeros((ranks * n,), wl.float32)
    flags = weft.zeros((ranks,), wl.int64)
    weft.barrier()
    for epoch in (1, 2, 3):
        if epoch == 3:  # from this rank's own memory too
            src = weft.empty((n,), wl.float32, local=True)
        src.copy_from(np.arange(n) + 1000.0 * me + 100000.0 * epoch)
        weft.barrier()  # nobody reads a src of the last round any more
        _put_all[(1,)](src, dst, flags, n, epoch, HOW=how)
        _await_all[(1,)](flags, epoch, ACQUIRE=acquire)
        want = np.concatenate([np.arange(n) + 1000.0 * p + 100000.0 * epoch
                               for p in range(ranks)])
        np.testing.assert_array_equal(dst.to_numpy(), want)
    weft.barrier()


@pytest.mark.parametrize("n", [1, 33, 4096])
def test_get_from_every_rank(n):
    me, ranks = weft.rank(), weft.num_ranks()
    src = weft.empty((n,), wl.float32)
    src.copy_from(np.arange(n) * 2.0 + me)
    # Into this rank's own memory: what NVSHMEM's transports reach is the
    # heap and Weft's local allocations (registered with it).
    got = weft.zeros((ranks * n,), wl.float32, local=True)
    weft.barrier()
    _get_all[(1,)](got, src, n)
    np.testing.assert_array_equal(host(got), np.concatenate(
        [np.arange(n) * 2.0 + p for p in range(ranks)]))
    weft.barrier()


@weft.jit
def _ring(src, dst, flag, n, BLOCK: wl.constexpr):
    """examples/python/ring.py's kernel: every program puts its block into
    the next rank and adds to its flag."""
    nxt = (wl.rank() + 1) % wl.num_ranks()
    start = wl.program_id(0) * BLOCK
    count = BLOCK if start + BLOCK <= n else n - start
    wl.put(dst + start, src + start, count * 4, nxt, signal=flag, signal_op="add")
    wl.wait(flag, wl.num_programs(0), cmp="ge")


def test_ring_of_programs():
    me, ranks, n, block = weft.rank(), weft.num_ranks(), 1000, 128
    src = weft.full((n,), float(me), wl.float32)
    dst = weft.zeros((n,), wl.float32)
    flag = weft.zeros((1,), wl.int64)
    weft.barrier()
    _ring[(-(-n // block),)](src, dst, flag, n, BLOCK=block)
    assert (dst.to_numpy() == (me - 1) % ranks).all()
    weft.barrier()


# --- the collectives ---------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", SIZES)
def test_all_reduce(n, dtype):
    me = weft.rank()
    x, out = weft.empty((n,), dtype), weft.empty((n,), dtype)
    for seed, op, reduce in ((1, "sum", np.sum), (2, "max", np.max), (3, "min", np.min)):
        xs = inputs(n, seed)
        x.copy_from(xs[me])
        assert C.all_reduce(x, out, op=op, algorithm=hierarchical()) is out
        np.testing.assert_array_equal(out.to_numpy(), reduce(xs, axis=0))
    C.all_reduce(x, algorithm=hierarchical())  # in place: x holds the last inputs
    np.testing.assert_array_equal(x.to_numpy(), np.sum(xs, axis=0))
    weft.barrier()


@pytest.mark.parametrize("dtype", [wl.float32, wl.bfloat16])
def test_all_reduce_split_between_nodes(dtype):
    """Chunks this large take two steps between three nodes or more (a
    reduce-scatter, then an all-gather: _split_between_nodes); between two
    nodes, one exchange."""
    me, nodes, size = weft.rank(), weft.num_nodes(), weft.local_size()
    chunk = 3 * C.NIC_LATENCY_BYTES // 8 + 37  # past the split at three nodes
    n = size * chunk - 5
    assert C._split_between_nodes(nodes, 4 * chunk) == (nodes >= 3)
    x, out = weft.empty((n,), dtype), weft.empty((n,), dtype)
    for seed, op, reduce in ((6, "sum", np.sum), (7, "max", np.max)):
        xs = inputs(n, seed)
        x.copy_from(xs[me])
        C.all_reduce(x, out, op=op, algorithm=hierarchical())
        np.testing.assert_array_equal(out.to_numpy(), reduce(xs, axis=0))
    weft.barrier()


def test_all_reduce_local_input_is_staged():
    me, n = weft.rank(), 1000
    xs = inputs(n, 4)
    x = local(xs[me].astype(np.float32))
    out = local(np.zeros(n, np.float32))
    C.all_reduce(x, out, algorithm=hierarchical())
    np.testing.assert_array_equal(host(out), sum(xs))
    C.all_reduce(x, algorithm=hierarchical())
    np.testing.assert_array_equal(host(x), sum(xs))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", SIZES)
def test_all_gather(n, dtype):
    me, ranks = weft.rank(), weft.num_ranks()
    xs = inputs(n, 5)
    x, out = buffer(xs[me], dtype), weft.empty((ranks * n,), dtype)
    assert C.all_gather(x, out, algorithm=hierarchical()) is out
    np.testing.assert_array_equal(out.to_numpy(), np.concatenate(xs))
    # Into any memory (staged), from any memory.
    lx, lout = local(xs[me].astype(np.float32)), local(np.zeros(ranks * n, np.float32))
    if dtype is wl.float32:
        C.all_gather(lx, lout, algorithm=hierarchical())
        np.testing.assert_array_equal(host(lout), np.concatenate(xs))
    weft.barrier()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", SIZES)
def test_reduce_scatter(n, dtype):
    me, ranks = weft.rank(), weft.num_ranks()
    chunk = -(-n // ranks)
    xs = inputs(n, 6)
    x, out = buffer(xs[me], dtype), weft.full((chunk,), 99, dtype)
    C.reduce_scatter(x, out)
    total = np.zeros(chunk * ranks)
    total[:n] = sum(xs)
    np.testing.assert_array_equal(out.to_numpy(), total[me * chunk:(me + 1) * chunk])
    weft.barrier()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("m", [1, 5, 1000])
def test_all_to_all(m, dtype):
    me, ranks = weft.rank(), weft.num_ranks()
    xs = [np.arange(ranks * m) % 31 + 32 * p for p in range(ranks)]  # exact in bf16
    x, out = buffer(xs[me], dtype), weft.empty((ranks * m,), dtype)
    C.all_to_all(x, out)
    np.testing.assert_array_equal(
        out.to_numpy(), np.concatenate([xs[p][me * m:(me + 1) * m] for p in range(ranks)]))
    weft.barrier()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", SIZES)
def test_broadcast(n, dtype):
    me, ranks = weft.rank(), weft.num_ranks()
    for root in sorted({0, ranks - 1, ranks // 2}):
        xs = inputs(n, 7 + root)
        x = buffer(xs[me], dtype)
        C.broadcast(x, root)
        np.testing.assert_array_equal(x.to_numpy(), xs[root])
    weft.barrier()


def test_all_reduce_residual_rmsnorm():
    me, rows, hidden = weft.rank(), 3, 100
    xs = inputs(rows * hidden, 11)
    res0 = np.arange(rows * hidden) % 7 - 3.0
    weight = 1.0 + (np.arange(hidden) % 5) / 4
    x = buffer(xs[me], wl.float32, (rows, hidden))
    residual = buffer(res0, wl.float32, (rows, hidden))
    w = buffer(weight, wl.float32)
    out = weft.empty((rows, hidden), wl.float32)
    C.all_reduce_residual_rmsnorm(x, residual, w, 1e-5, out)
    h = (sum(xs) + res0).reshape(rows, hidden)
    np.testing.assert_allclose(residual.to_numpy(), h)
    want = h / np.sqrt((h * h).mean(axis=1, keepdims=True) + 1e-5) * weight
    np.testing.assert_allclose(out.to_numpy(), want, rtol=1e-5, atol=1e-5)
    weft.barrier()


def test_sequence_without_host_barriers():
    """Mixed hierarchical calls back to back: the receive halves alternate
    by call, whatever the kernel."""
    me, ranks, n = weft.rank(), weft.num_ranks(), 777
    x, out = weft.empty((n,), wl.float32), weft.empty((n,), wl.float32)
    gathered = weft.empty((ranks * n,), wl.float32)
    for seed in range(12, 18):
        xs = inputs(n, seed)
        x.copy_from(xs[me])
        C.all_reduce(x, out, algorithm=hierarchical())
        C.all_gather(out, gathered, algorithm=hierarchical())
        C.broadcast(x, seed % ranks)
        np.testing.assert_array_equal(gathered.to_numpy(), np.tile(sum(xs), ranks))
        np.testing.assert_array_equal(x.to_numpy(), xs[seed % ranks])


# --- what is refused -----------------------------------------------------------

def test_single_node_algorithms_are_refused(across_nodes):
    x = weft.zeros((8,), wl.float32)
    for algorithm in ("ll", "push", "one_shot", "two_shot"):
        with pytest.raises(ValueError, match=f"algorithm '{algorithm}' reaches every rank"):
            C.all_reduce(x, algorithm=algorithm)
    with pytest.raises(ValueError, match="across nodes it is 'hierarchical'"):
        C.all_gather(x, weft.zeros((8 * weft.num_ranks(),), wl.float32), algorithm="ll")


@weft.jit
def _store_to(x, peer):
    wl.store(x, 1.0, peer=peer)


def test_store_to_another_node_is_caught_under_debug(across_nodes):
    me, size = weft.rank(), weft.local_size()
    other = (me + size) % weft.num_ranks()  # the same index on the next node
    x = weft.zeros((4,), wl.float32)
    weft.barrier()
    with pytest.raises(weft.WeftError, match=f"debug check failed: peer {other} is on node "
                       f"{other // size}, not on this rank's node {me // size}"):
        _store_to[(1,)](x, other, debug=True)
        weft.synchronize()  # a GPU's records are read when its stream is
    assert (x.to_numpy() == 0).all()
    weft.barrier()


@weft.jit
def _put_to(dst, src, nbytes, peer):
    wl.put(dst, src, nbytes, peer)


@pytest.mark.skipif(BACKEND != "host", reason="the host's engine checks allocations; "
                    "NVSHMEM's puts are checked against the heap only (debug)")
def test_put_past_the_end_of_an_allocation(across_nodes):
    me, size = weft.rank(), weft.local_size()
    other = (me + size) % weft.num_ranks()
    dst, src = weft.zeros((256,), wl.float32), weft.zeros((512,), wl.float32)
    weft.barrier()
    with pytest.raises(weft.WeftError, match=f"put of 2048 bytes with rank {other} at heap "
                       r"offset 0x[0-9a-f]+ runs past the end of its allocation"):
        _put_to[(1,)](dst, src, 2048, other)
    _put_to[(1,)](dst, src, 1024, other)  # the whole allocation is fine
    weft.barrier()


def test_put_past_the_heap_is_caught_under_debug(across_nodes):
    me, size = weft.rank(), weft.local_size()
    other = (me + size) % weft.num_ranks()
    dst, src = weft.zeros((256,), wl.float32), weft.zeros((256,), wl.float32)
    weft.barrier()
    with pytest.raises(weft.WeftError, match=r"debug check failed: pointer 0x[0-9a-f]+ "
                       f"outside rank {me}'s heap"):
        _put_to[(1,)](dst, src, 1 << 40, other, debug=True)  # beyond any heap
        weft.synchronize()
    weft.barrier()


def test_transfer_errors_are_compile_errors():
    def compiled(fn, signature):
        return weft.compile(fn, signature, target="host")

    @weft.jit
    def narrow_signal(d, s, f):
        wl.put(d, s, 16, 1, signal=f)

    with pytest.raises(weft.CompilationError, match="the signal is a 64-bit integer flag"):
        compiled(narrow_signal, {"d": "*fp32", "s": "*fp32", "f": "*i32"})

    @weft.jit
    def tile_dst(d, s):
        wl.put(d + wl.arange(0, 4), s, 16, 1)

    with pytest.raises(weft.CompilationError, match="wl.put takes a scalar pointer, not a tile"):
        compiled(tile_dst, {"d": "*fp32", "s": "*fp32"})

    @weft.jit
    def negative(d, s):
        wl.get(d, s, -4, 0)

    with pytest.raises(weft.CompilationError, match="wl.get: nbytes is a byte count"):
        compiled(negative, {"d": "*fp32", "s": "*fp32"})

    @weft.jit
    def gpu_scope(f, p):
        wl.signal(f, 1, peer=p, scope="gpu")

    with pytest.raises(weft.CompilationError, match="scope 'gpu' cannot order a signal to "
                       "a peer; use 'sys'"):
        compiled(gpu_scope, {"f": "*i64", "p": "i32"})


def test_fused_ops_across_nodes(across_nodes):
    """all_gather_matmul gathers hierarchically (its 'gather' algorithm)
    across nodes; the ops whose kernels reach peers with loads and stores
    refuse, naming why."""
    me, ranks = weft.rank(), weft.num_ranks()
    xs = [np.random.default_rng(40 + p).integers(-3, 4, (20, 16)).astype(np.float32)
          for p in range(ranks)]
    w = np.random.default_rng(39).integers(-3, 4, (16, 24)).astype(np.float32)
    a, b = buffer(xs[me], wl.float32, (20, 16)), buffer(w, wl.float32, (16, 24))
    out = weft.ops.all_gather_matmul(a, b)
    np.testing.assert_array_equal(host(out), np.concatenate(xs) @ w)
    refused = "reaches its peers with loads and stores, which reach the ranks of one node"
    with pytest.raises(ValueError, match=r"all_gather_matmul \(algorithm 'overlap'\) " +
                       refused):
        weft.ops.all_gather_matmul(a, b, algorithm="overlap")
    with pytest.raises(ValueError, match="matmul_reduce_scatter " + refused):
        weft.ops.matmul_reduce_scatter(weft.zeros((2 * ranks, 16), wl.float32),
                                       weft.zeros((16, 24 * ranks), wl.float32))
    weft.barrier()
