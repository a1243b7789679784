"""weft.ops (fused compute + communication) on 1-4 ranks against numpy."""
import numpy as np
import pytest

import weft
import weft.language as wl
from devices import host, local, to_bits
from weft import ops


def _inputs(rows, k, n, seed):
    """Every rank's a and the shared b: small integers, exact in every dtype."""
    rng = np.random.default_rng(seed)
    a = [rng.integers(-3, 4, (rows, k)).astype(np.float32) for _ in range(weft.num_ranks())]
    return a, rng.integers(-3, 4, (k, n)).astype(np.float32)


@pytest.mark.parametrize("dtype", [wl.float32, wl.float16, wl.bfloat16])
@pytest.mark.parametrize("rows,k,n", [(1, 1, 1), (5, 33, 7), (40, 24, 70)])
def test_all_gather_matmul(rows, k, n, dtype):
    me = weft.rank()
    a, b = weft.empty((rows, k), dtype), weft.empty((k, n), dtype)
    for seed in (1, 2):  # repeated calls: the flags' epochs carry on
        xs, w = _inputs(rows, k, n, seed)
        a.copy_from(to_bits(xs[me], dtype))
        b.copy_from(to_bits(w, dtype))
        out = ops.all_gather_matmul(a, b)
        np.testing.assert_array_equal(host(out), np.concatenate(xs) @ w)
        out.free()
    weft.barrier()
    a.free()
    b.free()


def test_all_gather_matmul_local_b_and_out_one_program():
    me, ranks = weft.rank(), weft.num_ranks()
    xs, w = _inputs(20, 16, 24, 3)
    a = weft.empty((20, 16), wl.float32)
    a.copy_from(xs[me])
    out = local(np.zeros((ranks * 20, 24), np.float32))  # local b and out
    assert ops.all_gather_matmul(a, local(w), out, num_programs=1) is out
    np.testing.assert_array_equal(host(out), np.concatenate(xs) @ w)
    weft.barrier()
    a.free()


def test_all_gather_matmul_errors():
    a = weft.zeros((4, 8), wl.float32)
    with pytest.raises(ValueError, match="a must be a 2-D symmetric weft.Buffer"):
        ops.all_gather_matmul(np.zeros((4, 8), np.float32), a)
    with pytest.raises(ValueError, match=r"b has shape \(4, 8\); it needs \(8, N\)"):
        ops.all_gather_matmul(a, weft.zeros((4, 8), wl.float32))
    with pytest.raises(ValueError, match="b has dtype fp16 but a has fp32"):
        ops.all_gather_matmul(a, weft.zeros((8, 2), wl.float16))
    with pytest.raises(ValueError, match="out must hold"):
        ops.all_gather_matmul(a, weft.zeros((8, 2), wl.float32), weft.zeros((3,), wl.float32))
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


# (shape, dtype) pairs rather than their product: each pair is a kernel to
# compile on every rank count in CI.
@pytest.mark.parametrize("rows,k,n,dtype", [(1, 1, 1, wl.float32), (5, 33, 7, wl.float16),
                                            (20, 24, 40, wl.bfloat16), (5, 33, 7, wl.float32)])
def test_matmul_reduce_scatter(rows, k, n, dtype):
    me, ranks = weft.rank(), weft.num_ranks()
    m = ranks * rows
    a, b = weft.empty((m, k), dtype), weft.empty((k, n), dtype)
    for seed in (1, 2):  # repeated calls: epochs carry on, the scratch is reused
        xs, ws = _second_layer(m, k, n, seed)
        a.copy_from(to_bits(xs[me], dtype))
        b.copy_from(to_bits(ws[me], dtype))
        out = ops.matmul_reduce_scatter(a, b)
        full = sum(x @ w for x, w in zip(xs, ws))
        np.testing.assert_array_equal(host(out), full[me * rows:(me + 1) * rows])
        out.free()
    weft.barrier()
    a.free()
    b.free()


@pytest.mark.parametrize("m,k,n,dtype", [(1, 1, 1, wl.bfloat16), (3, 40, 21, wl.float32),
                                         (17, 16, 33, wl.float16)])
def test_matmul_all_reduce(m, k, n, dtype):
    me = weft.rank()
    a, b = weft.empty((m, k), dtype), weft.empty((k, n), dtype)
    for seed in (3, 4):
        xs, ws = _second_layer(m, k, n, seed)
        a.copy_from(to_bits(xs[me], dtype))
        b.copy_from(to_bits(ws[me], dtype))
        out = ops.matmul_all_reduce(a, b)
        np.testing.assert_array_equal(host(out), sum(x @ w for x, w in zip(xs, ws)))
        out.free()
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
    with pytest.raises(ValueError, match="num_programs must be in 1..64"):
        ops.matmul_all_reduce(a, b, num_programs=65)
    weft.barrier()
    a.free()
    b.free()


# -- flash-decode's split-KV combine ----------------------------------------

def _from_bits(a, dtype):
    if dtype is wl.bfloat16:
        return (np.asarray(a).astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    return np.asarray(a).astype(np.float64)


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
        os_ = [_from_bits(to_bits(rng.standard_normal(shape) * 4, dtype), dtype)
               for _ in range(ranks)]
        lses = [(rng.standard_normal(shape[:-1]) * 3).astype(np.float32) for _ in range(ranks)]
        if rows > 1:              # a rank without keys for row 0; row 1 has none anywhere
            lses[0].flat[0] = -np.inf
            for p in range(ranks):
                lses[p].flat[1] = -np.inf
        o.copy_from(to_bits(os_[me], dtype))
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

