"""The largest tiles: a masked element-wise op and a reduction over a tile
of LARGE elements on the backend under test, and the largest tile the
language allows (MAX_TILE_ELEMENTS) compiled for cuda:90 and gfx942.
A host program holds its whole tile, so its compile time grows with the
tile (docs/python.md, "Not done yet"): the host runs LARGE."""
import numpy as np
import pytest

import weft
import weft.language as wl
from weft._semantics import MAX_TILE_ELEMENTS
from devices import compiler_available, host, local
from matrix import CASES, check

LARGE = 1024


@weft.jit
def scale_and_sum(x, out, total, n, BLOCK: wl.constexpr):
    offs = wl.arange(0, BLOCK)
    mask = offs < n
    v = wl.load(x + offs, mask=mask, other=0.0)
    wl.store(out + offs, v * 2.0, mask=mask)
    wl.store(total, wl.sum(v))


def test_large_tile_runs():
    n = LARGE - 3
    x = np.random.default_rng(15).uniform(-1, 1, LARGE).astype(np.float32)
    out, total = local(np.zeros(LARGE, np.float32)), local(np.zeros(1, np.float32))
    scale_and_sum[(1,)](local(x), out, total, n, BLOCK=LARGE)
    weft.synchronize()
    check("large tile", wl.float32, ((n,), (LARGE,)), host(out)[:n], 2 * x[:n])
    check("large sum", wl.float32, ((n,), (LARGE,)), host(total), [x[:n].sum()],
          rtol=1e-4, atol=1e-4)


@pytest.mark.skipif(not compiler_available(), reason="needs the compiler")
@pytest.mark.parametrize("target", ["cuda:90", "hip:gfx942"])
def test_largest_tile_compiles(target):
    weft.compile(scale_and_sum, {"x": "*fp32", "out": "*fp32", "total": "*fp32", "n": "i32"},
                 {"BLOCK": MAX_TILE_ELEMENTS}, target=target)
    CASES[target] += 1
