"""Sequence-parallel attention: weft.ops.ring_attention and
weft.ops.ulysses_attention, one launch each (sp_attention_kernel).

Each rank holds the shard `seq` of q, k and v ([batch, heads, seq,
head_dim]); rank r's rows are global positions r * seq .. (r + 1) * seq - 1
(layout "contiguous"), or under layout "zigzag" (ring only) the halves
r and 2R - 1 - r of the sequence cut in 2R halves of seq / 2 rows.

In the launch, programs take tickets in order. The holders of the first
(copiers) push this rank's k and v into every rank's symmetric scratch g
(their own slot of it), CHUNK_ROWS rows of one head at a time, each chunk
to this rank and then to the next ones before the next chunk (the first
query blocks need the first heads of every source), each flagged on
arrival with the call's epoch. The other tickets are query blocks: their
programs run the online softmax over the keys of every source rank, this
rank's first and then the previous ranks' (the first to arrive), waiting
only for the chunks they read: the transfers of later sources run under
the products of the earlier ones, and the products read local memory only
(their K loops are pipelined, docs/tile-ir.md). Ring attention sends every
head to every rank; Ulysses sends each rank only its group of heads/R
heads, with their queries, and that rank attends its heads over the whole
sequence and stores the outputs back to their owners (one tile per block).

Causal ring attention balances the work: a rank computes the query
halves r and 2R - 1 - r (one early, one late), whatever the layout; under
"contiguous" these live on other ranks, so the queries travel with the
keys (to every rank, as the keys do) and the outputs go back. A shard of
odd length cannot be halved: then every rank computes its own queries
(right, not balanced).

Results (and, with return_lse, the rows' log-sum-exps, in a scratch of
their own) that go to another rank land in a symmetric scratch (two
halves, by the parity of the call's epoch), and a second launch
(copy_out_kernel) copies them into out. Each rank's last program to
finish flags FUSED_DONE on every rank and waits for every rank's flag,
so the launch ends when every rank has finished the call: the results
are complete, and the reuse of g and the flags is safe in the next call.
"""
from .. import _runtime as rt
from .. import language as wl
from .._jit import PerBackend, jit
from ..collectives._kernels import (FUSED_ARRIVALS, FUSED_BLOCKS, FUSED_DONE, FUSED_QUEUE,
                                    _fused_call_done)
from ..collectives import _node_comm
from ._flash import (BM, BN, NEG_INF, NUM_WARPS, _attend_range, _finish,
                     check_heads, check_out, head_block, new_like, qk_scale, transpose_rows)

# Rows of a head per flagged chunk (at least: more for long heads, below,
# or where the flags would run out), rows per copied tile, and the copying
# programs (of resident ones at most half). A copy is latency-bound (a
# tile's load, then its stores), so on GPUs many programs copy large tiles
# (ring attention at 8K on 2 H200s: 1235 us with 8 programs of 64 rows, 998
# with 64 of 256: bench/results/tune-sp-copiers-2026-11-27-2gpu.csv).
CHUNK_ROWS = PerBackend(host=16, default=512)
COPY_ROWS = PerBackend(host=16, default=256)
COPIERS = PerBackend(host=1, default=64)
# Flagged chunks per head at most (longer heads, longer chunks): an item
# waits for its keys' chunks one by one before its products (at 128K,
# 128 chunks a head were 1-6 % slower: bench/README.md, "Attention,
# session 55").
HEAD_CHUNKS = 8
# Source ranks an item's loop over them is unrolled for (the host: one;
# its programs unroll whole tiles, and compile time grows with the code).
UNROLLED_SOURCES = PerBackend(host=1, default=4)
PROGRAMS = {"host": 4}                         # resident; GPUs: a program per ticket
_LAYOUTS = ("contiguous", "zigzag")
# How a rank's query chunks are chosen (SPLIT): its own rows, the balanced
# halves r and 2R - 1 - r of a contiguous layout, or its own two halves
# of a zigzag one (which are those).
OWN, BALANCED, ZIGZAG = 0, 1, 2


@jit
def _query_chunk(qc, seq, SPLIT: wl.constexpr, ULYSSES: wl.constexpr):
    """(owner rank, first row there, rows, global position of that row) of
    this rank's query chunk qc."""
    me = wl.rank()
    if ULYSSES:
        owner, lo, rows, pos = qc, 0, seq, qc * seq
    elif SPLIT == OWN:
        owner, lo, rows, pos = me, 0, seq, me * seq
    else:
        half = seq // 2
        c = me + qc * (2 * wl.num_ranks() - 1 - 2 * me)   # half me, then 2R - 1 - me
        if SPLIT == BALANCED:
            owner, lo, rows, pos = c // 2, c % 2 * half, half, c * half
        else:
            owner, lo, rows, pos = me, qc * half, half, c * half
    return owner, lo, rows, pos


@jit
def _key_part(src, part, seq, ZIGZAG_KEYS: wl.constexpr):
    """(first row, end row, key0) of part `part` of source src's shard,
    whose row j is at global position key0 + j: the whole shard (part 0),
    or (zigzag) its halves 0 and 1."""
    if ZIGZAG_KEYS:
        half = seq // 2
        lo = part * half
        hi = lo + half + part * (seq - 2 * half)
        key0 = (src + part * (2 * wl.num_ranks() - 1 - 2 * src)) * half - lo
    else:
        lo = 0
        hi = seq
        key0 = src * seq
    return lo, hi, key0


@jit
def _copy_chunk(x, gx, dest, c, heads, sent, seq, per_head, chunk_rows, ULYSSES: wl.constexpr,
                TRANSPOSE: wl.constexpr, HEAD: wl.constexpr, CM: wl.constexpr):
    """Chunk c of x that this rank sends `dest` (rows chunk_rows * j.. of
    one of the `sent` heads of a batch: head c // per_head of g's batch x
    sent heads) into gx (this rank's slot of a tensor of g) there, the
    head's rows as they are or (TRANSPOSE) as its columns (HEAD x seq)."""
    head = c // per_head
    src_head = head // sent * heads + head % sent + (dest * sent if ULYSSES else 0)
    first = c % per_head * chunk_rows
    end = wl.minimum(seq, first + chunk_rows)
    src = x + src_head * seq * HEAD
    dst = gx + head * seq * HEAD
    d = wl.arange(0, HEAD)
    for r0 in range(first, end, CM):
        if TRANSPOSE:
            transpose_rows(src, dst, end, seq, dest, r0, HEAD, CM)
        else:
            r = r0 + wl.arange(0, CM)
            offs = r[:, None] * HEAD + d[None, :]
            wl.store(dst + offs, wl.load(src + offs, mask=r[:, None] < end),
                     mask=r[:, None] < end, peer=dest)


@jit
def _wait_rows(flags, lo, hi, chunk_rows, epoch):
    """Waits for the chunks (flags, one per chunk_rows rows) holding rows
    lo..hi - 1."""
    for chunk in range(lo // chunk_rows, (hi - 1) // chunk_rows + 1):
        wl.wait(flags + chunk, epoch, cmp="ge")


@jit
def _copy_shards(k, v, q, g, j, copiers, arrivals, epoch, heads, sent, seq, per_head,
                 chunk_rows, chunks, slot, ULYSSES: wl.constexpr, REMOTE: wl.constexpr,
                 HEAD: wl.constexpr, CM: wl.constexpr):
    """Copier j of `copiers`: this rank's chunks j, j + copiers, ... of k,
    v and (REMOTE) q, into their slots of g on every rank, each flagged on
    arrival."""
    me = wl.rank()
    ranks = wl.num_ranks()
    for jc in range(j, ranks * chunks, copiers):
        c = jc // ranks                            # chunk by chunk: the products start
        dest = (me + jc % ranks) % ranks           # on every source's first heads
        _copy_chunk(k, g + me * slot, dest, c, heads, sent, seq, per_head, chunk_rows,
                    ULYSSES, True, HEAD, CM)
        _copy_chunk(v, g + (ranks + me) * slot, dest, c, heads, sent, seq, per_head,
                    chunk_rows, ULYSSES, False, HEAD, CM)
        if REMOTE:
            _copy_chunk(q, g + (2 * ranks + me) * slot, dest, c, heads, sent, seq,
                        per_head, chunk_rows, ULYSSES, False, HEAD, CM)
        wl.signal(arrivals + me * chunks + c, epoch, peer=dest)   # a release: rows first


@jit
def _attend_source(t, q, rq, g, m_i, l_i, acc, arrivals, epoch, head, seq, qend,
                   per_head, chunk_rows, chunks, slot, qk_scale, CAUSAL: wl.constexpr,
                   ZIGZAG_KEYS: wl.constexpr, BN: wl.constexpr, HEAD: wl.constexpr,
                   SCALE_FOLDED: wl.constexpr):
    """The online softmax of an item's query tile q (rows at global
    positions rq, below qend) over the keys of source t: this rank's (t
    0), then the previous ranks' (the first to arrive), once their chunks
    are here."""
    me = wl.rank()
    ranks = wl.num_ranks()
    src = (me + ranks - t) % ranks
    keys = g + (src * slot + head * seq * HEAD)
    # A compile-time count: an empty part's key loops, compiled, cost 15-22 %
    # (bench/README.md, "Flash attention's programs").
    for part in range(2 if ZIGZAG_KEYS else 1):
        klo, khi, key0 = _key_part(src, part, seq, ZIGZAG_KEYS)
        if CAUSAL:
            khi = wl.minimum(khi, wl.maximum(qend - key0, klo))
        if khi > klo:
            _wait_rows(arrivals + src * chunks + head * per_head, klo, khi, chunk_rows, epoch)
            m_i, l_i, acc = _attend_range(q, keys, seq, keys + ranks * slot, m_i, l_i, acc, rq,
                                          key0, klo, khi, qk_scale, BN, HEAD, CAUSAL,
                                          SCALE_FOLDED)
    return m_i, l_i, acc


@jit
def _attend_item(i, q, out, lse, g, base, lbase, arrivals, epoch, batch, heads, sent, seq,
                 per_head, chunk_rows, chunks, slot, qk_scale, ULYSSES: wl.constexpr,
                 CAUSAL: wl.constexpr, SPLIT: wl.constexpr, ZIGZAG_KEYS: wl.constexpr,
                 SOURCES: wl.constexpr, REMOTE: wl.constexpr, BM: wl.constexpr,
                 BN: wl.constexpr, HEAD: wl.constexpr, SCALE_FOLDED: wl.constexpr,
                 WRITE_LSE: wl.constexpr):
    """Item i: a query block of BM rows of one head over the keys of every
    source rank, this rank's first and then the previous ranks' (the first
    to arrive), waiting only for the chunks it reads. Under CAUSAL an
    item's keys grow with its rows: the last chunk's last blocks come
    first (heads in order, as their keys arrive), so that the items taken
    last are the short ones."""
    me = wl.rank()
    ranks = wl.num_ranks()
    qchunks = ranks if ULYSSES else (1 if SPLIT == OWN else 2)
    blocks = (seq // (1 if SPLIT == OWN else 2) + BM - 1) // BM
    chunk_head, block = head_block(i, blocks, CAUSAL)
    qc = chunk_head // (batch * sent)
    if CAUSAL:
        qc = qchunks - 1 - qc
    owner, lo, rows, pos = _query_chunk(qc, seq, SPLIT, ULYSSES)
    head = chunk_head % (batch * sent)             # in g: batch x sent heads
    qhead = head // sent * heads + head % sent + (me * sent if ULYSSES else 0)
    r = lo + block * BM + wl.arange(0, BM)
    end = lo + rows
    rq = pos - lo + r
    d = wl.arange(0, HEAD)
    if REMOTE:                                     # the owner's rows, as they came
        _wait_rows(arrivals + owner * chunks + head * per_head, lo, end, chunk_rows, epoch)
        rows_q = g + ((2 * ranks + owner) * slot + head * seq * HEAD)
    else:
        rows_q = q + qhead * seq * HEAD
    query = wl.load(rows_q + r[:, None] * HEAD + d[None, :], mask=r[:, None] < end, other=0.0)
    m_i = wl.full((BM,), NEG_INF, wl.float32)
    l_i = wl.zeros((BM,), wl.float32)
    acc = wl.zeros((BM, HEAD), wl.float32)
    # Ranks known at compile time unroll the sources (a loop over them was
    # 2-9 % slower on 2 H200s: bench/README.md, "Attention, session 54").
    if SOURCES:
        for t in wl.static_range(SOURCES):
            m_i, l_i, acc = _attend_source(t, query, rq, g, m_i, l_i, acc, arrivals, epoch,
                                           head, seq, pos - lo + end, per_head, chunk_rows,
                                           chunks, slot, qk_scale, CAUSAL, ZIGZAG_KEYS, BN,
                                           HEAD, SCALE_FOLDED)
    else:
        for t in range(ranks):
            m_i, l_i, acc = _attend_source(t, query, rq, g, m_i, l_i, acc, arrivals, epoch,
                                           head, seq, pos - lo + end, per_head, chunk_rows,
                                           chunks, slot, qk_scale, CAUSAL, ZIGZAG_KEYS, BN,
                                           HEAD, SCALE_FOLDED)
    if REMOTE:
        _finish(base + qhead * seq * HEAD, lbase + qhead * seq, m_i, l_i, acc, r, end,
                WRITE_LSE, HEAD, peer=owner)
    else:
        _finish(out + qhead * seq * HEAD, lse + qhead * seq, m_i, l_i, acc, r, end, WRITE_LSE,
                HEAD)


@jit
def _take(t, q, k, v, out, lse, g, base, lbase, arrivals, epoch, batch, heads, sent, seq,
          per_head, chunk_rows, chunks, slot, copiers, qk_scale, ULYSSES: wl.constexpr,
          CAUSAL: wl.constexpr, SPLIT: wl.constexpr, ZIGZAG_KEYS: wl.constexpr,
          SOURCES: wl.constexpr, REMOTE: wl.constexpr, BM: wl.constexpr, BN: wl.constexpr,
          HEAD: wl.constexpr, CM: wl.constexpr, SCALE_FOLDED: wl.constexpr,
          WRITE_LSE: wl.constexpr):
    """Ticket t: a copier's share below `copiers`, else an item."""
    if t < copiers:
        _copy_shards(k, v, q, g, t, copiers, arrivals, epoch, heads, sent, seq, per_head,
                     chunk_rows, chunks, slot, ULYSSES, REMOTE, HEAD, CM)
    else:
        _attend_item(t - copiers, q, out, lse, g, base, lbase, arrivals, epoch, batch, heads,
                     sent, seq, per_head, chunk_rows, chunks, slot, qk_scale, ULYSSES, CAUSAL,
                     SPLIT, ZIGZAG_KEYS, SOURCES, REMOTE, BM, BN, HEAD, SCALE_FOLDED,
                     WRITE_LSE)


@jit
def sp_attention_kernel(q, k, v, out, lse, g, res, half, lres, lhalf, sync, batch, heads, seq,
                        chunk_rows, copiers, tickets, qk_scale, ULYSSES: wl.constexpr,
                        CAUSAL: wl.constexpr, SPLIT: wl.constexpr, ZIGZAG_KEYS: wl.constexpr,
                        SOURCES: wl.constexpr, REMOTE: wl.constexpr, ONE_EACH: wl.constexpr,
                        BM: wl.constexpr, BN: wl.constexpr, HEAD: wl.constexpr,
                        CM: wl.constexpr, SCALE_FOLDED: wl.constexpr, WRITE_LSE: wl.constexpr):
    """Ring (ULYSSES false) or Ulysses attention in one launch (the
    module's doc): g holds k, v and (REMOTE) q, each source rank x batch x
    sent heads x seq x HEAD (k transposed: HEAD x seq per head). Tickets
    from a queue, in order: the first `copiers` copy this rank's shards
    out (_copy_shards), the rest (up to `tickets`) are items
    (_attend_item). ONE_EACH: a program per ticket (the grid is `tickets`
    programs; the hardware hands
    out programs as others finish); else resident programs take tickets
    until none is left, every program busy to the end whatever the
    items' lengths. REMOTE (Ulysses, or the balanced split): other ranks'
    queries come with their keys, and the results go to the owners' res
    (two halves of `half` elements, by the epoch's parity; copy_out_kernel
    then moves them into out); so do the log-sum-exps (WRITE_LSE: lres,
    halves of lhalf, then lse). The last program to finish waits until
    every rank has finished the call: then the results here are complete,
    and no rank reads g or this rank's flags any more (the next call may
    overwrite them)."""
    ranks = wl.num_ranks()
    sent = heads // ranks if ULYSSES else heads    # heads this rank sends each rank
    per_head = (seq + chunk_rows - 1) // chunk_rows
    chunks = batch * sent * per_head               # flagged chunks per source
    slot = batch * sent * seq * HEAD               # one source's tensor in g
    arrivals = sync + FUSED_ARRIVALS
    epoch = wl.load(sync) + 1
    base = res + epoch % 2 * half                  # this call's half of res
    lbase = lres + epoch % 2 * lhalf
    t = wl.atomic_add(sync + FUSED_QUEUE, 1, order="relaxed")
    if ONE_EACH:
        _take(t, q, k, v, out, lse, g, base, lbase, arrivals, epoch, batch, heads, sent, seq,
              per_head, chunk_rows, chunks, slot, copiers, qk_scale, ULYSSES, CAUSAL, SPLIT,
              ZIGZAG_KEYS, SOURCES, REMOTE, BM, BN, HEAD, CM, SCALE_FOLDED, WRITE_LSE)
    else:
        while t < tickets:
            _take(t, q, k, v, out, lse, g, base, lbase, arrivals, epoch, batch, heads, sent,
                  seq, per_head, chunk_rows, chunks, slot, copiers, qk_scale, ULYSSES, CAUSAL,
                  SPLIT, ZIGZAG_KEYS, SOURCES, REMOTE, BM, BN, HEAD, CM, SCALE_FOLDED,
                  WRITE_LSE)
            t = wl.atomic_add(sync + FUSED_QUEUE, 1, order="relaxed")
    if _fused_call_done(sync, epoch):
        for p in range(ranks):
            wl.wait(sync + FUSED_DONE + p, epoch, cmp="ge")


@jit
def copy_out_kernel(res, half, out, n, lres, lhalf, lse, nl, sync, WRITE_LSE: wl.constexpr,
                    BLOCK: wl.constexpr):
    """After sp_attention_kernel: the call's half of res (by the parity of
    the epoch it left in sync) into out[:n], and (WRITE_LSE) lres's into
    lse[:nl], BLOCK elements a program step."""
    parity = wl.load(sync) % 2
    _copy_out(res + parity * half, out, n, BLOCK)
    if WRITE_LSE:
        _copy_out(lres + parity * lhalf, lse, nl, BLOCK)


@jit
def _copy_out(x, out, n, BLOCK: wl.constexpr):
    """out[:n] = x[:n], the launch's programs BLOCK elements a step."""
    for start in range(wl.program_id(0) * BLOCK, n, wl.num_programs(0) * BLOCK):
        offs = start + wl.arange(0, BLOCK)
        wl.store(out + offs, wl.load(x + offs, mask=offs < n), mask=offs < n)


def check_layout(op, layout, seq):
    """A layout of _LAYOUTS that a shard of seq rows can take."""
    if layout not in _LAYOUTS:
        raise ValueError(f"{op}: layout must be one of {_LAYOUTS}, not {layout!r}")
    if layout == "zigzag" and seq % 2:
        raise ValueError(f"{op}: the zigzag layout needs an even shard, not {seq} rows")


def _sp_attention(op, q, k, v, causal, sm_scale, out, lse, return_lse, num_programs, ulysses,
                  layout):
    batch, heads, seq, _, head_dim, dtype = check_heads(op, q, k, v, True)
    ranks = rt.num_ranks()
    check_layout(op, layout, seq)
    if ulysses and heads % ranks:
        raise ValueError(f"{op}: {heads} heads do not split over {ranks} ranks")
    if num_programs is not None and int(num_programs) < 2:
        raise ValueError(f"{op}: num_programs must be at least 2 (copies and products), "
                         f"got {num_programs}")
    if out is None:
        out = new_like(q, tuple(q.shape), dtype)
    check_out(op, "out", out, q.shape, dtype)
    if lse is None and return_lse:
        lse = new_like(q, (batch, heads, seq), wl.float32)
    if lse is not None:
        check_out(op, "lse", lse, (batch, heads, seq), wl.float32)
    results = (out, lse) if return_lse else out
    n = batch * heads * seq * head_dim
    split = OWN
    if causal and not ulysses:
        split = ZIGZAG if layout == "zigzag" else (OWN if seq % 2 else BALANCED)
    remote = ulysses or split == BALANCED
    tensors = 3 if remote else 2                   # k, v and maybe q, from every rank
    if tensors * ranks * n >= 1 << 31:
        raise ValueError(f"{op}: {ranks} shards of {tuple(q.shape)} need "
                         f"{tensors * ranks * n} elements of scratch, more than a kernel "
                         f"addresses (2^31)")
    if n == 0:
        return results
    backend = rt.backend()
    sent = heads // ranks if ulysses else heads
    # Whole CHUNK_ROWS units, as many per chunk as keep a head within HEAD_CHUNKS.
    units = -(-seq // CHUNK_ROWS[backend])
    chunk_rows = CHUNK_ROWS[backend] * -(-units // HEAD_CHUNKS)
    while ranks * batch * sent * -(-seq // chunk_rows) > FUSED_BLOCKS:
        chunk_rows *= 2
    comm = _node_comm(op)
    # Growing g frees the old one, which calls launched here may still
    # use: drained first.
    g = comm.buffer("attention_kv", tensors * ranks * batch * sent * seq * head_dim, dtype,
                    drain=True)
    res, half = comm.halves("attention_out", n if remote else 1, dtype)
    write_lse = lse is not None
    lres, lhalf = comm.halves("attention_lse", n // head_dim if remote and write_lse else 1,
                              wl.float32)
    qrows = seq // (1 if split == OWN else 2)
    items = (ranks if ulysses else 1 + (split != OWN)) * batch * sent * -(-qrows // BM[backend])
    copiers = COPIERS[backend]
    # GPUs: a program per ticket (with the sources unrolled 1-12 % faster
    # than resident programs taking tickets: bench/README.md, "Attention,
    # session 54"); the host, or a given count: that many resident
    # programs take them all.
    one_each = num_programs is None and backend not in PROGRAMS
    if one_each:
        programs = copiers + items
    else:
        programs = max(2, int(PROGRAMS[backend] if num_programs is None else num_programs))
        copiers = min(copiers, programs // 2)
    scale = qk_scale(sm_scale, head_dim)
    # Keys' positions matter only to the mask: without one a zigzag
    # shard's keys go in one piece (its halves' loops cost 20 % at 8K).
    zigzag_keys = layout == "zigzag" and bool(causal)
    sp_attention_kernel[(programs,)](
        q, k, v, out, lse if write_lse else out, g, res, half, lres, lhalf, comm.fused_sync,
        batch, heads, seq, chunk_rows, copiers, copiers + items, scale, ULYSSES=ulysses,
        CAUSAL=bool(causal), SPLIT=split, ZIGZAG_KEYS=zigzag_keys,
        SOURCES=ranks if ranks <= UNROLLED_SOURCES[backend] else 0, REMOTE=remote,
        ONE_EACH=one_each, BM=BM, BN=BN, HEAD=head_dim, CM=COPY_ROWS, SCALE_FOLDED=scale > 0,
        WRITE_LSE=write_lse, num_warps=NUM_WARPS[backend], resident=not one_each)
    if remote:
        copy_out_kernel[(min(-(-n // BLOCK[backend]), programs),)](
            res, half, out, n, lres, lhalf, lse if write_lse else lres, n // head_dim,
            comm.fused_sync, WRITE_LSE=write_lse, BLOCK=BLOCK, resident=True)
    return results


# Elements per program step of the results' copy into out.
BLOCK = PerBackend(host=64, default=4096)


def ring_attention(q, k, v, causal=False, sm_scale=None, layout="contiguous", out=None,
                   num_programs=None, return_lse=False, lse=None):
    """Attention of this rank's queries over the whole sequence, sharded
    over the ranks. q, k, v: this rank's shard [batch, heads, seq,
    head_dim] (every rank the same shape; fp16 or bf16, contiguous,
    head_dim 16, 32, 64 or 128; any memory: torch tensors on GPUs, weft
    Buffers or numpy arrays on the host). layout "contiguous" (default):
    rank r holds global positions r * seq .. (r + 1) * seq - 1; "zigzag":
    the sequence cut in 2R halves of seq / 2 (seq even), rank r holds half
    r then half 2R - 1 - r (its rows 0..seq/2 - 1, then the rest), the
    order causal ring attention balances without moving queries. causal:
    a query sees the keys at or before its global position. Either way
    the work is balanced across ranks (with causal and a contiguous layout
    a rank computes half r and half 2R - 1 - r, reading those queries from
    their owners: an even seq; with an odd one each rank computes its own).
    Returns out (q's shape and dtype; a new tensor of q's kind when None)
    and, with return_lse, lse (f32 [batch, heads, seq]: each row's natural
    log-sum-exp over the whole sequence, what ring_attention_backward
    takes). Every rank calls it with the same shapes and arguments."""
    return _sp_attention("ring_attention", q, k, v, causal, sm_scale, out, lse, return_lse,
                         num_programs, False, layout)


def ulysses_attention(q, k, v, causal=False, sm_scale=None, out=None, num_programs=None,
                      return_lse=False, lse=None):
    """DeepSpeed-Ulysses attention: q, k, v, out and lse as ring_attention's
    (layout contiguous); heads must divide by the number of ranks. Rank r
    attends heads r * heads/R .. (r + 1) * heads/R - 1 over the whole
    sequence: the other ranks push it their k and v of those heads, it
    reads their queries and writes their outputs back, all in one launch
    (the all-to-alls are the kernel's own loads and stores). The result is
    the same attention as ring_attention's: ring_attention_backward takes
    its gradients."""
    return _sp_attention("ulysses_attention", q, k, v, causal, sm_scale, out, lse, return_lse,
                         num_programs, True, "contiguous")
