"""Tile all-gather: every rank pushes its (ROWS x COLS) tile into row block
`rank` of every rank's `out`, then bumps a counter on that rank; each rank
waits until all ranks' programs have delivered.

    build/bin/weft-run -n 4 -- /usr/bin/python3 examples/python/all_gather_tile.py
"""
import os
import sys

import numpy as np

# The checkout's package, unless weft is installed.
sys.path.append(os.path.join(os.path.dirname(__file__), "..", "..", "python"))
import weft  # noqa: E402
import weft.language as wl  # noqa: E402


@weft.jit
def all_gather_tile(src, out, flag, epoch, ROWS: wl.constexpr, COLS: wl.constexpr):
    me, ranks = wl.rank(), wl.num_ranks()
    # This program's ROWS-row slice of the local tile, as a 2-D tile.
    rows = wl.program_id(0) * ROWS + wl.arange(0, ROWS)
    offs = rows[:, None] * COLS + wl.arange(0, COLS)[None, :]
    tile = wl.load(src + offs)
    block = wl.num_programs(0) * ROWS * COLS        # elements of one rank's tile
    for p in range(ranks):
        wl.store(out + me * block + offs, tile, peer=p)   # put into rank p's out
        wl.signal(flag, 1, peer=p, op="add")              # releases that put
    # Counters only grow: after call `epoch` every rank's programs have added
    # 1 to my flag `epoch` times.
    wl.wait(flag, epoch * ranks * wl.num_programs(0), cmp="ge")


weft.init()
rank, ranks = weft.rank(), weft.num_ranks()
ROWS, COLS, PROGRAMS = 4, 16, 2
src = weft.empty((PROGRAMS * ROWS, COLS), wl.float32)
out = weft.zeros((ranks * PROGRAMS * ROWS, COLS), wl.float32)
flag = weft.zeros((1,), wl.int64)
weft.barrier()                       # flags are zero everywhere before any signal

for epoch in (1, 2):
    src.copy_from(rank * 100 + epoch)
    all_gather_tile[(PROGRAMS,)](src, out, flag, epoch, ROWS=ROWS, COLS=COLS)
    expect = np.repeat(np.arange(ranks) * 100 + epoch, PROGRAMS * ROWS)[:, None]
    assert np.array_equal(out.to_numpy(), np.broadcast_to(expect, out.shape))
    weft.barrier()                   # nobody overwrites out before its owner checked it
print(f"rank {rank}: gathered {ranks} tiles")
weft.finalize()
