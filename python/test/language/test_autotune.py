"""weft.autotune and weft.heuristics as in Triton: every config is tried
once per key, the choice is kept on disk, arguments the kernel writes are
restored, heuristics fill constexprs from the arguments."""
import json
import os

import numpy as np
import pytest

import weft
import weft.language as wl
from devices import host, local
from matrix import CASES, BACKEND

CONFIGS = [weft.Config({"BLOCK": 16}, num_warps=1), weft.Config({"BLOCK": 64}, num_warps=4)]


@weft.autotune(configs=CONFIGS, key=["n"], restore_value=["acc"])
@weft.jit
def accumulate(x, acc, n, BLOCK: wl.constexpr):
    offs = wl.program_id(0) * BLOCK + wl.arange(0, BLOCK)
    mask = offs < n
    wl.store(acc + offs, wl.load(acc + offs, mask=mask) + wl.load(x + offs, mask=mask),
             mask=mask)


def _run(n):
    x = np.arange(n, dtype=np.float32)
    acc = local(np.ones(n, np.float32))
    accumulate[lambda meta: ((n + meta["BLOCK"] - 1) // meta["BLOCK"],)](local(x), acc, n)
    weft.synchronize()
    return x, host(acc)


def test_autotune_chooses_and_remembers():
    if os.path.exists(accumulate.path):  # an earlier run's choices
        os.remove(accumulate.path)
    accumulate.best.clear()
    x, got = _run(100)
    # tuning ran the kernel many times; restore_value kept acc as it was
    np.testing.assert_array_equal(got, x + 1)
    assert len(accumulate.best) == 1
    chosen = next(iter(accumulate.best.values()))
    assert chosen in CONFIGS
    # the choice is on disk, keyed by n
    table = json.load(open(accumulate.path))
    assert table == {json.dumps([100]): CONFIGS.index(chosen)}
    # a new key tunes again; the same key does not
    _run(100)
    assert len(accumulate.best) == 1
    x, got = _run(37)
    np.testing.assert_array_equal(got, x + 1)
    assert len(accumulate.best) == 2 and len(json.load(open(accumulate.path))) == 2
    CASES[BACKEND] += 1


def test_autotune_reads_the_disk_cache():
    _run(100)
    accumulate.best.clear()
    table = json.load(open(accumulate.path))
    table[json.dumps([100])] = 0  # as if another process had chosen config 0
    with open(accumulate.path, "w") as f:
        json.dump(table, f)
    _run(100)
    assert accumulate.best[json.dumps([100])] is CONFIGS[0]
    CASES[BACKEND] += 1


@weft.heuristics({"BLOCK": lambda args: 1 << max(0, (args["n"] - 1).bit_length()),
                  "EVEN": lambda args: args["n"] % 2 == 0})
@weft.jit
def fill(out, n, BLOCK: wl.constexpr, EVEN: wl.constexpr):
    offs = wl.arange(0, BLOCK)
    wl.store(out + offs, 2 if EVEN else 1, mask=offs < n)


@pytest.mark.parametrize("n", [5, 8])
def test_heuristics(n):
    out = local(np.zeros(8, np.int32))
    fill[(1,)](out, n)
    weft.synchronize()
    assert host(out).tolist() == [2 if n % 2 == 0 else 1] * n + [0] * (8 - n)
    CASES[BACKEND] += 1


def test_autotune_rejects_unknown_names():
    with pytest.raises(ValueError, match="not parameters"):
        weft.autotune(configs=CONFIGS, key=["m"])(accumulate.fn)
    with pytest.raises(ValueError, match="at least one Config"):
        weft.autotune(configs=[], key=["n"])(accumulate.fn)
