"""Fused compute + communication kernels written in the DSL
(docs/python.md, "Fused kernels").

    weft.ops.matmul(a, b, out=None, split_k=None)
    weft.ops.all_gather_matmul(a, b, out=None, num_programs=None)
    weft.ops.matmul_reduce_scatter(a, b, out=None, num_programs=None, partials="f32")
    weft.ops.matmul_all_reduce(a, b, out=None, num_programs=None, partials="f32")
    weft.ops.flash_attention(q, k, v, causal=False, sm_scale=None, return_lse=False)
    weft.ops.flash_attention_backward(q, k, v, out, lse, dout, causal=False, sm_scale=None)
    weft.ops.ring_attention(q, k, v, causal=False, sm_scale=None, layout="contiguous")
    weft.ops.ulysses_attention(q, k, v, causal=False, sm_scale=None)
    weft.ops.ring_attention_backward(q, k, v, out, lse, dout, causal=False, sm_scale=None)
    weft.ops.flash_decode_combine(o, lse, out=None, lse_out=None, num_programs=None)
    weft.ops.moe_dispatch(x, topk_ids, num_experts, capacity=None, handle=None,
                          num_programs=None)
    weft.ops.moe_combine(y, handle, topk_weights, out=None)

Every rank calls them in the same order with the same shapes, like the
collectives, whose flags, device-side epochs and counters they share.

    _gemm.py       matmul and the GEMM pieces the fused GEMMs share
    _tp.py         tensor-parallel GEMMs: all-gather + GEMM, and what the second
                   layer shares with it (the fused plan, the copy engine's puts)
    _second_layer.py  GEMM + reduce-scatter / all-reduce
    _flash.py      flash attention on one rank, and the online softmax the
                   sequence-parallel kernels share
    _flash_backward.py  its backward pass (dq, dk, dv)
    _sequence.py   sequence-parallel attention: ring and Ulysses in one launch
    _attention.py  flash-decode's split-KV combine across ranks
    _moe.py        mixture-of-experts all-to-all dispatch and combine
"""
# The kernels are re-exported too (weft.compile(ops.matmul_kernel, ...)).
from ._attention import flash_decode_combine, flash_decode_combine_kernel  # noqa: F401
from ._flash import flash_attention, flash_attention_kernel  # noqa: F401
from ._flash_backward import flash_attention_backward
from ._gemm import BK, BM, BN, DEFAULT_PROGRAMS, matmul, matmul_kernel  # noqa: F401
from ._sequence import ring_attention, sp_attention_kernel, ulysses_attention  # noqa: F401
from ._sequence_backward import ring_attention_backward
from ._moe import MoeDispatch, moe_combine, moe_dispatch
from ._second_layer import (matmul_all_reduce, matmul_reduce_kernel,  # noqa: F401
                            matmul_reduce_scatter, own_rows_kernel)
from ._tp import all_gather_matmul, all_gather_matmul_kernel, phase_kernel  # noqa: F401

__all__ = ["matmul", "all_gather_matmul", "matmul_reduce_scatter", "matmul_all_reduce",
           "flash_attention", "flash_attention_backward", "ring_attention", "ring_attention_backward", "ulysses_attention", "flash_decode_combine", "moe_dispatch", "moe_combine", "MoeDispatch"]
