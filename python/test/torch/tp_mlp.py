"""A tensor-parallel MLP (sequence parallel, as in Megatron-LM) through the
PyTorch custom ops, run under torchrun with torch's own NCCL process group
and no weft-run (scripts/gpu/test_python.sh):

    torchrun --nproc-per-node N python/test/torch/tp_mlp.py

    h   = relu(all_gather(x) @ W1[:, r])    torch.ops.weft.all_gather_matmul
    out = reduce_scatter(h @ W2[r, :])      torch.ops.weft.matmul_reduce_scatter

Checked, exactly (small integers: every product and sum is exact in bf16
and f32), against eager torch + NCCL, as torch.compile(fullgraph=True)
runs it, and as a CUDA graph replays it; then the other ops against their
NCCL twins. Exits non-zero on a mismatch."""
import os

import torch
import torch.distributed as dist

import weft
import weft.torch_ops  # noqa: F401  (registers torch.ops.weft.*)

dist.init_process_group("nccl")
local = int(os.environ["LOCAL_RANK"])
torch.cuda.set_device(local)
weft.init()  # joins the same job: torchrun's environment
rank, ranks = dist.get_rank(), dist.get_world_size()
assert (weft.rank(), weft.num_ranks(), weft.local_rank()) == (rank, ranks, local)
device = torch.device("cuda", local)

rows, hidden, ffn = 64, 64, 128 * ranks       # tokens per rank; ffn split over ranks
cols = ffn // ranks
gen = torch.Generator().manual_seed(0)        # the same full weights on every rank
X = torch.randint(-2, 3, (ranks * rows, hidden), generator=gen).to(torch.bfloat16)
W1 = torch.randint(-2, 3, (hidden, ffn), generator=gen).to(torch.bfloat16)
W2 = torch.randint(-2, 3, (ffn, hidden), generator=gen).to(torch.bfloat16)
x = X[rank * rows:(rank + 1) * rows].to(device)
w1 = W1[:, rank * cols:(rank + 1) * cols].contiguous().to(device)
w2 = W2[rank * cols:(rank + 1) * cols].contiguous().to(device)


def mlp(x, w1, w2):
    h = torch.relu(torch.ops.weft.all_gather_matmul(x, w1, ranks)).to(torch.bfloat16)
    return torch.ops.weft.matmul_reduce_scatter(h, w2, ranks)


def reference(x, w1, w2):
    gathered = torch.empty((ranks * rows, hidden), dtype=x.dtype, device=device)
    dist.all_gather_into_tensor(gathered, x)
    h = torch.relu(gathered.float() @ w1.float()).to(torch.bfloat16)
    partial = h.float() @ w2.float()
    out = torch.empty((rows, hidden), dtype=torch.float32, device=device)
    dist.reduce_scatter_tensor(out, partial)
    return out


def check(name, got, expected):
    if not torch.equal(got, expected):
        diff = (got - expected).abs().max().item()
        raise SystemExit(f"rank {rank}: {name} differs from torch + NCCL (max |diff| {diff})")
    print(f"rank {rank}: {name}: ok")


expected = reference(x, w1, w2)
check("eager", mlp(x, w1, w2), expected)

# The second layer's other forms: its all-reduce (exact, as the
# reduce-scatter) and bf16 partials, whose sums (up to 2^16 here) round:
# within the stated bound, 2^-8 of the sum over ranks of |partial|, plus
# f32's rounding of the sum.
h = torch.relu(torch.ops.weft.all_gather_matmul(x, w1, ranks)).to(torch.bfloat16)
partial = h.float() @ w2.float()
total = partial.clone()
dist.all_reduce(total)
magnitude = partial.abs()
dist.all_reduce(magnitude)
check("matmul_all_reduce", torch.ops.weft.matmul_all_reduce(h, w2), total)
mine = slice(rank * rows, (rank + 1) * rows)
for name, got, want, bound in (
        ("matmul_reduce_scatter, bf16 partials",
         torch.ops.weft.matmul_reduce_scatter(h, w2, ranks, "bf16"), total[mine], magnitude[mine]),
        ("matmul_all_reduce, bf16 partials",
         torch.ops.weft.matmul_all_reduce(h, w2, "bf16"), total, magnitude)):
    excess = ((got - want).abs() - bound * (2.0 ** -8 + 2.0 ** -20)).max().item()
    if excess > 0:
        raise SystemExit(f"rank {rank}: {name} is {excess} beyond its bound")
    print(f"rank {rank}: {name}: within the bound")
check("torch.compile(fullgraph=True)", torch.compile(mlp, fullgraph=True)(x, w1, w2), expected)

# A CUDA graph of the eager op calls, replayed on new inputs.
static_x = x.clone()
side = torch.cuda.Stream()
side.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(side):
    mlp(static_x, w1, w2)                     # warm-up: scratch, kernels
torch.cuda.current_stream().wait_stream(side)
graph = torch.cuda.CUDAGraph()
with torch.cuda.graph(graph):
    static_out = mlp(static_x, w1, w2)
for turn in range(3):
    new_x = (x + turn) % 3 - 1
    static_x.copy_(new_x)
    graph.replay()
    check(f"CUDA graph replay {turn}", static_out, reference(new_x, w1, w2))

# The collectives against NCCL (integers: exact in any order).
v = torch.randint(-8, 9, (4 * ranks, 33), generator=gen).to(device=device, dtype=torch.float32)
v = v + rank
nccl = v.clone()
dist.all_reduce(nccl)
check("all_reduce", torch.ops.weft.all_reduce(v, "sum"), nccl)
nccl = torch.empty((ranks * v.shape[0], 33), device=device)
dist.all_gather_into_tensor(nccl, v)
check("all_gather", torch.ops.weft.all_gather(v, ranks), nccl)
nccl = torch.empty((4, 33), device=device)
dist.reduce_scatter_tensor(nccl, v)
check("reduce_scatter", torch.ops.weft.reduce_scatter(v, ranks, "sum"), nccl)
nccl = torch.empty_like(v)
dist.all_to_all_single(nccl, v)
check("all_to_all", torch.ops.weft.all_to_all(v, ranks), nccl)
nccl = v.clone()
dist.broadcast(nccl, src=ranks - 1)
check("broadcast", torch.ops.weft.broadcast(v, ranks - 1), nccl)
symmetric = weft.torch_ops.empty(v.shape)
symmetric.copy_(v)
check("all_reduce of a symmetric tensor", torch.ops.weft.all_reduce(symmetric, "sum"),
      torch.ops.weft.all_reduce(v, "sum"))
for bad_call, words in ((lambda: torch.ops.weft.flash_decode_combine(v, v[:, 0].contiguous()),
                         "must be a symmetric tensor"),
                        (lambda: torch.ops.weft.all_gather(v, ranks + 1), "group_size is")):
    try:
        bad_call()
        raise SystemExit(f"no error where the message says '{words}'")
    except ValueError as e:
        assert words in str(e), e

torch.cuda.synchronize()
weft.barrier()
weft.finalize()
dist.destroy_process_group()
print(f"rank {rank}: tp_mlp: all ok")
