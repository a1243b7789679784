"""The collectives' launch grid (weft.collectives._programs) for each
backend: narrow blocks while PROGRAMS programs cover the work with one
each, wide blocks on PROGRAMS programs beyond (bench/README.md,
"Collectives: the grid"). No runtime: the backend is patched."""
import pytest

from weft import collectives as C


@pytest.mark.parametrize("work,programs,block", [
    (1, 1, 1024),                  # never zero programs
    (4096, 4, 1024),               # 4 KiB of f32: one narrow block per program
    (128 * 1024, 128, 1024),       # the last size 128 narrow blocks cover
    (128 * 1024 + 1, 17, 8192),    # one element more: wide blocks
    (1 << 20, 128, 8192),          # from 1 Mi elements every program has one
    (1 << 28, 128, 8192),          # 1 GiB of f32: 128 programs, many blocks each
])
def test_gpu_grid(monkeypatch, work, programs, block):
    monkeypatch.setattr(C.rt, "backend", lambda: "cuda")
    grid = C._programs(work, None)
    assert grid == (programs,)
    assert grid.block["cuda"] == block


def test_host_grid_and_explicit_programs(monkeypatch):
    monkeypatch.setattr(C.rt, "backend", lambda: "host")
    assert C._programs(10 ** 6, None) == (4,)
    assert C._programs(100, None) == (2,)
    assert C._programs(10 ** 6, 7) == (7,)  # num_programs wins, blocks still by work
    with pytest.raises(ValueError, match=f"num_programs must be in 1..{C.K.MAX_PROGRAMS}"):
        C._programs(100, C.K.MAX_PROGRAMS + 1)
