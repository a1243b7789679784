"""The documented errors of bad inputs, at 1-4 ranks: a
store to a bad peer under the debug checks, an asymmetric allocation (and
local buffers, which may differ), a cache miss under WEFT_CACHE_ONLY=1.
Every rank runs every test, so the collective calls in them (allocations,
barriers) match up."""
import inspect
import os
import shutil
import tempfile

import numpy as np
import pytest

import weft
import weft.language as wl
from devices import BACKEND, compiler_available
from weft import _cache, _jit


def line_of(fn, needle):
    lines, start = inspect.getsourcelines(fn.fn)
    hits = [start + i for i, text in enumerate(lines) if needle in text]
    assert len(hits) == 1, (needle, hits)
    return hits[0]


@weft.jit
def store_to_peer(src, dst, peer, BLOCK: wl.constexpr):
    offs = wl.arange(0, BLOCK)
    vals = wl.load(src + offs)
    wl.store(dst + offs, vals, peer=peer)  # the checked store


def test_bad_peer_store_under_debug_names_kernel_and_line():
    rank, ranks = weft.rank(), weft.num_ranks()
    block = 16
    src = weft.empty((block,), wl.int32)
    dst = weft.zeros((block,), wl.int32)
    src.copy_from(np.arange(block) + 100 * rank)
    weft.barrier()
    bad = ranks  # the first id that is no rank
    with pytest.raises(weft.WeftError) as info:
        store_to_peer[(1,)](src, dst, bad, BLOCK=block, debug=True)
        weft.synchronize()  # GPU launches are asynchronous: the report comes here
    err = info.value
    line = line_of(store_to_peer, "wl.store(dst + offs, vals, peer=peer)")
    text = str(err)
    assert err.status == "WEFT_ERROR_INVALID_ARGUMENT", text
    assert f"debug check failed: bad peer {bad} (of {ranks} ranks)" in text, text
    assert "in kernel store_to_peer at " in text, text
    assert f"{os.path.basename(__file__)}:{line}:" in text, text
    assert f"rank {rank} program (0,0,0)" in text, text
    weft.barrier()
    # The record was cleared: the next launch, to a valid peer, works.
    nxt, prev = (rank + 1) % ranks, (rank - 1) % ranks
    store_to_peer[(1,)](src, dst, nxt, BLOCK=block, debug=True)
    weft.barrier()
    np.testing.assert_array_equal(dst.to_numpy(), np.arange(block) + 100 * prev)
    weft.barrier()
    # And without the checks (the default unless WEFT_DEBUG=1) as well.
    dst.copy_from(0)
    weft.barrier()
    store_to_peer[(1,)](src, dst, nxt, BLOCK=block, debug=False)
    weft.barrier()
    np.testing.assert_array_equal(dst.to_numpy(), np.arange(block) + 100 * prev)
    weft.barrier()


@pytest.mark.parametrize("alloc", ["empty", "zeros"])
def test_asymmetric_allocation(alloc):
    rank, ranks = weft.rank(), weft.num_ranks()
    if ranks == 1:
        pytest.skip("an asymmetric allocation needs more than one rank")
    n = 256 * (rank + 1)  # a different size on every rank
    with pytest.raises(weft.WeftError) as info:
        getattr(weft, alloc)((n,), wl.float32)
    text = str(info.value)
    assert info.value.status == "WEFT_ERROR_ASYMMETRIC", text
    assert "ASYMMETRIC" in text, text
    assert "asymmetric call" in text, text
    for r in range(ranks):  # every rank's size, in bytes
        assert f"rank {r} asked {4 * 256 * (r + 1)} bytes" in text, text
    # Nothing was allocated and the ranks are still in step.
    buf = getattr(weft, alloc)((64,), wl.float32)
    buf.copy_from(rank)
    weft.barrier()
    buf.free()


@weft.jit
def fill(dst, value, BLOCK: wl.constexpr):
    wl.store(dst + wl.arange(0, BLOCK), value)


def test_local_buffers_differ_per_rank():
    """Local buffers are this rank's alone: their number and sizes may
    differ between ranks (no WEFT_ERROR_ASYMMETRIC, no host barrier), and
    kernels and copies reach them."""
    rank = weft.rank()
    bufs = [weft.empty((64 * (rank + 1),), wl.float32, local=True) for _ in range(rank + 1)]
    bufs[-1].copy_from(np.arange(bufs[-1].size))
    np.testing.assert_array_equal(bufs[-1].to_numpy(), np.arange(bufs[-1].size))
    filled = weft.zeros((64,), wl.float32, local=True)
    np.testing.assert_array_equal(filled.to_numpy(), 0)
    fill[(1,)](filled, 3.0 + rank, BLOCK=64)
    np.testing.assert_array_equal(filled.to_numpy(), np.full(64, 3.0 + rank))
    for buf in bufs + [filled]:
        buf.free()


@weft.jit
def never_cached(dst, BLOCK: wl.constexpr):
    wl.store(dst + wl.arange(0, BLOCK), 7)


def test_cache_only_miss(monkeypatch):
    root = tempfile.mkdtemp(prefix="weft-empty-cache-")
    try:
        # Where no compiler can say its version (a GPU machine), the real
        # cache's version directory names it; the empty cache has none.
        version = _cache._version_dir(_cache.cache_dir())
        monkeypatch.setenv("WEFT_COMPILER_VERSION", version)
        monkeypatch.setenv("WEFT_CACHE_DIR", root)
        monkeypatch.setenv("WEFT_CACHE_ONLY", "1")
        monkeypatch.delenv("WEFT_CACHE_MISSES", raising=False)
        monkeypatch.setattr(_jit, "WARM_TARGET", None)  # the miss is the run's own
        dst = weft.zeros((32,), wl.int32)
        with pytest.raises(weft.CompilationError) as info:
            never_cached[(1,)](dst, BLOCK=32)
        text = str(info.value)
        assert f"kernel never_cached for {_jit._target_of_backend(BACKEND)} " in text, text
        assert "is not in the kernel cache" in text, text
        assert root in text, text
        assert "WEFT_CACHE_ONLY=1 forbids compiling" in text, text
        assert not any(files for _, _, files in os.walk(root)), "a miss wrote the cache"
        np.testing.assert_array_equal(dst.to_numpy(), 0)  # nothing ran
        if compiler_available():  # allowed to compile again, the same launch works
            monkeypatch.setenv("WEFT_CACHE_ONLY", "0")
            never_cached[(1,)](dst, BLOCK=32)
            np.testing.assert_array_equal(dst.to_numpy(), 7)
        weft.barrier()
        dst.free()
    finally:
        shutil.rmtree(root, ignore_errors=True)
