"""The backward pass of sequence-parallel attention:
weft.ops.ring_attention_backward.

Each rank holds the shard `seq` of q, k, v, out, lse and dO (layouts as
ring_attention's, _sequence.py) and computes the gradients of its own
rows: dQ of its queries over every rank's keys, dK and dV of its keys
over every rank's queries. Nothing is summed across ranks (no partial
gradients travel, no atomics: the results do not depend on scheduling);
instead every rank gathers every shard of k, v, q, dO, lse and delta,
placed by global position, so that its products are flash attention's
backward over the whole sequence:

- delta = rowsum(dO * O) - dlse of this rank's rows (_delta_kernel);
- send_kernel (resident): this rank's shard into every rank's symmetric
  scratch, chunk by chunk (never across a zigzag shard's halves), the
  transposes the products read (k^T, v^T, q^T, dO^T, as
  flash_attention_backward's) made on the way, each chunk flagged on
  arrival with the call's epoch;
- dq_kernel: a program per block of this rank's queries, over the keys
  up to its last position, after waiting for the chunks that hold them;
- dkdv_kernel: a program per block of its keys, over the queries from
  its first position on; its last program ends the call and waits for
  every rank to have ended it, which makes the reuse of the scratch and
  the flags safe in the next call.

The products are grids, not resident queues: on an H200 (head_dim 128)
the same dQ item in a program that loops over items ran 1.4x slower
than one item per program (ncu: 255 registers against 219, 6.2 cycles
per issued instruction against 4.6, the inner loop's SASS the same),
and waiting in a grid is safe here: what a program waits for comes from
send_kernel launches, which wait for nothing. The price is that the
gather runs before the products instead of under them.

Under CAUSAL the work balances without moving anything: with the
contiguous layout rank r's dQ items see r + 1/2 shards of keys and its
dK/dV items R - r - 1/2 shards of queries, R in all on every rank (zigzag
shards are balanced in each).
"""
from .. import _runtime as rt
from .. import language as wl
from .._jit import jit
from ..collectives._kernels import FUSED_ARRIVALS, FUSED_BLOCKS, FUSED_DONE
from ..collectives._kernels import _fused_call_done
from ..collectives import _node_comm
from ._flash import check_heads, new_like, qk_scale, softmax_scale, transpose_rows
from ._flash_backward import (BM_KV, BM_Q, BN_KV, BN_Q, NUM_WARPS, _delta_kernel, _row_stats,
                              check_gradients, dkdv_steps, dq_steps)
from ._sequence import CHUNK_ROWS, COPY_ROWS, PROGRAMS, check_layout
from ._sequence import _key_part

# The tensors every rank gathers, each in the scratch g as bh heads of the
# whole sequence in global order (row-major: position x HEAD; transposed,
# k^T, v^T, q^T, dO^T: HEAD x position), then lse and delta (f32, bh
# heads of the sequence each, in the scratch gs).
K, KT, VT, Q, QT, DO, DOT, TENSORS = range(8)
LSE, DELTA, VECTORS = range(3)


@jit
def _scatter_rows(q, k, v, dout, lse, delta, g, gs, tensor, vector, dest, head, lo, hi, shift,
                  seq, total, HEAD: wl.constexpr, CM: wl.constexpr):
    """Rows lo..hi - 1 of head `head` of this rank's shard (seq rows a
    head) of every gathered tensor into g (`tensor` elements each) and gs
    (`vector` each) on `dest`, at positions lo + shift.. of that head's
    `total`."""
    d = wl.arange(0, HEAD)
    src = head * seq
    dst = head * total
    for r0 in range(lo, hi, CM):
        r = r0 + wl.arange(0, CM)
        ok = r < hi
        rows = (src + r[:, None]) * HEAD + d[None, :]
        at = (dst + shift + r[:, None]) * HEAD + d[None, :]
        _put(k + rows, g + K * tensor + at, ok[:, None], dest)
        _put(q + rows, g + Q * tensor + at, ok[:, None], dest)
        _put(dout + rows, g + DO * tensor + at, ok[:, None], dest)
        transposed = dst * HEAD + shift                  # column shift + r of HEAD rows
        transpose_rows(k + src * HEAD, g + KT * tensor + transposed, hi, total, dest, r0, HEAD,
                       CM)
        transpose_rows(v + src * HEAD, g + VT * tensor + transposed, hi, total, dest, r0, HEAD,
                       CM)
        transpose_rows(q + src * HEAD, g + QT * tensor + transposed, hi, total, dest, r0, HEAD,
                       CM)
        transpose_rows(dout + src * HEAD, g + DOT * tensor + transposed, hi, total, dest, r0,
                       HEAD, CM)
        _put(lse + src + r, gs + LSE * vector + dst + shift + r, ok, dest)
        _put(delta + src + r, gs + DELTA * vector + dst + shift + r, ok, dest)


@jit
def _put(x, y, mask, dest):
    """*y = *x where mask, y on `dest`."""
    wl.store(y, wl.load(x, mask=mask), mask=mask, peer=dest)


@jit
def _chunks_per_part(seq, chunk_rows, ZIGZAG: wl.constexpr):
    """Flagged chunks of a part (the shard, or a zigzag shard's half) of a
    head: chunks never straddle two parts."""
    return (seq // (2 if ZIGZAG else 1) + chunk_rows - 1) // chunk_rows


@jit
def _source_chunks(bh, seq, chunk_rows, ZIGZAG: wl.constexpr):
    """Flagged chunks of a source's shard: its heads' parts'."""
    return bh * (2 if ZIGZAG else 1) * _chunks_per_part(seq, chunk_rows, ZIGZAG)


@jit
def _send_chunk(q, k, v, dout, lse, delta, g, gs, tensor, vector, dest, c, seq, total,
                chunk_rows, ZIGZAG: wl.constexpr, HEAD: wl.constexpr, CM: wl.constexpr):
    """Chunk c of this rank's shard (chunk_rows rows of a part of a head,
    in order head, part, chunk) to `dest`, at its global positions."""
    per_part = _chunks_per_part(seq, chunk_rows, ZIGZAG)
    part = c // per_part % (2 if ZIGZAG else 1)
    lo, hi, pos0 = _key_part(wl.rank(), part, seq, ZIGZAG)
    lo += c % per_part * chunk_rows
    _scatter_rows(q, k, v, dout, lse, delta, g, gs, tensor, vector, dest,
                  c // (per_part * (2 if ZIGZAG else 1)), lo, wl.minimum(hi, lo + chunk_rows),
                  pos0, seq, total, HEAD, CM)


@jit
def _wait_positions(arrivals, chunks, head, chunk_rows, lo, hi, seq, epoch,
                    ZIGZAG: wl.constexpr):
    """Waits for the chunks, from every source, that hold positions
    lo..hi - 1 of head `head` (chunks flags a source, numbered as
    _send_chunk's)."""
    per_part = _chunks_per_part(seq, chunk_rows, ZIGZAG)
    for src in range(wl.num_ranks()):
        for part in range(2 if ZIGZAG else 1):
            plo, phi, pos0 = _key_part(src, part, seq, ZIGZAG)
            first = wl.maximum(plo, lo - pos0)
            end = wl.minimum(phi, hi - pos0)
            if end > first:
                flags = arrivals + src * chunks + (head * (2 if ZIGZAG else 1) + part) * per_part
                for chunk in range((first - plo) // chunk_rows, (end - 1 - plo) // chunk_rows + 1):
                    wl.wait(flags + chunk, epoch, cmp="ge")


@jit
def _item(i, bh, seq, ZIGZAG: wl.constexpr, LATEST_FIRST: wl.constexpr, BLOCK: wl.constexpr):
    """(head, first row, end row of its part, position of row 0) of item
    i: a block of BLOCK rows of one head of this rank's shard, in order
    head, part (a zigzag shard's halves), block (the heads in turn, as
    their chunks arrive; each head's items together, as they share its
    keys and queries in L2); LATEST_FIRST: the parts and blocks of each
    head in reverse."""
    parts = 2 if ZIGZAG else 1
    blocks = (seq // parts + BLOCK - 1) // BLOCK
    part = i // blocks % parts
    block = i % blocks
    if LATEST_FIRST:
        part = parts - 1 - part
        block = blocks - 1 - block
    lo, hi, pos0 = _key_part(wl.rank(), part, seq, ZIGZAG)
    return i // (blocks * parts), lo + block * BLOCK, hi, pos0


@jit
def _block(i, x, y, bh, seq, ZIGZAG: wl.constexpr, LATEST_FIRST: wl.constexpr,
           BLOCK: wl.constexpr, HEAD: wl.constexpr):
    """Item i's block (_item) of x and y (this rank's rows): (head, first
    row, end row of its part, position of row 0, its rows, which are
    there, their offsets, x's tile, y's tile)."""
    head, start, hi, pos0 = _item(i, bh, seq, ZIGZAG, LATEST_FIRST, BLOCK)
    r = start + wl.arange(0, BLOCK)
    ok = r < hi
    offs = (head * seq + r[:, None]) * HEAD + wl.arange(0, HEAD)[None, :]
    return (head, start, hi, pos0, r, ok, offs, wl.load(x + offs, mask=ok[:, None], other=0.0),
            wl.load(y + offs, mask=ok[:, None], other=0.0))


@jit
def send_kernel(q, k, v, dout, lse, delta, g, gs, sync, batch, heads, seq, chunk_rows,
                ZIGZAG: wl.constexpr, HEAD: wl.constexpr, CM: wl.constexpr):
    """A call's first launch (resident): this rank's shard of every
    gathered tensor to every rank, chunk by chunk, each chunk flagged on
    arrival with the call's epoch."""
    me = wl.rank()
    ranks = wl.num_ranks()
    bh = batch * heads
    total = ranks * seq
    chunks = _source_chunks(bh, seq, chunk_rows, ZIGZAG)
    epoch = wl.load(sync) + 1                       # the dK/dV launch moves it on
    for j in range(wl.program_id(0), ranks * chunks, wl.num_programs(0)):
        dest = (me + j % ranks) % ranks             # chunk by chunk, as the forward
        _send_chunk(q, k, v, dout, lse, delta, g, gs, bh * total * HEAD, bh * total, dest,
                    j // ranks, seq, total, chunk_rows, ZIGZAG, HEAD, CM)
        wl.signal(sync + FUSED_ARRIVALS + me * chunks + j // ranks, epoch, peer=dest)


@jit
def dq_kernel(q, dout, lse, delta, dq, g, sync, batch, heads, seq, chunk_rows, sm_scale,
              qk_scale, CAUSAL: wl.constexpr, ZIGZAG: wl.constexpr, BM: wl.constexpr,
              BN: wl.constexpr, HEAD: wl.constexpr):
    """dQ of this rank's query block program_id(0) (_item's order: the
    latest first under CAUSAL, theirs are the longest) over the keys of
    the whole sequence."""
    bh = batch * heads
    total = wl.num_ranks() * seq
    head, start, hi, pos0, rm, qok, offs, qb, dob = _block(wl.program_id(0), q, dout, bh, seq,
                                                            ZIGZAG, CAUSAL, BM, HEAD)
    lse2, dl = _row_stats(lse + head * seq, delta + head * seq, rm, hi)
    # Keys up to the block's last position, under CAUSAL.
    end = pos0 + wl.minimum(hi, start + BM) if CAUSAL else total
    _wait_positions(sync + FUSED_ARRIVALS, _source_chunks(bh, seq, chunk_rows, ZIGZAG), head,
                    chunk_rows, 0, end, seq, wl.load(sync) + 1, ZIGZAG)
    tensor = bh * total * HEAD
    keys = g + head * total * HEAD
    acc = dq_steps(qb, dob, lse2, dl, pos0 + rm, qok, keys + K * tensor, keys + KT * tensor,
                   keys + VT * tensor, total, 0, 0, end, wl.zeros((BM, HEAD), wl.float32),
                   qk_scale, CAUSAL, BN, HEAD)
    wl.store(dq + offs, (acc * sm_scale).to(qb.dtype), mask=qok[:, None])


@jit
def dkdv_kernel(k, v, dk, dv, g, gs, sync, batch, heads, seq, chunk_rows, sm_scale, qk_scale,
                CAUSAL: wl.constexpr, ZIGZAG: wl.constexpr, BM: wl.constexpr,
                BN: wl.constexpr, HEAD: wl.constexpr):
    """dK and dV of this rank's key block program_id(0) (_item's order:
    the earliest keys, the longest under CAUSAL, first) over the queries
    of the whole sequence. The call's last launch: its last program ends
    the call and waits for every rank to have ended it (then no rank
    reads my slots of g and gs, or my flags, any more, and the next call
    may overwrite them)."""
    bh = batch * heads
    total = wl.num_ranks() * seq
    epoch = wl.load(sync) + 1
    head, start, hi, pos0, rn, kok, offs, kb, vb = _block(wl.program_id(0), k, v, bh, seq,
                                                           ZIGZAG, False, BN, HEAD)
    # Queries from the block's first position on, under CAUSAL.
    first = pos0 + start if CAUSAL else 0
    _wait_positions(sync + FUSED_ARRIVALS, _source_chunks(bh, seq, chunk_rows, ZIGZAG), head,
                    chunk_rows, first, total, seq, epoch, ZIGZAG)
    tensor = bh * total * HEAD
    vector = bh * total
    rows = g + head * total * HEAD
    stats = gs + head * total
    dk_acc, dv_acc = dkdv_steps(kb, vb, pos0 + rn, kok, rows + Q * tensor, rows + QT * tensor,
                                rows + DO * tensor, rows + DOT * tensor, stats + LSE * vector,
                                stats + DELTA * vector, total, 0, first, total,
                                wl.zeros((BN, HEAD), wl.float32),
                                wl.zeros((BN, HEAD), wl.float32), qk_scale, CAUSAL, BM, HEAD)
    wl.store(dk + offs, (dk_acc * sm_scale).to(kb.dtype), mask=kok[:, None])
    wl.store(dv + offs, dv_acc.to(vb.dtype), mask=kok[:, None])
    if _fused_call_done(sync, epoch):
        for p in range(wl.num_ranks()):
            wl.wait(sync + FUSED_DONE + p, epoch, cmp="ge")


def ring_attention_backward(q, k, v, out, lse, dout, causal=False, sm_scale=None,
                            layout="contiguous", dq=None, dk=None, dv=None, dlse=None,
                            num_programs=None):
    """The gradients (dq, dk, dv) of this rank's shard of
    ring_attention(q, k, v, causal, sm_scale, layout) (or of
    ulysses_attention's, the same attention, layout contiguous) given the
    gradient dout of its output (and dlse of its lse, f32 [batch, heads,
    seq], where the lse feeds the loss too): q, k, v, causal, sm_scale and
    layout as the forward's, out and lse what it returned (return_lse=True),
    dout of out's shape and dtype. Returns (dq, dk, dv), of q's shape and
    dtype (new tensors of q's kind where None); the sums run in f32. Every
    rank calls it with the same shapes and arguments."""
    op = "ring_attention_backward"
    batch, heads, seq, _, head_dim, dtype = check_heads(op, q, k, v, True)
    ranks = rt.num_ranks()
    check_layout(op, layout, seq)
    if num_programs is not None and int(num_programs) < 1:
        raise ValueError(f"{op}: num_programs (the copying programs) must be at least 1, "
                         f"got {num_programs}")
    dq, dk, dv = check_gradients(op, q, k, v, out, lse, dout, dlse, dq, dk, dv)
    n = batch * heads * seq * head_dim
    if TENSORS * ranks * n >= 1 << 31:
        raise ValueError(f"{op}: {ranks} shards of {tuple(q.shape)} need "
                         f"{TENSORS * ranks * n} elements of scratch, more than a kernel "
                         f"addresses (2^31)")
    if n == 0:
        return dq, dk, dv
    backend = rt.backend()
    delta = new_like(q, (batch, heads, seq), wl.float32)
    _delta_kernel[(-(-seq // BM_Q[backend]), batch * heads)](
        out, dout, delta if dlse is None else dlse, delta, seq, DLSE=dlse is not None, BM=BM_Q,
        HEAD=head_dim)
    zigzag = layout == "zigzag"
    parts = 2 if zigzag else 1
    chunk_rows = CHUNK_ROWS[backend]
    while ranks * batch * heads * parts * -(-(seq // parts) // chunk_rows) > FUSED_BLOCKS:
        chunk_rows *= 2
    comm = _node_comm(op)
    g = comm.buffer("attention_grad", TENSORS * ranks * n, dtype, drain=True)
    gs = comm.buffer("attention_grad_stats", VECTORS * ranks * batch * heads * seq, wl.float32,
                     drain=True)
    common = (comm.fused_sync, batch, heads, seq, chunk_rows)
    send_kernel[(int(num_programs or PROGRAMS.get(backend, FUSED_BLOCKS)),)](
        q, k, v, dout, lse, delta, g, gs, *common, ZIGZAG=zigzag, HEAD=head_dim,
        CM=COPY_ROWS, num_warps=NUM_WARPS[backend], resident=True)
    scales = (softmax_scale(sm_scale, head_dim), qk_scale(sm_scale, head_dim))
    blocks = dict(CAUSAL=bool(causal), ZIGZAG=zigzag, HEAD=head_dim,
                  num_warps=NUM_WARPS[backend])
    dq_kernel[(parts * batch * heads * -(-(seq // parts) // BM_Q[backend]),)](
        q, dout, lse, delta, dq, g, *common, *scales, BM=BM_Q, BN=BN_Q, **blocks)
    dkdv_kernel[(parts * batch * heads * -(-(seq // parts) // BN_KV[backend]),)](
        k, v, dk, dv, g, gs, *common, *scales, BM=BM_KV, BN=BN_KV, **blocks)
    return dq, dk, dv
