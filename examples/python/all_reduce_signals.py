"""One-shot all-reduce with signals: every rank reads every rank's x and
sums. Two handshakes make it safe to call again without a host barrier:
an entry one (every x is ready) and an exit one (nobody reads my x any
more, so the caller may overwrite it). Flags hold the call's epoch and only
grow, so they are never re-zeroed. weft.collectives.all_reduce is this,
generalised.

    build/bin/weft-run -n 4 -- /usr/bin/python3 examples/python/all_reduce_signals.py
"""
import os
import sys

import numpy as np

# The checkout's package, unless weft is installed.
sys.path.append(os.path.join(os.path.dirname(__file__), "..", "..", "python"))
import weft  # noqa: E402
import weft.language as wl  # noqa: E402


@weft.jit
def handshake(flags, epoch):
    # flags[p] on rank q: the last epoch rank p reached. Tell everyone, then
    # wait for everyone (signal releases; wait acquires what they released).
    for p in range(wl.num_ranks()):
        wl.signal(flags + wl.rank(), epoch, peer=p)
    for p in range(wl.num_ranks()):
        wl.wait(flags + p, epoch, cmp="ge")


@weft.jit
def all_reduce(x, out, flags, n, epoch, BLOCK: wl.constexpr):
    handshake(flags, epoch)                          # entry: every x is written
    offs = wl.program_id(0) * BLOCK + wl.arange(0, BLOCK)
    mask = offs < n
    acc = wl.zeros((BLOCK,), wl.float32)
    for p in range(wl.num_ranks()):                  # same order on every rank
        acc += wl.load(x + offs, mask=mask, other=0.0, peer=p)
    wl.store(out + offs, acc, mask=mask)
    handshake(flags + wl.num_ranks(), epoch)         # exit: x no longer read


weft.init()
rank, ranks = weft.rank(), weft.num_ranks()
n, BLOCK = 100, 128                                 # one program, no grid-stride loop
x = weft.empty((n,), wl.float32)
out = weft.empty((n,), wl.float32)
flags = weft.zeros((2 * ranks,), wl.int64)           # entry row, exit row
weft.barrier()                                       # once: flags are zero everywhere

for epoch in range(1, 4):                            # no host barrier between calls
    x.copy_from(np.arange(n) * (rank + 1) + epoch)
    all_reduce[(1,)](x, out, flags, n, epoch, BLOCK=BLOCK)
    expect = sum(np.arange(n) * (p + 1) + epoch for p in range(ranks))
    assert np.array_equal(out.to_numpy(), expect.astype(np.float32))
print(f"rank {rank}: 3 all-reduces of {n} floats")
weft.barrier()
weft.finalize()
