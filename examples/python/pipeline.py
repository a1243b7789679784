"""Producer/consumer pipeline between neighbouring ranks through a ring of
SLOTS buffers. In one launch, program 0 produces chunks into the next
rank's slots and program 1 consumes the chunks the previous rank sent:

    producer: wait for a free slot (credit), put the chunk, signal `ready`
    consumer: wait for `ready`, use the chunk, give the slot back (credit)

Flags carry chunk numbers + 1 (set, only growing; comparisons are unsigned,
so nothing waits for a negative value), and chunk numbers continue across
calls, so the slots are reused without resetting anything.

    build/bin/weft-run -n 4 -- /usr/bin/python3 examples/python/pipeline.py
"""
import os
import sys

import numpy as np

# The checkout's package, unless weft is installed.
sys.path.append(os.path.join(os.path.dirname(__file__), "..", "..", "python"))
import weft  # noqa: E402
import weft.language as wl  # noqa: E402


@weft.jit
def pipeline(src, slots, ready, credit, total, chunks, base,
             SLOTS: wl.constexpr, CHUNK: wl.constexpr):
    nxt = (wl.rank() + 1) % wl.num_ranks()
    prv = (wl.rank() + wl.num_ranks() - 1) % wl.num_ranks()
    offs = wl.arange(0, CHUNK)
    if wl.program_id(0) == 0:                        # producer
        for k in range(chunks):
            c = base + k                             # global chunk number
            s = c % SLOTS
            if c >= SLOTS:                           # slot s held chunk c - SLOTS:
                wl.wait(credit + s, c - SLOTS + 1, cmp="ge")  # wait until consumed
            v = wl.load(src + k * CHUNK + offs)
            wl.store(slots + s * CHUNK + offs, v, peer=nxt)
            wl.signal(ready + s, c + 1, peer=nxt)    # releases the put
    else:                                            # consumer
        acc = wl.zeros((CHUNK,), wl.float32)
        for k in range(chunks):
            c = base + k
            s = c % SLOTS
            wl.wait(ready + s, c + 1, cmp="ge")      # chunk c has arrived
            acc += wl.load(slots + s * CHUNK + offs)
            wl.signal(credit + s, c + 1, peer=prv)   # slot s is free again
        wl.store(total + offs, acc)


weft.init()
rank, ranks = weft.rank(), weft.num_ranks()
SLOTS, CHUNK, chunks = 2, 32, 7
src = weft.empty((chunks * CHUNK,), wl.float32)
slots = weft.zeros((SLOTS * CHUNK,), wl.float32)
ready = weft.zeros((SLOTS,), wl.int64)
credit = weft.zeros((SLOTS,), wl.int64)
total = weft.zeros((CHUNK,), wl.float32)
weft.barrier()                                       # flags zero everywhere first

prev = (rank - 1) % ranks
for call in range(2):                                # chunk numbers continue
    src.copy_from(np.arange(chunks * CHUNK) + 1000 * rank + call)
    pipeline[(2,)](src, slots, ready, credit, total, chunks, call * chunks,
                   SLOTS=SLOTS, CHUNK=CHUNK)
    sent = np.arange(chunks * CHUNK).reshape(chunks, CHUNK) + 1000 * prev + call
    assert np.array_equal(total.to_numpy(), sent.sum(0).astype(np.float32))
print(f"rank {rank}: consumed {2 * chunks} chunks from rank {prev}")
weft.barrier()
weft.finalize()
