"""weft.collectives on 1-4 host ranks under weft-run, against numpy.

Every rank runs the same tests in the same order (collective calls match);
inputs are small integers, so sums are exact in fp32, fp16 and bf16 and the
results are compared exactly."""
import ctypes
import os
import tempfile
import time

import numpy as np
import pytest

import weft
import weft.language as wl
from weft import collectives as C
from weft.collectives._kernels import MAX_PROGRAMS
from devices import BACKEND, host, local, rounded

SIZES = [1, 7, 1000, 4099, 65537]


@weft.jit
def _half_probe(x, y, n, B: wl.constexpr):
    o = wl.arange(0, B)
    m = o < n
    v = wl.load(x + o, mask=m).to(wl.float32) + 1.0
    wl.store(y + o, v, mask=m)


def _host_half_gap():
    """None when fp16 and bf16 kernels load on the host target, else why not
    (compiles a tiny conversion kernel and dlopens it with RTLD_NOW, the way
    the host runtime loads kernels)."""
    gaps = []
    for name in ("fp16", "bf16"):
        try:
            k = weft.compile(_half_probe, {"x": f"*{name}", "y": f"*{name}", "n": "i32"},
                             {"B": 8}, target="host")
            with tempfile.NamedTemporaryFile(suffix=".so") as f:
                f.write(k.asm["so"])
                f.flush()
                ctypes.CDLL(f.name, mode=os.RTLD_NOW)
        except Exception as e:  # noqa: BLE001 - any failure is the gap
            gaps.append(f"{name}: {str(e).splitlines()[0][:160]}")
    return "; ".join(gaps) or None


_HALF_GAP = _host_half_gap() if BACKEND == "host" else None
half = pytest.mark.skipif(
    _HALF_GAP is not None,
    reason=f"host target cannot load fp16/bf16 conversions yet "
           f"(compiler-rt helpers missing): {_HALF_GAP}")
DTYPES = [wl.float32, pytest.param(wl.float16, marks=half),
          pytest.param(wl.bfloat16, marks=half)]


def inputs(n, seed, ranks=None):
    """Every rank's input (small integers), the same on every rank."""
    ranks = weft.num_ranks() if ranks is None else ranks
    return [np.random.default_rng(1000 * seed + p).integers(-8, 8, n).astype(np.float64)
            for p in range(ranks)]


def buffer(values, dtype, shape=None):
    buf = weft.empty(values.shape if shape is None else shape, dtype)
    buf.copy_from(np.asarray(values).reshape(buf.shape))
    return buf


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("algorithm", ["auto", "ll", "ll128", "push", "one_shot", "two_shot",
                                       "multimem"])
@pytest.mark.parametrize("n", SIZES)
def test_all_reduce(n, algorithm, dtype):
    if algorithm == "multimem" and dtype is not wl.float32:
        pytest.skip("the multimem variant is fp32 only")
    me = weft.rank()
    x = weft.empty((n,), dtype)
    out = weft.empty((n,), dtype)
    for seed in (1, 2, 3):  # epochs: flags are never re-zeroed, out reused
        xs = inputs(n, seed)
        x.copy_from(xs[me])
        assert C.all_reduce(x, out, algorithm=algorithm) is out
        np.testing.assert_array_equal(out.to_numpy(), sum(xs))
        np.testing.assert_array_equal(x.to_numpy(), xs[me])
    assert C.all_reduce(x, algorithm=algorithm) is x  # in place
    np.testing.assert_array_equal(x.to_numpy(), sum(xs))
    if algorithm != "multimem":  # multimem sums only
        x.copy_from(xs[me])
        C.all_reduce(x, out, op="max", algorithm=algorithm)
        np.testing.assert_array_equal(out.to_numpy(), np.max(xs, axis=0))
    weft.barrier()  # x, out freed below: nobody still reads them
    x.free()
    out.free()


@pytest.mark.parametrize("num_programs", [1, 3, 7])
@pytest.mark.parametrize("algorithm", ["ll", "ll128", "push", "one_shot", "two_shot",
                                       "multimem"])
def test_all_reduce_num_programs(algorithm, num_programs):
    me, n = weft.rank(), 4099
    x, out = weft.empty((n,), wl.float32), weft.empty((n,), wl.float32)
    for seed in (4, 5):
        xs = inputs(n, seed)
        x.copy_from(xs[me])
        C.all_reduce(x, out, algorithm=algorithm, num_programs=num_programs)
        np.testing.assert_array_equal(out.to_numpy(), sum(xs))


def test_all_reduce_local_input_is_staged():
    me, n = weft.rank(), 1000
    for seed, alg in ((6, "one_shot"), (7, "two_shot"), (8, "multimem"), (10, "ll"),
                      (11, "push"), (12, "ll128")):
        xs = inputs(n, seed)
        x = local(xs[me].astype(np.float32))      # not symmetric: staged
        out = local(np.zeros(n, np.float32))      # local output is fine
        C.all_reduce(x, out, algorithm=alg)
        np.testing.assert_array_equal(host(out), sum(xs))
        C.all_reduce(x, algorithm=alg)      # in place into the local array
        np.testing.assert_array_equal(host(x), sum(xs))


def test_all_reduce_threshold_picks_two_shot(monkeypatch):
    me, n = weft.rank(), 300
    monkeypatch.setattr(C, "LL_MAX_BYTES", 16)
    monkeypatch.setattr(C, "PUSH_MAX_BYTES", 16)
    x, out = weft.empty((n,), wl.float32), weft.empty((n,), wl.float32)
    xs = inputs(n, 9)
    x.copy_from(xs[me])
    C.all_reduce(x, out)
    np.testing.assert_array_equal(out.to_numpy(), sum(xs))
    assert C.multicast_enabled() is False  # opt-in (WEFT_ENABLE_MULTICAST), never here


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", SIZES)
def test_reduce_scatter(n, dtype):
    me, ranks = weft.rank(), weft.num_ranks()
    chunk = -(-n // ranks)
    x = weft.empty((n,), dtype)
    out = weft.full((chunk,), 99, dtype)
    for seed in (1, 2):
        xs = inputs(n, seed)
        x.copy_from(xs[me])
        C.reduce_scatter(x, out)
        padded = np.zeros(chunk * ranks)
        padded[:n] = sum(xs)  # zero-padded to num_ranks * chunk
        np.testing.assert_array_equal(out.to_numpy(),
                                      padded[me * chunk:(me + 1) * chunk])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("algorithm", ["auto", "ll", "ll128", "push"])
@pytest.mark.parametrize("n", SIZES)
def test_all_gather(n, algorithm, dtype):
    me, ranks = weft.rank(), weft.num_ranks()
    x = weft.empty((n,), dtype)
    out = weft.empty((ranks * n,), dtype)
    for seed in (1, 2, 3):
        xs = inputs(n, seed)
        x.copy_from(xs[me])
        C.all_gather(x, out, algorithm=algorithm)
        np.testing.assert_array_equal(out.to_numpy(), np.concatenate(xs))
    weft.barrier()  # freed below: nobody still reads them
    x.free()
    out.free()


@pytest.mark.parametrize("algorithm", ["ll", "ll128", "push"])
def test_all_gather_local_in_and_out(algorithm):
    me, ranks, n = weft.rank(), weft.num_ranks(), 77
    xs = inputs(n, 3)
    out = local(np.zeros(ranks * n, np.float32))
    C.all_gather(local(xs[me].astype(np.float32)), out, num_programs=2, algorithm=algorithm)
    np.testing.assert_array_equal(host(out), np.concatenate(xs))


def test_ll_buffer_is_renewed(monkeypatch):
    """The LL buffer is made again (zeroed) every LL_RENEW_CALLS calls, so
    no word outlives the 2^32 - 1 calls after which its flag repeats; the
    calls on either side of a renewal are right."""
    monkeypatch.setattr(C, "LL_RENEW_CALLS", 3)
    me, n = weft.rank(), 300
    x, out = weft.empty((n,), wl.float32), weft.empty((n,), wl.float32)
    before = C._get_comm().scratch.get("ll")
    for seed in range(40, 48):
        xs = inputs(n, seed)
        x.copy_from(xs[me])
        C.all_reduce(x, out, algorithm="ll")
        np.testing.assert_array_equal(out.to_numpy(), sum(xs))
    assert C._get_comm().scratch["ll"] is not before


def test_halving_calls_of_changing_sizes_on_skewed_ranks():
    """LL, LL128 and push calls whose sizes (so grids and slots) change from
    call to call, while one rank lags behind the others: a word one call
    left in a buffer is never taken for another call's, nor overwritten
    before it is read (a lagging sender leaves old words where a receiver
    looks)."""
    me, ranks = weft.rank(), weft.num_ranks()
    rng = np.random.default_rng(7)  # the same sizes and lags on every rank
    for step in range(60):
        n = int(rng.integers(1, 4 * 64 * 3))  # up to 3 blocks on each of 4 host programs
        lagging = int(rng.integers(0, ranks))
        xs = inputs(n, 60 + step)
        x = local(xs[me].astype(np.float32))
        if me == lagging:
            time.sleep(0.003)
        algorithm = ("ll", "ll128", "push")[step % 3]
        if step % 2 == 0 and algorithm != "push":
            out = local(np.zeros(ranks * n, np.float32))
            C.all_gather(x, out, algorithm=algorithm)
            np.testing.assert_array_equal(host(out), np.concatenate(xs))
        else:
            out = local(np.zeros(n, np.float32))
            C.all_reduce(x, out, algorithm=algorithm)
            np.testing.assert_array_equal(host(out), sum(xs))
    weft.barrier()


def test_ll128_unaligned_memory_and_partial_words():
    """LL128 reads and writes x and out as whole 8-byte words where both
    are aligned, element by element elsewhere: memory 4 bytes off a word,
    and sizes that end inside a word, on either side; nothing around out
    is written."""
    me, ranks = weft.rank(), weft.num_ranks()
    for n, shift_x, shift_out in ((5, 1, 0), (301, 0, 1), (301, 0, 0), (300, 1, 1)):
        xs = inputs(n, 80 + n + shift_x)
        x = local(np.concatenate([np.zeros(shift_x), xs[me]]).astype(np.float32))[shift_x:]
        for call, m, want in ((C.all_reduce, n, sum(xs)),
                              (C.all_gather, ranks * n, np.concatenate(xs))):
            out = local(np.full(ranks * n + 2, -99, np.float32))
            call(x, out[shift_out:shift_out + m], algorithm="ll128")
            got = host(out)
            np.testing.assert_array_equal(got[shift_out:shift_out + m], want)
            np.testing.assert_array_equal(np.delete(got, np.s_[shift_out:shift_out + m]), -99)
    weft.barrier()


@pytest.mark.parametrize("dtype", [wl.float32, pytest.param(wl.bfloat16, marks=half)])
def test_ll128_lines_arrive_whole(dtype):
    """LL128 all-gathers of random bits (NaNs aside) back to back, each
    from other data, at sizes that end anywhere in a line: a line taken
    before all of it arrived (on GPUs a line is one store and one load), a
    stale one, or a flag taken for data shows as a wrong bit. GPUs run
    sizes up to 1 MiB a rank, where every program has several blocks."""
    me, ranks = weft.rank(), weft.num_ranks()
    bits = np.uint32 if dtype is wl.float32 else np.uint16
    width = np.dtype(bits).itemsize
    most = 3 * 4 * 2 * 120 if BACKEND == "host" else 1 << 20  # bytes
    rng = np.random.default_rng(11)  # the same sizes on every rank
    sizes = [int(v) for v in rng.integers(1, most // width, 12)]
    xs, outs, want = [], [], []
    for call, n in enumerate(sizes):
        words = [(np.random.default_rng(1000 * call + p).integers(0, 1 << (8 * width), n)
                  & ~(1 << (8 * width - 2))).astype(bits) for p in range(ranks)]  # exponent < max
        x = weft.empty((n,), dtype)
        if dtype is wl.float32:
            x.copy_from(words[me].view(np.float32))
        else:
            x.copy_from(words[me], raw=True)
        xs.append(x)
        outs.append(weft.empty((ranks * n,), dtype))
        want.append(np.concatenate(words))
    for x, out in zip(xs, outs):
        C.all_gather(x, out, algorithm="ll128")
    for out, w in zip(outs, want):
        np.testing.assert_array_equal(out.to_numpy(raw=True).view(bits), w)
    weft.barrier()  # freed below: nobody still reads them
    for buf in xs + outs:
        buf.free()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("m", SIZES)
def test_all_to_all(m, dtype):
    me, ranks = weft.rank(), weft.num_ranks()
    x = weft.empty((ranks * m,), dtype)
    out = weft.empty((ranks * m,), dtype)
    for seed in (1, 2):
        xs = inputs(ranks * m, seed)
        x.copy_from(xs[me])
        C.all_to_all(x, out)
        expect = np.concatenate([xs[p][me * m:(me + 1) * m] for p in range(ranks)])
        np.testing.assert_array_equal(out.to_numpy(), expect)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", SIZES)
def test_broadcast(n, dtype):
    me, ranks = weft.rank(), weft.num_ranks()
    x = weft.empty((n,), dtype)
    for seed, root in ((1, ranks - 1), (2, 0)):
        xs = inputs(n, seed)
        x.copy_from(xs[me])
        assert C.broadcast(x, root) is x
        np.testing.assert_array_equal(x.to_numpy(), xs[root])


def rmsnorm_ref(xs, residual, weight, eps, dtype):
    h = rounded(sum(xs) + residual, dtype)  # residual rounded
    hf = sum(xs) + residual
    rstd = 1 / np.sqrt((hf * hf).mean(axis=1, keepdims=True) + eps)
    return h, h * rstd * weight


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("rows,hidden", [(1, 1), (3, 7), (5, 1000), (2, 4099)])
def test_all_reduce_residual_rmsnorm(rows, hidden, dtype):
    me = weft.rank()
    x = weft.empty((rows, hidden), dtype)
    residual = weft.empty((rows, hidden), dtype)
    weight = weft.empty((hidden,), dtype)
    out = weft.empty((rows, hidden), dtype)
    eps = 1e-5
    res = np.random.default_rng(50).integers(-4, 4, (rows, hidden)).astype(np.float64)
    w = np.random.default_rng(51).integers(1, 4, hidden).astype(np.float64) / 2
    residual.copy_from(res)
    weight.copy_from(w)
    for seed in (1, 2):  # the residual carries over between calls
        xs = [a.reshape(rows, hidden) for a in inputs(rows * hidden, seed)]
        x.copy_from(xs[me])
        C.all_reduce_residual_rmsnorm(x, residual, weight, eps, out)
        res, y = rmsnorm_ref(xs, res, w, eps, dtype)
        np.testing.assert_array_equal(residual.to_numpy(), res)
        tol = {wl.float32: 1e-5, wl.float16: 2e-3, wl.bfloat16: 1.6e-2}[dtype]
        np.testing.assert_allclose(out.to_numpy(), y, rtol=tol, atol=tol)
        np.testing.assert_array_equal(x.to_numpy(), xs[me])


def test_bad_inputs():
    ranks = weft.num_ranks()
    x = weft.zeros((10,), wl.float32)
    with pytest.raises(ValueError, match="out has dtype fp16 but x has fp32"):
        C.all_reduce(x, weft.empty((10,), wl.float16))
    with pytest.raises(ValueError, match="out has 9 elements but x has 10"):
        C.all_reduce(x, weft.empty((9,), wl.float32))
    with pytest.raises(ValueError, match="x has dtype i32; collectives take"):
        C.all_reduce(weft.zeros((4,), wl.int32))
    with pytest.raises(ValueError, match="op must be one of sum, max, min"):
        C.all_reduce(x, op="prod")
    with pytest.raises(ValueError, match="algorithm must be one of"):
        C.all_reduce(x, algorithm="ring")
    with pytest.raises(ValueError, match="multimem all_reduce takes fp32"):
        C.all_reduce(weft.zeros((4,), wl.float16), algorithm="multimem")
    with pytest.raises(ValueError, match="multimem all_reduce only sums"):
        C.all_reduce(x, op="min", algorithm="multimem")
    with pytest.raises(ValueError, match=f"num_programs must be in 1..{MAX_PROGRAMS}"):
        C.all_reduce(x, num_programs=MAX_PROGRAMS + 1)
    with pytest.raises(ValueError, match=rf"all_gather: out has {10 * ranks + 1} elements; "
                                         rf"it needs num_ranks \* x.size = {10 * ranks}"):
        C.all_gather(x, weft.empty((10 * ranks + 1,), wl.float32))
    with pytest.raises(ValueError, match="algorithm must be one of auto, ll, ll128, push"):
        C.all_gather(x, weft.empty((10 * ranks,), wl.float32), algorithm="ring")
    with pytest.raises(ValueError, match=f"num_programs must be in 1..{MAX_PROGRAMS}"):
        C.all_gather(x, weft.empty((10 * ranks,), wl.float32), num_programs=0)
    with pytest.raises(ValueError, match=r"reduce_scatter: out has 1 elements; it needs ceil"):
        C.reduce_scatter(weft.zeros((4 * ranks + 1,), wl.float32), weft.empty((1,), wl.float32))
    if ranks > 1:
        with pytest.raises(ValueError, match="is not a multiple of num_ranks"):
            C.all_to_all(weft.zeros((ranks + 1,), wl.float32),
                         weft.empty((ranks + 1,), wl.float32))
    with pytest.raises(ValueError, match="root must be a rank in"):
        C.broadcast(x, ranks)
    with pytest.raises(ValueError, match="broadcast: x must be a symmetric weft.Buffer"):
        C.broadcast(np.zeros(4, np.float32), 0)
    with pytest.raises(ValueError, match="broadcast: x must be a symmetric weft.Buffer"):
        C.broadcast(weft.zeros((4,), wl.float32, local=True), 0)   # local: peers cannot
    with pytest.raises(ValueError, match="weight has 3 elements; it needs hidden = 4"):
        C.all_reduce_residual_rmsnorm(weft.zeros((2, 4), wl.float32),
                                      weft.zeros((2, 4), wl.float32),
                                      weft.zeros((3,), wl.float32), 1e-6,
                                      weft.zeros((2, 4), wl.float32))
    with pytest.raises(ValueError, match="must be a weft.Buffer, a numpy array"):
        C.all_gather([1.0, 2.0], x)
    # After the errors (raised before any device work), collectives still match up.
    x.copy_from(1)
    C.all_reduce(x)
    assert (x.to_numpy() == ranks).all()


def test_mixed_sequence_without_host_barriers():
    """Different collectives, sizes (scratch buffers grow) and num_programs
    back to back: the epochs keep every call's flags apart."""
    me, ranks = weft.rank(), weft.num_ranks()
    for i, (n, progs) in enumerate([(10, 5), (70000, 2), (333, 7), (90000, 3), (5, 1)]):
        xs = inputs(n, 20 + i)
        x = weft.empty((n,), wl.float32)
        x.copy_from(xs[me])
        out = weft.empty((n,), wl.float32)
        C.all_reduce(x, out, algorithm="two_shot", num_programs=progs)
        np.testing.assert_array_equal(out.to_numpy(), sum(xs))
        C.all_reduce(x, out, algorithm="one_shot", num_programs=8 - progs)
        np.testing.assert_array_equal(out.to_numpy(), sum(xs))
        C.all_reduce(x, out, algorithm="ll", num_programs=progs + 1)
        np.testing.assert_array_equal(out.to_numpy(), sum(xs))
        C.all_reduce(x, out, algorithm="push", num_programs=progs)
        np.testing.assert_array_equal(out.to_numpy(), sum(xs))
        gathered = local(np.empty(ranks * n, np.float32))
        C.all_gather(x, gathered, num_programs=progs)
        np.testing.assert_array_equal(host(gathered), np.concatenate(xs))
        C.broadcast(x, i % ranks, num_programs=progs)
        np.testing.assert_array_equal(x.to_numpy(), xs[i % ranks])



@pytest.mark.parametrize("dtype", DTYPES)
def test_large_message_grid(monkeypatch, dtype):
    """The wide-block grid that messages more than PROGRAMS narrow blocks
    long take (on GPUs LARGE_BLOCK elements; here on at most 4 programs, so
    each takes several), with a ragged tail;
    all_to_all's fp32 output is local, so its pushes land in a symmetric
    scratch buffer that is then copied out."""
    monkeypatch.setattr(C, "PROGRAMS", {"host": 2, "cuda": 4, "hip": 4})
    me, ranks = weft.rank(), weft.num_ranks()
    n = ranks * (3 * 8192 + 5)
    xs = inputs(n, 30)
    x, out = buffer(xs[me], dtype), weft.empty((n,), dtype)
    for algorithm in ("one_shot", "two_shot"):
        C.all_reduce(x, out, algorithm=algorithm)
        np.testing.assert_array_equal(out.to_numpy(), sum(xs))
    chunk = n // ranks
    scattered = weft.empty((chunk,), dtype)
    C.reduce_scatter(x, scattered)
    np.testing.assert_array_equal(scattered.to_numpy(),
                                  sum(xs)[me * chunk:(me + 1) * chunk])
    gathered = weft.empty((ranks * n,), dtype)
    C.all_gather(x, gathered)
    np.testing.assert_array_equal(gathered.to_numpy(), np.concatenate(xs))
    # numpy has no bf16 array to hold the output: fp32 goes local.
    local_out = local(np.zeros(n, np.float32)) if dtype is wl.float32 else weft.empty((n,), dtype)
    C.all_to_all(x, local_out)
    expect = np.concatenate([xs[p][me * chunk:(me + 1) * chunk] for p in range(ranks)])
    np.testing.assert_array_equal(host(local_out), expect)
    C.broadcast(x, ranks - 1)
    np.testing.assert_array_equal(x.to_numpy(), xs[ranks - 1])
    C.all_reduce(x, algorithm="two_shot")  # in place
    np.testing.assert_array_equal(x.to_numpy(), ranks * xs[ranks - 1])
    weft.barrier()  # nobody reads these any more
    for buf in (x, out, scattered, gathered, local_out):
        if isinstance(buf, weft.Buffer):
            buf.free()


def test_cuda_graph_replays_collectives():
    """weft.cuda_graph: LL collectives captured once and replayed read the
    inputs of each replay (epochs and flags live on the device)."""
    if BACKEND != "cuda":
        with pytest.raises(weft.WeftError, match="needs the cuda backend"):
            weft.cuda_graph(lambda: None)
        return
    import torch
    me, ranks, n = weft.rank(), weft.num_ranks(), 3001
    x, out = weft.empty((n,), wl.bfloat16), weft.empty((n,), wl.bfloat16)
    gathered = weft.empty((ranks * n,), wl.bfloat16)
    x.copy_from(inputs(n, 60)[me])
    graph = weft.cuda_graph(lambda: (C.all_reduce(x, out), C.all_gather(x, gathered)))
    for seed in range(61, 66):
        xs = inputs(n, seed)
        torch.cuda.synchronize()
        x.copy_from(xs[me])
        graph()
        torch.cuda.synchronize()
        np.testing.assert_array_equal(out.to_numpy(), sum(xs))
        np.testing.assert_array_equal(gathered.to_numpy(), np.concatenate(xs))


def test_kept_calls_follow_their_buffers():
    """A repeated call makes the launches kept from its first time
    (weft/_plans.py): new data in the same buffers is read, and a scratch
    buffer made in between (the LL buffer growing) makes the next repeat
    run and keep the call again."""
    from weft import _plans
    me, n = weft.rank(), 500
    x, out = weft.empty((n,), wl.float32), weft.empty((n,), wl.float32)
    comm = C._get_comm()
    for seed in (70, 71):
        xs = inputs(n, seed)
        x.copy_from(xs[me])
        C.all_reduce(x, out)
        np.testing.assert_array_equal(out.to_numpy(), sum(xs))
    key = _plans.key("all_reduce", (x, out), ("sum", "auto", None))
    assert comm.kept[key].version == comm.version
    # More LL words than the LL buffer holds, whatever ran before.
    big = weft.zeros((comm.scratch["ll"].nbytes // (16 * weft.num_ranks()) + 1,), wl.float32)
    version = comm.version
    C.all_reduce(big, algorithm="ll")
    assert comm.version > version
    xs = inputs(n, 72)
    x.copy_from(xs[me])
    C.all_reduce(x, out)
    np.testing.assert_array_equal(out.to_numpy(), sum(xs))
    assert comm.kept[key].version == comm.version
    if BACKEND == "host":  # a numpy array is not kept
        assert _plans.key("all_reduce", (local(np.zeros(4, np.float32)), None), ()) is None
    weft.barrier()
    for b in (x, out, big):
        b.free()
    assert _plans.key("all_reduce", (x, out), ("sum", "auto", None)) is None  # freed


def test_capture_of_a_failing_call_is_dropped():
    """weft._runtime.capture of launches that raise part way gives no
    graph (whatever was captured is not the whole call), ends the capture
    (later launches run) and launches nothing; on the host backend there
    are no graphs at all."""
    from weft import _runtime as rt
    from weft.collectives import _kernels as K
    src, dst = weft.full((64,), 3.0, wl.float32), weft.zeros((64,), wl.float32)
    K.copy_kernel[(1,)](src, dst, 64, BLOCK=64)  # loaded before any capture
    dst.copy_from(0)

    def failing():
        K.copy_kernel[(1,)](src, dst, 64, BLOCK=64)
        raise weft.WeftError("a launch that failed")

    assert rt.capture(failing) is None
    assert rt.capture(lambda: None) is None or BACKEND == "cuda"
    if BACKEND != "host":
        np.testing.assert_array_equal(dst.to_numpy(), 0)  # captured, never run
    K.copy_kernel[(1,)](src, dst, 64, BLOCK=64)
    np.testing.assert_array_equal(dst.to_numpy(), 3)
    weft.barrier()
    src.free()
    dst.free()


@pytest.mark.parametrize("op", ["all_reduce", "all_gather"])
def test_kept_calls_become_graphs(op):
    """From its GRAPH_AFTER-th repeat a kept call launches as one graph
    where the backend has them (CUDA; the host backend replays the
    launches), a graph that reads each call's new data."""
    from weft import _plans
    me, ranks, n = weft.rank(), weft.num_ranks(), 333
    x = weft.empty((n,), wl.float32)
    out = weft.empty(((1 if op == "all_reduce" else ranks) * n,), wl.float32)
    if op == "all_reduce":
        call, want = (lambda: C.all_reduce(x, out)), sum
        key = _plans.key("all_reduce", (x, out), ("sum", "auto", None))
    else:
        call, want = (lambda: C.all_gather(x, out)), np.concatenate
        key = _plans.key("all_gather", (x, out), ("auto", None))
    comm = C._get_comm()
    for step in range(_plans.GRAPH_AFTER + 3):
        xs = inputs(n, 90 + step)
        x.copy_from(xs[me])
        call()
        np.testing.assert_array_equal(out.to_numpy(), want(xs))
        graph = comm.kept[key].graph
        assert (graph is not None) == (BACKEND == "cuda" and step >= _plans.GRAPH_AFTER)
    weft.barrier()
