"""A fused reduce + communication kernel: each rank holds a (ROWS x COLS)
matrix; the kernel computes its row sums (a tile reduction) and writes them
straight into slot `rank` of every rank's `partials` (no intermediate
buffer, no separate collective), then each rank sums the slots: the global
row sums of the matrices of all ranks.

    build/bin/weft-run -n 4 -- /usr/bin/python3 examples/python/fused_reduce_comm.py
"""
import os
import sys

import numpy as np

# The checkout's package, unless weft is installed.
sys.path.append(os.path.join(os.path.dirname(__file__), "..", "..", "python"))
import weft  # noqa: E402
import weft.language as wl  # noqa: E402


@weft.jit
def row_sums_all_reduce(a, partials, out, flags, epoch,
                        ROWS: wl.constexpr, COLS: wl.constexpr):
    me, ranks = wl.rank(), wl.num_ranks()
    rows = wl.arange(0, ROWS)
    tile = wl.load(a + rows[:, None] * COLS + wl.arange(0, COLS)[None, :])
    mine = wl.sum(tile, axis=1)                      # compute: local row sums
    for p in range(ranks):                           # communicate: push them
        wl.store(partials + me * ROWS + rows, mine, peer=p)
        wl.signal(flags + me, epoch, peer=p)         # "slot me holds epoch's sums"
    total = wl.zeros((ROWS,), wl.float32)
    for p in range(ranks):                           # rank order: same result everywhere
        wl.wait(flags + p, epoch, cmp="ge")
        total += wl.load(partials + p * ROWS + rows)
    wl.store(out + rows, total)
    # partials is overwritten by the next call's pushes: make sure every rank
    # has read its slots first (exit handshake on a second row of flags).
    for p in range(ranks):
        wl.signal(flags + ranks + me, epoch, peer=p)
    for p in range(ranks):
        wl.wait(flags + ranks + p, epoch, cmp="ge")


weft.init()
rank, ranks = weft.rank(), weft.num_ranks()
ROWS, COLS = 8, 32
a = weft.empty((ROWS, COLS), wl.float32)
partials = weft.zeros((ranks * ROWS,), wl.float32)
out = weft.zeros((ROWS,), wl.float32)
flags = weft.zeros((2 * ranks,), wl.int64)
weft.barrier()                                       # flags zero everywhere first

mats = lambda e: [np.random.default_rng(10 * e + p).integers(-9, 9, (ROWS, COLS))
                  for p in range(ranks)]
for epoch in (1, 2, 3):
    a.copy_from(mats(epoch)[rank])
    row_sums_all_reduce[(1,)](a, partials, out, flags, epoch, ROWS=ROWS, COLS=COLS)
    assert np.array_equal(out.to_numpy(), sum(m.sum(1) for m in mats(epoch)))
print(f"rank {rank}: global row sums {out.to_numpy()[:4]} ...")
weft.barrier()
weft.finalize()
