"""Conversions between every pair of dtypes (x.to, wl.cast), bit casts,
zeros_like/full_like, against numpy (bfloat16 and float8 by weft._floats,
which rounds as the compiler does: to nearest even, float8 saturating)."""
import numpy as np
import pytest

import weft
import weft.language as wl
from matrix import (FLOAT8, FLOATS, INTS, NUMERIC, argument, check, contents, decode, dtype_id,
                    encode, extents, rounded, storage)
from devices import host, local

TARGETS = NUMERIC + FLOAT8 + [wl.int1]
CASE = ((3, 5), (4, 8))


@weft.jit
def cast_kernel(x, out, M, N, BM: wl.constexpr, BN: wl.constexpr, DTYPES: wl.constexpr):
    """Each conversion's bits, zero-extended to uint64, one block each."""
    rows = wl.arange(0, BM)[:, None]
    cols = wl.arange(0, BN)[None, :]
    offs = rows * N + cols
    mask = (rows < M) & (cols < N)
    a = wl.load(x + offs, mask=mask)
    k = 0
    for d in DTYPES:
        y = a.to(d)
        if d == wl.int1:
            bits = y.to(wl.uint64)
        else:
            bits = y.to(UINT_OF_WIDTH[d.bits], bitcast=True).to(wl.uint64)
        wl.store(out + k * M * N + offs, bits, mask=mask)
        k += 1


UINT_OF_WIDTH = {8: wl.uint8, 16: wl.uint16, 32: wl.uint32, 64: wl.uint64}


def _expected_bits(values, dtype):
    """numpy's conversion of float64 `values` to dtype, as unsigned bits."""
    if dtype is wl.int1:
        return (values != 0).astype(np.uint64)
    if dtype.is_float:
        raw = encode(values, dtype)
        return raw.view(f"u{raw.itemsize}").astype(np.uint64)
    return np.trunc(values).astype(np.int64).astype(dtype.numpy).view(
        f"u{np.dtype(dtype.numpy).itemsize}").astype(np.uint64)


@pytest.mark.parametrize("src", NUMERIC + FLOAT8, ids=dtype_id)
def test_conversions(src):
    """Values in [0, 100) (every dtype holds them; float to integer
    truncates) from `src` to every dtype."""
    rng = np.random.default_rng(13)
    values = rounded(rng.uniform(0, 100, CASE[0]), src) if src.is_float else \
        rng.integers(0, 100, CASE[0]).astype(src.numpy)
    if src.is_float:
        values.ravel()[0] = 0.0
    m, n, bm, bn = extents(CASE)
    out = local(np.zeros(len(TARGETS) * m * n, np.uint64))
    cast_kernel[(1,)](argument(encode(values, src), src), out, m, n, BM=bm, BN=bn,
                      DTYPES=tuple(TARGETS))
    weft.synchronize()
    got = host(out).reshape(len(TARGETS), m, n)
    for dst, g in zip(TARGETS, got):
        check(f"{src!r}.to({dst!r})", wl.uint64, CASE, g,
              _expected_bits(values.astype(np.float64), dst))


@weft.jit
def saturate_kernel(x, out, N, BN: wl.constexpr, DST: wl.constexpr):
    offs = wl.arange(0, BN)
    mask = offs < N
    wl.store(out + offs, wl.load(x + offs, mask=mask).to(DST), mask=mask)


@pytest.mark.parametrize("dst", FLOAT8 + [wl.bfloat16], ids=dtype_id)
def test_narrow_float_rounding(dst):
    """float32 to bfloat16/float8: ties to even, saturation, NaN, -0."""
    special = [0.0, -0.0, 1e6, -1e6, np.inf, -np.inf, np.nan, 1e-9, 3.0, 0.1]
    x = np.concatenate([np.array(special, np.float32),
                        np.random.default_rng(14).normal(0, 50, 53).astype(np.float32)])
    out = argument(np.zeros(x.size, storage(dst)), dst)
    saturate_kernel[(1,)](local(x), out, x.size, BN=64, DST=dst)
    weft.synchronize()
    got, expected = contents(out), encode(x, dst)
    # NaN stays NaN; its payload is the target's (bf16: 0x7FC0 on x86,
    # 0x7FFF from cvt.rn.bf16.f32)
    nan = np.isnan(x)
    assert np.isnan(decode(got[nan], dst)).all()
    check(f"float32.to({dst!r})", wl.uint64, ((x.size,), (64,)), got[~nan], expected[~nan])


@weft.jit
def like_kernel(x, out, BN: wl.constexpr):
    offs = wl.arange(0, BN)
    a = wl.load(x + offs)
    wl.store(out + offs, wl.zeros_like(a) + 1)
    wl.store(out + BN + offs, wl.full_like(a, 7))
    wl.store(out + 2 * BN + offs, wl.full_like(a, 2.5, wl.float32).to(a.dtype))


@pytest.mark.parametrize("dtype", INTS + FLOATS, ids=dtype_id)
def test_like(dtype):
    x = encode(np.arange(16), dtype)
    out = argument(np.zeros(48, storage(dtype)), dtype)
    like_kernel[(1,)](argument(x, dtype), out, BN=16)
    weft.synchronize()
    got = contents(out)
    expected = encode(np.concatenate([np.ones(16), np.full(16, 7.0),
                                      np.full(16, 2.5 if dtype.is_float else 2)]), dtype)
    check("zeros_like/full_like", wl.uint64, ((48,), (48,)), got, expected)


@weft.jit
def constants_kernel(x, out, N, BN: wl.constexpr):
    """Constants of x's dtype: `other`, full, full_like, zeros_like and a
    Python float in where (float8 takes them without arithmetic)."""
    offs = wl.arange(0, BN)
    v = wl.load(x + offs, mask=offs < N, other=1.5)
    wl.store(out + offs, v)
    wl.store(out + BN + offs, wl.full((BN,), -2.0, v.dtype))
    wl.store(out + 2 * BN + offs, wl.full_like(v, 448.0))
    wl.store(out + 3 * BN + offs, wl.zeros_like(v))
    wl.store(out + 4 * BN + offs, wl.where(offs < 2, v, 0.5))


@pytest.mark.parametrize("case", [((5,), (8,)), ((1,), (1,))], ids=lambda c: f"{c[0][0]}in{c[1][0]}")
@pytest.mark.parametrize("dtype", FLOATS + FLOAT8, ids=dtype_id)
def test_constants(dtype, case):
    (n,), (block,) = case
    x = rounded(np.arange(n) - 2.0, dtype)
    out = argument(np.zeros(5 * block, storage(dtype)), dtype)
    constants_kernel[(1,)](argument(encode(x, dtype), dtype), out, n, BN=block)
    weft.synchronize()
    loaded = np.where(np.arange(block) < n, np.resize(x, block), 1.5)
    expected = np.concatenate([loaded, np.full(block, -2.0), np.full(block, 448.0),
                               np.zeros(block), np.where(np.arange(block) < 2, loaded, 0.5)])
    check("constants", wl.uint64, case, contents(out), encode(expected, dtype))
