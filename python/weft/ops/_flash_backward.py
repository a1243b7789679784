"""The backward pass of flash attention on one rank:
weft.ops.flash_attention_backward.

With S = q k^T * sm_scale, P = exp(S - lse) (the forward's softmax, from
its log-sum-exp), the output's gradient dO and the lse's dlse (if the lse
feeds the loss too):

    dV = P^T dO,  dP = dO V^T,  dS = P * (dP - delta),
    delta = rowsum(dO * O) - dlse,  dQ = dS K * sm_scale,  dK = dS^T Q * sm_scale

Three launches after four transposes, no atomics (the results do not
depend on scheduling): delta per query row (_delta_kernel); dK and dV, a
program per key block looping over the query blocks that see it
(_dkdv_kernel); dQ, a program per query block looping over the keys it
sees (_dq_kernel). q, dO, k and v are transposed per head first
(transpose_kernel, as the forward transposes k) for the products' b
operands. P is recomputed from q, k and lse in both loops, in f32, as
fast_exp2 of scores scaled by sm_scale * log2(e) (lse too is taken to base
2), as the forward's.
"""
from .. import _runtime as rt
from .. import language as wl
from .._jit import PerBackend, jit
from ..collectives import _dtype_of
from ._flash import (LOG2E, TRANSPOSE_ROWS, check_heads, check_out, head_block, local_scratch,
                     new_like, qk_scale, softmax_scale, transpose_kernel)

# Query rows x key rows of a step, per kernel: a program of _dkdv_kernel
# holds BN_KV keys and steps over BM_KV queries, one of _dq_kernel the
# converse; on GPUs 128 rows a program on two warpgroups, as the forward.
# At head_dim 128 on sm_90, 64 queries a step leave _dkdv_kernel no room
# for pipelined operands (mma.sync, 1 KB of spills); 32 pipeline in 3
# stages on wgmma in 242 registers. The host's 8 x 8 as the forward's.
BM_KV = PerBackend(host=8, default=32)
BN_KV = PerBackend(host=8, default=128)
BM_Q = PerBackend(host=8, default=128)
BN_Q = PerBackend(host=8, default=64)
NUM_WARPS = PerBackend(host=4, default=8)


@jit
def _delta_kernel(out, dout, dlse, delta, seq_q, DLSE: wl.constexpr, BM: wl.constexpr,
                  HEAD: wl.constexpr):
    """delta = rowsum(dO * O) in f32 for BM rows (axis 0) of a head (axis
    1), less the lse's gradient (DLSE): lse_i's derivative in S_ij is
    P_ij, so dS = P * (dP - delta + dlse)."""
    head = wl.program_id(1) * seq_q
    rm = wl.program_id(0) * BM + wl.arange(0, BM)
    d = wl.arange(0, HEAD)
    offs = (head + rm[:, None]) * HEAD + d[None, :]
    ok = rm[:, None] < seq_q
    o = wl.load(out + offs, mask=ok, other=0.0).to(wl.float32)
    do = wl.load(dout + offs, mask=ok, other=0.0).to(wl.float32)
    total = wl.sum(o * do, 1)
    if DLSE:
        total -= wl.load(dlse + head + rm, mask=rm < seq_q, other=0.0)
    wl.store(delta + head + rm, total, mask=rm < seq_q)


@jit
def _row_stats(lse, delta, rm, rows):
    """The base-2 log-sum-exp and delta of query rows rm (below `rows`)
    of a head's lse and delta."""
    return (wl.load(lse + rm, mask=rm < rows, other=0.0) * LOG2E,
            wl.load(delta + rm, mask=rm < rows, other=0.0))


@jit
def _probabilities(s, lse2, seen, qpos, kpos, qk_scale, CAUSAL: wl.constexpr):
    """P (or P^T, by how the operands are laid out: s[i, j] pairs a query
    at position qpos with a key at kpos after broadcasting) from the raw
    scores s and the rows' base-2 log-sum-exp; 0 where not `seen` (a
    query or key past its end) or, under CAUSAL, the key comes after the
    query."""
    if CAUSAL:
        seen = seen & (kpos <= qpos)
    return wl.where(seen, wl.math.fast_exp2(s * qk_scale - lse2), 0.0)


@jit
def dq_steps(qb, dob, lse2, dl, qpos, qok, k, kt, vt, kstride, key0, lo, hi, dq_acc, qk_scale,
             CAUSAL: wl.constexpr, BN: wl.constexpr, HEAD: wl.constexpr):
    """dq_acc plus the sum of dS K over keys lo..hi (BN a step) of a
    head's k (rows), k^T and v^T (HEAD rows of kstride), key j at
    position key0 + j, for the query tile qb (rows at positions qpos,
    valid where qok) with its dO, base-2 lse and delta."""
    d = wl.arange(0, HEAD)
    for start in range(lo, hi, BN):
        rn = start + wl.arange(0, BN)
        ok = rn < hi
        kb = wl.load(k + rn[:, None] * HEAD + d[None, :], mask=ok[:, None], other=0.0)
        cols = d[:, None] * kstride + rn[None, :]
        ktb = wl.load(kt + cols, mask=ok[None, :], other=0.0)
        vtb = wl.load(vt + cols, mask=ok[None, :], other=0.0)
        p = _probabilities(wl.dot(qb, ktb), lse2[:, None], qok[:, None] & ok[None, :],
                           qpos[:, None], key0 + rn[None, :], qk_scale, CAUSAL)
        ds = p * (wl.dot(dob, vtb) - dl[:, None])
        dq_acc = wl.dot(ds.to(kb.dtype), kb, dq_acc)
    return dq_acc


@jit
def dkdv_steps(kb, vb, kpos, kok, q, qt, dout, dot, lse, delta, qstride, q0, lo, hi, dk_acc,
               dv_acc, qk_scale, CAUSAL: wl.constexpr, BM: wl.constexpr, HEAD: wl.constexpr):
    """(dk_acc, dv_acc) plus the sums of dS^T Q and P^T dO over queries
    lo..hi (BM a step) of a head's q and dO (rows), q^T and dO^T (HEAD
    rows of qstride), lse and delta, query i at position q0 + i, for the
    key tile kb (rows at positions kpos, valid where kok) and its v. The
    transposed operands make every tile a step loads rows of whole
    16-byte pieces (pipelined, and on GPUs read by the products in
    place)."""
    d = wl.arange(0, HEAD)
    for start in range(lo, hi, BM):
        rm = start + wl.arange(0, BM)
        ok = rm < hi
        rows = rm[:, None] * HEAD + d[None, :]
        cols = d[:, None] * qstride + rm[None, :]
        qb = wl.load(q + rows, mask=ok[:, None], other=0.0)
        dob = wl.load(dout + rows, mask=ok[:, None], other=0.0)
        qtb = wl.load(qt + cols, mask=ok[None, :], other=0.0)
        dotb = wl.load(dot + cols, mask=ok[None, :], other=0.0)
        lse2, dl = _row_stats(lse, delta, rm, hi)
        pt = _probabilities(wl.dot(kb, qtb), lse2[None, :], kok[:, None] & ok[None, :],
                            q0 + rm[None, :], kpos[:, None], qk_scale, CAUSAL)
        dv_acc = wl.dot(pt.to(dob.dtype), dob, dv_acc)
        dst = pt * (wl.dot(vb, dotb) - dl[None, :])
        dk_acc = wl.dot(dst.to(qb.dtype), qb, dk_acc)
    return dk_acc, dv_acc


@jit
def _dkdv_kernel(q, qt, k, v, dout, dot, lse, delta, dk, dv, seq_q, seq_k, sm_scale, qk_scale,
                 CAUSAL: wl.constexpr, BM: wl.constexpr, BN: wl.constexpr,
                 HEAD: wl.constexpr):
    """dK and dV of key block program_id(0) % blocks (BN rows) of head
    program_id(0) // blocks: the sums over the query blocks that see them
    (under CAUSAL those from the block of the first key on: the earliest
    keys, the longest, go first); qt and dot: q and dO transposed per
    head."""
    blocks = (seq_k + BN - 1) // BN
    head, block = head_block(wl.program_id(0), blocks, False)
    rn = block * BN + wl.arange(0, BN)
    d = wl.arange(0, HEAD)
    keys = (head * seq_k + rn[:, None]) * HEAD + d[None, :]
    kok = rn < seq_k
    kb = wl.load(k + keys, mask=kok[:, None], other=0.0)
    vb = wl.load(v + keys, mask=kok[:, None], other=0.0)
    first = block * BN // BM * BM if CAUSAL else 0
    rows = head * seq_q * HEAD
    dk_acc, dv_acc = dkdv_steps(kb, vb, rn, kok, q + rows, qt + rows, dout + rows, dot + rows,
                                lse + head * seq_q, delta + head * seq_q, seq_q, 0, first,
                                seq_q, wl.zeros((BN, HEAD), wl.float32),
                                wl.zeros((BN, HEAD), wl.float32), qk_scale, CAUSAL, BM, HEAD)
    wl.store(dk + keys, (dk_acc * sm_scale).to(kb.dtype), mask=kok[:, None])
    wl.store(dv + keys, dv_acc.to(vb.dtype), mask=kok[:, None])


@jit
def _dq_kernel(q, k, kt, vt, dout, lse, delta, dq, seq_q, seq_k, sm_scale, qk_scale,
               CAUSAL: wl.constexpr, BM: wl.constexpr, BN: wl.constexpr,
               HEAD: wl.constexpr):
    """dQ of query block program_id(0) % blocks (BM rows; under CAUSAL
    the latest first: they see the most keys) of head program_id(0) //
    blocks: the sum over the key blocks they see of dS K; kt and vt: k
    and v transposed per head."""
    blocks = (seq_q + BM - 1) // BM
    head, block = head_block(wl.program_id(0), blocks, CAUSAL)
    rm = block * BM + wl.arange(0, BM)
    d = wl.arange(0, HEAD)
    rows = (head * seq_q + rm[:, None]) * HEAD + d[None, :]
    qok = rm < seq_q
    qb = wl.load(q + rows, mask=qok[:, None], other=0.0)
    dob = wl.load(dout + rows, mask=qok[:, None], other=0.0)
    lse2, dl = _row_stats(lse + head * seq_q, delta + head * seq_q, rm, seq_q)
    end = wl.minimum(seq_k, (block + 1) * BM) if CAUSAL else seq_k
    keys = head * seq_k * HEAD
    dq_acc = dq_steps(qb, dob, lse2, dl, rm, qok, k + keys, kt + keys, vt + keys, seq_k, 0, 0,
                      end, wl.zeros((BM, HEAD), wl.float32), qk_scale, CAUSAL, BN, HEAD)
    wl.store(dq + rows, (dq_acc * sm_scale).to(qb.dtype), mask=qok[:, None])


def check_gradients(op, q, k, v, out, lse, dout, dlse, dq, dk, dv):
    """(dq, dk, dv) for a backward pass of attention over q, k and v
    (checked by check_heads): out, dout (q's shape and dtype), lse and
    dlse (f32, a row each) checked, the gradients new tensors of q's kind
    where None, else checked against q's, k's and v's shapes and dtype."""
    dtype = _dtype_of(q, "q")
    rows = tuple(q.shape[:3])
    check_out(op, "out", out, q.shape, dtype)
    check_out(op, "dout", dout, q.shape, dtype)
    check_out(op, "lse", lse, rows, wl.float32)
    if dlse is not None:
        check_out(op, "dlse", dlse, rows, wl.float32)
    grads = []
    for name, x, like in (("dq", dq, q), ("dk", dk, k), ("dv", dv, v)):
        if x is None:
            x = new_like(q, tuple(like.shape), dtype)
        check_out(op, name, x, like.shape, dtype)
        grads.append(x)
    return grads


def flash_attention_backward(q, k, v, out, lse, dout, causal=False, sm_scale=None, dq=None,
                             dk=None, dv=None, dlse=None):
    """The gradients (dq, dk, dv) of flash_attention(q, k, v, causal,
    sm_scale) given the gradient dout of its output (and dlse of its lse,
    f32 [batch, heads, seq_q], where the lse feeds the loss too): q, k, v
    as there, out and lse what it returned (flash_attention(...,
    return_lse=True)), dout of out's shape and dtype. Returns (dq, dk,
    dv), of q's, k's and v's shapes and dtype (new tensors of q's kind
    where None); the sums run in f32."""
    op = "flash_attention_backward"
    batch, heads, seq_q, seq_k, head_dim, dtype = check_heads(op, q, k, v, False)
    dq, dk, dv = check_gradients(op, q, k, v, out, lse, dout, dlse, dq, dk, dv)
    if batch * heads * (seq_q + seq_k) == 0:
        return dq, dk, dv
    backend = rt.backend()
    sm = softmax_scale(sm_scale, head_dim)
    scale = qk_scale(sm_scale, head_dim)
    delta = new_like(q, (batch, heads, seq_q), wl.float32)
    t = {}
    for name, x, rows in (("q", q, seq_q), ("dout", dout, seq_q), ("k", k, seq_k),
                          ("v", v, seq_k)):
        t[name] = local_scratch(f"flash_bwd_{name}t", batch * heads * rows * head_dim, dtype)
        if rows:
            transpose_kernel[(-(-rows // TRANSPOSE_ROWS[backend]), batch * heads)](
                x, t[name], rows, HEAD=head_dim, CM=TRANSPOSE_ROWS)
    common = dict(CAUSAL=bool(causal), HEAD=head_dim, num_warps=NUM_WARPS[backend])
    if seq_q:
        bm = BM_Q[backend]
        _delta_kernel[(-(-seq_q // bm), batch * heads)](
            out, dout, delta if dlse is None else dlse, delta, seq_q, DLSE=dlse is not None,
            BM=BM_Q, HEAD=head_dim)
        _dq_kernel[(-(-seq_q // bm) * batch * heads,)](q, k, t["k"], t["v"], dout, lse, delta,
                                                        dq, seq_q, seq_k, sm, scale, BM=BM_Q,
                                                        BN=BN_Q, **common)
    if seq_k:
        _dkdv_kernel[(-(-seq_k // BN_KV[backend]) * batch * heads,)](
            q, t["q"], k, v, dout, t["dout"], lse, delta, dk, dv, seq_q, seq_k, sm, scale,
            BM=BM_KV, BN=BN_KV, **common)
    return dq, dk, dv
