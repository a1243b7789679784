"""The collectives' kernels, written in the DSL (docs/python.md, "Collectives").

Synchronisation is pairwise per program: program i of every rank pairs with
program i of every other rank. A phase is `_sync`: program i sets its slot
in every rank's flag row to the call's epoch (one release fence, then
relaxed signals: everything the program wrote or read before is ordered
before them), then waits until
every rank's slot in its own row is >= the epoch (an acquire wait). The
epoch grows by one per call in which the program takes part, so the flags
only grow and never need re-zeroing. It is kept on the device (`epochs`,
one slot per program, local to each rank; `_begin`/`_end`), not passed by
the host, so a collective captured in a CUDA graph stays correct on every
replay; program i of every rank takes part in the same calls, so its epochs
agree across ranks.

Work is split between programs by a grid-stride loop over BLOCK-element
blocks; the split depends only on the sizes and the number of programs,
which are the same on every rank, so program i of every rank touches the
same blocks and the pairwise phases are enough.

The kernels that push into a peer's buffer with no entry phase (_ll.py's,
push_all_reduce) alternate between two halves of it by the parity of the
call's number: every such call of a rank counts, and the count is the
same for every program of a call and so, as calls match, on every rank
(`calls`: MAX_PROGRAMS copies of it, _call_number, _call_done). A rank's
call c+2 starts after its call c+1 has finished (launches on a stream run
in order), which needed every peer to have started c+1, so to have
finished c, the last call that used that half. Per-program epochs cannot choose the half: a call's size sets
its grid and which blocks each program takes, and the programs' epochs
drift apart as grids change.
"""
from .. import language as wl
from .._jit import jit

MAX_PROGRAMS = 256  # flag rows per phase
NUM_PHASES = 4      # 0: entry, 1: exit, 2 and 3: the arrivals of puts (_nodes.py)
# weft.ops' fused GEMMs and sequence-parallel attention keep their state
# in one int64 array per rank (_Comm.fused_sync): their calls (0), their
# finished programs (1), the epoch of the last call of a kernel that
# flags FUSED_DONE (FUSED_LAST: the first layer, the second layer's copy
# engine path, attention), the count of items taken from attention's
# queue (FUSED_QUEUE), the epoch of the call whose arrivals the copy
# engine flags (FUSED_EPOCH: put_entry_kernel writes it, puts copy it);
# from FUSED_COUNTERS the second layer's counters per output block,
# FUSED_BLOCKS for each parity of the calls; from FUSED_ARRIVALS the
# FUSED_BLOCKS arrival flags of the fused kernels' chunks (moved by the
# copy engine or by the first layer's and attention's programs); from
# FUSED_DONE, for each rank, the epoch of its last such call that has
# finished (_fused_call_done).
FUSED_BLOCKS = 1 << 15
FUSED_LAST = 2
FUSED_QUEUE = 3
FUSED_EPOCH = 4
FUSED_COUNTERS = 5
FUSED_ARRIVALS = FUSED_COUNTERS + 2 * FUSED_BLOCKS
FUSED_DONE = FUSED_ARRIVALS + FUSED_BLOCKS


@jit
def _sync(flags, phase, epoch):
    me = wl.rank()
    ranks = wl.num_ranks()
    row = flags + (phase * MAX_PROGRAMS + wl.program_id(0)) * ranks
    # One release for all peers: the signals need no order among themselves,
    # and a release per signal would be a system-scope fence each.
    wl.fence(order="release", scope="sys")
    for p in range(ranks):
        wl.signal(row + me, epoch, peer=p, order="relaxed")
    for p in range(ranks):
        wl.wait(row + p, epoch, cmp="ge")           # acquire, sys


@jit
def _begin(epochs):
    """This program's epoch for this call: one more than in its last call."""
    return wl.load(epochs + wl.program_id(0)) + 1


@jit
def _end(epochs, epoch):
    wl.store(epochs + wl.program_id(0), epoch)


@jit
def _call_number(calls):
    """This call's number among the calls that alternate halves. Every slot
    of `calls` (MAX_PROGRAMS) holds the count of such calls (_call_done),
    so each program reads its own: no program waits for another's count."""
    return wl.load(calls + wl.program_id(0)) + 1


@jit
def _call_done(calls, call):
    """Counts the call in every slot: program i of G writes slots i, i+G,
    ..., so no slot is written by two programs or read by another in this
    launch, and the next launch finds every slot counted (no atomic, no
    fence: a count of finished programs cost 0.8 us a call on H200s)."""
    slots = wl.arange(0, MAX_PROGRAMS)
    wl.store(calls + slots, call, mask=slots % wl.num_programs(0) == wl.program_id(0))


@jit
def _last_to_finish(finished):
    """Whether this program is the last of its launch to get here (an
    acq_rel count at `finished`, reset for the next launch by that
    program): what it does next follows everything every program did
    before (the count's release sequence)."""
    last = wl.atomic_add(finished, 1) == wl.num_programs(0) - 1
    if last:
        wl.store(finished, 0)
    return last


@jit
def _fused_call_done(sync, epoch):
    """The end of a fused call that took `epoch` (sync[0] + 1) in a
    launch: the last of its programs to get here (counted in
    sync[1]) moves sync on (calls, last epoch) and tells every rank, in
    its FUSED_DONE flag there, that this rank has finished the call. Every
    program has taken its last item by then: the queue starts the next
    call empty. Returns whether this program was that last one."""
    last = _last_to_finish(sync + 1)
    if last:
        wl.store(sync + FUSED_QUEUE, 0)
        wl.store(sync + FUSED_LAST, epoch)
        wl.store(sync, epoch)
        for p in range(wl.num_ranks()):
            wl.signal(sync + FUSED_DONE + wl.rank(), epoch, peer=p)
    return last


@jit
def _combine(a, b, OP: wl.constexpr):
    if OP == 0:
        r = a + b
    elif OP == 1:
        r = wl.maximum(a, b)
    else:
        r = wl.minimum(a, b)
    return r


@jit
def _fold(acc, v, p, OP: wl.constexpr):
    """The running reduction over ranks 0..p-1 (acc) with rank p's v: v
    itself for rank 0, so every rank combines in one order."""
    if p == 0:
        r = v
    else:
        r = _combine(acc, v, OP)
    return r


@jit
def _reduce_block(x, offs, mask, OP: wl.constexpr):
    """Combines the block `offs` of every rank's x in rank order (so every
    rank computes bit-identical results), accumulating in f32."""
    acc = wl.load(x + offs, mask=mask, other=0.0, peer=0).to(wl.float32)
    for p in range(1, wl.num_ranks()):
        v = wl.load(x + offs, mask=mask, other=0.0, peer=p).to(wl.float32)
        acc = _combine(acc, v, OP)
    return acc


@jit
def _push(ptr, v, mask, first):
    """Stores v at ptr on every rank, starting with the one after `first`
    (so that ranks pushing at once spread over the links). Pushing beats
    pulling on NVLink: a store is one posted write, a load a round trip
    (bench/README.md, "Collectives: the grid")."""
    for i in range(wl.num_ranks()):
        wl.store(ptr, v, mask=mask, peer=(first + 1 + i) % wl.num_ranks())


@jit
def _copy_local(src, dst, n, BLOCK: wl.constexpr):
    for start in range(wl.program_id(0) * BLOCK, n, wl.num_programs(0) * BLOCK):
        offs = start + wl.arange(0, BLOCK)
        mask = offs < n
        wl.store(dst + offs, wl.load(src + offs, mask=mask), mask=mask)


@jit
def copy_kernel(src, dst, n, BLOCK: wl.constexpr):
    """Local copy (staging a non-symmetric input)."""
    _copy_local(src, dst, n, BLOCK)


@jit
def one_shot_all_reduce(x, out, tmp, flags, n, epochs, OP: wl.constexpr,
                        INPLACE: wl.constexpr, BLOCK: wl.constexpr):
    """Every rank reads every rank's x and reduces all n elements. In place
    (out is x), results go to tmp and are copied into x after the exit phase,
    when no peer reads x any more."""
    pid = wl.program_id(0)
    step = wl.num_programs(0) * BLOCK
    epoch = _begin(epochs)
    _sync(flags, 0, epoch)                      # every rank's x is ready
    for start in range(pid * BLOCK, n, step):
        offs = start + wl.arange(0, BLOCK)
        mask = offs < n
        acc = _reduce_block(x, offs, mask, OP)
        if INPLACE:
            wl.store(tmp + offs, acc, mask=mask)
        else:
            wl.store(out + offs, acc, mask=mask)
    _sync(flags, 1, epoch)                      # nobody reads my x any more
    if INPLACE:
        _copy_local(tmp, out, n, BLOCK)
    _end(epochs, epoch)


@jit
def push_all_reduce(x, out, recv, half, n, flags, epochs, calls, OP: wl.constexpr,
                    BLOCK: wl.constexpr):
    """Every rank pushes its x into its slot of every peer's `recv` (two
    halves of `half` elements, taken by the parity of the call's number:
    no entry phase), one phase says every push landed,
    and each rank reduces its own x and the received copies from local
    memory, in rank order. x and out are any memory of this rank; out may
    be x (each block is read before its program writes it)."""
    pid, me, ranks = wl.program_id(0), wl.rank(), wl.num_ranks()
    step = wl.num_programs(0) * BLOCK
    epoch = _begin(epochs)
    call = _call_number(calls)
    buf = recv + (call % 2) * half
    for start in range(pid * BLOCK, n, step):
        offs = start + wl.arange(0, BLOCK)
        mask = offs < n
        v = wl.load(x + offs, mask=mask)
        for i in range(1, ranks):
            wl.store(buf + me * n + offs, v, mask=mask, peer=(me + i) % ranks)
    _sync(flags, 0, epoch)                      # every rank's pushes landed
    for start in range(pid * BLOCK, n, step):
        offs = start + wl.arange(0, BLOCK)
        mask = offs < n
        acc = wl.zeros((BLOCK,), wl.float32)
        for p in range(ranks):
            if p == me:
                v = wl.load(x + offs, mask=mask, other=0.0).to(wl.float32)
            else:
                v = wl.load(buf + p * n + offs, mask=mask, other=0.0).to(wl.float32)
            acc = _fold(acc, v, p, OP)
        wl.store(out + offs, acc, mask=mask)
    _end(epochs, epoch)
    _call_done(calls, call)


@jit
def two_shot_all_reduce(x, out, flags, n, chunk, epochs, OP: wl.constexpr,
                        BLOCK: wl.constexpr):
    """Reduce-scatter then all-gather in one pass. Rank r owns
    x[r*chunk:(r+1)*chunk] (clipped to n): it pulls that chunk of every
    rank's x, reduces it and pushes the result into every rank's out (out
    symmetric). In place (out is x) is safe: chunk r of any rank's x is read
    only by rank r, block by block, before rank r writes that block."""
    pid = wl.program_id(0)
    me = wl.rank()
    epoch = _begin(epochs)
    _sync(flags, 0, epoch)                      # every rank's x is ready
    lo = me * chunk
    for start in range(pid * BLOCK, chunk, wl.num_programs(0) * BLOCK):
        offs = lo + start + wl.arange(0, BLOCK)
        mask = (offs < n) & (offs < lo + chunk)
        acc = _reduce_block(x, offs, mask, OP)
        _push(out + offs, acc, mask, me)
    _sync(flags, 1, epoch)                      # every chunk landed everywhere
    _end(epochs, epoch)


@jit
def multimem_all_reduce(x, out, flags, n, chunk, epochs):
    """Rank r reduces its chunk of x through the multicast address
    (multimem.ld_reduce) and writes the result to every rank's out at once
    (multimem.st). Scalar per element: the language's multimem ops take
    scalars. On targets without live multicast both lower to loops over the
    ranks' copies. out must be symmetric; out may be x (each element is read
    and written only by its owner's program)."""
    me = wl.rank()
    epoch = _begin(epochs)
    _sync(flags, 0, epoch)
    lo = me * chunk
    hi = n if lo + chunk > n else lo + chunk
    for i in range(lo + wl.program_id(0), hi, wl.num_programs(0)):
        v = wl.multimem_ld_reduce(wl.multicast(x + i), op="add")   # f32: add only
        wl.multimem_store(wl.multicast(out + i), v)
    _sync(flags, 1, epoch)                      # every chunk written everywhere
    _end(epochs, epoch)


@jit
def reduce_scatter_kernel(x, out, flags, n, chunk, epochs, OP: wl.constexpr,
                          BLOCK: wl.constexpr):
    """out (chunk elements) = the reduction of x[r*chunk:(r+1)*chunk] over
    ranks, x read as zero past n."""
    pid = wl.program_id(0)
    lo = wl.rank() * chunk
    epoch = _begin(epochs)
    _sync(flags, 0, epoch)
    for start in range(pid * BLOCK, chunk, wl.num_programs(0) * BLOCK):
        local = start + wl.arange(0, BLOCK)
        offs = lo + local
        acc = _reduce_block(x, offs, offs < n, OP)
        wl.store(out + local, acc, mask=local < chunk)
    _sync(flags, 1, epoch)
    _end(epochs, epoch)


@jit
def all_gather_kernel(x, out, flags, n, epochs, BLOCK: wl.constexpr):
    """out[me*n:(me+1)*n] of every rank = my x (pushed; out symmetric)."""
    pid = wl.program_id(0)
    me = wl.rank()
    epoch = _begin(epochs)
    _sync(flags, 0, epoch)                      # every rank's out is free
    for start in range(pid * BLOCK, n, wl.num_programs(0) * BLOCK):
        offs = start + wl.arange(0, BLOCK)
        mask = offs < n
        _push(out + me * n + offs, wl.load(x + offs, mask=mask), mask, me)
    _sync(flags, 1, epoch)                      # every block landed everywhere
    _end(epochs, epoch)


@jit
def all_to_all_kernel(x, out, flags, m, epochs, BLOCK: wl.constexpr):
    """Rank p's out[me*m:(me+1)*m] = my x[p*m:(p+1)*m] (pushed; out
    symmetric)."""
    pid = wl.program_id(0)
    me = wl.rank()
    ranks = wl.num_ranks()
    epoch = _begin(epochs)
    _sync(flags, 0, epoch)                      # every rank's out is free
    for start in range(pid * BLOCK, m, wl.num_programs(0) * BLOCK):
        offs = start + wl.arange(0, BLOCK)
        mask = offs < m
        for i in range(ranks):
            p = (me + 1 + i) % ranks
            v = wl.load(x + p * m + offs, mask=mask)
            wl.store(out + me * m + offs, v, mask=mask, peer=p)
    _sync(flags, 1, epoch)                      # every block landed everywhere
    _end(epochs, epoch)


@jit
def broadcast_kernel(x, root, flags, n, epochs, BLOCK: wl.constexpr):
    """Root pushes its x into every other rank's x."""
    pid = wl.program_id(0)
    epoch = _begin(epochs)
    _sync(flags, 0, epoch)                      # every rank's x is free
    if wl.rank() == root:
        for start in range(pid * BLOCK, n, wl.num_programs(0) * BLOCK):
            offs = start + wl.arange(0, BLOCK)
            mask = offs < n
            v = wl.load(x + offs, mask=mask)
            for i in range(1, wl.num_ranks()):
                wl.store(x + offs, v, mask=mask, peer=(root + i) % wl.num_ranks())
    _sync(flags, 1, epoch)                      # root's x landed everywhere
    _end(epochs, epoch)


@jit
def all_reduce_residual_rmsnorm_kernel(x, residual, weight, out, flags, rows, hidden,
                                       eps, epochs, BLOCK: wl.constexpr):
    """Per row (rows split between programs): h = sum over ranks of x[row]
    (one-shot, f32) + residual[row]; residual[row] = h (rounded to its
    dtype); out[row] = residual[row] * rsqrt(mean(h^2) + eps) * weight."""
    pid = wl.program_id(0)
    epoch = _begin(epochs)
    _sync(flags, 0, epoch)
    for row in range(pid, rows, wl.num_programs(0)):
        base = row * hidden
        sq = wl.zeros((BLOCK,), wl.float32)
        for start in range(0, hidden, BLOCK):
            cols = start + wl.arange(0, BLOCK)
            mask = cols < hidden
            h = _reduce_block(x, base + cols, mask, 0)
            sq = _add_residual(h, residual, base + cols, mask, sq)
        _normalize_row(residual, weight, out, base, hidden, sq, eps, BLOCK)
    _sync(flags, 1, epoch)                      # nobody reads my x any more
    _end(epochs, epoch)


@jit
def _add_residual(h, residual, offs, mask, sq):
    """residual[offs] = h + residual[offs] (f32 sum, rounded where it is
    stored); sq plus that sum squared."""
    h = h + wl.load(residual + offs, mask=mask, other=0.0).to(wl.float32)
    wl.store(residual + offs, h, mask=mask)
    return sq + h * h


@jit
def _normalize_row(residual, weight, out, base, hidden, sq, eps, BLOCK: wl.constexpr):
    """out[row] = residual[row] * rsqrt(mean(h^2) + eps) * weight, sq the
    row's squares of the unrounded h."""
    rstd = wl.rsqrt(wl.sum(sq, axis=0) / hidden + eps)
    for start in range(0, hidden, BLOCK):
        cols = start + wl.arange(0, BLOCK)
        mask = cols < hidden
        h = wl.load(residual + base + cols, mask=mask, other=0.0).to(wl.float32)
        w = wl.load(weight + cols, mask=mask, other=0.0).to(wl.float32)
        wl.store(out + base + cols, h * rstd * w, mask=mask)


@jit
def residual_rmsnorm_kernel(h, residual, weight, out, rows, hidden, eps, BLOCK: wl.constexpr):
    """all_reduce_residual_rmsnorm_kernel's work after the reduction, where
    that is its own call (h: the reduced x in f32; jobs across nodes)."""
    for row in range(wl.program_id(0), rows, wl.num_programs(0)):
        base = row * hidden
        sq = wl.zeros((BLOCK,), wl.float32)
        for start in range(0, hidden, BLOCK):
            cols = start + wl.arange(0, BLOCK)
            mask = cols < hidden
            v = wl.load(h + base + cols, mask=mask, other=0.0)
            sq = _add_residual(v, residual, base + cols, mask, sq)
        _normalize_row(residual, weight, out, base, hidden, sq, eps, BLOCK)
