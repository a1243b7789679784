"""Mixture-of-experts all-to-all: weft.ops.moe_dispatch and weft.ops.moe_combine.

Every rank holds T tokens (T x H) and their top-k experts (T x k int32);
the E experts are split evenly, rank r holding experts [r*E/R, (r+1)*E/R)
(local expert le of rank r is expert r*E/R + le). Pair q = t*k + j is
token t's j-th choice.

Receive buffer (`MoeDispatch.recv`, symmetric, (E/R, R*C, H)): on the
expert's rank, rows [p*C, p*C + counts[le, p]) of recv[le] are the tokens
rank p sent to local expert le, in pair order (stable); C is the capacity
per (local expert, source rank). A pair beyond the capacity, or naming no
expert, is dropped: not sent, and it adds nothing in the combine.
`MoeDispatch.sources[le, p*C + s]` is the pair index q of that row on rank p.

Flags. Every row is pushed with its own flag (per-token signals, the
design the issue cites from "all-to-all on MI300X"): a program stores a
tile of BR rows into the receiver's recv, then the tile of their flags
with one release store (a barrier and one fence for the tile, rather than
a signal per row); the receiver waits for each row's flag (checked a tile
at a time), after a per-(local expert, source) count flag has said how
many rows to expect.
Dispatch flag values are `call << 32 | payload`, the payload being the
count, or the row's pair index q (the receiver keeps it in `sources` for
the way back); `call` numbers the handle's calls, counted on the device
per program like the collectives' epochs (every program of a handle takes
part in every one of its calls, so all programs and ranks agree, and a
CUDA-graph replay counts on). Flags only grow, so they are never re-zeroed.
The combine pushes each expert output row back into its source's `gather`
buffer at row q and sets pair q's flag to `call`; the source waits for its
pairs and sums each token's k rows weighted by the routing weights, in k
order (deterministic, f32).

Reuse. The dispatch starts with the collectives' entry phase, so no rank
pushes into a recv (or, later, a gather) whose owner has not finished the
previous dispatch/combine with it: every kernel a rank launched before is
done once its dispatch has started. The combine needs no phase of its own,
but each combine must follow its own dispatch (checked on the host).
"""
import numpy as np

from .. import _runtime as rt
from .. import language as wl
from .._jit import PerBackend, jit
from ..collectives._kernels import MAX_PROGRAMS, _begin, _end, _sync
from ..collectives import _dtype_of, _grid_of, _kept, _node_comm, _size
from ._gemm import DEFAULT_PROGRAMS, _output

# Rows x elements moved per step (GPUs: 8K elements over 4 warps), and
# flags/pairs per tile.
BR = PerBackend(host=4, default=8)
BH = PerBackend(host=16, default=1024)
BQ = PerBackend(host=16, default=64)
NOT_FOUND = 2**31 - 1
_FLOATS = (wl.float32, wl.float16, wl.bfloat16)


@jit
def _copy_rows(src, src_rows, dst, dst_rows, live, width, peer, BH: wl.constexpr):
    """dst rows dst_rows on rank peer = local src rows src_rows (tiles of
    row indices, where live), BH elements of each at a time."""
    for h0 in range(0, width, BH):
        cols = h0 + wl.arange(0, BH)
        mask = live[:, None] & (cols[None, :] < width)
        v = wl.load(src + src_rows[:, None] * width + cols[None, :], mask=mask)
        wl.store(dst + dst_rows[:, None] * width + cols[None, :], v, mask=mask, peer=peer)


@jit
def _await_flags(base, idx, mask, value):
    """Waits until base[i] >= value for every i of the tile idx where mask,
    and returns the flags. A tile is checked at once; while some flag is
    behind, the program waits on the first such one (a wl.wait: it spins in
    one thread on GPUs and yields on the host), then checks again. Only the
    scalar is loop-carried: the layout pass cannot distribute a tile
    carried through scf.while, so the flags are read once more at the end."""
    first = _first_behind(base, idx, mask, value)
    while first != NOT_FOUND:
        wl.wait(base + first, value, cmp="ge")
        first = _first_behind(base, idx, mask, value)
    return wl.load(base + idx, mask=mask, other=value, order="acquire")


@jit
def _first_behind(base, idx, mask, value):
    """The least i of idx (where mask) with base[i] < value, else NOT_FOUND."""
    seen = wl.load(base + idx, mask=mask, other=value, order="acquire")
    return wl.min(wl.where(seen < value, idx, NOT_FOUND))


@jit
def moe_route_kernel(ids, route, order, send_counts, pairs, num_experts, capacity,
                     BQ: wl.constexpr):
    """Local: the slot of each of this rank's pairs. Pair q (expert e = ids[q])
    gets slot s = the number of pairs before it with expert e (stable, so the
    same on every run); route[q] = s, or -1 when s >= capacity or e is not
    an expert; order[e, s] = q; send_counts[e] = min(#pairs of e, capacity).
    Program i takes experts i, i + P, ...; the rank of a pair among a tile's
    matches is a BQ x BQ comparison (the language has no prefix sum)."""
    lanes = wl.arange(0, BQ)
    earlier = lanes[None, :] < lanes[:, None]          # [i, j]: lane j precedes lane i
    for e in range(wl.program_id(0), num_experts, wl.num_programs(0)):
        base = 0
        for q0 in range(0, pairs, BQ):
            q = q0 + lanes
            match = wl.load(ids + q, mask=q < pairs, other=-1) == e
            s = base + wl.sum(wl.where(match[None, :] & earlier, 1, 0), axis=1)
            wl.store(route + q, wl.where(s < capacity, s, -1), mask=match)
            wl.store(order + e * capacity + s, q, mask=match & (s < capacity))
            base += wl.sum(wl.where(match, 1, 0))
        wl.store(send_counts + e, wl.minimum(base, capacity))
    for q0 in range(wl.program_id(0) * BQ, pairs, wl.num_programs(0) * BQ):
        q = q0 + lanes
        e = wl.load(ids + q, mask=q < pairs, other=0)
        wl.store(route + q, -1, mask=(q < pairs) & ((e < 0) | (e >= num_experts)))


@jit
def moe_dispatch_kernel(x, recv, counts, sources, order, send_counts, flags, calls,
                        sync_flags, epochs, hidden, capacity, local_experts,
                        topk, BR: wl.constexpr, BH: wl.constexpr, BQ: wl.constexpr):
    """Pushes each routed pair's token row into its expert's rank (recv,
    row flag), then waits for every row sent to this rank (count flags,
    then row flags) and records counts and sources."""
    me = wl.rank()
    ranks = wl.num_ranks()
    pid = wl.program_id(0)
    step = wl.num_programs(0)
    epoch = _begin(epochs)
    call = _begin(calls)
    tag = call << 32                          # this call's flag values: tag + payload
    groups = local_experts * ranks            # (local expert, source) pairs per rank
    row_flags = flags + groups
    _sync(sync_flags, 0, epoch)               # every rank is done with its recv and gather
    for e in range(local_experts * ranks):
        dest = e // local_experts
        g = (e % local_experts) * ranks + me  # my group at dest
        cnt = wl.load(send_counts + e)
        if e % step == pid:
            wl.signal(flags + g, tag + cnt, peer=dest)
        for s0 in range(pid * BR, cnt, step * BR):   # BR rows at a time
            s = s0 + wl.arange(0, BR)
            live = s < cnt
            q = wl.load(order + e * capacity + s, mask=live, other=0)
            rows = g.to(wl.int64) * capacity + s
            _copy_rows(x, (q // topk).to(wl.int64), recv, rows, live, hidden, dest, BH)
            # each row's own flag; one release (barrier + fence) for the tile
            wl.store(row_flags + rows, tag + q, mask=live, peer=dest, order="release")
    for g in range(pid, groups, step):
        cnt = wl.wait(flags + g, tag, cmp="ge") - tag
        wl.store(counts + g, cnt)
        for s0 in range(0, cnt, BQ):
            s = s0 + wl.arange(0, BQ)
            seen = _await_flags(row_flags + g * capacity, s, s < cnt, tag)
            wl.store(sources + g * capacity + s, seen - tag, mask=s < cnt)
    _end(calls, call)
    _end(epochs, epoch)


@jit
def moe_combine_kernel(y, weights, out, gather, route, counts, sources, flags, calls,
                       tokens, topk, width, capacity, groups, BR: wl.constexpr,
                       BH: wl.constexpr, BQ: wl.constexpr):
    """Pushes each expert output row back to its source rank (gather row q,
    pair flag q), then, per tile of BR tokens, waits for their routed pairs
    and sums weights[q] * gather[q] over each token's k pairs in order."""
    ranks = wl.num_ranks()
    pid = wl.program_id(0)
    step = wl.num_programs(0)
    call = _begin(calls)
    pair_flags = flags + groups * (1 + capacity)
    for g in range(groups):
        src = g % ranks
        cnt = wl.load(counts + g)
        for s0 in range(pid * BR, cnt, step * BR):
            s = s0 + wl.arange(0, BR)
            live = s < cnt
            rows = g.to(wl.int64) * capacity + s
            q = wl.load(sources + rows, mask=live, other=0)
            _copy_rows(y, rows, gather, q.to(wl.int64), live, width, src, BH)
            wl.store(pair_flags + q, call, mask=live, peer=src, order="release")
    for t0 in range(pid * BR, tokens, step * BR):
        end = wl.minimum(t0 + BR, tokens) * topk   # the pairs of tokens [t0, t0 + BR)
        for q0 in range(t0 * topk, end, BQ):
            q = q0 + wl.arange(0, BQ)
            sent = (q < end) & (wl.load(route + q, mask=q < end, other=-1) >= 0)
            _await_flags(pair_flags, q, sent, call)
        t = t0 + wl.arange(0, BR)
        live = t < tokens
        for h0 in range(0, width, BH):
            cols = h0 + wl.arange(0, BH)
            acc = wl.zeros((BR, BH), wl.float32)
            for j in range(topk):
                q = t * topk + j
                sent = live & (wl.load(route + q, mask=live, other=-1) >= 0)  # dropped: 0
                w = wl.load(weights + q, mask=sent, other=0.0).to(wl.float32)
                v = wl.load(gather + q.to(wl.int64)[:, None] * width + cols[None, :],
                            mask=sent[:, None] & (cols[None, :] < width), other=0.0)
                acc += w[:, None] * v.to(wl.float32)
            wl.store(out + t.to(wl.int64)[:, None] * width + cols[None, :], acc,
                     mask=live[:, None] & (cols[None, :] < width))
    _end(calls, call)


class MoeDispatch:
    """What moe_dispatch returns and moe_combine takes: the receive buffer
    and the routing of one layout (tokens, topk, hidden, dtype, experts,
    capacity, programs), kept so that later calls can reuse it
    (moe_dispatch(..., handle=d)).

    recv     (E/R, R*C, H) x's dtype, symmetric: recv[le, p*C + s] is the
             s-th row rank p sent to local expert le
    counts   (E/R, R) int32: rows of each (local expert, source) slot
    sources  (E/R, R*C) int32: pair index q (token q // topk) of each row
             on its source rank
    route    (T, topk) int32: the slot of each of this rank's pairs on its
             expert's rank, -1 when dropped
    """

    def __init__(self, tokens, topk, hidden, dtype, num_experts, capacity, programs):
        ranks = rt.num_ranks()
        local = num_experts // ranks
        self.layout = (tokens, topk, hidden, dtype, num_experts, capacity, programs)
        self.num_experts, self.local_experts, self.capacity = num_experts, local, capacity
        self.tokens, self.topk, self.hidden, self.programs = tokens, topk, hidden, programs
        self.recv = rt.empty((local, ranks * capacity, hidden), dtype)
        self.counts = rt.empty((local, ranks), wl.int32)
        self.sources = rt.empty((local, ranks * capacity), wl.int32)
        self.route = rt.empty((tokens, topk), wl.int32)
        self.order = rt.empty((num_experts, capacity), wl.int32)
        self.send_counts = rt.empty((num_experts,), wl.int32)
        # count flags, row flags, pair flags (combine); zero everywhere before
        # any rank signals into them: the only host barrier of a layout.
        groups = local * ranks
        self.flags = rt.zeros((groups * (1 + capacity) + tokens * topk,), wl.int64)
        self.calls = rt.zeros((MAX_PROGRAMS,), wl.int64)
        rt.barrier()
        self.gather = None          # (T * topk, width) of y's dtype, from the first combine
        self._dispatched = False
        # What kept calls depend on of the handle (weft/_plans.py): its buffers.
        self.plan_identity = tuple(buf.ptr for buf in self.buffers())

    def buffers(self):
        """The buffers a dispatch or combine launch names (gather aside)."""
        return (self.recv, self.counts, self.sources, self.route, self.order,
                self.send_counts, self.flags, self.calls)

    def dropped(self):
        """How many of this rank's pairs the last dispatch did not send (over
        capacity, or an expert id out of range). Reads route (waits for it)."""
        return int(np.count_nonzero(self.route.to_numpy() < 0))

    def free(self):
        """Frees the buffers (collective, like their allocation)."""
        for buf in self.buffers() + (self.gather,):
            if buf is not None:
                buf.free()
        self.gather = self.plan_identity = None


def _check_2d(op, what, a, rows, dtypes):
    dtype = _dtype_of(a, what)
    shape = tuple(a.shape)
    if dtype not in dtypes:
        raise ValueError(f"{op}: {what} has dtype {dtype.name}; it takes "
                         f"{' or '.join(d.name for d in dtypes)}")
    if len(shape) != 2 or (rows is not None and shape[0] != rows):
        need = f"({rows}, k)" if rows is not None else "2-D"
        raise ValueError(f"{op}: {what} has shape {shape}; it needs {need}")
    return shape


def moe_dispatch(x, topk_ids, num_experts, capacity=None, handle=None, num_programs=None):
    """Sends each (token, choice) pair's row of x to its expert's rank.
    x: T x H (fp32, fp16 or bf16; read only by this rank), topk_ids: T x k
    int32 expert ids (local); num_experts: E, a multiple of num_ranks;
    capacity: C, rows per (local expert, source rank) slot (default T: no
    pair is dropped unless a token names one expert twice). T, k, H, E, C
    are the same on every rank. handle: a MoeDispatch of the same layout
    from an earlier call, whose buffers are reused (its last combine must
    be done); otherwise new ones are allocated (collective). Returns the
    MoeDispatch: recv, counts and sources hold this rank's received rows."""
    if isinstance(handle, MoeDispatch):  # kept: a repeat makes the launches only
        _kept("moe_dispatch", (x, topk_ids, handle), (num_experts, capacity, num_programs),
              _moe_dispatch, x, topk_ids, num_experts, capacity, handle, num_programs)
    else:  # counted as a call (it counts epochs), not kept: it allocates
        handle = _kept(None, (), (), _moe_dispatch, x, topk_ids, num_experts, capacity,
                       handle, num_programs)
    handle._dispatched = True
    return handle


def _moe_dispatch(x, topk_ids, num_experts, capacity, handle, num_programs):
    op = "moe_dispatch"
    t, h = _check_2d(op, "x", x, None, _FLOATS)
    _, k = _check_2d(op, "topk_ids", topk_ids, t, (wl.int32,))
    ranks = rt.num_ranks()
    if not isinstance(num_experts, (int, np.integer)) or num_experts < 1 or num_experts % ranks:
        raise ValueError(f"{op}: num_experts must be a positive multiple of num_ranks "
                         f"= {ranks}, got {num_experts!r}")
    capacity = max(1, t) if capacity is None else capacity
    if not isinstance(capacity, (int, np.integer)) or capacity < 1:
        raise ValueError(f"{op}: capacity must be a positive int, got {capacity!r}")
    if handle is None:
        if num_programs is None:
            num_programs = DEFAULT_PROGRAMS.get(rt.backend(), 4)
        programs = _grid_of(num_programs)[0]
        handle = MoeDispatch(t, k, h, _dtype_of(x, "x"), int(num_experts), int(capacity),
                             programs)
    elif not isinstance(handle, MoeDispatch) or handle.layout[:6] != \
            (t, k, h, _dtype_of(x, "x"), num_experts, capacity):
        raise ValueError(f"{op}: handle is not a MoeDispatch of this layout (tokens, topk, "
                         "hidden, dtype, num_experts, capacity)")
    elif num_programs is not None and num_programs != handle.programs:
        raise ValueError(f"{op}: the handle's calls all use {handle.programs} programs, "
                         f"not {num_programs}")
    # One program per expert (the route kernel is local: any count works).
    moe_route_kernel[(max(1, min(MAX_PROGRAMS, num_experts)),)](
        topk_ids, handle.route, handle.order, handle.send_counts, t * k, num_experts,
        capacity, BQ=BQ)
    comm = _node_comm(op)
    moe_dispatch_kernel[(handle.programs,)](
        x, handle.recv, handle.counts, handle.sources, handle.order, handle.send_counts,
        handle.flags, handle.calls, comm.flags, comm.epochs, h, capacity,
        handle.local_experts, k, BR=BR, BH=BH, BQ=BQ)
    return handle


def moe_combine(y, handle, topk_weights, out=None):
    """Sends the expert outputs back and sums them: out[t] = sum over j of
    topk_weights[t, j] * (expert output of pair t*k + j), in j order, in
    f32 (dropped pairs add nothing). y: the experts' outputs in recv's
    layout, (E/R, R*C, W) (fp32, fp16 or bf16, local or symmetric: read by
    this rank only; W may differ from H); handle: the MoeDispatch of the
    dispatch whose rows y answers; topk_weights: T x k float (local); out:
    T x W (fp32, fp16 or bf16; allocated as fp32 when None). Returns out."""
    op = "moe_combine"
    if not isinstance(handle, MoeDispatch):
        raise ValueError(f"{op}: handle must be the MoeDispatch moe_dispatch returned")
    if not handle._dispatched:
        raise ValueError(f"{op}: every combine needs its own moe_dispatch first "
                         "(this handle's rows were already combined)")
    if out is None:  # every call allocates its out: not kept (weft/_plans.py)
        out = _moe_combine(y, handle, topk_weights, out)
    else:  # the gather buffer as it is before the call: a call that remakes it is new
        _kept("moe_combine", (y, topk_weights, out, handle, handle.gather), (), _moe_combine,
              y, handle, topk_weights, out)
    handle._dispatched = False
    return out


def _moe_combine(y, handle, topk_weights, out):
    op = "moe_combine"
    t, k = handle.tokens, handle.topk
    ranks = rt.num_ranks()
    rows = handle.local_experts * ranks * handle.capacity
    dtype = _dtype_of(y, "y")
    width = tuple(y.shape)[-1] if len(y.shape) else 0
    if dtype not in _FLOATS or _size(y) != rows * width:
        raise ValueError(f"{op}: y must hold E/R x R*C x W = {handle.local_experts} x "
                         f"{ranks * handle.capacity} x W fp32, fp16 or bf16 elements "
                         f"(recv's layout), not shape {tuple(y.shape)} {dtype.name}")
    _check_2d(op, "topk_weights", topk_weights, t, _FLOATS)
    if tuple(topk_weights.shape) != (t, k):
        raise ValueError(f"{op}: topk_weights has shape {tuple(topk_weights.shape)}; "
                         f"it needs ({t}, {k})")
    out = _output(op, out, t, width, _FLOATS)
    g = handle.gather
    if g is None or g.dtype is not dtype or g.shape != (t * k, width):
        if g is not None:
            g.free()
        handle.gather = rt.empty((t * k, width), dtype)
    moe_combine_kernel[(handle.programs,)](
        y, topk_weights, out, handle.gather, handle.route, handle.counts, handle.sources,
        handle.flags, handle.calls, t, k, width, handle.capacity,
        handle.local_experts * ranks, BR=BR, BH=BH, BQ=BQ)
    return out
