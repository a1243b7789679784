"""Shape ops by dtype and shape against numpy: reshape, view, ravel,
trans/permute/.T, broadcast_to, expand_dims, join, split, interleave,
flip, indexing with a compile-time int."""
import numpy as np
import pytest

import weft
import weft.language as wl
from matrix import FLOAT8, NUMERIC, check, dtype_id, rounded, run_tiles, sample, shape_id

SHAPES = [((1,), (1,)), ((8,), (8,)), ((128,), (128,)), ((1, 1), (1, 1)), ((4, 8), (4, 8)),
          ((8, 16), (8, 16)), ((2, 64), (2, 64))]


@weft.jit
def reshape_flat(x):
    return wl.reshape(x, wl.ravel(x).shape[0])


@weft.jit
def reshape_pairs(x):
    return x.reshape(2, x.ravel().shape[0] // 2) if x.ravel().shape[0] > 1 else x


@weft.jit
def view_back(x):
    return wl.view(wl.ravel(x), x.shape)


@weft.jit
def transpose(x):
    return x.T


@weft.jit
def trans_explicit(x):
    return wl.trans(x)


@weft.jit
def permute_3d(x):
    return wl.permute(wl.expand_dims(x, 0), 2, 0, 1) if len(x.shape) == 2 else \
        wl.permute(wl.expand_dims(x, 0), (1, 0))


@weft.jit
def broadcast_rows(x):
    return wl.broadcast_to(wl.expand_dims(x, 0), (4,) + x.shape)


@weft.jit
def joined(x):
    return wl.join(x, x + 1)


@weft.jit
def split_back(x):
    a, b = wl.split(wl.join(x + 1, x))
    return a - b


@weft.jit
def interleaved(x):
    return wl.interleave(x, x * 2)


@weft.jit
def flipped(x):
    return wl.flip(x)


@weft.jit
def flipped_0(x):
    return x.flip(0)


@weft.jit
def indexed_last(x):
    return x[x.shape[0] - 1]


@weft.jit
def indexed_column(x):
    return x[:, 0] if len(x.shape) == 2 else x[0]


def _references(x):
    last = x.ndim - 1
    return [(reshape_flat, x.ravel()),
            (reshape_pairs, x.reshape(2, -1) if x.size > 1 else x),
            (view_back, x), (transpose, x.T), (trans_explicit, x.T),
            (permute_3d, np.transpose(x[None], (2, 0, 1)) if x.ndim == 2 else x[None].T),
            (broadcast_rows, np.broadcast_to(x[None], (4,) + x.shape)),
            (joined, np.stack([x, x + 1], -1)), (split_back, np.ones_like(x)),
            (interleaved, np.stack([x, x * 2], -1).reshape(x.shape[:-1] + (-1,))),
            (flipped, np.flip(x, last)), (flipped_0, np.flip(x, 0)),
            (indexed_last, x[x.shape[0] - 1]),
            (indexed_column, x[:, 0] if x.ndim == 2 else x[0])]


@pytest.mark.parametrize("case", SHAPES, ids=shape_id)
@pytest.mark.parametrize("dtype", NUMERIC, ids=dtype_id)
def test_shape_ops(dtype, case):
    rng = np.random.default_rng(11)
    x = sample(rng, dtype, case[0], 0, 50)
    if dtype.is_float:  # integers: x + 1 and x * 2 stay exact in every format
        x = np.floor(x)
    for fn, ref, got in run_tiles(case, dtype, dtype, _references(x), x):
        check(fn.__name__, dtype, case, got,
              rounded(ref, dtype) if dtype.is_float else ref.astype(dtype.numpy))


@pytest.mark.parametrize("dtype", FLOAT8, ids=dtype_id)
def test_float8_moves(dtype):
    """float8 tiles move without arithmetic: shapes work on their bytes."""
    case = ((4, 8), (4, 8))
    x = rounded(np.random.default_rng(12).uniform(-8, 8, case[0]), dtype)
    table = [(transpose, x.T), (flipped, np.flip(x, 1)), (joined_fp8, np.stack([x, x], -1))]
    for fn, ref, got in run_tiles(case, dtype, dtype, table, x):
        check(fn.__name__, dtype, case, got, ref)


@weft.jit
def joined_fp8(x):
    return wl.join(x, x)
