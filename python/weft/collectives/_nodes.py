"""Hierarchical collectives for jobs across nodes (docs/multinode.md), in
the DSL.

The ranks form nodes of `local_size` consecutive ranks. Within a node the
kernels read and write peers' memory directly (loads and stores), guarded
by `_node_sync` phases among the node's ranks; between nodes only the
ranks with the same local index talk, each with one `wl.put` per program
and peer node, whose signal (the call's epoch in the receiver's arrival
flag for the sender, `arrivals`) says the bytes are there. So the bytes
that cross nodes are a 1/local_size share per rank: all_reduce is an
in-node reduce-scatter, an all-reduce among the nodes over puts, and an
in-node all-gather.

Puts land in a receive buffer of two halves taken by the parity of the
call's number, never in the user's buffers, so no phase between nodes
precedes them: a rank's call c+2 follows its call c+1, which needed every
peer node's puts of call c+1, sent once that peer had finished call c, the
last user of the half (the argument of _kernels.py's push kernels, between
nodes). Each program takes one contiguous share of its chunk (one put per
peer node), the same on every rank; reductions run in f32 in node order
(each node's partial in rank order), so every rank gets the same bits.
"""
from .. import language as wl
from .._jit import jit
from ._kernels import (MAX_PROGRAMS, _begin, _call_done, _call_number, _combine, _end,
                       _fold, _sync)

# comm.flags' rows (_kernels.py): 0 entry, 1 exit, ARRIVALS the puts',
# GATHERS the second step's puts of hier_all_reduce_split.
ARRIVALS = 2
GATHERS = 3


@jit
def _node_sync(flags, phase, epoch):
    """_sync among the ranks of this node (whose memory loads and stores
    reach): afterwards every node peer's program has reached it too, and
    what each wrote before is visible."""
    me = wl.rank()
    size = wl.local_size()
    first = wl.node() * size
    row = flags + (phase * MAX_PROGRAMS + wl.program_id(0)) * wl.num_ranks()
    wl.fence(order="release", scope="sys")
    for j in range(size):
        wl.signal(row + me, epoch, peer=first + j, order="relaxed")
    for j in range(size):
        wl.wait(row + first + j, epoch, cmp="ge")


@jit
def _finish(flags, epochs, epoch, calls, call):
    """A hierarchical call's end: its puts complete (their sources may be
    rewritten, the receivers' halves are theirs), then a phase among the
    node's ranks (every store into their memory has landed, and none still
    reads this rank's), and the call counted done."""
    wl.quiet()
    _node_sync(flags, 1, epoch)
    _end(epochs, epoch)
    _call_done(calls, call)


@jit
def _share(count, BLOCK: wl.constexpr):
    """This program's contiguous share [lo, hi) of `count` elements (whole
    BLOCKs; the last programs' may be empty)."""
    per = wl.cdiv(wl.cdiv(count, wl.num_programs(0)), BLOCK) * BLOCK
    lo = wl.program_id(0) * per
    hi = lo + per
    return (count if lo > count else lo), (count if hi > count else hi)


@jit
def _start(epochs, calls, recv, half, flags, count, BLOCK: wl.constexpr):
    """A hierarchical call's start, after a phase among the node's ranks
    (what they wrote before is visible, and what this call writes into
    them is theirs no longer): its epoch, its number, the receive half its
    parity takes, and this program's share of `count` elements."""
    epoch = _begin(epochs)
    call = _call_number(calls)
    _node_sync(flags, 0, epoch)
    lo, hi = _share(count, BLOCK)
    return epoch, call, recv + (call % 2) * half, lo, hi


@jit
def _arrivals(flags, ROW: wl.constexpr):
    """This program's arrival flags in row ROW: one per sending rank."""
    return flags + (ROW * MAX_PROGRAMS + wl.program_id(0)) * wl.num_ranks()


@jit
def _send_column(slot, src, lo, hi, count, epoch, arrivals, ELEM_BYTES: wl.constexpr):
    """Puts src[lo:hi] into slot[node * count + lo:...] of the rank with
    this local index on every other node, each put signalling its arrival
    there (the call's epoch in this rank's flag of `arrivals`)."""
    size = wl.local_size()
    nodes = wl.num_ranks() // size
    me_node = wl.node()
    for k in range(1, nodes):
        dest = (me_node + k) % nodes
        wl.put(slot + me_node * count + lo, src + lo, (hi - lo) * ELEM_BYTES,
               dest * size + wl.local_rank(), signal=arrivals + wl.rank(),
               signal_value=epoch)


@jit
def _await_column(arrivals, epoch):
    """Waits for the puts of the rank with this local index on every other
    node (_send_column's, or _reduce_column's, into `arrivals`)."""
    size = wl.local_size()
    nodes = wl.num_ranks() // size
    for k in range(1, nodes):
        src = (wl.node() + k) % nodes
        wl.wait(arrivals + src * size + wl.local_rank(), epoch, cmp="ge")


@jit
def _fold_nodes(slot, count, offs, mask, OP: wl.constexpr, BLOCK: wl.constexpr):
    """The reduction (f32) in node order of the nodes' partials at
    slot[m * count + offs], this node's own among them."""
    acc = wl.zeros((BLOCK,), wl.float32)
    for m in range(wl.num_ranks() // wl.local_size()):
        v = wl.load(slot + m * count + offs, mask=mask, other=0.0).to(wl.float32)
        acc = _fold(acc, v, m, OP)
    return acc


@jit
def _reduce_node(x, offs, mask, OP: wl.constexpr):
    """The reduction (f32) in rank order of x[offs] over this node's ranks."""
    first = wl.node() * wl.local_size()
    acc = wl.load(x + offs, mask=mask, other=0.0, peer=first).to(wl.float32)
    for j in range(1, wl.local_size()):
        v = wl.load(x + offs, mask=mask, other=0.0, peer=first + j).to(wl.float32)
        acc = _combine(acc, v, OP)
    return acc


@jit
def hier_all_reduce(x, out, recv, half, flags, n, chunk, epochs, calls, OP: wl.constexpr,
                    BLOCK: wl.constexpr):
    """out = the reduction of x over every rank. Local rank l owns chunk
    x[l*chunk:(l+1)*chunk]: it reduces that chunk over its node (f32, into
    its own slot of the receive half), puts the partial to rank l of every
    other node, reduces the nodes' partials in node order and stores the
    result into every node rank's out (symmetric; x symmetric too). In
    place (out is x) is safe: chunk l of any node rank is read and written
    only by local rank l, block by block."""
    epoch, call, slot, lo, hi = _start(epochs, calls, recv, half, flags, chunk, BLOCK)
    me_node = wl.node()
    first = me_node * wl.local_size()
    base = wl.local_rank() * chunk
    for start in range(lo, hi, BLOCK):
        offs = start + wl.arange(0, BLOCK)
        mask = (offs < hi) & (base + offs < n)
        part = _reduce_node(x, base + offs, mask, OP)
        wl.store(slot + me_node * chunk + offs, part, mask=offs < hi)
    _send_column(slot, slot + me_node * chunk, lo, hi, chunk, epoch,
                 _arrivals(flags, ARRIVALS), 4)
    _await_column(_arrivals(flags, ARRIVALS), epoch)
    for start in range(lo, hi, BLOCK):
        offs = start + wl.arange(0, BLOCK)
        mask = (offs < hi) & (base + offs < n)
        acc = _fold_nodes(slot, chunk, offs, mask, OP, BLOCK)
        for j in range(wl.local_size()):
            wl.store(out + base + offs, acc, mask=mask, peer=first + j)
    _finish(flags, epochs, epoch, calls, call)


@jit
def _reduce_column(x, dest, part, slot, start, stride, span, n, count, lo, hi, epoch, flags,
                   OP: wl.constexpr, BLOCK: wl.constexpr):
    """A reduce-scatter among the ranks with this local index, one per node,
    of their node's reductions: part k is x[start + k*stride + i] for
    i < count (zero where k*stride + i >= span or the index >= n). This
    rank reduces every part over its node (f32: its own node's part into
    its slot of the receive half, the others into `part`), puts part k to
    node k's rank, and stores into dest the reduction of its node's part
    over the nodes, in node order. Every program takes [lo, hi) of each
    part."""
    size = wl.local_size()
    nodes = wl.num_ranks() // size
    me_node = wl.node()
    for k in range(nodes):
        to = slot + me_node * count if k == me_node else part + k * count
        for first in range(lo, hi, BLOCK):
            offs = first + wl.arange(0, BLOCK)
            at = k * stride + offs
            mask = (offs < hi) & (at < span) & (start + at < n)
            wl.store(to + offs, _reduce_node(x, start + at, mask, OP), mask=offs < hi)
    for i in range(1, nodes):
        k = (me_node + i) % nodes
        wl.put(slot + me_node * count + lo, part + k * count + lo, (hi - lo) * 4,
               k * size + wl.local_rank(), signal=_arrivals(flags, ARRIVALS) + wl.rank(),
               signal_value=epoch)
    _await_column(_arrivals(flags, ARRIVALS), epoch)
    for first in range(lo, hi, BLOCK):
        offs = first + wl.arange(0, BLOCK)
        acc = _fold_nodes(slot, count, offs, offs < hi, OP, BLOCK)
        wl.store(dest + offs, acc, mask=offs < hi)


@jit
def hier_all_reduce_split(x, out, part, recv, half, flags, n, chunk, sub, epochs, calls,
                          OP: wl.constexpr, BLOCK: wl.constexpr):
    """hier_all_reduce for many nodes and large chunks: between the nodes a
    reduce-scatter and then an all-gather of each chunk, 2 (N-1)/N chunks
    on every rank's link instead of N-1 (docs/multinode.md, "A model").
    Local rank l's chunk is N parts of `sub` elements; rank l of node k
    reduces part k over every node (_reduce_column) and puts the result to
    rank l of every other node, which all store every part into their
    node's ranks' out. The receive half holds the nodes' partials of this
    rank's part, then every part reduced."""
    epoch, call, slot, lo, hi = _start(epochs, calls, recv, half, flags, sub, BLOCK)
    size = wl.local_size()
    nodes = wl.num_ranks() // size
    me_node = wl.node()
    first = me_node * size
    gathered = slot + nodes * sub
    base = wl.local_rank() * chunk
    _reduce_column(x, gathered + me_node * sub, part, slot, base, sub, chunk, n, sub, lo, hi,
                   epoch, flags, OP, BLOCK)
    _send_column(gathered, gathered + me_node * sub, lo, hi, sub, epoch,
                 _arrivals(flags, GATHERS), 4)
    _await_column(_arrivals(flags, GATHERS), epoch)
    for m in range(nodes):
        for start in range(lo, hi, BLOCK):
            offs = start + wl.arange(0, BLOCK)
            at = m * sub + offs
            mask = (offs < hi) & (at < chunk) & (base + at < n)
            v = wl.load(gathered + at, mask=mask)
            for j in range(size):
                wl.store(out + base + at, v, mask=mask, peer=first + j)
    _finish(flags, epochs, epoch, calls, call)


@jit
def hier_reduce_scatter(x, out, part, recv, half, flags, n, chunk, epochs, calls,
                        OP: wl.constexpr, BLOCK: wl.constexpr):
    """out (chunk elements) on rank r = the reduction of x[r*chunk:...]
    over every rank, x read as zero past n: among the ranks with this local
    index, a reduce-scatter of their node's reductions (_reduce_column),
    node k's part being the chunk of its rank. x symmetric."""
    epoch, call, slot, lo, hi = _start(epochs, calls, recv, half, flags, chunk, BLOCK)
    size = wl.local_size()
    nodes = wl.num_ranks() // size
    _reduce_column(x, out, part, slot, wl.local_rank() * chunk,
                   size * chunk, nodes * size * chunk, n, chunk, lo, hi, epoch, flags, OP,
                   BLOCK)
    _finish(flags, epochs, epoch, calls, call)


@jit
def hier_all_gather(x, out, recv, half, flags, n, epochs, calls, ELEM_BYTES: wl.constexpr,
                    BLOCK: wl.constexpr):
    """out[p*n:(p+1)*n] = rank p's x on every rank. Rank l of each node
    puts its x to rank l of every other node, then stores the x of rank l
    of every node (its own and the received) into every node rank's out
    (symmetric)."""
    epoch, call, slot, lo, hi = _start(epochs, calls, recv, half, flags, n, BLOCK)
    size = wl.local_size()
    first = wl.node() * size
    _send_column(slot, x, lo, hi, n, epoch, _arrivals(flags, ARRIVALS), ELEM_BYTES)
    _await_column(_arrivals(flags, ARRIVALS), epoch)
    for m in range(wl.num_ranks() // size):
        column = (m * size + wl.local_rank()) * n
        source = x if m == wl.node() else slot + m * n
        for start in range(lo, hi, BLOCK):
            offs = start + wl.arange(0, BLOCK)
            v = wl.load(source + offs, mask=offs < hi)
            for j in range(size):
                wl.store(out + column + offs, v, mask=offs < hi, peer=first + j)
    _finish(flags, epochs, epoch, calls, call)


@jit
def hier_all_to_all(x, out, recv, half, flags, m, epochs, calls, ELEM_BYTES: wl.constexpr,
                    BLOCK: wl.constexpr):
    """Rank p's out[me*m:(me+1)*m] = my x[p*m:(p+1)*m]: stored into the
    node's ranks' out (symmetric), put into the receive half of every rank
    of the other nodes, which copies it into its out."""
    epoch, call, slot, lo, hi = _start(epochs, calls, recv, half, flags, m, BLOCK)
    me = wl.rank()
    size = wl.local_size()
    nodes = wl.num_ranks() // size
    first = wl.node() * size
    for i in range(1, nodes):
        for j in range(size):
            dst = ((wl.node() + i) % nodes) * size + j
            wl.put(slot + me * m + lo, x + dst * m + lo, (hi - lo) * ELEM_BYTES, dst,
                   signal=_arrivals(flags, ARRIVALS) + me, signal_value=epoch)
    for start in range(lo, hi, BLOCK):
        offs = start + wl.arange(0, BLOCK)
        for j in range(size):
            v = wl.load(x + (first + j) * m + offs, mask=offs < hi)
            wl.store(out + me * m + offs, v, mask=offs < hi, peer=first + j)
    for i in range(1, nodes):
        for j in range(size):
            src = ((wl.node() + i) % nodes) * size + j
            wl.wait(_arrivals(flags, ARRIVALS) + src, epoch, cmp="ge")
            for start in range(lo, hi, BLOCK):
                offs = start + wl.arange(0, BLOCK)
                v = wl.load(slot + src * m + offs, mask=offs < hi)
                wl.store(out + src * m + offs, v, mask=offs < hi)
    _finish(flags, epochs, epoch, calls, call)


@jit
def hier_broadcast(x, root, recv, half, flags, n, epochs, calls, ELEM_BYTES: wl.constexpr,
                   BLOCK: wl.constexpr):
    """x on every rank = root's x (x symmetric). The root puts its x to the
    rank with its local index on every other node; that rank, and the root
    in its own node, store it into their node's ranks' x. The puts go one
    way, so the call ends with a phase among every rank (_sync): no root
    runs a call ahead into a receive half still being read."""
    epoch, call, slot, lo, hi = _start(epochs, calls, recv, half, flags, n, BLOCK)
    size = wl.local_size()
    first = wl.node() * size
    if wl.rank() == root:
        _send_column(slot, x, lo, hi, n, epoch, _arrivals(flags, ARRIVALS), ELEM_BYTES)
    if wl.local_rank() == root % size:
        if wl.node() != root // size:
            wl.wait(_arrivals(flags, ARRIVALS) + root, epoch, cmp="ge")
        source = x if wl.node() == root // size else slot + (root // size) * n
        for start in range(lo, hi, BLOCK):
            offs = start + wl.arange(0, BLOCK)
            v = wl.load(source + offs, mask=offs < hi)
            for j in range(size):
                wl.store(x + offs, v, mask=offs < hi, peer=first + j)
    wl.quiet()
    _sync(flags, 1, epoch)                      # every rank has root's x
    _end(epochs, epoch)
    _call_done(calls, call)
