"""One tensor-parallel MLP layer with its communication fused into the GEMMs
(sequence parallel, as in Megatron-LM): rank r holds `rows` tokens of the
sequence x, a column slice of W1 and the matching row slice of W2.

    h   = relu(all_gather(x) @ W1[:, slice r])    weft.ops.all_gather_matmul
    out = reduce_scatter(h @ W2[slice r, :])      weft.ops.matmul_reduce_scatter

Rank r ends with its own tokens' rows of relu(X @ W1) @ W2, and no
all-gather or reduce-scatter ever runs on its own: the first GEMM reads its
peers' x tiles straight into wl.dot, the second pushes its partial blocks
to the rank that owns their rows, which sums them in rank order.

    build/bin/weft-run -n 4 -- /usr/bin/python3 examples/python/tp_mlp.py
"""
import os
import sys

import numpy as np

# The checkout's package, unless weft is installed.
sys.path.append(os.path.join(os.path.dirname(__file__), "..", "..", "python"))
import weft  # noqa: E402
import weft.language as wl  # noqa: E402
from weft import ops  # noqa: E402


@weft.jit
def relu_to(h, out, n, BLOCK: wl.constexpr):
    """out = max(h, 0), converted to out's dtype (f32 -> bf16 here)."""
    for start in range(wl.program_id(0) * BLOCK, n, wl.num_programs(0) * BLOCK):
        offs = start + wl.arange(0, BLOCK)
        mask = offs < n
        wl.store(out + offs, wl.maximum(wl.load(h + offs, mask=mask), 0.0), mask=mask)


weft.init()
rank, ranks = weft.rank(), weft.num_ranks()
rows, hidden, ffn = 8, 32, 16 * ranks         # tokens per rank; ffn split over ranks
cols = ffn // ranks
rng = np.random.default_rng(0)                # the same full weights on every rank
X = rng.integers(-2, 3, (ranks * rows, hidden)).astype(np.float32)
W1 = rng.integers(-2, 3, (hidden, ffn)).astype(np.float32)
W2 = rng.integers(-2, 3, (ffn, hidden)).astype(np.float32)

x = weft.empty((rows, hidden), wl.bfloat16)   # symmetric: peers read it
w1 = weft.empty((hidden, cols), wl.bfloat16)
w2 = weft.empty((cols, hidden), wl.bfloat16)
x.copy_from(X[rank * rows:(rank + 1) * rows])  # converted to bf16 (exact: small ints)
w1.copy_from(W1[:, rank * cols:(rank + 1) * cols])
w2.copy_from(W2[rank * cols:(rank + 1) * cols])
act = weft.empty((ranks * rows, cols), wl.bfloat16)

h = ops.all_gather_matmul(x, w1)              # (ranks * rows) x cols, f32
relu_to[(4,)](h, act, h.size, BLOCK=64)
out = ops.matmul_reduce_scatter(act, w2)      # rows x hidden, f32: my tokens

expect = (np.maximum(X @ W1, 0) @ W2)[rank * rows:(rank + 1) * rows]
assert np.array_equal(out.to_numpy(), expect), "tp_mlp: wrong result"
print(f"rank {rank}: MLP rows {rank * rows}..{(rank + 1) * rows - 1} of {ranks * rows}, "
      f"out[0, :4] = {out.to_numpy()[0, :4]}")
weft.barrier()
weft.finalize()
