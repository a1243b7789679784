"""Weft's collectives and fused ops as PyTorch custom ops (namespace
`weft`), so that they run inside torch.compile(fullgraph=True) and CUDA
graphs (docs/python.md, "PyTorch"):

    import weft.torch_ops                      # registers torch.ops.weft.*
    y = torch.ops.weft.all_reduce(x, "sum")    # or weft.torch_ops.all_reduce(x)
    g = torch.ops.weft.all_gather(x, weft.num_ranks())

Each op is functional: it returns new tensors (allocated by torch on the
inputs' device) and launches on torch's current stream. Ops whose result
shape depends on the number of ranks take it as `group_size` (as torch's
own functional collectives do), so that it is a constant of a compiled
graph, part of torch.compile's cache key, rather than state its fake
implementations would read: pass weft.num_ranks(), read outside the
compiled function. Inputs are CUDA
tensors on weft.local_rank()'s device. Symmetric inputs (tensors in Weft's
heap, from weft.torch_ops.empty) are used in place; any other tensor is
copied through the collectives' symmetric scratch first (one local copy),
except where peers must read it in place (flash_decode_combine's o and
lse), which is a clear error. Every rank calls the same ops in the same
order with the same shapes, as for the collectives.

weft::flash_attention is differentiable (register_autograd: its backward
is weft::flash_attention_backward, from the gradients of out and lse).
MoE dispatch and combine are not registered: their routing handle, which
combine needs from dispatch, is not a tensor.
"""
import math
from typing import Optional

try:
    import torch
    from torch.library import custom_op
except ImportError:  # torch missing, or older than 2.4 (no custom_op)
    raise ImportError("weft.torch_ops needs PyTorch 2.4 or newer (torch.library."
                      "custom_op); Weft itself runs without torch") from None

from . import _runtime as rt
from . import collectives as C
from . import ops as O
from .collectives import _kernels as K
from ._jit import _torch_dtype

__all__ = ["empty", "is_symmetric", "all_reduce", "all_gather", "reduce_scatter", "all_to_all",
           "broadcast", "all_reduce_residual_rmsnorm", "all_gather_matmul",
           "matmul_reduce_scatter", "matmul_all_reduce", "flash_decode_combine",
           "flash_attention", "flash_attention_backward"]


def empty(shape, dtype=torch.float32):
    """A torch tensor in Weft's symmetric heap (collective, like
    weft.empty): the custom ops use it without a copy, and peers may read
    it. It lives until weft.finalize()."""
    buf = rt.empty(shape, _torch_dtype(dtype))
    return torch.from_dlpack(buf)


def is_symmetric(t):
    """Whether the tensor's memory lies in Weft's symmetric heap."""
    return rt.in_heap(t.data_ptr())


def _device():
    return torch.device("cuda", rt.local_rank())


def _on_device(op, name, t):
    """t as a contiguous torch tensor on this rank's device (the attention
    ops take any memory: nothing is read by peers)."""
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"weft::{op}: {name} must be a torch.Tensor, not {type(t).__name__}")
    if t.device != _device():
        raise ValueError(f"weft::{op}: {name} is on {t.device}, but this rank's weft "
                         f"context drives {_device()}")
    return t.contiguous()


def _checked(op, name, t):
    """t as the ops take it: contiguous, on this rank's device; a symmetric
    tensor as a weft.Buffer view of it (no staging copy)."""
    t = _on_device(op, name, t)
    if is_symmetric(t):
        return rt.Buffer.view(t.data_ptr(), tuple(t.shape), _torch_dtype(t.dtype))
    return t


class _on_torch_stream(rt.stream):
    """Weft's launches on torch's current stream (captured by CUDA graphs)."""

    def __init__(self):
        super().__init__(torch.cuda.current_stream(_device()))


def _group(op, group_size):
    """group_size, checked against the job's rank count."""
    if group_size != rt.num_ranks():
        raise ValueError(f"weft::{op}: group_size is {group_size}, but the weft job has "
                         f"{rt.num_ranks()} ranks")
    return group_size


def _rows(x, group_size, op):
    """x's rows per rank (fake implementations too: no run-time state)."""
    if x.dim() == 0 or group_size < 1 or x.shape[0] % group_size:
        raise ValueError(f"weft::{op}: the first dimension of x ({tuple(x.shape)}) must be a "
                         f"multiple of group_size, {group_size}")
    return x.shape[0] // group_size


@custom_op("weft::all_reduce", mutates_args=())
def all_reduce(x: torch.Tensor, op: str = "sum") -> torch.Tensor:
    """The reduction (sum, max, min) of x over ranks."""
    out = torch.empty_like(x, memory_format=torch.contiguous_format)
    with _on_torch_stream():
        C.all_reduce(_checked("all_reduce", "x", x), out=out, op=op)
    return out


@all_reduce.register_fake
def _(x, op="sum"):
    return torch.empty_like(x, memory_format=torch.contiguous_format)


@custom_op("weft::all_gather", mutates_args=())
def all_gather(x: torch.Tensor, group_size: int) -> torch.Tensor:
    """Every rank's x, stacked along the first dimension (rank order)."""
    out = x.new_empty((_group("all_gather", group_size) * x.shape[0],) + tuple(x.shape[1:]))
    with _on_torch_stream():
        C.all_gather(_checked("all_gather", "x", x), out)
    return out


@all_gather.register_fake
def _(x, group_size):
    return x.new_empty((group_size * x.shape[0],) + tuple(x.shape[1:]))


@custom_op("weft::reduce_scatter", mutates_args=())
def reduce_scatter(x: torch.Tensor, group_size: int, op: str = "sum") -> torch.Tensor:
    """Rank r's block of rows of the reduction of x over ranks (the first
    dimension a multiple of the number of ranks)."""
    rows = _rows(x, _group("reduce_scatter", group_size), "reduce_scatter")
    out = x.new_empty((rows,) + tuple(x.shape[1:]))
    with _on_torch_stream():
        C.reduce_scatter(_checked("reduce_scatter", "x", x), out, op=op)
    return out


@reduce_scatter.register_fake
def _(x, group_size, op="sum"):
    return x.new_empty((_rows(x, group_size, "reduce_scatter"),) + tuple(x.shape[1:]))


@custom_op("weft::all_to_all", mutates_args=())
def all_to_all(x: torch.Tensor, group_size: int) -> torch.Tensor:
    """Block p of the result is rank p's block r of x, on rank r (blocks of
    first-dimension rows, a multiple of the number of ranks)."""
    _rows(x, _group("all_to_all", group_size), "all_to_all")
    out = torch.empty_like(x, memory_format=torch.contiguous_format)
    with _on_torch_stream():
        C.all_to_all(_checked("all_to_all", "x", x), out)
    return out


@all_to_all.register_fake
def _(x, group_size):
    _rows(x, group_size, "all_to_all")
    return torch.empty_like(x, memory_format=torch.contiguous_format)


@custom_op("weft::broadcast", mutates_args=())
def broadcast(x: torch.Tensor, root: int) -> torch.Tensor:
    """Rank root's x, on every rank (through symmetric scratch)."""
    n = x.numel()
    stage = C._get_comm().buffer("torch_broadcast", n, _torch_dtype(x.dtype))
    out = torch.empty_like(x, memory_format=torch.contiguous_format)
    grid = C._programs(n, None)
    with _on_torch_stream():
        # The copy in precedes the kernel's entry barrier, the copy out
        # follows its exit barrier: no peer writes the stage meanwhile.
        K.copy_kernel[grid](_checked("broadcast", "x", x), stage, n, BLOCK=grid.block)
        C.broadcast(stage, root)
        K.copy_kernel[grid](stage, out, n, BLOCK=grid.block)
    return out


@broadcast.register_fake
def _(x, root):
    return torch.empty_like(x, memory_format=torch.contiguous_format)


@custom_op("weft::all_reduce_residual_rmsnorm", mutates_args=("residual",))
def all_reduce_residual_rmsnorm(x: torch.Tensor, residual: torch.Tensor, weight: torch.Tensor,
                                eps: float) -> torch.Tensor:
    """h = all_reduce(x) + residual: residual <- h (in place), returns
    rmsnorm(h) * weight (weft.collectives.all_reduce_residual_rmsnorm)."""
    out = torch.empty_like(x, memory_format=torch.contiguous_format)
    op = "all_reduce_residual_rmsnorm"
    if not residual.is_contiguous():
        raise ValueError(f"weft::{op}: residual must be contiguous (it is updated in place)")
    with _on_torch_stream():
        C.all_reduce_residual_rmsnorm(_checked(op, "x", x), residual,
                                      _checked(op, "weight", weight), eps, out)
    return out


@all_reduce_residual_rmsnorm.register_fake
def _(x, residual, weight, eps):
    return torch.empty_like(x, memory_format=torch.contiguous_format)


def _product(a, b, rows):
    """The f32 rows x N result of a product with b."""
    return torch.empty((rows, b.shape[1]), dtype=torch.float32, device=a.device)


@custom_op("weft::all_gather_matmul", mutates_args=())
def all_gather_matmul(a: torch.Tensor, b: torch.Tensor, group_size: int) -> torch.Tensor:
    """all_gather(a) @ b in f32 (the column-parallel first layer)."""
    out = _product(a, b, _group("all_gather_matmul", group_size) * a.shape[0])
    with _on_torch_stream():
        O.all_gather_matmul(_checked("all_gather_matmul", "a", a),
                            _checked("all_gather_matmul", "b", b), out)
    return out


@all_gather_matmul.register_fake
def _(a, b, group_size):
    return _product(a, b, group_size * a.shape[0])


@custom_op("weft::matmul_reduce_scatter", mutates_args=())
def matmul_reduce_scatter(a: torch.Tensor, b: torch.Tensor, group_size: int,
                          partials: str = "f32") -> torch.Tensor:
    """Rank r's rows of the sum over ranks of a @ b, f32 (the row-parallel
    second layer); partials: weft.ops.matmul_reduce_scatter's ("f32", or
    "bf16": half the bytes between ranks, within its stated bound)."""
    op = "matmul_reduce_scatter"
    rows = _rows(a, _group(op, group_size), op)
    out = _product(a, b, rows)
    with _on_torch_stream():
        O.matmul_reduce_scatter(_checked(op, "a", a), _checked(op, "b", b), out,
                                partials=partials)
    return out


@matmul_reduce_scatter.register_fake
def _(a, b, group_size, partials="f32"):
    return _product(a, b, _rows(a, group_size, "matmul_reduce_scatter"))


@custom_op("weft::matmul_all_reduce", mutates_args=())
def matmul_all_reduce(a: torch.Tensor, b: torch.Tensor, partials: str = "f32") -> torch.Tensor:
    """The sum over ranks of a @ b, f32, on every rank; partials as for
    matmul_reduce_scatter."""
    out = _product(a, b, a.shape[0])
    with _on_torch_stream():
        O.matmul_all_reduce(_checked("matmul_all_reduce", "a", a),
                            _checked("matmul_all_reduce", "b", b), out, partials=partials)
    return out


@matmul_all_reduce.register_fake
def _(a, b, partials="f32"):
    return _product(a, b, a.shape[0])


@custom_op("weft::flash_decode_combine", mutates_args=())
def flash_decode_combine(o: torch.Tensor, lse: torch.Tensor) -> tuple[torch.Tensor,
                                                                      torch.Tensor]:
    """The log-sum-exp combine of every rank's partial attention output:
    (out f32 of o's shape, its lse). o and lse must be symmetric
    (weft.torch_ops.empty): peers read them in place."""
    op = "flash_decode_combine"
    args = []
    for name, t in (("o", o), ("lse", lse)):
        view = _checked(op, name, t)
        if not isinstance(view, rt.Buffer):
            raise ValueError(f"weft::{op}: {name} must be a symmetric tensor (allocate it "
                             "with weft.torch_ops.empty): peers read it in place")
        args.append(view)
    out = torch.empty(tuple(o.shape), dtype=torch.float32, device=o.device)
    lse_out = torch.empty(math.prod(o.shape[:-1]), dtype=torch.float32, device=o.device)
    with _on_torch_stream():
        O.flash_decode_combine(*args, out=out, lse_out=lse_out)
    return out, lse_out


@flash_decode_combine.register_fake
def _(o, lse):
    return (torch.empty(tuple(o.shape), dtype=torch.float32, device=o.device),
            torch.empty(math.prod(o.shape[:-1]), dtype=torch.float32, device=o.device))


@custom_op("weft::flash_attention", mutates_args=())
def flash_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool = False,
                    sm_scale: Optional[float] = None) -> tuple[torch.Tensor, torch.Tensor]:
    """(out, lse) of weft.ops.flash_attention on this rank; differentiable
    in q, k and v through both (weft::flash_attention_backward)."""
    q, k, v = (_on_device("flash_attention", n, t) for n, t in (("q", q), ("k", k), ("v", v)))
    out = torch.empty_like(q)
    lse = torch.empty(tuple(q.shape[:3]), dtype=torch.float32, device=q.device)
    with _on_torch_stream():
        O.flash_attention(q, k, v, causal=causal, sm_scale=sm_scale, out=out, lse=lse)
    return out, lse


@flash_attention.register_fake
def _(q, k, v, causal=False, sm_scale=None):
    return (torch.empty_like(q),
            torch.empty(tuple(q.shape[:3]), dtype=torch.float32, device=q.device))


@custom_op("weft::flash_attention_backward", mutates_args=())
def flash_attention_backward(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
                             out: torch.Tensor, lse: torch.Tensor, dout: torch.Tensor,
                             dlse: torch.Tensor, causal: bool = False,
                             sm_scale: Optional[float] = None
                             ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(dq, dk, dv) of weft::flash_attention from the gradients of its out
    and lse (weft.ops.flash_attention_backward)."""
    op = "flash_attention_backward"
    args = [_on_device(op, n, t) for n, t in (("q", q), ("k", k), ("v", v), ("out", out),
                                              ("lse", lse), ("dout", dout), ("dlse", dlse))]
    q, k, v, out, lse, dout, dlse = args
    dq, dk, dv = (torch.empty_like(t) for t in (q, k, v))
    with _on_torch_stream():
        O.flash_attention_backward(q, k, v, out, lse, dout, causal=causal, sm_scale=sm_scale,
                                   dq=dq, dk=dk, dv=dv, dlse=dlse)
    return dq, dk, dv


@flash_attention_backward.register_fake
def _(q, k, v, out, lse, dout, dlse, causal=False, sm_scale=None):
    return torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)


def _attention_context(ctx, inputs, output):
    q, k, v, causal, sm_scale = inputs
    ctx.save_for_backward(q, k, v, *output)
    ctx.causal, ctx.sm_scale = causal, sm_scale


def _attention_gradients(ctx, dout, dlse):
    q, k, v, out, lse = ctx.saved_tensors
    dout = torch.zeros_like(out) if dout is None else dout
    dlse = torch.zeros_like(lse) if dlse is None else dlse
    dq, dk, dv = flash_attention_backward(q, k, v, out, lse, dout, dlse, ctx.causal,
                                          ctx.sm_scale)
    return dq, dk, dv, None, None


flash_attention.register_autograd(_attention_gradients, setup_context=_attention_context)
