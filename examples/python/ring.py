"""Ring put: every rank writes a tile into the next rank's buffer, then
raises that rank's flag; every rank waits for its own flag and checks what
the previous rank sent.

    build/bin/weft-run -n 4 -- /usr/bin/python3 examples/python/ring.py
"""
import os
import sys

import numpy as np

# The checkout's package, unless weft is installed.
sys.path.append(os.path.join(os.path.dirname(__file__), "..", "..", "python"))
import weft  # noqa: E402
import weft.language as wl  # noqa: E402


@weft.jit
def ring_put(src, dst, flag, n, BLOCK: wl.constexpr):
    me = wl.rank()
    nxt = (me + 1) % wl.num_ranks()
    offs = wl.program_id(0) * BLOCK + wl.arange(0, BLOCK)
    mask = offs < n
    tile = wl.load(src + offs, mask=mask)
    wl.store(dst + offs, tile, mask=mask, peer=nxt)   # into the next rank's dst
    wl.signal(flag, 1, peer=nxt, op="add")            # releases the store above
    wl.wait(flag, wl.num_programs(0), cmp="ge")       # every program of the previous rank


weft.init()
rank, ranks = weft.rank(), weft.num_ranks()
n, block = 1000, 256
src = weft.full((n,), float(rank), wl.float32)
dst = weft.zeros((n,), wl.float32)
flag = weft.zeros((1,), wl.int64)
weft.barrier()  # every rank's flag is zero before anyone signals

ring_put[((n + block - 1) // block,)](src, dst, flag, n, BLOCK=block)

prev = (rank - 1) % ranks
assert np.array_equal(dst.to_numpy(), np.full(n, prev, np.float32)), dst.to_numpy()[:8]
print(f"rank {rank}: got {n} values from rank {prev}")
weft.barrier()
weft.finalize()
