"""The low-latency (LL) protocol: data and its flag in one 8-byte word.

A sender writes each 32-bit word of its data with a 32-bit flag beside it,
in one aligned 8-byte store into the receiver's LL buffer. Such a store is
seen whole or not at all, so a receiver that sees the flag has the data: no
fence, no separate signal, no round trip (NCCL's LL protocol). The cost is
bandwidth (half of every word is flag), which is why LL is for small
messages (collectives/__init__.py, LL_MAX_BYTES).

The flag is the call's number (_kernels.py: every call that alternates
halves counts, whichever kernel and size) folded into 1 .. 2^32-1 (0 is a
zeroed buffer's). A call's size sets its grid and the slot W of each
source rank, so a word that another program wrote in an earlier call of
another size sits where this call reads; only a flag no other call used
tells them apart (per-program epochs would not: they drift apart, and one
program's old flag is another's current one).

The buffer has two halves, taken by the call's parity (no entry handshake,
by the argument in _kernels.py), each with a slot of W words per source
rank: rank s writes slot s of every peer's half. A word is stale only if
written 2^32-1 calls ago; the host re-zeroes the buffer long before
(_Comm.ll_buffer).

Words are loaded and stored whole; a 16-bit element pair shares a word
(PACK=2), so any n works: the last word's second half is padding.
"""
from .. import language as wl
from .._jit import PerBackend, jit
from ._kernels import _call_done, _call_number, _fold

FOLD = (1 << 32) - 1
# Polls of a block before a receiver waits in wl.wait between them, which
# yields on the host (programs are threads on few cores) and gives up after
# WEFT_WAIT_TIMEOUT. GPU programs poll the words themselves first: the data
# is usually there within a few polls.
SPIN = PerBackend(host=0, default=256)


@jit
def _flag(call):
    return (call % FOLD + 1).to(wl.uint64)


@jit
def _elements(start, PACK: wl.constexpr, BLOCK: wl.constexpr):
    """The indices of the elements that words start .. start+BLOCK hold:
    (BLOCK,) for PACK=1, (BLOCK, 2) for PACK=2 (each thread keeps a word's
    two halves, so splitting and joining them moves nothing)."""
    w = start + wl.arange(0, BLOCK)
    if PACK == 1:
        e = w
    else:
        e = 2 * w[:, None] + wl.arange(0, 2)[None, :]
    return e


@jit
def _words(x, start, n, PACK: wl.constexpr, BLOCK: wl.constexpr):
    """Words start .. start+BLOCK of x as uint64, data in the low half."""
    e = _elements(start, PACK, BLOCK)
    if PACK == 1:
        v = wl.load(x + e, mask=e < n, other=0.0).to(wl.uint32, bitcast=True)
    else:
        lo, hi = wl.split(wl.load(x + e, mask=e < n, other=0.0).to(wl.uint16, bitcast=True))
        v = lo.to(wl.uint32) | (hi.to(wl.uint32) << 16)
    return v.to(wl.uint64)


@jit
def _send(ll, x, start, n, W, flag, PACK: wl.constexpr, BLOCK: wl.constexpr):
    """This rank's words start .. start+BLOCK into its slot of every peer's
    half `ll` (the peers after this rank first, to spread the links)."""
    me, ranks = wl.rank(), wl.num_ranks()
    w = start + wl.arange(0, BLOCK)
    line = (flag << 32) | _words(x, start, n, PACK, BLOCK)
    for i in range(1, ranks):
        wl.store(ll + me * W + w, line, mask=w < W, peer=(me + i) % ranks, order="relaxed")


@jit
def _send_all(ll, x, half, W, n, calls, PACK: wl.constexpr, BLOCK: wl.constexpr):
    """A call's start: its number, flag and half of the LL buffer, with all
    of this program's blocks sent (every one in flight before any is
    waited for)."""
    call = _call_number(calls)
    flag = _flag(call)
    buf = ll + (call % 2) * half
    for start in range(wl.program_id(0) * BLOCK, W, wl.num_programs(0) * BLOCK):
        _send(buf, x, start, n, W, flag, PACK, BLOCK)
    return call, flag, buf


@jit
def _stale(v, flag):
    """Whether any of the words v lacks `flag`."""
    return wl.max(((v >> 32) != flag).to(wl.int32), axis=0)


@jit
def _receive(ll, src, start, W, flag, BLOCK: wl.constexpr, SPIN: wl.constexpr):
    """Rank src's words start .. start+BLOCK, waited for in this rank's half
    `ll` until each carries `flag`; their data (uint32)."""
    w = start + wl.arange(0, BLOCK)
    mask = w < W
    ptr = ll + src * W + w
    line = flag << 32
    last = ll + src * W + wl.minimum(start + BLOCK, W) - 1  # most senders write it last
    v = wl.load(ptr, mask=mask, other=line, order="relaxed")
    stale = _stale(v, flag)
    polls = 0
    while stale != 0:
        if polls >= SPIN:
            wl.wait(last, line, cmp="ge", order="relaxed")
        v = wl.load(ptr, mask=mask, other=line, order="relaxed")
        stale = _stale(v, flag)
        if polls >= SPIN:
            # A wait that gave up (WEFT_WAIT_TIMEOUT) leaves the last word
            # old: the loop ends, and the launch fails with the wait's record.
            if wl.load(last, order="relaxed") < line:
                stale = 0
        polls += 1
    return (v & 0xFFFFFFFF).to(wl.uint32)


@jit
def _values(d, DTYPE: wl.constexpr, PACK: wl.constexpr):
    """Words' data (uint32) as the elements they hold, shaped as _elements."""
    if PACK == 1:
        v = d.to(DTYPE, bitcast=True)
    else:
        lo = (d & 0xFFFF).to(wl.uint16).to(DTYPE, bitcast=True)
        hi = (d >> 16).to(wl.uint16).to(DTYPE, bitcast=True)
        v = wl.join(lo, hi)
    return v


@jit
def ll_all_reduce(x, out, ll, half, W, n, calls, OP: wl.constexpr, DTYPE: wl.constexpr,
                  PACK: wl.constexpr, BLOCK: wl.constexpr, SPIN: wl.constexpr):
    """out = x reduced over ranks, in rank order in f32 (bit-identical on
    every rank); x and out any memory of this rank (peers read neither),
    out may be x. ll: the LL buffer, `half` words per half."""
    pid, me = wl.program_id(0), wl.rank()
    call, flag, buf = _send_all(ll, x, half, W, n, calls, PACK, BLOCK)
    for start in range(pid * BLOCK, W, wl.num_programs(0) * BLOCK):
        e = _elements(start, PACK, BLOCK)
        mask = e < n
        acc = wl.zeros(e.shape, wl.float32)
        for p in range(wl.num_ranks()):
            if p == me:  # through words too: one layout for every rank's values
                d = _words(x, start, n, PACK, BLOCK).to(wl.uint32)
            else:
                d = _receive(buf, p, start, W, flag, BLOCK, SPIN)
            acc = _fold(acc, _values(d, DTYPE, PACK).to(wl.float32), p, OP)
        wl.store(out + e, acc, mask=mask)
    _call_done(calls, call)


@jit
def ll_all_gather(x, out, ll, half, W, n, calls, DTYPE: wl.constexpr, PACK: wl.constexpr,
                  BLOCK: wl.constexpr, SPIN: wl.constexpr):
    """out[p*n:(p+1)*n] = rank p's x; x and out any memory of this rank."""
    pid, me = wl.program_id(0), wl.rank()
    call, flag, buf = _send_all(ll, x, half, W, n, calls, PACK, BLOCK)
    for start in range(pid * BLOCK, W, wl.num_programs(0) * BLOCK):
        e = _elements(start, PACK, BLOCK)
        mask = e < n
        for p in range(wl.num_ranks()):
            if p == me:
                d = _words(x, start, n, PACK, BLOCK).to(wl.uint32)
            else:
                d = _receive(buf, p, start, W, flag, BLOCK, SPIN)
            v = _values(d, DTYPE, PACK)
            wl.store(out + p * n + e, v, mask=mask)
    _call_done(calls, call)
