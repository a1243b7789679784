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
