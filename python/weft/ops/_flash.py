"""Flash attention on one rank: weft.ops.flash_attention, and the online
softmax (_attend) that the sequence-parallel kernels (_sequence.py) share.

Tensors are [batch, heads, seq, head_dim] (torch SDPA's layout),
contiguous. A program takes BM query rows of one head and runs the online
softmax over key blocks of BN rows: scores s = q k^T scaled by sm_scale *
log2(e) (so exp2 serves for exp), running row maxima m and sums l in f32,
the output accumulated in f32 and rescaled by exp2(m_old - m_new) as the
maximum grows. The exponentials are the GPU's approximate ones
(wl.math.fast_exp2): a weight below 2^-126 of the row's largest counts as
0 (three instructions fewer a score on NVPTX, 8-26 % faster:
bench/README.md, "Attention, session 54"). Keys every row of the block
sees in full run without masks; the causal diagonal and the tail of the
keys run masked. A row that sees no key ends with l = 0: its output is 0
and its log-sum-exp -inf (never NaN).
"""
import math

from .. import _runtime as rt
from .. import language as wl
from .._jit import PerBackend, jit, torch_dtype_of
from ..collectives import _dtype_of, _view, scratch_bytes

NEG_INF = float("-inf")
LOG2E = 1.4426950408889634
LN2 = 0.6931471805599453
# Query rows x key rows per step, and the warps of a program: on GPUs two
# warpgroups of 64 rows each, which read every key block once for 128
# queries (1.6x the TFLOP/s of one warpgroup of 64 at 8K on an H200;
# bench/README.md, "Attention"). The host's 8 x 8: a host program unrolls
# its whole tiles, and at head_dim 128 16 x 16 took 3x as long to compile.
BM = PerBackend(host=8, default=128)
BN = PerBackend(host=8, default=64)
NUM_WARPS = PerBackend(host=4, default=8)
HEAD_DIMS = (16, 32, 64, 128)
# Rows a program transposes at a time (GPUs: 128-byte runs of bf16).
TRANSPOSE_ROWS = PerBackend(host=16, default=64)
_DTYPES = (wl.float16, wl.bfloat16)


@jit
def _attend(q, kt, kstride, v, m_i, l_i, acc, rq, key0, lo, hi, end, qk_scale,
            BN: wl.constexpr, HEAD: wl.constexpr, MASK: wl.constexpr, CAUSAL: wl.constexpr,
            SCALE_FOLDED: wl.constexpr):
    """The online softmax of the query tile q (rows at global positions
    rq) over keys lo.. hi (BN apart): k^T (HEAD rows of kstride; key j in
    column j, at global position key0 + j) and v (row-major, HEAD wide);
    (m, l, acc) carried on. k comes transposed so that its blocks, like
    v's, are rows of whole 16-byte pieces for the pipeline's copies. MASK:
    keys at or past `end` (the keys' end, hi's bound: under CAUSAL hi
    stops at the last row's position, which the causal mask covers, and
    masks by `end` stay whole 16-byte pieces where the tensors' rows are)
    and under CAUSAL keys after a row's position are masked; else every
    row sees every key of the blocks. SCALE_FOLDED
    (qk_scale > 0): the row maxima are the raw scores' scaled, and the
    scale goes into exp2's argument as one fma, a multiply per score
    fewer."""
    d = wl.arange(0, HEAD)
    for start in range(lo, hi, BN):
        rn = start + wl.arange(0, BN)
        if MASK:
            kb = wl.load(kt + d[:, None] * kstride + rn[None, :], mask=rn[None, :] < end,
                         other=0.0)
            vt = wl.load(v + rn[:, None] * HEAD + d[None, :], mask=rn[:, None] < end,
                         other=0.0)
        else:
            kb = wl.load(kt + d[:, None] * kstride + rn[None, :])
            vt = wl.load(v + rn[:, None] * HEAD + d[None, :])
        s = wl.dot(q, kb)
        if not SCALE_FOLDED:
            s = s * qk_scale
        if MASK:
            seen = rn[None, :] < end
            if CAUSAL:
                seen = seen & (key0 + rn[None, :] <= rq[:, None])
            s = wl.where(seen, s, NEG_INF)
        top = wl.max(s, 1)
        m_new = wl.maximum(m_i, top * qk_scale if SCALE_FOLDED else top)
        m_use = wl.where(m_new == NEG_INF, 0.0, m_new) if MASK else m_new
        p = wl.math.fast_exp2(wl.fma(s, qk_scale, -m_use[:, None]) if SCALE_FOLDED else
                              s - m_use[:, None])
        alpha = wl.math.fast_exp2(m_i - m_use)
        l_i = l_i * alpha + wl.sum(p, 1)
        acc = wl.dot(p.to(vt.dtype), vt, acc * alpha[:, None])
        m_i = m_new
    return m_i, l_i, acc


@jit
def _attend_range(q, kt, kstride, v, m_i, l_i, acc, rq, key0, lo, hi, qk_scale,
                  BN: wl.constexpr, HEAD: wl.constexpr, CAUSAL: wl.constexpr,
                  SCALE_FOLDED: wl.constexpr):
    """_attend of the query tile q over keys lo..hi of k^T and v: the
    whole blocks every row sees (under CAUSAL those at or before the first
    row's position) unmasked, the rest masked; under CAUSAL nothing after
    the last row's position. Callers load q once for all their ranges: on
    GPUs the pipeline then copies it into shared memory once, where it is
    loaded, for every range's products (docs/tile-ir.md, "Pipelining"); a
    load per range kept the tile's addresses live through the ranges
    before (the sequence-parallel kernel at 255 registers, 7-11 % slower:
    bench/README.md, "Attention, session 55")."""
    last = hi
    end = hi
    if CAUSAL:
        last = wl.minimum(hi, wl.maximum(wl.min(rq, 0) - key0 + 1, lo))
        hi = wl.minimum(hi, wl.maximum(wl.max(rq, 0) - key0 + 1, lo))
    whole = lo + (last - lo) // BN * BN
    m_i, l_i, acc = _attend(q, kt, kstride, v, m_i, l_i, acc, rq, key0, lo, whole, end,
                            qk_scale, BN, HEAD, False, CAUSAL, SCALE_FOLDED)
    return _attend(q, kt, kstride, v, m_i, l_i, acc, rq, key0, whole, hi, end, qk_scale, BN,
                   HEAD, True, CAUSAL, SCALE_FOLDED)


@jit
def _finish(out, lse, m_i, l_i, acc, rm, rows, WRITE_LSE: wl.constexpr, HEAD: wl.constexpr,
            peer=None):
    """out rows rm = acc / l (0 where l is 0), lse = ln(sum exp(scores))
    (-inf there), on `peer` (None: this rank)."""
    d = wl.arange(0, HEAD)
    scale = wl.where(l_i > 0.0, 1.0 / l_i, 0.0)
    ok = rm < rows
    wl.store(out + rm[:, None] * HEAD + d[None, :], acc * scale[:, None], mask=ok[:, None],
             peer=peer)
    if WRITE_LSE:
        total = wl.where(l_i > 0.0, m_i + wl.log2(l_i), NEG_INF)
        wl.store(lse + rm, total * LN2, mask=ok, peer=peer)


@jit
def transpose_rows(x, xt, rows, stride, peer, r0, HEAD: wl.constexpr, CM: wl.constexpr):
    """Rows r0..r0 + CM - 1 (below `rows`) of x (row-major, HEAD wide) into
    the columns of xt (HEAD rows of `stride`) on `peer`: whole runs of CM
    elements per row of xt."""
    r = r0 + wl.arange(0, CM)
    d = wl.arange(0, HEAD)
    tile = wl.load(x + r[:, None] * HEAD + d[None, :], mask=r[:, None] < rows)
    wl.store(xt + d[:, None] * stride + r[None, :], wl.trans(tile), mask=r[None, :] < rows,
             peer=peer)


@jit
def transpose_kernel(k, kt, rows, HEAD: wl.constexpr, CM: wl.constexpr):
    """kt (per head, HEAD x rows) = k^T (per head, rows x HEAD): a program
    per CM rows (axis 0) of a head (axis 1)."""
    head = wl.program_id(1) * rows * HEAD
    transpose_rows(k + head, kt + head, rows, rows, wl.rank(), wl.program_id(0) * CM, HEAD, CM)


@jit
def head_block(i, blocks, LATEST_FIRST: wl.constexpr):
    """(head, block) of item i of a grid over `blocks` blocks of each
    head; LATEST_FIRST reverses each head's blocks (under causal masks
    the latest query blocks see the most keys: they go first)."""
    block = i % blocks
    if LATEST_FIRST:
        block = blocks - 1 - block
    return i // blocks, block


@jit
def flash_attention_kernel(q, kt, v, out, lse, seq_q, seq_k, blocks, qk_scale,
                           CAUSAL: wl.constexpr, WRITE_LSE: wl.constexpr, BM: wl.constexpr,
                           BN: wl.constexpr, HEAD: wl.constexpr, SCALE_FOLDED: wl.constexpr):
    """out = softmax(q k^T * scale) v, query block program_id(0) of BM
    rows, `blocks` blocks a head; lse its log-sum-exp per row; kt: k
    transposed per head (transpose_kernel). Causal: query i sees keys
    0..i (torch's is_causal, top-left), a head's latest blocks (the
    longest) first. One block per program, handed out by the hardware as
    programs finish: resident programs looping over the blocks were 16 %
    slower without CAUSAL and 14-21 % with it (bench/README.md, "Flash
    attention's programs" and "Attention, session 54")."""
    head, block = head_block(wl.program_id(0), blocks, CAUSAL)
    rm = block * BM + wl.arange(0, BM)
    d = wl.arange(0, HEAD)
    qt = q + head * seq_q * HEAD + rm[:, None] * HEAD + d[None, :]
    m_i = wl.full((BM,), NEG_INF, wl.float32)
    l_i = wl.zeros((BM,), wl.float32)
    acc = wl.zeros((BM, HEAD), wl.float32)
    keys = head * seq_k * HEAD
    m_i, l_i, acc = _attend_range(wl.load(qt, mask=rm[:, None] < seq_q, other=0.0), kt + keys,
                                  seq_k, v + keys, m_i, l_i, acc, rm, 0, 0, seq_k, qk_scale, BN,
                                  HEAD, CAUSAL, SCALE_FOLDED)
    _finish(out + head * seq_q * HEAD, lse + head * seq_q, m_i, l_i, acc, rm, seq_q, WRITE_LSE,
            HEAD)


def check_heads(op, q, k, v, same_seq):
    """(batch, heads, seq_q, seq_k, head_dim, dtype) of q, k and v:
    contiguous [batch, heads, seq, head_dim] tensors of one dtype (fp16 or
    bf16), k and v of one shape, head_dim one of HEAD_DIMS; same_seq: k's
    seq is q's."""
    dtype = _dtype_of(q, "q")
    if dtype not in _DTYPES:
        raise ValueError(f"{op}: q has dtype {dtype.name}; it takes fp16 or bf16")
    for name, x in (("q", q), ("k", k), ("v", v)):
        if _dtype_of(x, name) is not dtype:
            raise ValueError(f"{op}: {name} has dtype {_dtype_of(x, name).name} but q has "
                             f"{dtype.name}")
        if len(x.shape) != 4:
            raise ValueError(f"{op}: {name} has shape {tuple(x.shape)}; it needs "
                             f"[batch, heads, seq, head_dim]")
        if hasattr(x, "is_contiguous") and not x.is_contiguous():
            raise ValueError(f"{op}: {name} is not contiguous")
    batch, heads, seq_q, head_dim = map(int, q.shape)
    seq_k = int(k.shape[2])
    if tuple(k.shape) != tuple(v.shape) or tuple(k.shape[:2]) != (batch, heads) \
            or int(k.shape[3]) != head_dim or (same_seq and seq_k != seq_q):
        raise ValueError(f"{op}: q, k and v have shapes {tuple(q.shape)}, {tuple(k.shape)} "
                         f"and {tuple(v.shape)}; k and v need q's batch, heads and "
                         f"head_dim{' and seq' if same_seq else ''}")
    if head_dim not in HEAD_DIMS:
        raise ValueError(f"{op}: head_dim {head_dim} is not one of {HEAD_DIMS}")
    if batch * heads * max(seq_q, seq_k) * head_dim >= 1 << 31:
        raise ValueError(f"{op}: {batch} x {heads} x {max(seq_q, seq_k)} x {head_dim} "
                         f"elements are more than a kernel addresses (2^31)")
    return batch, heads, seq_q, seq_k, head_dim, dtype


def softmax_scale(sm_scale, head_dim):
    """sm_scale, by default 1 / sqrt(head_dim)."""
    return float(1.0 / math.sqrt(head_dim) if sm_scale is None else sm_scale)


def qk_scale(sm_scale, head_dim):
    """The scores' factor: softmax_scale * log2(e)."""
    return softmax_scale(sm_scale, head_dim) * LOG2E


def new_like(x, shape, dtype):
    """A new tensor of `shape` and `dtype` of x's kind: a torch tensor on
    x's device for a tensor, else a local weft.Buffer."""
    if isinstance(x, rt.Buffer) or not hasattr(x, "data_ptr"):
        return rt.empty(shape, dtype, local=True)
    import torch
    return torch.empty(shape, dtype=torch_dtype_of(dtype), device=x.device)


_scratch = {}


def local_scratch(name, n, dtype):
    """A local weft.Buffer of at least n elements of dtype, kept per name
    (grown by powers of two) for this context; its contents last until
    the next call that asks for it, in stream order."""
    buf, generation = _scratch.get(name, (None, None))
    nbytes = max(1, n) * dtype.bits // 8
    if buf is None or generation != rt.state.generation or buf.nbytes < nbytes:
        if buf is not None and generation == rt.state.generation:
            rt.synchronize()  # launched kernels may still read the old one
        buf = rt.Buffer((scratch_bytes(nbytes),), wl.uint8, local=True)
        _scratch[name] = buf, rt.state.generation
    return _view(buf, n, dtype)


def check_out(op, name, x, shape, dtype):
    if _dtype_of(x, name) is not dtype or tuple(x.shape) != tuple(shape):
        raise ValueError(f"{op}: {name} must be {dtype.name} of shape {tuple(shape)}, not "
                         f"{_dtype_of(x, name).name} of shape {tuple(x.shape)}")
    if hasattr(x, "is_contiguous") and not x.is_contiguous():
        raise ValueError(f"{op}: {name} is not contiguous")


def flash_attention(q, k, v, causal=False, sm_scale=None, return_lse=False, out=None,
                    lse=None):
    """softmax(q k^T * sm_scale) v on this rank. q: [batch, heads, seq_q,
    head_dim], k and v: [batch, heads, seq_k, head_dim]; fp16 or bf16,
    contiguous, head_dim 16, 32, 64 or 128; torch tensors (GPU), weft
    Buffers or numpy arrays (host). sm_scale: default 1 / sqrt(head_dim).
    causal: query i sees keys 0..i (torch SDPA's is_causal: the top-left
    triangle). The softmax runs in f32. Returns out (q's shape and dtype;
    a new tensor of q's kind when None), and with return_lse also lse (f32
    [batch, heads, seq_q]: the natural log-sum-exp of each row's scaled
    scores; -inf for a row that sees no key, whose out is 0)."""
    op = "flash_attention"
    batch, heads, seq_q, seq_k, head_dim, dtype = check_heads(op, q, k, v, False)
    if out is None:
        out = new_like(q, tuple(q.shape), dtype)
    check_out(op, "out", out, q.shape, dtype)
    if lse is None and return_lse:
        lse = new_like(q, (batch, heads, seq_q), wl.float32)
    if lse is not None:
        check_out(op, "lse", lse, (batch, heads, seq_q), wl.float32)
    if batch * heads * seq_q:
        backend = rt.backend()
        kt = k
        if seq_k:
            kt = local_scratch("flash_kt", batch * heads * seq_k * head_dim, dtype)
            transpose_kernel[(-(-seq_k // TRANSPOSE_ROWS[backend]), batch * heads)](
                k, kt, seq_k, HEAD=head_dim, CM=TRANSPOSE_ROWS)
        scale = qk_scale(sm_scale, head_dim)
        blocks = -(-seq_q // BM[backend])
        flash_attention_kernel[(blocks * batch * heads,)](
            q, kt, v, out, out if lse is None else lse, seq_q, seq_k, blocks, scale,
            CAUSAL=bool(causal), WRITE_LSE=lse is not None, BM=BM, BN=BN, HEAD=head_dim,
            SCALE_FOLDED=scale > 0, num_warps=NUM_WARPS[backend])
    return (out, lse) if return_lse else out
