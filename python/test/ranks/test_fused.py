"""weft.ops (fused compute + communication) on 1-4 ranks against numpy."""
import numpy as np
import pytest

import weft
import weft.language as wl
from devices import BACKEND, compiler_available, host, local, rounded
from weft import ops


def _inputs(rows, k, n, seed):
    """Every rank's a and the shared b: small integers, exact in every dtype."""
    rng = np.random.default_rng(seed)
    a = [rng.integers(-3, 4, (rows, k)).astype(np.float32) for _ in range(weft.num_ranks())]
    return a, rng.integers(-3, 4, (k, n)).astype(np.float32)


_GATHER_SHAPES = [(1, 1, 1), (5, 33, 7), (40, 24, 70), (2, 300, 9)]


# "overlap" on (shape, dtype) pairs (each is a kernel to compile, as in
# the second layer's tests), and on whole blocks (16 rows: four arrival
# flags per product on the host).
@pytest.mark.parametrize("rows,k,n,dtype,algorithm", [
    *((rows, k, n, dtype, algorithm) for algorithm in ("gather", "pull")
      for dtype in (wl.float32, wl.float16, wl.bfloat16) for rows, k, n in _GATHER_SHAPES),
    *((rows, k, n, dtype, "overlap") for (rows, k, n), dtype in zip(
        _GATHER_SHAPES + [(16, 64, 48)],
        (wl.float32, wl.float16, wl.bfloat16, wl.float32, wl.bfloat16)))])
def test_all_gather_matmul(rows, k, n, dtype, algorithm):
    me = weft.rank()
    a, b = weft.empty((rows, k), dtype), weft.empty((k, n), dtype)
    for seed in (1, 2):  # repeated calls: the flags' epochs carry on
        xs, w = _inputs(rows, k, n, seed)
        a.copy_from(xs[me])
        b.copy_from(w)
        out = ops.all_gather_matmul(a, b, algorithm=algorithm)
        np.testing.assert_array_equal(host(out), np.concatenate(xs) @ w)
        out.free()
    weft.barrier()
    a.free()
    b.free()


@pytest.mark.parametrize("copy_engine", [True, False])
def test_all_gather_matmul_copy_engine(monkeypatch, copy_engine):
    """"overlap" with a's rows moved by the copy engine (puts after
    put_entry_kernel, each chunk flagged with the call's epoch) or by
    the kernel's programs, forced either way: rows that are no whole
    number of chunks, one program and a few, new data in a kept call (its
    puts made again), and calls of other shapes between (the scratch
    grows, the epochs carry on)."""
    from weft.ops import _tp
    monkeypatch.setattr(_tp, "COPY_ENGINE_BYTES", _tp.PerBackend(0 if copy_engine else 1 << 62))
    monkeypatch.setattr(_tp, "_gather_plan", _tp._gather_plan.__wrapped__)  # sees the patch
    me, ranks = weft.rank(), weft.num_ranks()
    for step, (rows, k, n, programs) in enumerate(
            [(37, 24, 40, None), (16, 64, 48, 1), (1, 8, 8, 3), (70, 40, 20, None)]):
        a, b = weft.empty((rows, k), wl.float32), weft.empty((k, n), wl.float32)
        out = weft.empty((ranks * rows, n), wl.float32)
        for seed in (step, step + 10):  # the second call is kept: new data, the same launches
            xs, w = _inputs(rows, k, n, seed)
            a.copy_from(xs[me])
            b.copy_from(w)
            ops.all_gather_matmul(a, b, out, num_programs=programs, algorithm="overlap")
            np.testing.assert_array_equal(host(out), np.concatenate(xs) @ w)
        for buf in (a, b, out):
            buf.free()
    weft.barrier()


@pytest.mark.parametrize("algorithm", ["overlap", "gather", "pull"])
def test_all_gather_matmul_local_b_and_out_one_program(algorithm):
    me, ranks = weft.rank(), weft.num_ranks()
    xs, w = _inputs(20, 16, 24, 3)
    a = local(xs[me]) if algorithm != "pull" else weft.empty((20, 16), wl.float32)
    if algorithm == "pull":  # peers read it
        a.copy_from(xs[me])
    out = local(np.zeros((ranks * 20, 24), np.float32))  # local b and out
    assert ops.all_gather_matmul(a, local(w), out, num_programs=1, algorithm=algorithm) is out
    np.testing.assert_array_equal(host(out), np.concatenate(xs) @ w)
    weft.barrier()
    if algorithm == "pull":
        a.free()


@pytest.mark.parametrize("algorithm", ["overlap", "pull"])
def test_all_gather_matmul_16_bit_out(algorithm):
    """A bf16 out: the f32 sums rounded once (inputs up to 100, exact in
    bf16; most sums fall between bf16's values, so the rounding shows).
    "pull" would split this K into pieces meeting in f32 atomics: a 16-bit
    out takes one."""
    me, ranks = weft.rank(), weft.num_ranks()
    rows, k, n = 5, 300, 9
    rng = np.random.default_rng(11)
    xs = [rng.integers(-100, 101, (rows, k)).astype(np.float32) for _ in range(ranks)]
    w = rng.integers(-100, 101, (k, n)).astype(np.float32)
    a, b = weft.empty((rows, k), wl.bfloat16), weft.empty((k, n), wl.bfloat16)
    a.copy_from(xs[me])
    b.copy_from(w)
    out = weft.empty((ranks * rows, n), wl.bfloat16)
    assert ops.all_gather_matmul(a, b, out, algorithm=algorithm) is out
    exact = np.concatenate(xs) @ w
    want = rounded(exact, wl.bfloat16)
    np.testing.assert_array_equal(host(out).astype(np.float64), want)
    assert not np.array_equal(want, exact)
    with pytest.raises(ValueError, match=f"out must hold {ranks * rows} x 9 fp32 or bf16"):
        ops.all_gather_matmul(a, b, weft.empty((ranks * rows, n), wl.float16))
    weft.barrier()
    for buf in (a, b, out):
        buf.free()


def test_all_gather_matmul_errors():
    a = weft.zeros((4, 8), wl.float32)
    with pytest.raises(ValueError, match="a must be 2-D"):
        ops.all_gather_matmul(weft.zeros((32,), wl.float32), a)
    with pytest.raises(ValueError, match="algorithm 'pull' needs a symmetric weft.Buffer a"):
        ops.all_gather_matmul(local(np.zeros((4, 8), np.float32)), a, algorithm="pull")
    with pytest.raises(ValueError, match="num_programs must be at least 1, got 0"):
        ops.all_gather_matmul(a, weft.zeros((8, 2), wl.float32), num_programs=0)
    with pytest.raises(ValueError, match=r"b has shape \(4, 8\); it needs \(8, N\)"):
        ops.all_gather_matmul(a, weft.zeros((4, 8), wl.float32))
    with pytest.raises(ValueError, match="b has dtype fp16 but a has fp32"):
        ops.all_gather_matmul(a, weft.zeros((8, 2), wl.float16))
    with pytest.raises(ValueError, match="out must hold"):
        ops.all_gather_matmul(a, weft.zeros((8, 2), wl.float32), weft.zeros((3,), wl.float32))
    with pytest.raises(ValueError, match="algorithm must be 'auto', 'overlap', 'gather' or 'pull'"):
        ops.all_gather_matmul(a, weft.zeros((8, 2), wl.float32), algorithm="push")
    weft.barrier()
    a.free()


# -- GEMM + reduce-scatter / all-reduce (the second tensor-parallel layer) --

def _second_layer(m, k, n, seed):
    """Every rank's a (m x k: its K slice) and b (k x n): small integers,
    exact in every dtype, so the sum over ranks is exact too."""
    rng = np.random.default_rng(seed)
    ranks = weft.num_ranks()
    return ([rng.integers(-3, 4, (m, k)).astype(np.float32) for _ in range(ranks)],
            [rng.integers(-3, 4, (k, n)).astype(np.float32) for _ in range(ranks)])


# (shape, dtype) pairs rather than their product: each dtype (and each
# divisibility of the sizes) is a GEMM kernel to compile, 3-4 s on the host,
# on every rank count in CI; fp16 is covered by the other ops' tests.
@pytest.mark.parametrize("rows,k,n,dtype", [(1, 1, 1, wl.float32), (5, 33, 7, wl.float32),
                                            (20, 24, 40, wl.bfloat16),
                                            (3, 300, 10, wl.float32)])  # K split in pieces
def test_matmul_reduce_scatter(rows, k, n, dtype):
    me, ranks = weft.rank(), weft.num_ranks()
    m = ranks * rows
    a, b = weft.empty((m, k), dtype), weft.empty((k, n), dtype)
    for seed in (1, 2):  # repeated calls: epochs carry on, the scratch is reused
        xs, ws = _second_layer(m, k, n, seed)
        a.copy_from(xs[me])
        b.copy_from(ws[me])
        out = ops.matmul_reduce_scatter(a, b)
        full = sum(x @ w for x, w in zip(xs, ws))
        np.testing.assert_array_equal(host(out), full[me * rows:(me + 1) * rows])
        out.free()
    weft.barrier()
    a.free()
    b.free()


@pytest.mark.parametrize("scatter", [True, False])
@pytest.mark.parametrize("copy_engine", [True, False])
def test_matmul_reduce_copy_engine(monkeypatch, scatter, copy_engine):
    """The partials moved by the copy engine or by the resident kernel's
    programs, forced either way. Reduce-scatter: weft.ops.matmul of the
    others' rows, puts after put_entry_kernel a group of 8 block rows at a
    time, own_rows_kernel adding them; all-reduce into a symmetric out
    whose rows num_ranks divides: the same, own_rows_kernel a group of
    block rows a launch, each followed by the puts of its sums into every
    other rank's out, the others' rows multiplied in two halves
    (two-shot; any rows a rank take it here: TWO_SHOT_ROWS lowered); into
    a local out, or rows it does not divide: a weft.ops.matmul and its
    puts per group of rows (32 on the host), all_reduce_sum_kernel adding
    each (one-shot). Rows (per rank
    for reduce-scatter) that are whole groups and a part of one (150:
    128-row groups; 150 and 37: 32- and 16-row groups), one row, both
    kinds of partial, new data in a kept call (its matmuls and puts made
    again), and calls of other shapes between (the scratch grows, the
    epochs carry on)."""
    from weft.ops import _second_layer as layer, _tp
    monkeypatch.setattr(_tp, "COPY_ENGINE_BYTES", _tp.PerBackend(0 if copy_engine else 1 << 62))
    monkeypatch.setattr(layer, "TWO_SHOT_ROWS", _tp.PerBackend(1))
    me, ranks = weft.rank(), weft.num_ranks()
    op = ops.matmul_reduce_scatter if scatter else ops.matmul_all_reduce
    for step, (rows, k, n, partials, local_out) in enumerate(
            [(150, 24, 40, "bf16", False), (1, 8, 8, "f32", False), (37, 40, 20, "f32", True),
             (150, 24, 40, "f32", True), (12 * ranks, 24, 40, "f32", False)]):
        m = ranks * rows if scatter else rows
        lo = me * rows if scatter else 0
        a, b = weft.empty((m, k), wl.bfloat16), weft.empty((k, n), wl.bfloat16)
        out = weft.empty((rows, n), wl.float32, local=local_out)
        for seed in (step, step + 10):  # the second call is kept: new data, the same launches
            xs, ws = _second_layer(m, k, n, seed)
            a.copy_from(xs[me])
            b.copy_from(ws[me])
            op(a, b, out, partials=partials)
            want = _sum_of_partials(xs, ws, partials)[lo:lo + rows]
            np.testing.assert_array_equal(host(out), want)
        for buf in (a, b, out):
            buf.free()
    weft.barrier()


@pytest.mark.parametrize("m,k,n,dtype", [(1, 1, 1, wl.bfloat16), (3, 40, 21, wl.float32),
                                         (17, 16, 33, wl.float16), (4, 300, 12, wl.bfloat16)])
def test_matmul_all_reduce(m, k, n, dtype):
    me = weft.rank()
    a, b = weft.empty((m, k), dtype), weft.empty((k, n), dtype)
    for seed in (3, 4):
        xs, ws = _second_layer(m, k, n, seed)
        a.copy_from(xs[me])
        b.copy_from(ws[me])
        out = ops.matmul_all_reduce(a, b)
        np.testing.assert_array_equal(host(out), sum(x @ w for x, w in zip(xs, ws)))
        out.free()
    weft.barrier()
    a.free()
    b.free()


def _rounding_second_layer(seed):
    """The second layer's bf16 operands with inputs up to 100 (exact in
    bf16; partials in the tens of thousands, most of them between bf16's
    values; their sums over 4 ranks exact in f32), 6 rows a rank: every
    rank's (xs, ws), this rank's a and b."""
    me, ranks = weft.rank(), weft.num_ranks()
    m, k, n = 6 * ranks, 40, 24
    rng = np.random.default_rng(seed)
    xs = [rng.integers(-100, 101, (m, k)).astype(np.float32) for _ in range(ranks)]
    ws = [rng.integers(-100, 101, (k, n)).astype(np.float32) for _ in range(ranks)]
    a, b = weft.empty((m, k), wl.bfloat16), weft.empty((k, n), wl.bfloat16)
    a.copy_from(xs[me])
    b.copy_from(ws[me])
    return xs, ws, a, b


@pytest.mark.skipif(not compiler_available(), reason="warming compiles")
@pytest.mark.parametrize("copy_engine,partials", [(True, "bf16"), (False, "f32")])
def test_compile_matmul_reduce_warms_what_the_ops_launch(monkeypatch, tmp_path, copy_engine,
                                                         partials):
    """What compile_matmul_reduce compiles into an empty cache is every
    kernel both second-layer ops then launch under WEFT_CACHE_ONLY=1, on
    the copy engine's path or the resident kernel's (the kernels this
    process holds forgotten before each: both would find them); a shape
    no other test takes, so no kept call replays."""
    from weft import _jit
    from weft.ops import _gemm, _tp
    from weft.ops import _second_layer as layer

    def forget():
        for module in (_gemm, layer, _tp):
            for fn in vars(module).values():
                if isinstance(fn, _jit.JITFunction):
                    fn._kernels.clear()
                    fn._launches.clear()

    monkeypatch.setattr(_tp, "COPY_ENGINE_BYTES", _tp.PerBackend(0 if copy_engine else 1 << 62))
    monkeypatch.setattr(layer, "TWO_SHOT_ROWS", _tp.PerBackend(1))
    monkeypatch.setattr(_jit, "WARM_TARGET", None)
    monkeypatch.setenv("WEFT_CACHE_DIR", str(tmp_path))
    me, ranks = weft.rank(), weft.num_ranks()
    m, k, n = 96, 32, 48
    forget()
    for scatter in (True, False):
        layer.compile_matmul_reduce(m, n, k, ranks, scatter, _jit._target_of_backend(BACKEND),
                                    partials)
    forget()
    monkeypatch.setenv("WEFT_CACHE_ONLY", "1")
    xs, ws = _second_layer(m, k, n, 21)
    a, b = weft.empty((m, k), wl.bfloat16), weft.empty((k, n), wl.bfloat16)
    a.copy_from(xs[me])
    b.copy_from(ws[me])
    # The all-reduce into a symmetric out and a local one: two paths by
    # the copy engine.
    for scatter, local_out in ((True, False), (False, False), (False, True)):
        rows = m // ranks if scatter else m
        lo = me * rows if scatter else 0
        out = weft.empty((rows, n), wl.float32, local=local_out)
        (ops.matmul_reduce_scatter if scatter else ops.matmul_all_reduce)(a, b, out,
                                                                          partials=partials)
        np.testing.assert_array_equal(host(out), _sum_of_partials(xs, ws, partials)[lo:lo + rows])
        out.free()
    for buf in (a, b):
        buf.free()
    weft.barrier()


def _sum_of_partials(xs, ws, partials):
    """The ranks' partials summed in f32, each rounded to bf16 first where
    bf16 partials cross between ranks (on one rank they stay f32)."""
    rounds = partials == "bf16" and weft.num_ranks() > 1
    return sum((rounded(x @ w, wl.bfloat16) if rounds else x @ w) for x, w in zip(xs, ws))


@pytest.mark.parametrize("scatter,partials", [(True, "bf16"), (False, "f32")])
def test_second_layer_16_bit_out(scatter, partials):
    """A bf16 out: the f32 sum of the partials rounded once at the store."""
    me = weft.rank()
    xs, ws, a, b = _rounding_second_layer(9)
    m = len(xs[0])
    rows = m // weft.num_ranks()
    lo, hi = (me * rows, (me + 1) * rows) if scatter else (0, m)
    out = weft.empty((hi - lo, ws[0].shape[1]), wl.bfloat16)
    op = ops.matmul_reduce_scatter if scatter else ops.matmul_all_reduce
    assert op(a, b, out, partials=partials) is out
    exact = _sum_of_partials(xs, ws, partials)
    want = rounded(exact, wl.bfloat16)
    np.testing.assert_array_equal(host(out).astype(np.float64), want[lo:hi])
    assert not np.array_equal(want, exact)
    weft.barrier()
    for buf in (a, b, out):
        buf.free()


@pytest.mark.parametrize("scatter", [True, False])
def test_second_layer_bf16_partials(scatter):
    """partials="bf16": each rank's partial is rounded once to bf16 and the
    partials summed in f32."""
    me, ranks = weft.rank(), weft.num_ranks()
    xs, ws, a, b = _rounding_second_layer(7)
    m = len(xs[0])
    rows = m // ranks
    op = ops.matmul_reduce_scatter if scatter else ops.matmul_all_reduce
    for partials in ("bf16", "f32", "bf16"):  # both kinds of call share the scratch
        out = op(a, b, partials=partials)
        want = _sum_of_partials(xs, ws, partials)
        lo, hi = (me * rows, (me + 1) * rows) if scatter else (0, m)
        np.testing.assert_array_equal(host(out), want[lo:hi])
        out.free()
    exact = sum(x @ w for x, w in zip(xs, ws))
    if ranks > 1:
        assert not np.array_equal(want, exact)  # the rounding shows: the test can tell
    with pytest.raises(ValueError, match="partials must be one of 'f32', 'bf16', not 'f16'"):
        op(a, b, partials="f16")
    weft.barrier()
    a.free()
    b.free()


def test_matmul_reduce_local_operands_programs_and_interleaving():
    """Local a, b and out; one and three programs; the two ops and a
    collective interleaved on the shared scratch; every rank's all-reduce
    bit-identical (rank-order sums) for values that round."""
    me, ranks = weft.rank(), weft.num_ranks()
    rng = np.random.default_rng(5)
    xs = [rng.standard_normal((6 * ranks, 40)).astype(np.float32) for _ in range(ranks)]
    ws = [rng.standard_normal((40, 30)).astype(np.float32) for _ in range(ranks)]
    full = sum(x.astype(np.float64) @ w for x, w in zip(xs, ws))
    rs = local(np.zeros((6, 30), np.float32))
    ar = weft.empty((6 * ranks, 30), wl.float32)
    everyone = weft.empty((ranks * 6 * ranks * 30,), wl.float32)
    for programs in (1, 3):
        assert ops.matmul_reduce_scatter(local(xs[me]), local(ws[me]), rs,
                                         num_programs=programs) is rs
        assert ops.matmul_all_reduce(local(xs[me]), local(ws[me]), ar,
                                     num_programs=programs) is ar
        np.testing.assert_allclose(host(rs), full[me * 6:(me + 1) * 6], rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(host(ar), full, rtol=1e-4, atol=1e-4)
        weft.collectives.all_gather(ar, everyone)
        copies = everyone.to_numpy().reshape(ranks, -1)
        assert (copies == copies[0]).all()
    weft.barrier()
    for buf in (ar, everyone):
        buf.free()


def test_matmul_reduce_back_to_back():
    """Calls one after another with no host barrier, the two ops and their
    shapes alternating (one and several pieces of K; the scratch grows on
    the way): a rank may start its next call while another still sums the
    last one, which the two call parities' slots and counters keep apart
    (at a place that does not depend on the shape: a smaller call's slots
    must not reach into the other parity's). Each shape comes at both
    parities: once in calls 0-7, once in 8-15, shifted by one."""
    me, ranks = weft.rank(), weft.num_ranks()
    shapes = [(2, 16, 8), (3, 300, 10), (1, 40, 21), (4, 64, 48)]  # rows (per rank), k, n
    for step in range(16):
        rows, k, n = shapes[(step + step // 8) % len(shapes)]
        scatter = step % 3 != 2
        m = ranks * rows if scatter else rows
        xs, ws = _second_layer(m, k, n, step)
        op = ops.matmul_reduce_scatter if scatter else ops.matmul_all_reduce
        out = op(local(xs[me]), local(ws[me]))
        full = sum(x @ w for x, w in zip(xs, ws))
        np.testing.assert_array_equal(host(out), full[me * rows:(me + 1) * rows]
                                      if scatter else full)
    weft.barrier()


def test_fused_gemms_back_to_back():
    """all_gather_matmul ("auto": "overlap" where matmul would not split
    K) and the second layer one after another with no host barrier, the
    shapes changing (the scratch grows on the way): the ops share the
    device's count of calls, and a rank may start its next call while
    another still multiplies this one's rows: the second layer's two call
    parities keep its slots apart, the first layer's pushes wait for the
    destination's done flag. Each shape comes at both parities (calls
    0-7, then 8-15 shifted by one)."""
    me, ranks = weft.rank(), weft.num_ranks()
    shapes = [(16, 64, 48), (3, 300, 10), (5, 20, 21), (32, 16, 64)]  # rows (per rank), k, n
    for step in range(16):
        rows, k, n = shapes[(step + step // 8) % len(shapes)]
        if step % 4 == 3:
            xs, ws = _second_layer(ranks * rows, k, n, step)
            out = ops.matmul_reduce_scatter(local(xs[me]), local(ws[me]))
            want = sum(x @ w for x, w in zip(xs, ws))[me * rows:(me + 1) * rows]
        else:
            xs, w = _inputs(rows, k, n, step)
            out = ops.all_gather_matmul(local(xs[me]), local(w))
            want = np.concatenate(xs) @ w
        np.testing.assert_array_equal(host(out), want)
    weft.barrier()


def test_fused_gemms_in_clusters(monkeypatch):
    """The fused GEMMs in clusters of two programs (where the blocks are
    large on GPUs, pairs of column blocks sharing a's copies on sm_90;
    forced here at small shapes): the programs of a cluster take an item
    together, a chunk each (the last item half empty: 3 chunks of 4 rows)
    or a column block each; whole clusters of any num_programs."""
    from weft.ops import _second_layer as second, _tp
    plan = _tp._config_for
    monkeypatch.setattr(_tp, "_config_for", lambda *args, **kw: (*plan(*args, **kw)[:-1], 2))
    for module, name in ((_tp, "_gather_plan"), (second, "_reduce_plan")):
        # unmemoised: their plans see the patch
        monkeypatch.setattr(module, name, getattr(module, name).__wrapped__)
    me, ranks = weft.rank(), weft.num_ranks()
    rows, k, n = 10, 24, 128                   # 8 column blocks on the host, 2 on GPUs
    for step, programs in enumerate((None, 3, 6)):
        xs, w = _inputs(rows, k, n, step)
        out = ops.all_gather_matmul(local(xs[me]), local(w), num_programs=programs,
                                    algorithm="overlap")
        np.testing.assert_array_equal(host(out), np.concatenate(xs) @ w)
        xs, ws = _second_layer(ranks * rows, k, n, step)
        full = sum(x @ w for x, w in zip(xs, ws))
        out = ops.matmul_reduce_scatter(local(xs[me]), local(ws[me]), num_programs=programs)
        np.testing.assert_array_equal(host(out), full[me * rows:(me + 1) * rows])
        xs, ws = _second_layer(rows, k, n, step)
        out = ops.matmul_all_reduce(local(xs[me]), local(ws[me]), num_programs=programs)
        np.testing.assert_array_equal(host(out), sum(x @ w for x, w in zip(xs, ws)))
    weft.barrier()


def test_matmul_reduce_errors():
    ranks = weft.num_ranks()
    a = weft.zeros((ranks + 1, 8), wl.float32)
    b = weft.zeros((8, 4), wl.float32)
    if ranks > 1:
        with pytest.raises(ValueError, match=f"a has {ranks + 1} rows, which num_ranks = "
                                             f"{ranks} does not divide"):
            ops.matmul_reduce_scatter(a, b)
    with pytest.raises(ValueError, match=r"b has shape \(4, 8\); it needs \(8, N\)"):
        ops.matmul_all_reduce(a, weft.zeros((4, 8), wl.float32))
    with pytest.raises(ValueError, match="b has dtype bf16 but a has fp32"):
        ops.matmul_reduce_scatter(a, weft.zeros((8, 4), wl.bfloat16))
    with pytest.raises(ValueError, match=f"out must hold {ranks + 1} x 4 fp32 elements"):
        ops.matmul_all_reduce(a, b, weft.zeros((3,), wl.float32))
    with pytest.raises(ValueError, match="num_programs must be at least 1, got 0"):
        ops.matmul_all_reduce(a, b, num_programs=0)
    weft.barrier()
    a.free()
    b.free()


# -- flash-decode's split-KV combine ----------------------------------------

def _lse_combine(os_, lses):
    """numpy reference, in float64: the combined output and log-sum-exp."""
    lses = np.stack(lses).astype(np.float64)
    top = lses.max(axis=0)
    top = np.where(np.isneginf(top), 0.0, top)
    w = np.exp(lses - top)
    total = w.sum(axis=0)
    acc = sum(w[p][..., None] * os_[p] for p in range(len(os_)))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(total[..., None] > 0, acc / total[..., None], 0.0), top + np.log(total)


@pytest.mark.parametrize("shape,dtype", [((1, 1), wl.float32), ((5, 20), wl.bfloat16),
                                         ((2, 3, 33), wl.float16), ((2, 3, 33), wl.float32)])
def test_flash_decode_combine(shape, dtype):
    me, ranks = weft.rank(), weft.num_ranks()
    rows = int(np.prod(shape[:-1]))
    o, lse = weft.empty(shape, dtype), weft.empty(shape[:-1], wl.float32)
    lse_out = weft.empty((rows,), wl.float32)
    for seed in (6, 7):
        rng = np.random.default_rng(seed)
        os_ = [rounded(rng.standard_normal(shape) * 4, dtype)
               for _ in range(ranks)]
        lses = [(rng.standard_normal(shape[:-1]) * 3).astype(np.float32) for _ in range(ranks)]
        if rows > 1:              # a rank without keys for row 0; row 1 has none anywhere
            lses[0].flat[0] = -np.inf
            for p in range(ranks):
                lses[p].flat[1] = -np.inf
        o.copy_from(os_[me])
        lse.copy_from(lses[me])
        out = ops.flash_decode_combine(o, lse, lse_out=lse_out)
        want, want_lse = _lse_combine(os_, lses)
        np.testing.assert_allclose(host(out), want, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(lse_out.to_numpy(), want_lse.reshape(-1), rtol=1e-5,
                                   atol=1e-5)
        out.free()
    weft.barrier()
    for buf in (o, lse, lse_out):
        buf.free()


def test_flash_decode_combine_local_out_and_errors():
    me, ranks = weft.rank(), weft.num_ranks()
    rng = np.random.default_rng(8)
    os_ = [rng.standard_normal((9, 16)).astype(np.float32) for _ in range(ranks)]
    lses = [rng.standard_normal(9).astype(np.float32) for _ in range(ranks)]
    o, lse = weft.empty((9, 16), wl.float32), weft.empty((9,), wl.float32)
    o.copy_from(os_[me])
    lse.copy_from(lses[me])
    out = local(np.zeros((9, 16), np.float16))       # a local fp16 output
    assert ops.flash_decode_combine(o, lse, out, num_programs=3) is out
    np.testing.assert_allclose(host(out).astype(np.float64), _lse_combine(os_, lses)[0],
                               rtol=2e-3, atol=2e-3)
    with pytest.raises(ValueError, match="o must be a symmetric weft.Buffer"):
        ops.flash_decode_combine(os_[me], lse)
    with pytest.raises(ValueError, match="lse must be a symmetric weft.Buffer"):
        ops.flash_decode_combine(o, weft.zeros((9,), wl.float32, local=True))
    with pytest.raises(ValueError, match=r"lse must hold 9 fp32 elements \(one per row of o\), "
                                         "not 8 fp32"):
        ops.flash_decode_combine(o, weft.zeros((8,), wl.float32))
    with pytest.raises(ValueError, match="out must hold 9 x 16 fp32 or fp16 or bf16"):
        ops.flash_decode_combine(o, lse, weft.zeros((9, 15), wl.float32))
    with pytest.raises(ValueError, match="lse_out must hold 9 fp32 elements"):
        ops.flash_decode_combine(o, lse, lse_out=weft.zeros((9,), wl.float16))
    weft.barrier()
    o.free()
    lse.free()


# -- mixture-of-experts dispatch / combine -----------------------------------

def _moe_inputs(tokens, hidden, topk, experts, seed, distinct=True):
    """Every rank's tokens (small integers), top-k expert ids and routing
    weights (multiples of 1/4: every weighted sum is exact)."""
    rng = np.random.default_rng(seed)
    ranks = weft.num_ranks()
    xs = [rng.integers(-3, 4, (tokens, hidden)).astype(np.float32) for _ in range(ranks)]
    if distinct:
        ids = [np.stack([rng.choice(experts, topk, replace=False) for _ in range(tokens)])
               for _ in range(ranks)]
    else:
        ids = [rng.integers(0, experts, (tokens, topk)) for _ in range(ranks)]
    ws = [rng.integers(1, 5, (tokens, topk)).astype(np.float32) / 4 for _ in range(ranks)]
    return xs, [i.astype(np.int32).reshape(tokens, topk) for i in ids], ws


def _buffer(values, dtype):
    buf = weft.empty(values.shape, dtype)
    buf.copy_from(values)
    return buf


def _expected_recv(xs, ids, experts, capacity):
    """What rank me receives: per local expert and source, the pairs of that
    source naming the expert, in pair order, the first `capacity` of them."""
    me, ranks = weft.rank(), weft.num_ranks()
    local_experts = experts // ranks
    sent = {}
    for le in range(local_experts):
        for p in range(ranks):
            pairs = np.flatnonzero(ids[p].reshape(-1) == me * local_experts + le)
            sent[le, p] = pairs[:capacity]
    return sent


def _check_dispatch(d, xs, ids, experts, capacity, dtype):
    ranks, topk = weft.num_ranks(), ids[0].shape[1]
    recv = d.recv.to_numpy().astype(np.float64)
    counts, sources = d.counts.to_numpy(), d.sources.to_numpy()
    for (le, p), pairs in _expected_recv(xs, ids, experts, capacity).items():
        assert counts[le, p] == len(pairs), (le, p)
        rows = slice(p * capacity, p * capacity + len(pairs))
        np.testing.assert_array_equal(sources[le, rows], pairs)
        np.testing.assert_array_equal(recv[le, rows], xs[p][pairs // topk])
    return recv, counts


def _expert(recv, counts, scale_base):
    """A stand-in expert: local expert le scales its rows by (its global
    id + scale_base); rows past the counts stay zero."""
    me, ranks = weft.rank(), weft.num_ranks()
    local_experts, cap = recv.shape[0], recv.shape[1] // ranks
    y = np.zeros(recv.shape, np.float32)
    for le in range(local_experts):
        for p in range(ranks):
            rows = slice(p * cap, p * cap + counts[le, p])
            y[le, rows] = recv[le, rows] * (me * local_experts + le + scale_base)
    return y


def _expected_combine(xs, ids, ws, experts, capacity, scale_base):
    me, ranks = weft.rank(), weft.num_ranks()
    tokens, topk = ids[me].shape
    flat = ids[me].reshape(-1)
    out = np.zeros(xs[me].shape)
    for q in range(tokens * topk):
        e = flat[q]
        if 0 <= e < experts and np.count_nonzero(flat[:q] == e) < capacity:
            out[q // topk] += ws[me].flat[q] * xs[me][q // topk] * (e + scale_base)
    return out


@pytest.mark.parametrize("tokens,hidden,topk,per_rank,dtype", [
    (1, 1, 1, 1, wl.float32), (7, 20, 2, 2, wl.bfloat16), (33, 16, 3, 3, wl.float32)])
def test_moe_dispatch_combine(tokens, hidden, topk, per_rank, dtype):
    me, ranks = weft.rank(), weft.num_ranks()
    experts = per_rank * ranks
    topk = min(topk, experts)
    x = weft.empty((tokens, hidden), dtype)
    d = None
    for seed in (9, 10):  # the second call reuses the handle: its flags carry on
        xs, ids, ws = _moe_inputs(tokens, hidden, topk, experts, seed)
        x.copy_from(xs[me])
        d = ops.moe_dispatch(x, local(ids[me]), experts, handle=d)
        assert d.dropped() == 0
        recv, counts = _check_dispatch(d, xs, ids, experts, tokens, dtype)
        y = _expert(recv, counts, seed)
        out = ops.moe_combine(local(y), d, local(ws[me]))
        np.testing.assert_array_equal(host(out), _expected_combine(xs, ids, ws, experts,
                                                                   tokens, seed))
        out.free()
    weft.barrier()
    d.free()
    x.free()


def test_kept_moe_calls():
    """moe_dispatch with a handle and moe_combine with out are kept
    (weft/_plans.py): repeats with new tokens, routes and weights in the
    same buffers make the first calls' launches (as one graph each where
    the backend has graphs), which read the data of their own time."""
    from weft import _plans
    from weft.collectives import _get_comm
    me, ranks = weft.rank(), weft.num_ranks()
    tokens, hidden, topk, experts = 6, 8, 2, 2 * ranks
    x = weft.empty((tokens, hidden), wl.float32)
    ids = weft.empty((tokens, topk), wl.int32)
    wts = weft.empty((tokens, topk), wl.float32)
    out = weft.empty((tokens, hidden), wl.float32)
    d = ops.moe_dispatch(x, ids, experts)  # the handle (its buffers are allocated)
    y = weft.empty(tuple(d.recv.shape), wl.float32)
    ops.moe_combine(y, d, wts, out)
    for step in range(_plans.GRAPH_AFTER + 2):
        xs, ids_all, ws = _moe_inputs(tokens, hidden, topk, experts, 40 + step)
        x.copy_from(xs[me])
        ids.copy_from(ids_all[me])
        wts.copy_from(ws[me])
        assert ops.moe_dispatch(x, ids, experts, handle=d) is d
        recv, counts = _check_dispatch(d, xs, ids_all, experts, tokens, wl.float32)
        y.copy_from(_expert(recv, counts, step))
        assert ops.moe_combine(y, d, wts, out) is out
        np.testing.assert_array_equal(out.to_numpy(), _expected_combine(
            xs, ids_all, ws, experts, tokens, step))
    comm = _get_comm()
    keys = (_plans.key("moe_dispatch", (x, ids, d), (experts, None, None)),
            _plans.key("moe_combine", (y, wts, out, d, d.gather), ()))
    for key in keys:
        assert (comm.kept[key].graph is not None) == (BACKEND == "cuda")
    weft.barrier()
    d.free()
    assert _plans.key("moe_dispatch", (x, ids, d), (experts, None, None)) is None  # freed
    for buf in (x, ids, wts, out, y):
        buf.free()


def test_moe_capacity_invalid_ids_and_other_widths():
    """Pairs past the capacity and ids naming no expert are dropped (not
    sent, nothing added); experts may return another width and dtype."""
    me, ranks = weft.rank(), weft.num_ranks()
    tokens, hidden, topk, experts, capacity = 24, 8, 2, 2 * ranks, 3
    xs, ids, ws = _moe_inputs(tokens, hidden, topk, experts, 11, distinct=False)
    for p in range(ranks):
        ids[p][0, 0], ids[p][5, 1] = experts, -1          # no such expert
    d = ops.moe_dispatch(local(xs[me]), local(ids[me]), experts, capacity=capacity,
                         num_programs=3)
    flat = ids[me].reshape(-1)
    kept = sum(min(np.count_nonzero(flat == e), capacity) for e in range(experts))
    assert d.dropped() == tokens * topk - kept
    recv, counts = _check_dispatch(d, xs, ids, experts, capacity, wl.float32)
    y = _expert(recv, counts, 1)
    wide = np.concatenate([y, -y[..., :3]], axis=-1)      # W = hidden + 3, bf16
    y_buf = _buffer(wide, wl.bfloat16)
    out = local(np.zeros((tokens, hidden + 3), np.float32))
    assert ops.moe_combine(y_buf, d, local(ws[me]), out) is out
    want = _expected_combine(xs, ids, ws, experts, capacity, 1)
    np.testing.assert_array_equal(host(out), np.concatenate([want, -want[:, :3]], axis=1))
    weft.barrier()
    y_buf.free()
    d.free()


def test_moe_errors():
    ranks = weft.num_ranks()
    x = weft.zeros((4, 8), wl.float32)
    ids = local(np.zeros((4, 2), np.int32))
    bad = ranks + 1 if ranks > 1 else 0
    with pytest.raises(ValueError, match=f"num_experts must be a positive multiple of "
                                         f"num_ranks = {ranks}, got {bad}"):
        ops.moe_dispatch(x, ids, bad)
    with pytest.raises(ValueError, match="topk_ids has dtype fp32; it takes i32"):
        ops.moe_dispatch(x, local(np.zeros((4, 2), np.float32)), ranks)
    with pytest.raises(ValueError, match=r"topk_ids has shape \(3, 2\); it needs \(4, k\)"):
        ops.moe_dispatch(x, local(np.zeros((3, 2), np.int32)), ranks)
    with pytest.raises(ValueError, match="capacity must be a positive int"):
        ops.moe_dispatch(x, ids, ranks, capacity=0)
    d = ops.moe_dispatch(x, ids, ranks, capacity=4)
    with pytest.raises(ValueError, match="handle is not a MoeDispatch of this layout"):
        ops.moe_dispatch(x, ids, ranks, capacity=5, handle=d)
    y = local(np.zeros((1, ranks * 4, 8), np.float32))
    w = local(np.ones((4, 2), np.float32))
    with pytest.raises(ValueError, match=r"y must hold E/R x R\*C x W = 1 x"):
        ops.moe_combine(local(np.zeros((2, ranks * 4, 8), np.float32)), d, w)
    with pytest.raises(ValueError, match=r"topk_weights has shape \(4, 1\); it needs \(4, 2\)"):
        ops.moe_combine(y, d, local(np.ones((4, 1), np.float32)))
    ops.moe_combine(y, d, w)
    with pytest.raises(ValueError, match="every combine needs its own moe_dispatch first"):
        ops.moe_combine(y, d, w)
    weft.barrier()
    d.free()
    x.free()


def test_kept_fused_calls_read_their_own_inputs():
    """Fused calls with `out` given are kept (weft/_plans.py): repeats make
    the first call's launches, which read the inputs of their own time;
    a kept launch holds no tensor (its descriptors are detached)."""
    from weft import _plans
    from weft.collectives import _get_comm
    me, ranks = weft.rank(), weft.num_ranks()
    rows, k, n = 2, 64, 48
    a = weft.empty((ranks * rows, k), wl.float32)
    b = weft.empty((k, n), wl.float32)
    scattered = weft.empty((rows, n), wl.float32)
    gathered = weft.empty((ranks * rows, n), wl.float32)
    for step in range(3):
        xs, ws = _second_layer(ranks * rows, k, n, 60 + step)
        a.copy_from(xs[me])
        b.copy_from(ws[me])
        ops.matmul_reduce_scatter(a, b, scattered)
        full = sum(x @ w for x, w in zip(xs, ws))
        np.testing.assert_array_equal(scattered.to_numpy(), full[me * rows:(me + 1) * rows])
        mine = weft.Buffer.view(a.ptr, (rows, k), wl.float32)  # this rank's first rows
        ops.all_gather_matmul(mine, b, gathered)
        np.testing.assert_array_equal(
            gathered.to_numpy(), np.concatenate([x[:rows] for x in xs]) @ ws[me])
    comm = _get_comm()
    for key in (_plans.key("matmul_reduce_scatter", (a, b, scattered), (None, "f32")),
                _plans.key("all_gather_matmul", (mine, b, gathered), (None, "auto"))):
        launches = comm.kept[key].launches
        assert launches
        assert all(v[0].tensor is None for launch in launches for v in launch[2]
                   if type(v) is tuple)
    weft.barrier()
    for buf in (a, b, scattered, gathered):
        buf.free()
