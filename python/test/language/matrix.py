"""The language's differential test matrix, in the spirit of Triton's
test_core.py: each op of weft.language, for the dtypes it takes, at 1-D and
2-D shapes (odd extents run in the next power-of-two tile under a mask,
sizes of 1, and larger tiles), run on the backend under test (host by
default, WEFT_TEST_BACKEND=cuda on a GPU machine) and compared with numpy;
test_targets.py compiles the same kernels for cuda:90 (through ptxas) and
hip:gfx942.

To keep the number of compilations (and CI's time) down, a kernel runs a
tuple of ops at once: the ops are compile-time arguments (the language's own
builtins, or small @weft.jit functions for operators), unrolled in the
kernel, each writing its own slice of the output. CASES counts what was
checked."""
import collections
import math

import numpy as np

import weft
import weft.language as wl
from weft import _floats
from devices import BACKEND, host, local

CASES = collections.Counter()

INTS = [wl.int8, wl.int16, wl.int32, wl.int64, wl.uint8, wl.uint16, wl.uint32, wl.uint64]
FLOATS = [wl.float16, wl.bfloat16, wl.float32, wl.float64]
FLOAT8 = [wl.float8e4nv, wl.float8e5]
NUMERIC = INTS + FLOATS
# (the data's extents, the tile's): 1-D then 2-D; odd extents are masked. Host
# programs hold whole tiles, so their compile time grows with the tile:
# the largest tiles are test_large_tiles' (one op each).
SHAPES = [((1,), (1,)), ((7,), (8,)), ((128,), (128,)),
          ((1, 1), (1, 1)), ((3, 5), (4, 8)), ((8, 16), (8, 16))]
# Relative tolerance of float results, by dtype: a few units in the last
# place of the format (math libraries differ from numpy by about one);
# float8 only moves and converts, exactly.
RTOL = {"fp8e4nv": 0, "fp8e5": 0, "fp16": 4e-3, "bf16": 3e-2, "fp32": 2e-5, "fp64": 1e-12}


def shape_id(case):
    data, tile = case
    return "x".join(map(str, data)) + ("" if data == tile else "in" + "x".join(map(str, tile)))


def dtype_id(dtype):
    return repr(dtype)[3:]


def storage(dtype):
    """The numpy dtype a buffer of `dtype` holds (raw bits where numpy has
    none)."""
    return _floats.storage(dtype) if _floats.is_raw(dtype) else np.dtype(dtype.numpy)


def encode(values, dtype):
    """float64/int values as the contents of a `dtype` array."""
    if _floats.is_raw(dtype):
        return _floats.to_bits(values, dtype)
    return np.asarray(values).astype(dtype.numpy)


def decode(raw, dtype):
    """An array's contents as float64 (floats) or its own integers."""
    if _floats.is_raw(dtype):
        return _floats.from_bits(raw, dtype).astype(np.float64)
    return raw.astype(np.float64) if dtype.is_float else raw


def rounded(values, dtype):
    """Values rounded to `dtype`, as the kernel sees them after a load."""
    return decode(encode(values, dtype), dtype)


def sample(rng, dtype, shape, low=-4, high=4):
    """Values of `dtype` in [low, high] (integers where the dtype is)."""
    if dtype.is_float:
        return rounded(rng.uniform(low, high, shape), dtype)
    info = np.iinfo(dtype.numpy)
    return rng.integers(max(low, info.min), min(high, info.max) + 1, shape).astype(dtype.numpy)


def argument(raw, dtype):
    """A kernel argument holding `raw` (contents as `storage` has them) as
    `dtype`: a local array, or a weft.Buffer of the dtype where numpy has
    none (a uint16 array would make the parameter a uint16 pointer)."""
    if not _floats.is_raw(dtype):
        return local(raw)
    buf = weft.empty(raw.shape, dtype)
    buf.copy_from(raw, raw=True)
    return buf


def contents(arg):
    """An argument's contents as `argument` took them."""
    return arg.to_numpy(raw=True) if isinstance(arg, weft.Buffer) else host(arg)


def extents(case):
    """The kernel's (M, N, BM, BN) for a case: BM = 0 marks 1-D."""
    data, tile = case
    if len(data) == 1:
        return 1, data[0], 0, tile[0]
    return data[0], data[1], tile[0], tile[1]


def run(kernel, case, inputs, out_dtype, outputs, **constexprs):
    """Launches `kernel` once on (inputs..., out, M, N, BM, BN) with room
    for `outputs` results of the data's shape; returns them as a list
    (raw contents, numpy dtype of out_dtype's storage)."""
    data, _ = case
    m, n, bm, bn = extents(case)
    size = m * n
    out = argument(np.zeros(max(outputs, 1) * size, storage(out_dtype)), out_dtype)
    kernel[(1,)](*[argument(encode(v, d), d) for v, d in inputs], out, m, n, BM=bm, BN=bn,
                 **constexprs)
    weft.synchronize()
    flat = contents(out)
    return [flat[i * size:(i + 1) * size].reshape(data) for i in range(outputs)]


def check(name, dtype, case, got, expected, rtol=None, atol=0.0):
    """got (decoded) against expected (float64 or integers), counted."""
    if dtype.is_float:
        rtol = RTOL[dtype.name] if rtol is None else rtol
        np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol, equal_nan=True,
                                   err_msg=f"{name} of {dtype!r} at {shape_id(case)}")
    else:
        np.testing.assert_array_equal(got, expected,
                                      err_msg=f"{name} of {dtype!r} at {shape_id(case)}")
    CASES[BACKEND] += 1


# --- kernels -------------------------------------------------------------

@weft.jit
def tile_offsets(M, N, BM: wl.constexpr, BN: wl.constexpr):
    if BM == 0:
        offs = wl.arange(0, BN)
        mask = offs < N
    else:
        rows = wl.arange(0, BM)[:, None]
        cols = wl.arange(0, BN)[None, :]
        offs = rows * N + cols
        mask = (rows < M) & (cols < N)
    return offs, mask


@weft.jit
def unary_kernel(x, out, M, N, BM: wl.constexpr, BN: wl.constexpr, FNS: wl.constexpr,
                 OTHER: wl.constexpr):
    offs, mask = tile_offsets(M, N, BM, BN)
    a = wl.load(x + offs, mask=mask, other=OTHER)
    k = 0
    for fn in FNS:
        wl.store(out + k * M * N + offs, fn(a), mask=mask)
        k += 1


@weft.jit
def binary_kernel(x, y, out, M, N, BM: wl.constexpr, BN: wl.constexpr, FNS: wl.constexpr):
    offs, mask = tile_offsets(M, N, BM, BN)
    a = wl.load(x + offs, mask=mask, other=1)
    b = wl.load(y + offs, mask=mask, other=1)
    k = 0
    for fn in FNS:
        wl.store(out + k * M * N + offs, fn(a, b), mask=mask)
        k += 1


@weft.jit
def ternary_kernel(x, y, z, out, M, N, BM: wl.constexpr, BN: wl.constexpr,
                   FNS: wl.constexpr):
    offs, mask = tile_offsets(M, N, BM, BN)
    a = wl.load(x + offs, mask=mask, other=1)
    b = wl.load(y + offs, mask=mask, other=1)
    c = wl.load(z + offs, mask=mask, other=1)
    k = 0
    for fn in FNS:
        wl.store(out + k * M * N + offs, fn(a, b, c), mask=mask)
        k += 1


@weft.jit
def store_tile(ptr, y):
    """Stores y (a scalar or a tile of up to 3 dimensions) row-major at ptr."""
    S = y.shape
    if len(S) == 0:
        wl.store(ptr, y)
    elif len(S) == 1:
        wl.store(ptr + wl.arange(0, S[0]), y)
    elif len(S) == 2:
        wl.store(ptr + wl.arange(0, S[0])[:, None] * S[1] + wl.arange(0, S[1])[None, :], y)
    else:
        offs = (wl.arange(0, S[0])[:, None, None] * S[1] +
                wl.arange(0, S[1])[None, :, None]) * S[2] + wl.arange(0, S[2])[None, None, :]
        wl.store(ptr + offs, y)


@weft.jit
def tiles_kernel(x, out, M, N, BM: wl.constexpr, BN: wl.constexpr, FNS: wl.constexpr):
    """Each fn maps the whole (unmasked) tile to a value of any shape,
    stored one after the other."""
    offs, mask = tile_offsets(M, N, BM, BN)
    a = wl.load(x + offs)
    base = 0
    for fn in FNS:
        y = fn(a)
        store_tile(out + base, y)
        size = 1
        for d in y.shape:
            size *= d
        base += size


def run_tiles(case, dtype, out_dtype, table, values):
    """Runs tiles_kernel on `values` (the data = the tile) with the fns of
    `table`, [(fn, numpy's result)]; returns [(fn, numpy's result, the
    kernel's, decoded in that shape)]."""
    m, n, bm, bn = extents(case)
    refs = [np.asarray(ref) for _, ref in table]
    out = argument(np.zeros(sum(r.size for r in refs) + 8, storage(out_dtype)), out_dtype)
    tiles_kernel[(1,)](argument(encode(values, dtype), dtype), out, m, n, BM=bm, BN=bn,
                       FNS=tuple(fn for fn, _ in table))
    weft.synchronize()
    flat, results, base = contents(out), [], 0
    for (fn, _), ref in zip(table, refs):
        results.append((fn, ref, decode(flat[base:base + ref.size], out_dtype).reshape(ref.shape)))
        base += ref.size
    return results


_c_quotient = np.vectorize(lambda x, y: abs(x) // abs(y) * (1 if (x < 0) == (y < 0) else -1),
                           otypes=[object])


def c_floordiv(a, b):
    """Integer division as the language has it (C's, toward zero), for
    integers of any width without going through floats (Python integers,
    broadcast as numpy does)."""
    return _c_quotient(np.asarray(a).astype(object), np.asarray(b).astype(object))


def wrap(values, dtype):
    """Python integers (object arrays) wrapped to dtype as the hardware does."""
    bits = np.dtype(dtype.numpy).itemsize * 8
    flat = [int(v) & ((1 << bits) - 1) for v in np.asarray(values, dtype=object).ravel()]
    if dtype.kind == "i":
        flat = [v - (1 << bits) if v >= 1 << (bits - 1) else v for v in flat]
    return np.array(flat, dtype=dtype.numpy).reshape(np.shape(values))


def vectorized(fn):
    """A float function of Python's math as a numpy one."""
    return np.vectorize(fn, otypes=[np.float64])


erf = vectorized(math.erf)
