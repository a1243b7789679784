"""Torch on the cuda backend: symmetric buffers seen by torch without copies
(__cuda_array_interface__, __dlpack__), torch tensors as local kernel
arguments and collective inputs. Runs where the backend is cuda and torch
imports (the GPU machines); skipped elsewhere."""
import numpy as np
import pytest

import weft
import weft.language as wl
from devices import BACKEND
from weft import collectives as C

torch = pytest.importorskip("torch") if BACKEND == "cuda" else None
pytestmark = pytest.mark.skipif(BACKEND != "cuda", reason="torch tensors live on cuda")


@pytest.fixture
def device():
    return torch.device("cuda", weft.local_rank())


@weft.jit
def scale_into_peer(src, dst, n, factor, BLOCK: wl.constexpr):
    """dst on the next rank = factor * src (a local tensor)."""
    offs = wl.program_id(0) * BLOCK + wl.arange(0, BLOCK)
    m = offs < n
    nxt = (wl.rank() + 1) % wl.num_ranks()
    wl.store(dst + offs, wl.load(src + offs, mask=m) * factor, mask=m, peer=nxt)


def test_cuda_array_interface_is_zero_copy(device):
    buf = weft.zeros((257,), wl.float32)
    view = torch.as_tensor(buf, device=device)
    assert view.data_ptr() == buf.ptr and view.shape == (257,)
    view.fill_(3.0)  # torch writes, weft reads
    torch.cuda.synchronize(device)
    assert (buf.to_numpy() == 3.0).all()
    buf.copy_from(np.arange(257))  # weft writes, torch reads
    assert torch.equal(view.cpu(), torch.arange(257, dtype=torch.float32))
    buf.free()


@pytest.mark.parametrize("dtype,torch_dtype", [(wl.float32, "float32"),
                                               (wl.bfloat16, "bfloat16"),
                                               (wl.int64, "int64")])
def test_from_dlpack_is_zero_copy(device, dtype, torch_dtype):
    buf = weft.zeros((4, 9), dtype)
    assert buf.__dlpack_device__() == (2, weft.local_rank())  # kDLCUDA
    t = torch.from_dlpack(buf)
    assert t.dtype == getattr(torch, torch_dtype) and t.shape == (4, 9)
    assert t.device == device and t.data_ptr() == buf.ptr
    t += 5
    torch.cuda.synchronize(device)
    got = buf.to_numpy()
    assert (got == 5).all(), got
    del t
    buf.free()


def test_tensor_kernel_arguments(device):
    rank, ranks = weft.rank(), weft.num_ranks()
    n, block = 1000, 256
    src = torch.arange(n, dtype=torch.float32, device=device) + 100 * rank
    dst = weft.zeros((n,), wl.float32)
    weft.barrier()
    scale_into_peer[((n + block - 1) // block,)](src, dst, n, 2.0, BLOCK=block)
    weft.barrier()
    prev = (rank - 1) % ranks
    np.testing.assert_array_equal(dst.to_numpy(), 2.0 * (np.arange(n) + 100 * prev))
    with pytest.raises(TypeError, match="contiguous"):
        scale_into_peer[(1,)](src[::2], dst, n, 2.0, BLOCK=block)
    weft.barrier()
    dst.free()


@pytest.mark.parametrize("torch_dtype", ["float32", "bfloat16"])
def test_collectives_on_tensors(device, torch_dtype):
    rank, ranks, n = weft.rank(), weft.num_ranks(), 3001
    dtype = getattr(torch, torch_dtype)
    xs = [torch.arange(n, dtype=torch.float32) % 7 + p for p in range(ranks)]
    x = xs[rank].to(device=device, dtype=dtype)
    out = torch.empty(n, dtype=dtype, device=device)
    C.all_reduce(x, out)  # staged: x is not symmetric
    assert torch.equal(out.float().cpu(), sum(xs))
    gathered = torch.empty(ranks * n, dtype=dtype, device=device)
    C.all_gather(x, gathered)
    assert torch.equal(gathered.float().cpu(), torch.cat(xs))


@pytest.mark.parametrize("kept_graph", [False, True])
def test_collective_replays_in_a_cuda_graph(device, kept_graph):
    """Captured under weft.stream, a collective replays correctly: its
    epochs are counted on the device, not baked into the graph. With
    kept_graph the call launches as a graph of its own by then
    (weft/_plans.py); made while torch captures, it launches its kernels
    instead, for that capture to record. Eager calls agree after."""
    from weft import _plans
    rank, ranks, n = weft.rank(), weft.num_ranks(), 1000
    x, out = weft.empty((n,), wl.float32), weft.empty((n,), wl.float32)
    x.copy_from(1)
    for _ in range(_plans.GRAPH_AFTER + 1 if kept_graph else 1):  # the kernel loaded
        C.all_reduce(x, out)
    key = _plans.key("all_reduce", (x, out), ("sum", "auto", None))
    assert (C._get_comm().kept[key].graph is not None) == kept_graph
    torch.cuda.synchronize(device)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph), weft.stream(torch.cuda.current_stream()):
        C.all_reduce(x, out)
    for step in range(3):
        x.copy_from(np.arange(n) + step + 10 * rank)
        graph.replay()
        torch.cuda.synchronize(device)
        expect = sum(np.arange(n) + step + 10 * p for p in range(ranks))
        np.testing.assert_array_equal(out.to_numpy(), expect)
        x.copy_from(np.arange(n) - step)
        C.all_reduce(x, out)
        np.testing.assert_array_equal(out.to_numpy(), ranks * (np.arange(n) - step))
    weft.barrier()
    x.free()
    out.free()


def test_matmul_out_none_in_a_cuda_graph(device):
    """matmul's default out is a local buffer, which may be allocated while
    a CUDA graph is captured (weft_malloc_local in relaxed capture mode):
    the graph's replays write it. The kernel is test_ops'
    test_matmul_out_none's (rank 0's shape)."""
    m, k, n = 64, 1024, 128
    a = torch.randint(-2, 3, (m, k), device=device).to(torch.bfloat16)
    b = torch.randint(-2, 3, (k, n), device=device).to(torch.bfloat16)
    with weft.stream(torch.cuda.current_stream()):
        weft.ops.matmul(a, b).free()  # compiled and loaded outside the capture
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph), weft.stream(torch.cuda.current_stream()):
        out = weft.ops.matmul(a, b)
    assert out.local
    for _ in range(2):
        a.copy_(torch.randint(-2, 3, (m, k), device=device))
        graph.replay()
        torch.cuda.synchronize(device)
        np.testing.assert_array_equal(out.to_numpy(), (a.float() @ b.float()).cpu().numpy())
    out.free()


@weft.jit
def shifted_increment(src, dst, n, BLOCK: wl.constexpr):
    """dst[i] = src[(i + 7 * BLOCK) % n] + 1: every element read is one
    that another program of the previous launch wrote."""
    offs = wl.program_id(0) * BLOCK + wl.arange(0, BLOCK)
    m = offs < n
    wl.store(dst + offs, wl.load(src + (offs + 7 * BLOCK) % n, mask=m) + 1, mask=m)


def test_early_started_launches_see_the_previous_kernels_writes(device):
    """sm_90 kernels launch with WEFT_LAUNCH_EARLY_START: each may start
    as the previous kernel's programs exit, and waits for that kernel's
    writes before its own accesses. A chain of launches, eager and replayed
    in a CUDA graph, each reading what the launch before it wrote, loses
    no step."""
    n, block, steps = 1 << 22, 1024, 64
    bufs = [torch.zeros(n, dtype=torch.int32, device=device) for _ in range(2)]

    def chain():
        for s in range(steps):
            kernel = shifted_increment[(n // block,)](bufs[s % 2], bufs[(s + 1) % 2], n,
                                                      BLOCK=block)
        return kernel

    with weft.stream(torch.cuda.current_stream()):
        assert chain()._flags == weft._runtime.LAUNCH_EARLY_START
    torch.cuda.synchronize(device)
    assert bool((bufs[0] == steps).all()), int((bufs[0] != steps).sum())
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph), weft.stream(torch.cuda.current_stream()):
        chain()
    for _ in range(2):
        bufs[0].zero_()
        graph.replay()
        torch.cuda.synchronize(device)
        assert bool((bufs[0] == steps).all()), int((bufs[0] != steps).sum())


def test_early_started_split_k_products_start_from_zero(device):
    """A product split in pieces of K zeroes its f32 out with a kernel and
    then adds into it; each launch may start early. Back-to-back products
    into one out, each of a different a, end with the last product alone:
    no zeroing overtook the previous product's sums, and no sum the
    zeroing after it."""
    m, n, k = 64, 4096, 4096
    assert weft.ops._gemm.matmul_plan(m, n, k, "cuda")[0][2] > 1  # split K
    b = torch.randint(-2, 3, (k, n), device=device).to(torch.bfloat16)
    a = [torch.randint(-2, 3, (m, k), device=device).to(torch.bfloat16) for _ in range(16)]
    out = torch.empty(m, n, dtype=torch.float32, device=device)
    with weft.stream(torch.cuda.current_stream()):
        for x in a:
            weft.ops.matmul(x, b, out)
    torch.cuda.synchronize(device)
    assert torch.equal(out, a[-1].float() @ b.float())


@pytest.mark.parametrize("warp_mma", [False, True], ids=["wgmma", "mma_sync"])
def test_early_started_matmuls_read_the_previous_product(device, warp_mma):
    """A pipelined GEMM initialises its barriers before it waits for the
    kernel ahead of it (weft-early-start), then copies its operands with
    bulk tensor copies. A chain of early-started products, each reading
    the one before and overwriting what the one before read (x <- x @ p,
    p a permutation, so the values stay exact), loses no step."""
    n, steps = 1024, 16
    perm = torch.randperm(n, device=device)
    p = torch.zeros(n, n, dtype=torch.bfloat16, device=device)
    p[perm, torch.arange(n, device=device)] = 1  # (x @ p)[:, j] = x[:, perm[j]]
    x0 = torch.randint(-2, 3, (n, n), device=device).to(torch.bfloat16)
    bufs = [x0.clone(), torch.empty_like(x0)]
    with weft.stream(torch.cuda.current_stream()):
        for s in range(steps):
            weft.ops.matmul(bufs[s % 2], p, out=bufs[(s + 1) % 2], warp_mma=warp_mma)
    torch.cuda.synchronize(device)
    expected = x0
    for _ in range(steps):
        expected = expected[:, perm]
    assert torch.equal(bufs[steps % 2], expected)


@pytest.mark.parametrize("causal", [False, True])
def test_flash_attention_op_is_differentiable(device, causal):
    """weft::flash_attention's out and lse both feed the loss; the
    gradients of q, k and v against autograd through an f32 reference."""
    import weft.torch_ops  # noqa: F401  (registers torch.ops.weft.*)
    gen = torch.Generator().manual_seed(3)
    shape, n = (1, 2, 200, 64), 200
    q, k, v, g = (torch.randn(shape, generator=gen).to(device, torch.bfloat16)
                  for _ in range(4))
    h = torch.randn(shape[:3], generator=gen).to(device)
    q, k, v = (x.requires_grad_() for x in (q, k, v))
    out, lse = torch.ops.weft.flash_attention(q, k, v, causal)
    ((out.float() * g.float()).sum() + (lse * h).sum()).backward()
    ref = [x.detach().float().requires_grad_() for x in (q, k, v)]
    s = ref[0] @ ref[1].transpose(-1, -2) * shape[-1] ** -0.5
    if causal:
        s = s.masked_fill(torch.ones(n, n, dtype=torch.bool, device=device).triu(1),
                          float("-inf"))
    want_lse = torch.logsumexp(s, -1)
    want = torch.softmax(s, -1) @ ref[2]
    ((want * g.float()).sum() + (want_lse * h).sum()).backward()
    torch.testing.assert_close(out.float(), want, atol=2e-2, rtol=2e-2)
    torch.testing.assert_close(lse, want_lse, atol=1e-3, rtol=1e-3)
    for got, x in zip((q, k, v), ref):
        torch.testing.assert_close(got.grad.float(), x.grad, atol=3e-2, rtol=3e-2)
