"""Reductions and scans, by dtype, shape and axis, against numpy: the
builtin ones, argmax/argmin (first index of ties, NaN), keep_dims, and
reduce/associative_scan with @weft.jit combine functions."""
import numpy as np
import pytest

import weft
import weft.language as wl
from devices import BACKEND, host, local
from matrix import (FLOATS, INTS, NUMERIC, check, dtype_id, extents, rounded, run_tiles, sample,
                    shape_id, tile_offsets, wrap)

# Exact tiles (a reduction sees every element); odd extents: test_masked.
SHAPES = [((1,), (1,)), ((8,), (8,)), ((128,), (128,)), ((1, 1), (1, 1)), ((4, 8), (4, 8)),
          ((8, 16), (8, 16))]


@weft.jit
def combine_add(a, b):
    return a + b


@weft.jit
def combine_max(a, b):
    return wl.maximum(a, b)


@weft.jit
def sum_all(x):
    return wl.sum(x)


@weft.jit
def sum_0(x):
    return wl.sum(x, axis=0)


@weft.jit
def sum_last_keep(x):
    return x.sum(-1, keep_dims=True)


@weft.jit
def max_0(x):
    return wl.max(x, 0)


@weft.jit
def min_last(x):
    return x.min(axis=len(x.shape) - 1)


@weft.jit
def max_all_keep(x):
    return wl.max(x, keep_dims=True)


@weft.jit
def argmax_0(x):
    return wl.argmax(x, 0)


@weft.jit
def argmin_last(x):
    return wl.argmin(x, len(x.shape) - 1)


@weft.jit
def argmax_all(x):
    return x.argmax(None)


@weft.jit
def reduce_add_0(x):
    return wl.reduce(x, 0, combine_add)


@weft.jit
def reduce_max_all(x):
    return wl.reduce(x, None, combine_max)


@weft.jit
def cumsum_0(x):
    return wl.cumsum(x, 0)


@weft.jit
def cumsum_last_reverse(x):
    return x.cumsum(len(x.shape) - 1, reverse=True)


@weft.jit
def scan_max_0(x):
    return wl.associative_scan(x, 0, combine_max)


@weft.jit
def index_first(x):
    return x[0]


def _numpy_reductions(x, dtype):
    """(kernel fn, numpy result, result dtype) of every reduction."""
    acc = np.int64 if dtype.is_int else np.float64
    narrow_sum = wl.uint32 if dtype.kind == "u" and dtype.bits < 32 else (
        wl.int32 if dtype.is_int and dtype.bits < 32 else dtype)
    last = x.ndim - 1
    out = [(sum_all, x.astype(acc).sum(), narrow_sum),
           (sum_0, x.astype(acc).sum(0), narrow_sum),
           (sum_last_keep, x.astype(acc).sum(last, keepdims=True), narrow_sum),
           (max_0, x.max(0), dtype), (min_last, x.min(last), dtype),
           (max_all_keep, x.max(keepdims=True), dtype),
           (argmax_0, x.argmax(0), wl.int32), (argmin_last, x.argmin(last), wl.int32),
           (argmax_all, np.argmax(x), wl.int32),
           (reduce_add_0, x.astype(acc).sum(0), dtype),
           (reduce_max_all, x.max(), dtype),
           (cumsum_0, np.cumsum(x.astype(acc), 0), narrow_sum),
           (cumsum_last_reverse, np.flip(np.cumsum(np.flip(x.astype(acc), last), last), last),
            narrow_sum),
           (scan_max_0, np.maximum.accumulate(x, 0), dtype),
           (index_first, x[0], dtype)]
    return out


@pytest.mark.parametrize("case", SHAPES, ids=shape_id)
@pytest.mark.parametrize("dtype", NUMERIC, ids=dtype_id)
def test_reductions(dtype, case):
    rng = np.random.default_rng(7)
    x = sample(rng, dtype, case[0], 0 if dtype.kind == "u" else -20, 20)
    table = _numpy_reductions(x, dtype)
    # one kernel per result dtype (the output buffer has one)
    for out_dtype in {d.name: d for _, _, d in table}.values():
        part = [(f, r) for f, r, d in table if d is out_dtype]
        for fn, ref, got in run_tiles(case, dtype, out_dtype, part, x):
            expected = rounded(ref, out_dtype) if out_dtype.is_float else wrap(
                ref.astype(object), out_dtype)
            # sums round differently from numpy's float64 ones: absolute
            # error up to the format's precision times the sum of |x|
            atol = {16: 1.0, 32: 1e-2, 64: 1e-9}[dtype.bits] if dtype.is_float else 0
            check(fn.__name__, dtype, case, got, expected, rtol=2e-2, atol=atol)


@weft.jit
def xor_0(x):
    return wl.xor_sum(x, 0)


@weft.jit
def cumprod_0(x):
    return wl.cumprod(x, 0)


@pytest.mark.parametrize("case", SHAPES, ids=shape_id)
@pytest.mark.parametrize("dtype", INTS, ids=dtype_id)
def test_integer_reductions(dtype, case):
    rng = np.random.default_rng(8)
    x = sample(rng, dtype, case[0], 0 if dtype.kind == "u" else -3, 3)
    acc = wl.uint32 if dtype.kind == "u" and dtype.bits < 32 else (
        wl.int32 if dtype.bits < 32 else dtype)
    ((_, ref, got),) = run_tiles(case, dtype, dtype, [(xor_0, np.bitwise_xor.reduce(x, 0))], x)
    check("xor_sum", dtype, case, got, ref)
    ((_, ref, got),) = run_tiles(case, dtype, acc, [(cumprod_0, np.cumprod(x.astype(object), 0))],
                                 x)
    check("cumprod", dtype, case, got, wrap(ref, acc))


@pytest.mark.parametrize("case", SHAPES, ids=shape_id)
@pytest.mark.parametrize("dtype", FLOATS, ids=dtype_id)
def test_float_scans_and_nan(dtype, case):
    rng = np.random.default_rng(9)
    x = rounded(rng.uniform(0.9, 1.1, case[0]), dtype)
    ((_, ref, got),) = run_tiles(case, dtype, dtype, [(cumprod_0, np.cumprod(x, 0))], x)
    check("cumprod", dtype, case, got, rounded(ref, dtype),
          rtol=5e-2 if dtype.bits == 16 else 1e-5)
    # NaN is the largest and the smallest for argmax/argmin, as in numpy
    x = sample(rng, dtype, case[0])
    x.ravel()[x.size // 2] = np.nan
    table = [(argmax_all, np.argmax(x)), (argmin_last, np.argmin(x, x.ndim - 1))]
    for fn, ref, got in run_tiles(case, dtype, wl.int32, table, x):
        check(f"{fn.__name__}(NaN)", dtype, case, got, ref)


@weft.jit
def masked_kernel(x, out, M, N, BM: wl.constexpr, BN: wl.constexpr):
    offs, mask = tile_offsets(M, N, BM, BN)
    a = wl.load(x + offs, mask=mask, other=0.0)
    b = wl.load(x + offs, mask=mask, other=float("-inf"))
    wl.store(out, wl.sum(a))
    wl.store(out + 1, wl.max(b))
    wl.store(out + 2, wl.argmax(b, None).to(wl.float32))


@pytest.mark.parametrize("case", [((7,), (8,)), ((3, 5), (4, 8)), ((1, 3), (1, 4))],
                         ids=shape_id)
def test_masked(case):
    """Odd extents reduce with neutral `other`s in the masked lanes."""
    rng = np.random.default_rng(10)
    x = rng.uniform(-5, 5, case[0]).astype(np.float32)
    out = np.zeros(4, np.float32)
    m, n, bm, bn = extents(case)
    o = local(out)
    masked_kernel[(1,)](local(x), o, m, n, BM=bm, BN=bn)
    weft.synchronize()
    got = host(o)
    # argmax over the tile's flattened positions: map the data's to them
    r, c = np.unravel_index(np.argmax(x), x.shape) if x.ndim == 2 else (0, np.argmax(x))
    check("masked sum", wl.float32, case, got[0], x.sum(), rtol=1e-5)
    check("masked max", wl.float32, case, got[1], x.max())
    check("masked argmax", wl.float32, case, got[2], r * case[1][-1] + c)


@weft.jit
def compose(a1, b1, a2, b2):
    """x -> a1 x + b1, then x -> a2 x + b2: associative, not commutative."""
    return a1 * a2, a2 * b1 + b2


@weft.jit
def affine_scan_kernel(a_ptr, b_ptr, out, M, N, BM: wl.constexpr, BN: wl.constexpr,
                       AXIS: wl.constexpr, REVERSE: wl.constexpr):
    offs, mask = tile_offsets(M, N, BM, BN)
    a = wl.load(a_ptr + offs, mask=mask, other=1)
    b = wl.load(b_ptr + offs, mask=mask, other=0)
    pa, pb = wl.associative_scan((a, b), AXIS, compose, reverse=REVERSE)
    wl.store(out + offs, pa, mask=mask)
    wl.store(out + M * N + offs, pb, mask=mask)


# Scans whose lines spread over lanes, warps and repetitions of the layout
# (4096 elements: eight per thread and program-wide block), lines shorter
# than the program (replicas), and lines within threads. A host program is
# one thread scanning whole lines, and compiles tiles of thousands of
# elements slowly: it takes the small ones.
SCAN_SHAPES = [((1,), (1,)), ((37,), (64,)), ((1000,), (1024,)), ((4096,), (4096,)),
               ((3, 5), (4, 8)), ((64, 32), (64, 32)), ((100, 6), (128, 8)), ((2, 512), (2, 512))]
if BACKEND == "host":
    SCAN_SHAPES = [case for case in SCAN_SHAPES if np.prod(case[1]) <= 256]


@pytest.mark.parametrize("warps", [4] if BACKEND == "host" else [1, 4, 8])
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("case", SCAN_SHAPES, ids=shape_id)
def test_scan_order(case, reverse, warps):
    """A scan combines in order along every line, whatever holds its parts:
    the prefix composition of affine maps (int32, wrapping) against
    Python's, forward and from the end, both axes."""
    data, tile = case
    rng = np.random.default_rng(len(data) * 100 + data[-1])
    a = rng.integers(-3, 4, data).astype(np.int32)
    b = rng.integers(-50, 51, data).astype(np.int32)
    m, n, bm, bn = extents(case)
    for axis in range(len(data)):
        # numpy on the padded tile (masked lanes are the identity map)
        pa, pb = np.ones(tile, object), np.zeros(tile, object)
        pa[tuple(slice(0, d) for d in data)] = a.astype(object)
        pb[tuple(slice(0, d) for d in data)] = b.astype(object)
        if reverse:
            pa, pb = np.flip(pa, axis), np.flip(pb, axis)
        ea, eb = pa.copy(), pb.copy()
        for k in range(1, tile[axis]):
            at, before = [slice(None)] * len(tile), [slice(None)] * len(tile)
            at[axis], before[axis] = k, k - 1
            at, before = tuple(at), tuple(before)
            ea[at], eb[at] = ea[before] * pa[at], pa[at] * eb[before] + pb[at]
        if reverse:
            ea, eb = np.flip(ea, axis), np.flip(eb, axis)
        inside = tuple(slice(0, d) for d in data)
        out = local(np.zeros(2 * m * n, np.int32))
        affine_scan_kernel[(1,)](local(a), local(b), out, m, n, BM=bm, BN=bn, AXIS=axis,
                                 REVERSE=reverse, num_warps=warps)
        weft.synchronize()
        got = host(out)
        name = f"affine scan along {axis}{' reversed' if reverse else ''}, {warps} warps"
        check(name, wl.int32, case, got[:m * n].reshape(data), wrap(ea[inside], wl.int32))
        check(name, wl.int32, case, got[m * n:].reshape(data), wrap(eb[inside], wl.int32))
