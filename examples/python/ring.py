"""Ring put: every program puts its block into the next rank's buffer and
raises that rank's flag once the bytes are there; every rank waits for its
own flag and checks what the previous rank sent. wl.put reaches a rank on
any node (stores within the node, the job's engine across), so the same
kernel runs on one machine and across nodes:

    build/bin/weft-run -n 4 -- /usr/bin/python3 examples/python/ring.py
    build/bin/weft-run --backend host -n 4 --local-size 2 -- \
        /usr/bin/python3 examples/python/ring.py    # 2 simulated nodes
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
    nxt = (wl.rank() + 1) % wl.num_ranks()
    start = wl.program_id(0) * BLOCK
    count = BLOCK if start + BLOCK <= n else n - start
    # This block into the next rank's dst; its flag goes up by one once the
    # bytes are there.
    wl.put(dst + start, src + start, count * 4, nxt, signal=flag, signal_op="add")
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
