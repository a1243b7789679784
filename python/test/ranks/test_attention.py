"""Attention (weft.ops.flash_attention, ring_attention, ulysses_attention)
on 1-4 ranks against a float64 numpy reference; on GPUs also against
torch's scaled_dot_product_attention."""

import numpy as np
import pytest

import weft
import weft.language as wl
from devices import BACKEND, host, rounded
from weft import ops
from weft._jit import torch_dtype_of

# bf16 inputs, f32 softmax, bf16 out: the output's rounding (2^-8
# relative) dominates; errors are relative to the values' scale (~1).
TOL = dict(atol=2e-2, rtol=2e-2)


def _softmax_terms(q, k, causal, scale, q_pos=None, k_pos=None):
    """(exp(s - top), top, their row sums) of the scores s = q k^T scale
    in float64, top each row's maximum (0 for a row that sees no key);
    causal: key position <= query position (positions default to the row
    indices)."""
    s = q @ np.swapaxes(k, -1, -2) * scale
    if causal:
        q_pos = np.arange(q.shape[-2]) if q_pos is None else q_pos
        k_pos = np.arange(k.shape[-2]) if k_pos is None else k_pos
        s = np.where(k_pos[None, :] <= q_pos[:, None], s, -np.inf)
    top = s.max(-1, keepdims=True, initial=-np.inf)
    top = np.where(np.isinf(top), 0.0, top)
    p = np.exp(s - top)
    return p, top, p.sum(-1, keepdims=True)


def _attention(q, k, v, causal, scale, q_pos=None, k_pos=None):
    """softmax(q k^T scale) v in float64, (out, lse) (_softmax_terms)."""
    p, top, total = _softmax_terms(q, k, causal, scale, q_pos, k_pos)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(total > 0, (p @ v) / total, 0.0)
        return out, (np.log(total) + top)[..., 0]


def _tensors(shape, dtype, count, seed):
    """count arrays of shape, normal values rounded to dtype (float64)."""
    rng = np.random.default_rng(seed)
    return [rounded(rng.standard_normal(shape), dtype) for _ in range(count)]


def _local(values, dtype):
    """values as a local tensor of dtype on this backend: a weft.Buffer
    on the host (numpy has no bf16), a torch tensor on GPUs."""
    if BACKEND == "host":
        buf = weft.empty(values.shape, dtype, local=True)
        buf.copy_from(values)
        return buf
    import torch
    return torch.from_numpy(values.astype(np.float32)).to(
        device=f"{BACKEND}:{weft.local_rank()}", dtype=torch_dtype_of(dtype))


def _host(x):
    """A float64 numpy copy of a local tensor (bf16 tensors through f32)."""
    return host(x if isinstance(x, (weft.Buffer, np.ndarray)) else x.float()).astype(np.float64)


# (batch, heads, seq_q, seq_k, head_dim, causal, dtype): odd lengths, one
# row, no keys, both GPU head dims; each (head_dim, causal) a kernel.
@pytest.mark.parametrize("b,h,sq,sk,d,causal,dtype", [
    (1, 2, 37, 37, 64, True, wl.bfloat16), (2, 1, 5, 40, 128, False, wl.float16),
    (1, 1, 1, 1, 16, False, wl.bfloat16), (1, 3, 20, 9, 16, True, wl.float16),
    (1, 1, 3, 0, 16, False, wl.bfloat16), (1, 2, 11, 19, 32, False, wl.bfloat16)])
def test_flash_attention(b, h, sq, sk, d, causal, dtype):
    q, = _tensors((b, h, sq, d), dtype, 1, 1)
    k, v = _tensors((b, h, sk, d), dtype, 2, 2)
    scale = 0.3 if d == 16 else None
    out, lse = ops.flash_attention(_local(q, dtype), _local(k, dtype), _local(v, dtype),
                                   causal=causal, sm_scale=scale, return_lse=True)
    want, want_lse = _attention(q, k, v, causal, scale or d ** -0.5)
    np.testing.assert_allclose(_host(out), want, **TOL)
    np.testing.assert_allclose(host(lse), want_lse, rtol=1e-4, atol=1e-4)


def _attention_grads(q, k, v, dout, dlse, causal, scale, q_pos=None, k_pos=None):
    """(dq, dk, dv) of _attention's output and lse against dout and dlse
    (None: the lse is not used), in float64."""
    p, _, total = _softmax_terms(q, k, causal, scale, q_pos, k_pos)
    p = np.divide(p, total, out=np.zeros_like(p), where=total > 0)
    dp = dout @ np.swapaxes(v, -1, -2)
    ds = p * (dp - (p * dp).sum(-1, keepdims=True)
              + (0.0 if dlse is None else dlse[..., None]))
    return (ds @ k * scale, np.swapaxes(ds, -1, -2) @ q * scale,
            np.swapaxes(p, -1, -2) @ dout)


# (batch, heads, seq_q, seq_k, head_dim, causal, dtype): odd lengths, one
# row, no keys, no queries.
@pytest.mark.parametrize("b,h,sq,sk,d,causal,dtype", [
    (1, 2, 37, 37, 64, True, wl.bfloat16), (2, 1, 5, 40, 32, False, wl.float16),
    (1, 1, 1, 1, 16, False, wl.bfloat16), (1, 3, 20, 9, 16, True, wl.float16),
    (1, 1, 3, 0, 16, False, wl.bfloat16), (1, 1, 0, 5, 16, True, wl.float16),
    (1, 2, 33, 17, 128, True, wl.bfloat16)])
def test_flash_attention_backward(b, h, sq, sk, d, causal, dtype):
    q, dout = _tensors((b, h, sq, d), dtype, 2, 7)
    k, v = _tensors((b, h, sk, d), dtype, 2, 8)
    # The causal cases also feed the lse to the loss (its gradient dlse).
    dlse = _tensors((b, h, sq), wl.float32, 1, 9)[0] if causal else None
    scale = 0.3 if d == 16 else None
    args = [_local(x, dtype) for x in (q, k, v)]
    out, lse = ops.flash_attention(*args, causal=causal, sm_scale=scale, return_lse=True)
    grads = ops.flash_attention_backward(*args, out, lse, _local(dout, dtype), causal=causal,
                                         sm_scale=scale,
                                         dlse=None if dlse is None else _local(dlse, wl.float32))
    wants = _attention_grads(q, k, v, dout, dlse, causal, scale or d ** -0.5)
    for name, got, want in zip(("dq", "dk", "dv"), grads, wants):
        np.testing.assert_allclose(_host(got), want, **TOL, err_msg=name)


@pytest.mark.parametrize("scale", (-0.3, 0.0))
def test_flash_attention_scales_not_positive(scale):
    # The kernels fold a positive scale into exp2's argument after taking
    # the raw scores' maxima; a negative or zero one takes the other path.
    b, h, sq, sk, d, dtype = 1, 2, 9, 13, 16, wl.bfloat16
    q, = _tensors((b, h, sq, d), dtype, 1, 1)
    k, v = _tensors((b, h, sk, d), dtype, 2, 2)
    out = ops.flash_attention(_local(q, dtype), _local(k, dtype), _local(v, dtype),
                              causal=True, sm_scale=scale)
    np.testing.assert_allclose(_host(out), _attention(q, k, v, True, scale)[0], **TOL)


def _positions(rank, seq, layout):
    ranks = weft.num_ranks()
    if layout == "contiguous":
        return rank * seq + np.arange(seq)
    half = seq // 2
    return np.concatenate([rank * half + np.arange(half),
                           (2 * ranks - 1 - rank) * half + np.arange(seq - half)])


def _all_positions(seq, layout):
    """The global positions of every rank's rows, ranks in order."""
    return np.concatenate([_positions(r, seq, layout) for r in range(weft.num_ranks())])


def _sequence_parallel(fn, b, h, seq, d, causal, dtype, layout="contiguous", **kwargs):
    """fn (ring or Ulysses attention) on this rank's shard of random q, k
    and v against the whole sequence's attention in float64, twice (the
    flags' epochs and the halves move on); returns every rank's (q, k, v)
    (float64, ranks first) and (out, lse) of the last call."""
    me, ranks = weft.rank(), weft.num_ranks()
    q = _tensors((ranks, b, h, seq, d), dtype, 1, 3)[0]
    k, v = _tensors((ranks, b, h, seq, d), dtype, 2, 4)
    want, want_lse = _attention(q[me], np.concatenate(list(k), axis=2),
                                np.concatenate(list(v), axis=2), causal, d ** -0.5,
                                _positions(me, seq, layout), _all_positions(seq, layout))
    for call in range(2):
        out, lse = fn(_local(q[me], dtype), _local(k[me], dtype), _local(v[me], dtype),
                      causal=causal, return_lse=True, **kwargs,
                      **({} if fn is ops.ulysses_attention else dict(layout=layout)))
        np.testing.assert_allclose(_host(out), want, **TOL)
        np.testing.assert_allclose(host(lse), want_lse, rtol=1e-4, atol=1e-4)
    return (q, k, v), (out, lse)


# Causal: even shards split in balanced halves (queries read from their
# owners), odd ones each rank's own, zigzag shards their own halves; a
# zigzag layout without a mask takes each shard's keys in one piece.
@pytest.mark.parametrize("b,h,seq,d,causal,layout", [
    (1, 2, 7, 64, False, "contiguous"), (1, 2, 10, 128, True, "contiguous"),
    (2, 1, 7, 16, True, "contiguous"), (1, 2, 12, 16, True, "zigzag"),
    (1, 1, 9, 16, False, "contiguous"), (1, 1, 10, 16, False, "zigzag")])
def test_ring_attention(b, h, seq, d, causal, layout):
    _sequence_parallel(ops.ring_attention, b, h, seq, d, causal, wl.bfloat16, layout)


@pytest.mark.parametrize("b,heads_per_rank,seq,d,causal", [
    (1, 2, 9, 64, True), (2, 1, 5, 16, False), (1, 1, 6, 16, True)])
def test_ulysses_attention(b, heads_per_rank, seq, d, causal):
    _sequence_parallel(ops.ulysses_attention, b, heads_per_rank * weft.num_ranks(), seq, d,
                       causal, wl.float16)


def test_sequence_parallel_a_program_per_ticket(monkeypatch):
    """The GPUs' launch on any backend: a program per ticket (copiers, then
    items) ending in the last program's barrier, the results that travel
    copied into out by a second launch (balanced causal ring, Ulysses)."""
    from weft.ops import _sequence
    monkeypatch.setattr(_sequence, "PROGRAMS", {})
    _sequence_parallel(ops.ring_attention, 1, 2, 10, 16, True, wl.bfloat16)
    _sequence_parallel(ops.ulysses_attention, 1, weft.num_ranks(), 5, 16, False, wl.float16)


def test_attention_interleaved_with_fused_gemms_and_few_programs():
    """The attention kernels share the fused GEMMs' flags and epochs: calls
    of each in turn, and the fewest programs (one copier, one product)."""
    me, ranks = weft.rank(), weft.num_ranks()
    a = weft.empty((4, 8), wl.float32)
    a.copy_from(np.full((4, 8), me + 1.0, np.float32))
    b = np.ones((8, 3), np.float32)
    for _ in range(2):
        _sequence_parallel(ops.ring_attention, 1, 1, 7, 16, True, wl.bfloat16, num_programs=2)
        out = ops.all_gather_matmul(a, _local(b, wl.float32))
        want = np.concatenate([np.full((4, 3), 8.0 * (r + 1)) for r in range(ranks)])
        np.testing.assert_array_equal(host(out), want)
    weft.barrier()
    a.free()


# (batch, heads, seq, causal, layout, with dlse): odd shards of several
# chunks (16 rows on the host), zigzag halves of several, no mask; the
# forward's kernels are test_ring_attention's (head_dim 16, bf16: CI's
# host compiles each variant once).
@pytest.mark.parametrize("b,h,seq,causal,layout,dlse", [
    (1, 2, 37, True, "contiguous", True), (1, 1, 40, True, "zigzag", False),
    (2, 1, 9, False, "contiguous", True)])
def test_ring_attention_backward(b, h, seq, causal, layout, dlse):
    me, ranks = weft.rank(), weft.num_ranks()
    d, dtype = 16, wl.bfloat16
    (q, k, v), (out, lse) = _sequence_parallel(ops.ring_attention, b, h, seq, d, causal, dtype,
                                               layout)
    dout = _tensors((ranks, b, h, seq, d), dtype, 1, 5)[0]
    dl = _tensors((ranks, b, h, seq), wl.float32, 1, 6)[0] if dlse else None
    whole = lambda x: np.concatenate(list(x), axis=2)        # noqa: E731
    pos = _all_positions(seq, layout)
    wants = _attention_grads(whole(q), whole(k), whole(v), whole(dout),
                             None if dl is None else whole(dl), causal, d ** -0.5, pos, pos)
    for programs in (None, 1):     # again, with one copying program
        grads = ops.ring_attention_backward(
            *(_local(x[me], dtype) for x in (q, k, v)), out, lse, _local(dout[me], dtype),
            causal=causal, layout=layout, num_programs=programs,
            dlse=None if dl is None else _local(dl[me], wl.float32))
        for name, got, want in zip(("dq", "dk", "dv"), grads, wants):
            np.testing.assert_allclose(_host(got), want[..., me * seq:(me + 1) * seq, :],
                                       **TOL, err_msg=name)


def test_attention_errors():
    ranks = weft.num_ranks()
    q = _local(np.zeros((1, 2, 4, 16)), wl.bfloat16)
    with pytest.raises(ValueError, match="fp16 or bf16"):
        ops.flash_attention(_local(np.zeros((1, 1, 4, 16)), wl.float32), q, q)
    with pytest.raises(ValueError, match="head_dim 48"):
        x = _local(np.zeros((1, 1, 4, 48)), wl.bfloat16)
        ops.flash_attention(x, x, x)
    with pytest.raises(ValueError, match="need q's batch"):
        ops.flash_attention(q, _local(np.zeros((1, 1, 4, 16)), wl.bfloat16), q)
    with pytest.raises(ValueError, match=r"\[batch, heads, seq, head_dim\]"):
        x = _local(np.zeros((2, 4, 16)), wl.bfloat16)
        ops.flash_attention(x, x, x)
    with pytest.raises(ValueError, match="out must be bf16"):
        ops.flash_attention(q, q, q, out=_local(np.zeros((1, 2, 4, 16)), wl.float16))
    out, lse = ops.flash_attention(q, q, q, return_lse=True)
    with pytest.raises(ValueError, match="dout must be bf16"):
        ops.flash_attention_backward(q, q, q, out, lse, _local(np.zeros((1, 2, 5, 16)),
                                                                 wl.bfloat16))
    with pytest.raises(ValueError, match="lse must be fp32"):
        ops.flash_attention_backward(q, q, q, out, out, out)
    with pytest.raises(ValueError, match="dk must be bf16"):
        ops.flash_attention_backward(q, q, q, out, lse, out,
                                     dk=_local(np.zeros((1, 2, 4, 16)), wl.float16))
    with pytest.raises(ValueError, match="even shard"):
        x = _local(np.zeros((1, 2, 5, 16)), wl.bfloat16)
        ops.ring_attention(x, x, x, layout="zigzag")
    with pytest.raises(ValueError, match="layout must be"):
        ops.ring_attention(q, q, q, layout="striped")
    with pytest.raises(ValueError, match="num_programs must be at least 2"):
        ops.ring_attention(q, q, q, num_programs=1)
    with pytest.raises(ValueError, match="lse must be fp32 of shape"):
        ops.ring_attention(q, q, q, return_lse=True, lse=out)
    with pytest.raises(ValueError, match="layout must be"):
        ops.ring_attention_backward(q, q, q, out, lse, out, layout="striped")
    with pytest.raises(ValueError, match="dlse must be fp32 of shape"):
        ops.ring_attention_backward(q, q, q, out, lse, out, dlse=out)
    with pytest.raises(ValueError, match="copying programs"):
        ops.ring_attention_backward(q, q, q, out, lse, out, num_programs=0)
    if ranks > 2:
        with pytest.raises(ValueError, match="2 heads do not split over"):
            ops.ulysses_attention(q, q, q)
    weft.barrier()


@pytest.mark.skipif(BACKEND == "host", reason="torch's SDPA runs on GPUs")
@pytest.mark.parametrize("causal", [False, True])
def test_flash_attention_against_torch_sdpa(causal):
    import torch
    import torch.nn.functional as F
    gen = torch.Generator(device="cpu").manual_seed(5)
    dev = f"{BACKEND}:{weft.local_rank()}"
    q, k, v = (torch.randn((2, 4, 1000, 128), generator=gen).to(dev, torch.bfloat16)
               for _ in range(3))
    want = F.scaled_dot_product_attention(q.float(), k.float(), v.float(), is_causal=causal)
    out = ops.flash_attention(q, k, v, causal=causal)
    torch.testing.assert_close(out.float(), want, atol=2e-2, rtol=2e-2)
