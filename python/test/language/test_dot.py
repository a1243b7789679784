"""wl.dot against numpy: each operand dtype (float16, bfloat16, float32),
shapes from 1x1x1 to the GPU's instruction multiples with odd extents under
masks, operands loaded transposed, with and without an accumulator, the
sums stored as float32 or rounded to the operands' dtype; a K loop of dots
(the pipelined rings and, on sm_90, warpgroup MMA); at 1, 4 and 8 warps on
GPUs. Integer-valued operands make every sum exact, so the results are
compared exactly; random operands bound how the float32 accumulation may
round."""
import numpy as np
import pytest

import weft
import weft.language as wl
from devices import BACKEND
from matrix import CASES, argument, contents, decode, dtype_id, encode, rounded, storage

DTYPES = [wl.float16, wl.bfloat16, wl.float32]
# ((M, N, K) of the data, (BM, BN, BK) of the tiles); a host program holds
# its whole result, so its tiles stay small (docs/python.md).
SHAPES = [((1, 1, 1), (1, 1, 1)), ((3, 5, 7), (4, 8, 8)), ((16, 16, 16), (16, 16, 16)),
          ((13, 9, 21), (16, 16, 32)), ((32, 16, 8), (32, 16, 8))]
if BACKEND != "host":
    SHAPES += [((64, 64, 32), (64, 64, 32)), ((100, 60, 50), (128, 64, 64))]
# (a loaded transposed, b loaded transposed, an accumulator, rounded out):
# one per shape in turn.
VARIANTS = [(False, False, False, False), (True, False, True, True),
            (False, True, False, True), (True, True, True, False)]
WARPS = [4] if BACKEND == "host" else [1, 4, 8]


def shape_id(shape):
    (m, n, k), tile = shape
    return f"{m}x{n}x{k}" + ("" if (m, n, k) == tile else "in" + "x".join(map(str, tile)))


@weft.jit
def load_tile(ptr, rows, cols, R, C, TRANS: wl.constexpr):
    """The tile at (rows, cols) of an R x C matrix stored row-major, or
    (TRANS) stored as its C x R transpose, loaded as such and transposed in
    registers; 0 outside."""
    if TRANS:
        t = wl.trans(wl.load(ptr + cols[:, None] * R + rows[None, :],
                             mask=(cols[:, None] < C) & (rows[None, :] < R), other=0.0))
    else:
        t = wl.load(ptr + rows[:, None] * C + cols[None, :],
                    mask=(rows[:, None] < R) & (cols[None, :] < C), other=0.0)
    return t


@weft.jit
def dot_kernel(a, b, c, out, M, N, K, BM: wl.constexpr, BN: wl.constexpr, BK: wl.constexpr,
               TRANS_A: wl.constexpr, TRANS_B: wl.constexpr, ACC: wl.constexpr,
               OUT: wl.constexpr):
    """out = (c +) a @ b of one tile each."""
    rm, rn, rk = wl.arange(0, BM), wl.arange(0, BN), wl.arange(0, BK)
    x = load_tile(a, rm, rk, M, K, TRANS_A)
    y = load_tile(b, rk, rn, K, N, TRANS_B)
    inside = (rm[:, None] < M) & (rn[None, :] < N)
    at = rm[:, None] * N + rn[None, :]
    if ACC:
        r = wl.dot(x, y, wl.load(c + at, mask=inside, other=0.0))
    else:
        r = wl.dot(x, y)
    wl.store(out + at, r.to(OUT), mask=inside)


@weft.jit
def k_loop_kernel(a, b, out, M, N, K, BM: wl.constexpr, BN: wl.constexpr, BK: wl.constexpr,
                  OUT: wl.constexpr):
    """out = a @ b over K in blocks of BK, the last one masked."""
    rm, rn = wl.arange(0, BM), wl.arange(0, BN)
    acc = wl.zeros((BM, BN), wl.float32)
    for k0 in range(0, K, BK):
        rk = k0 + wl.arange(0, BK)
        acc = wl.dot(load_tile(a, rm, rk, M, K, False), load_tile(b, rk, rn, K, N, False), acc)
    wl.store(out + rm[:, None] * N + rn[None, :], acc.to(OUT),
             mask=(rm[:, None] < M) & (rn[None, :] < N))


def _launch(kernel, inputs, out_dtype, m, n, warps, **constexprs):
    """Runs `kernel` on `inputs` ((float64 values, dtype) pairs) and an out
    of `out_dtype`; the m x n result as float64."""
    out = argument(np.zeros(m * n, storage(out_dtype)), out_dtype)
    kernel[(1,)](*[argument(encode(x, d), d) for x, d in inputs], out, num_warps=warps,
                 OUT=out_dtype, **constexprs)
    weft.synchronize()
    return decode(contents(out), out_dtype).reshape(m, n)


def _operands(rng, dtype, m, n, k, integers):
    """a (m x k) and b (k x n) of `dtype`: integers in [-3, 3], or floats
    in [-1, 1)."""
    def draw(shape):
        if integers:
            return rng.integers(-3, 4, shape).astype(np.float64)
        return rng.uniform(-1, 1, shape)
    return rounded(draw((m, k)), dtype), rounded(draw((k, n)), dtype)


@pytest.mark.parametrize("warps", WARPS)
@pytest.mark.parametrize("index", range(len(SHAPES)), ids=lambda i: shape_id(SHAPES[i]))
@pytest.mark.parametrize("dtype", DTYPES, ids=dtype_id)
def test_dot(dtype, index, warps):
    (m, n, k), (bm, bn, bk) = SHAPES[index]
    trans_a, trans_b, acc, round_out = VARIANTS[index % len(VARIANTS)]
    rng = np.random.default_rng(index)
    a, b = _operands(rng, dtype, m, n, k, integers=True)
    c = rng.integers(-8, 9, (m, n)).astype(np.float64)
    out_dtype = dtype if round_out else wl.float32
    inputs = [(a.T if trans_a else a, dtype), (b.T if trans_b else b, dtype), (c, wl.float32)]
    got = _launch(dot_kernel, inputs, out_dtype, m, n, warps, M=m, N=n, K=k, BM=bm, BN=bn, BK=bk, TRANS_A=trans_a, TRANS_B=trans_b,
                  ACC=acc)
    expected = a @ b + (c if acc else 0)
    np.testing.assert_array_equal(got, rounded(expected, out_dtype),
                                  err_msg=f"{dtype!r} dot at {shape_id(SHAPES[index])}")
    CASES[BACKEND] += 1


# (M, N, K) and (BM, BN, BK) of the K loop: several blocks, the last masked.
K_LOOPS = [((5, 7, 40), (16, 16, 16))]
if BACKEND != "host":
    K_LOOPS += [((128, 128, 200), (128, 128, 64)), ((61, 100, 96), (64, 128, 32))]


@pytest.mark.parametrize("warps", WARPS)
@pytest.mark.parametrize("index", range(len(K_LOOPS)), ids=lambda i: shape_id(K_LOOPS[i]))
@pytest.mark.parametrize("dtype", DTYPES, ids=dtype_id)
def test_k_loop(dtype, index, warps):
    (m, n, k), (bm, bn, bk) = K_LOOPS[index]
    rng = np.random.default_rng(100 + index)
    a, b = _operands(rng, dtype, m, n, k, integers=True)
    got = _launch(k_loop_kernel, [(a, dtype), (b, dtype)], dtype, m, n, warps, M=m, N=n, K=k,
                  BM=bm, BN=bn, BK=bk)
    np.testing.assert_array_equal(got, rounded(a @ b, dtype),
                                  err_msg=f"{dtype!r} K loop at {shape_id(K_LOOPS[index])}")
    CASES[BACKEND] += 1


@pytest.mark.parametrize("dtype", DTYPES, ids=dtype_id)
def test_accumulates_in_float32(dtype):
    """Random operands: each float32 addition (and float32 product) may
    round once, by at most 2^-23 of its magnitude (toward zero, as tensor
    cores may), not more: float16 or tf32 accumulation would be thousands
    of times further off."""
    index = len(K_LOOPS) - 1
    (m, n, k), (bm, bn, bk) = K_LOOPS[index]
    rng = np.random.default_rng(7)
    a, b = _operands(rng, dtype, m, n, k, integers=False)
    got = _launch(k_loop_kernel, [(a, dtype), (b, dtype)], wl.float32, m, n, WARPS[-1], M=m, N=n, K=k,
                  BM=bm, BN=bn, BK=bk)
    bound = (k + 1) * 2.0 ** -23 * (np.abs(a) @ np.abs(b))
    error = np.abs(got - a @ b)
    assert np.all(error <= bound), f"{dtype!r}: error {error.max()} over its bound"
    CASES[BACKEND] += 1
