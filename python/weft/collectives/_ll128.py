"""The LL128 protocol: 120 bytes of data and an 8-byte flag in each 128-byte line.

LL (_ll.py) gives half of every word to its flag; LL128 gives one word in
sixteen (NCCL's LL128), so mid-sized messages cost 1.07x their bytes on
the wire instead of 2x. A sender writes a line (15 data words, the call's
flag last) as one warp-wide store: 8 threads of a warp, 16 contiguous bytes
each, in one instruction; a receiver loads the line the same way and, when
its flag is the call's, has its data. That a line so written is seen whole
is not in PTX's memory model: it is how NVLink and the L2 of sm_70-sm_90
GPUs move 128-byte lines, which NCCL's default protocol there relies on.
So the one-store form runs only where ATOMIC_LINES says so (CUDA); elsewhere
(host, HIP) a line's data is stored before its flag with release order and
read after it with acquire: right under any memory model, at a fence a
line, so auto picks LL128 only where lines are atomic
(collectives/__init__.py) and the ordered form serves tests and forced use.
Volatile accesses are PTX's vector accesses that bypass L1, as NCCL's;
python/test/unit/test_ll128.py checks the lines stay whole in the PTX.

Source rank s's line l sits at line s * CAP + l of a buffer half (CAP: the
half's lines per rank), whatever the call's size, so a flag word is only
ever written with a flag: a stale one is an earlier call's number (the
call's number, 64 bits, never repeats), never data. The halves alternate
by the call's parity, as LL's (no entry handshake).

Word q = 15 l + c (c < 15) of line l holds elements PACK q .. PACK q + PACK
- 1 of x, low bits first (PACK = 64 / element bits). Every tile is a
(LINES, LINE) tile of words in the lines' layout: x and out are read and
written as whole words (xw, ow: the same memory as uint64) below `full`,
which costs one exchange through shared memory each way (a line's words
are not 16-byte aligned in x), and element by element from there, in a
branch the common call skips (the last word, when PACK does not divide n,
or everything when x or out is not 8-byte aligned: the host passes full =
0). Elements as (LINES, LINE, PACK) tiles cost 18 exchanges a block.
"""
from .. import language as wl
from .._jit import PerBackend, jit
from ._kernels import _call_done, _call_number, _fold
from ._ll import SPIN

LINE = 16   # words of a line
DATA = 15   # of them data; the last is the flag
# Whether a line stored by one warp-wide instruction is seen whole (above).
ATOMIC_LINES = PerBackend(host=0, hip=0, cuda=1)


@jit
def _lines(start, LINES: wl.constexpr):
    """Lines start .. start+LINES: their (LINES, 1) and (1, LINE) indices
    and the (LINES, LINE) indices of the data words (the flag column's are
    the next line's first: callers mask them with c < DATA)."""
    l = (start + wl.arange(0, LINES))[:, None]
    c = wl.arange(0, LINE)[None, :]
    return l, c, l * DATA + c


@jit
def _element(w, j: wl.constexpr, DTYPE: wl.constexpr, PACK: wl.constexpr):
    """Element j of words w."""
    v = w >> (j * (64 // PACK))
    if PACK == 4:
        e = v.to(wl.uint16).to(DTYPE, bitcast=True)
    else:
        e = v.to(wl.uint32).to(DTYPE, bitcast=True)
    return e


@jit
def _bits(v, j: wl.constexpr, PACK: wl.constexpr):
    """Elements v as the bits of element j of a word."""
    if PACK == 4:
        b = v.to(wl.uint16, bitcast=True)
    else:
        b = v.to(wl.uint32, bitcast=True)
    return b.to(wl.uint64) << (j * (64 // PACK))


@jit
def _pack(x, xw, q, data, n, full, PACK: wl.constexpr):
    """Words q of x ((LINES, LINE) uint64, 0 where not `data`)."""
    w = wl.load(xw + q, mask=data & (q < full), other=0).to(wl.uint64, bitcast=True)
    if full * PACK < n:  # elements in the tile's layout cost an exchange: only when due
        for j in wl.static_range(PACK):
            e = q * PACK + j
            w = w | _bits(wl.load(x + e, mask=data & (q >= full) & (e < n), other=0.0), j,
                          PACK)
    return w


@jit
def _unpack(out, ow, w, q, data, n, full, DTYPE: wl.constexpr, PACK: wl.constexpr):
    """Stores words w as words q of out."""
    wl.store(ow + q, w, mask=data & (q < full))
    if full * PACK < n:
        for j in wl.static_range(PACK):
            e = q * PACK + j
            wl.store(out + e, _element(w, j, DTYPE, PACK), mask=data & (q >= full) & (e < n))


@jit
def _send_all(ll, x, xw, half, L, CAP, n, full, calls, PACK: wl.constexpr,
              LINES: wl.constexpr, ATOMIC: wl.constexpr):
    """A call's start: its number and half, with this program's lines sent
    into this rank's slot of every peer's half (the peers after this rank
    first, to spread the links)."""
    me, ranks = wl.rank(), wl.num_ranks()
    call = _call_number(calls)
    flag = call.to(wl.uint64)
    buf = ll + (call % 2) * half * LINE  # in lines: each half 128-byte aligned
    for start in range(wl.program_id(0) * LINES, L, wl.num_programs(0) * LINES):
        l, c, q = _lines(start, LINES)
        line = wl.where(c < DATA, _pack(x, xw, q, c < DATA, n, full, PACK), flag)
        ptr = buf + (me * CAP + l) * LINE + c
        for i in range(1, ranks):
            peer = (me + i) % ranks
            if ATOMIC:
                wl.store(ptr, line, mask=l < L, peer=peer, volatile=True)
            else:
                wl.store(ptr, line, mask=(l < L) & (c < DATA), peer=peer, order="relaxed")
                wl.store(ptr, line, mask=(l < L) & (c == DATA), peer=peer, order="release")
    return call, flag, buf


@jit
def _stale(v, c, flag):
    """Whether any line of v lacks `flag` in its flag word."""
    return wl.max(wl.max(((v != flag) & (c == DATA)).to(wl.int32), axis=1), axis=0)


@jit
def _receive(buf, src, start, L, CAP, flag, LINES: wl.constexpr, ATOMIC: wl.constexpr,
             SPIN: wl.constexpr):
    """Rank src's lines start .. start+LINES of this rank's half `buf`,
    waited for until each carries `flag`: (LINES, LINE) words, the data in
    the first DATA."""
    l, c, q = _lines(start, LINES)
    rows = l < L
    ptr = buf + (src * CAP + l) * LINE + c
    last = buf + (src * CAP + wl.minimum(start + LINES, L) - 1) * LINE + DATA  # written last
    if ATOMIC:
        v = wl.load(ptr, mask=rows, other=flag, volatile=True)
    else:
        v = wl.load(ptr, mask=rows & (c == DATA), other=flag, order="acquire")
    stale = _stale(v, c, flag)
    polls = 0
    while stale != 0:
        if polls >= SPIN:
            wl.wait(last, flag, cmp="ge", order="relaxed")
        if ATOMIC:
            v = wl.load(ptr, mask=rows, other=flag, volatile=True)
        else:
            v = wl.load(ptr, mask=rows & (c == DATA), other=flag, order="acquire")
        stale = _stale(v, c, flag)
        if polls >= SPIN:
            # A wait that gave up (WEFT_WAIT_TIMEOUT) leaves the last flag
            # old: the loop ends, and the launch fails with the wait's record.
            if wl.load(last, order="relaxed") < flag:
                stale = 0
        polls += 1
    if not ATOMIC:
        v = wl.load(ptr, mask=rows & (c < DATA), other=0, order="relaxed")
    return v


@jit
def _words(x, xw, buf, p, start, L, CAP, n, full, flag, PACK: wl.constexpr,
           LINES: wl.constexpr, ATOMIC: wl.constexpr, SPIN: wl.constexpr):
    """Rank p's words of lines start .. start+LINES: this rank's from x."""
    if p == wl.rank():
        l, c, q = _lines(start, LINES)
        w = _pack(x, xw, q, c < DATA, n, full, PACK)
    else:
        w = _receive(buf, p, start, L, CAP, flag, LINES, ATOMIC, SPIN)
    return w


@jit
def _add(acc, w, j: wl.constexpr, p, OP: wl.constexpr, DTYPE: wl.constexpr,
         PACK: wl.constexpr):
    """acc (element j of the words, over ranks before p) with rank p's."""
    return _fold(acc, _element(w, j, DTYPE, PACK).to(wl.float32), p, OP)


@jit
def ll128_all_reduce(x, xw, out, ow, ll, half, L, CAP, n, full, calls, OP: wl.constexpr,
                     DTYPE: wl.constexpr, PACK: wl.constexpr, LINES: wl.constexpr,
                     SPIN: wl.constexpr, ATOMIC: wl.constexpr):
    """out = x reduced over ranks, in rank order in f32 (bit-identical on
    every rank); x and out any memory of this rank, out may be x; xw, ow
    the same as uint64 words, whole words below `full`. ll: the LL128
    buffer, `half` lines per half, CAP of them per rank; L: the call's
    lines."""
    call, flag, buf = _send_all(ll, x, xw, half, L, CAP, n, full, calls, PACK, LINES, ATOMIC)
    for start in range(wl.program_id(0) * LINES, L, wl.num_programs(0) * LINES):
        l, c, q = _lines(start, LINES)
        # An element of each word a sum (PACK of 2 or 4; the last two
        # unused for 2, which the compiler drops).
        a0 = wl.zeros(q.shape, wl.float32)
        a1 = a0
        a2 = a0
        a3 = a0
        for p in range(wl.num_ranks()):
            w = _words(x, xw, buf, p, start, L, CAP, n, full, flag, PACK, LINES, ATOMIC, SPIN)
            a0 = _add(a0, w, 0, p, OP, DTYPE, PACK)
            a1 = _add(a1, w, 1, p, OP, DTYPE, PACK)
            if PACK == 4:
                a2 = _add(a2, w, 2, p, OP, DTYPE, PACK)
                a3 = _add(a3, w, 3, p, OP, DTYPE, PACK)
        w = _bits(a0.to(DTYPE), 0, PACK) | _bits(a1.to(DTYPE), 1, PACK)
        if PACK == 4:
            w = w | _bits(a2.to(DTYPE), 2, PACK) | _bits(a3.to(DTYPE), 3, PACK)
        _unpack(out, ow, w, q, c < DATA, n, full, DTYPE, PACK)
    _call_done(calls, call)


@jit
def ll128_all_gather(x, xw, out, ow, ll, half, L, CAP, n, full, calls, DTYPE: wl.constexpr,
                     PACK: wl.constexpr, LINES: wl.constexpr, SPIN: wl.constexpr,
                     ATOMIC: wl.constexpr):
    """out[p*n:(p+1)*n] = rank p's x; x and out any memory of this rank (as
    ll128_all_reduce's; `full` 0 unless PACK divides n, as out's parts
    start on words then)."""
    call, flag, buf = _send_all(ll, x, xw, half, L, CAP, n, full, calls, PACK, LINES, ATOMIC)
    for start in range(wl.program_id(0) * LINES, L, wl.num_programs(0) * LINES):
        l, c, q = _lines(start, LINES)
        for p in range(wl.num_ranks()):
            w = _words(x, xw, buf, p, start, L, CAP, n, full, flag, PACK, LINES, ATOMIC, SPIN)
            _unpack(out + p * n, ow + p * full, w, q, c < DATA, n, full, DTYPE, PACK)
    _call_done(calls, call)
