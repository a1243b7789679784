"""Collectives written in the DSL (docs/python.md, "Collectives").

    weft.collectives.all_reduce(x, out=None, op="sum")
    weft.collectives.all_gather(x, out)
    weft.collectives.reduce_scatter(x, out)
    weft.collectives.all_to_all(x, out)
    weft.collectives.broadcast(x, root)
    weft.collectives.all_reduce_residual_rmsnorm(x, residual, weight, eps, out)

Every rank calls the same collectives in the same order with the same sizes,
dtypes and options (like NCCL). Synchronisation is on the device: flags in
the symmetric heap, epochs counted on the device; no host barrier inside a
call, so a call can be captured in a CUDA graph (docs/python.md). In a job
across nodes every collective is hierarchical (_nodes.py): loads and
stores within a node, puts between nodes (docs/multinode.md).
"""
import math

import numpy as np

from .. import _runtime as rt
from .. import language as wl
from .. import _plans
from .._jit import _NUMPY_DTYPES, PerBackend, _torch_dtype
from . import _kernels as K
from . import _ll
from . import _ll128
from . import _nodes

__all__ = ["all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast",
           "all_reduce_residual_rmsnorm", "multicast_enabled", "LL_MAX_BYTES",
           "LL128_MIN_BYTES", "LL128_MAX_BYTES", "PUSH_MAX_BYTES"]

# all_reduce and all_gather use the LL protocol (_ll.py: one posted write
# per word, no handshake) up to LL_MAX_BYTES per rank: below it a call is
# latency-bound, above it LL's doubled bytes cost more than the handshakes
# it saves. Where a 128-byte line stored by one instruction is seen whole
# (CUDA), LL128 (_ll128.py: a flag word in sixteen, still no handshake)
# takes over above LL128_MIN_BYTES, up to LL128_MAX_BYTES: on two H200s
# within 0.15 us of LL below 64 KiB, ahead from 256 KiB (3.7 against 4.4 us),
# ahead of push and two-shot up to 2 MiB, behind them from 3 MiB
# (bench/README.md, "Latency").
LL_MAX_BYTES = 256 * 1024
LL128_MIN_BYTES = 64 * 1024
LL128_MAX_BYTES = 2 * 1024 * 1024
# Past LL, all_reduce pushes (one phase, double-buffered receive halves) up
# to this many bytes per rank; two-shot's halved traffic wins beyond. (Where
# LL128 runs, auto goes from it to two-shot.)
PUSH_MAX_BYTES = 1024 * 1024

# The grid: elements per block (the BLOCK constexpr, resolved for the
# target each kernel is compiled for) and programs per launch, unless a call
# passes num_programs. Host tiles are vectors of one thread, and LLVM's time
# on them grows faster than linearly with the width (1024: minutes); host
# programs are threads (few cores, waits that yield). GPU programs are CTAs:
# a message takes one narrow block per program while PROGRAMS of them cover
# it (latency-bound: every program has one step), and wide blocks on
# PROGRAMS programs beyond (bandwidth-bound: enough bytes in flight to fill
# NVLink; bench/README.md, "Collectives: the grid").
BLOCK = PerBackend(host=64, cuda=1024, hip=1024)
LARGE_BLOCK = PerBackend(host=64, cuda=8192, hip=8192)
PROGRAMS = {"host": 4, "cuda": 128, "hip": 128}
# LL blocks are 32-bit words (two 16-bit elements each), 256 per program
# (two per thread), on up to LL_PROGRAMS programs: at 256 KiB per rank 256
# programs beat 128 (5.3 against 5.7 us in a graph on two H200s), and wider
# blocks or 8 warps did not help (bench/tune_latency.py, bench/README.md,
# "Latency").
LL_BLOCK = PerBackend(host=64, cuda=256, hip=256)
LL_PROGRAMS = {"host": 4, "cuda": 256, "hip": 256}
# LL128 blocks are lines of 128 bytes: 16 per program (one 16-byte access
# per thread of four warps), on up to LL128_PROGRAMS programs: the best grid
# or within 3 % of it from 256 KiB to 1 MiB; 32 lines on 8 warps gain 8 % at
# 2 MiB and more beyond, where auto leaves LL128 (bench/tune_latency.py).
LL128_LINES = PerBackend(host=2, cuda=16, hip=16)
LL128_PROGRAMS = {"host": 4, "cuda": 256, "hip": 256}
# The push all-reduce's blocks (elements), on up to PROGRAMS programs: 4096
# on 128 took 8.7 us at 1 MiB where 1024-2048 or 64 programs took 9.7-15.8
# (the same sweep).
PUSH_BLOCK = PerBackend(host=64, cuda=4096, hip=4096)

# A NIC's latency as bytes at its bandwidth (about 4 us at 45 GB/s, a
# 400 Gb/s link): the hierarchical all-reduce splits its step between nodes
# where that saves more bytes than this per node (_split_between_nodes). A
# model's figure (docs/multinode.md), not a measurement: no NIC was lent.
NIC_LATENCY_BYTES = 192 << 10

_DTYPES = (wl.float32, wl.float16, wl.bfloat16)
_OPS = {"sum": 0, "max": 1, "min": 2}
_ALGORITHMS = ("auto", "ll", "ll128", "push", "one_shot", "two_shot", "multimem", "hierarchical")
# The LL buffer is made again after this many calls, so no word in it lives
# the 2^32 - 1 LL calls after which its flag repeats (_ll.py): a call
# (_kept counts them) makes at most 16 launches.
LL_RENEW_CALLS = 1 << 28


class _Comm:
    """Per-context state: the flags, the programs' epochs and scratch buffers."""

    def __init__(self):
        self.generation = rt.state.generation
        ranks = rt.num_ranks()
        self.flags = rt.zeros((K.NUM_PHASES * K.MAX_PROGRAMS * ranks,), wl.int64)
        self.epochs = rt.zeros((K.MAX_PROGRAMS,), wl.int64)
        # The count of calls that alternate halves (_kernels.py), per program.
        self.half_calls = rt.zeros((K.MAX_PROGRAMS,), wl.int64)
        # weft.ops' fused GEMMs' calls, counters and flags (_kernels.py).
        self.fused_sync = rt.zeros((K.FUSED_DONE + ranks,), wl.int64)
        # The only host barrier: every rank's flags are zero before any
        # rank signals into them. Once per context, not per call.
        rt.barrier()
        self.scratch = {}
        self.multicast = _read_multicast()
        self.ranks, self.backend = ranks, rt.backend()
        self.nodes = rt.num_nodes()
        # The LL path's grid (_ll_launch): words per block, programs at most.
        self.ll_block = LL_BLOCK[self.backend]
        self.ll_programs = LL_PROGRAMS.get(self.backend, 4)
        self.calls = 0       # collective and fused calls in this context (_kept)
        self.ll_made = 0     # self.calls when the LL buffer was made
        self.ll = {}         # LL buffers by name: (halves as one view, words per half)
        self.kept = {}       # kept calls (_plans)
        self.version = 0     # bumped when a scratch buffer is made (_plans)

    def renewal_due(self):
        """Whether the LL buffer is due to be made again (ll_buffer)."""
        return self.calls - self.ll_made >= LL_RENEW_CALLS

    def ll_buffer(self, words, name="ll"):
        """The LL buffer `name` (_ll.py's "ll", _ll128.py's "ll128") for
        `words` uint64 per half, as (buffer, words per half). Made zeroed,
        and then every rank's copy is zero before any rank writes into it
        (a host barrier). LL's is made again every LL_RENEW_CALLS calls, as
        its 32-bit flags repeat; LL128's 64-bit ones never do. Small calls
        are this path's reason to be, so the view is kept rather than made
        per call."""
        held = self.ll.get(name)
        due = name == "ll" and held is not None and self.renewal_due()
        if held is not None and words <= held[1] and not due:
            return held
        if due:
            rt.barrier()  # drained: nobody uses the old one
            self.scratch.pop(name)
        if name == "ll":
            self.ll_made = self.calls
        self._grown(name, 2 * words * 8, True)
        self.scratch[name].copy_from(0)
        rt.barrier()
        self.ll[name] = self.halves(name, words, wl.uint64)
        return self.ll[name]

    def buffer(self, name, n, dtype, drain=False):
        """A symmetric scratch buffer of at least n elements of dtype, kept
        and grown by powers of two (allocation is collective: every rank
        asks for the same sizes in the same order). drain: a rank's kernels
        may still use it while another has gone on to its next call, so
        growing it waits for every rank's launched work first (a host
        barrier)."""
        return _view(self._grown(name, max(1, n) * dtype.bits // 8, drain), n, dtype)

    def halves(self, name, n, dtype):
        """A symmetric scratch buffer in two halves of at least n elements
        of dtype each, for kernels that alternate between them by the
        parity of their calls: (the whole buffer, the elements of a half).
        A rank may still use one half while another has gone on to its
        next call, so the halves stay where they are, whatever later calls
        ask for, until the buffer grows (draining, as buffer's drain)."""
        size = dtype.bits // 8
        buf = self._grown(name, 2 * max(1, n) * size, True)
        half = buf.nbytes // 2 // size
        return _view(buf, 2 * half, dtype), half

    def _grown(self, name, nbytes, drain):
        buf = self.scratch.get(name)
        if buf is None or buf.nbytes < nbytes:
            if buf is not None and drain:
                rt.barrier()
            buf = rt.Buffer((scratch_bytes(nbytes),), wl.uint8)
            self.scratch[name] = buf
            self.version += 1
        return buf


def scratch_bytes(nbytes):
    """The bytes of a scratch buffer grown to hold nbytes: a power of two."""
    return max(4096, 1 << (nbytes - 1).bit_length())


_comm = None


def _get_comm():
    global _comm
    rt.context()
    if _comm is None or _comm.generation != rt.state.generation:
        _comm = _Comm()
    return _comm


def _node_comm(op):
    """_get_comm() for an op whose kernels reach every peer with loads and
    stores (weft.ops' fused kernels): a ValueError naming `op` when the job
    spans nodes, where they cannot."""
    comm = _get_comm()
    if comm.nodes > 1:
        raise ValueError(f"{op} reaches its peers with loads and stores, which reach the "
                         f"ranks of one node, and this job spans {comm.nodes} nodes of "
                         f"{rt.local_size()}: run it in a job of one node (weft.collectives "
                         "work across nodes)")
    return comm


def _read_multicast():
    """WEFT_CTX_MULTICAST from the runtime's kernel context."""
    return bool(rt.kernel_context().flags & rt.CTX_MULTICAST)


def multicast_enabled():
    """True when the runtime set WEFT_CTX_MULTICAST (a live NVLS mapping)."""
    return _get_comm().multicast


def _view(buf, n, dtype):
    return rt.Buffer.view(buf.ptr, (n,), dtype, buf.local)


def _dtype_of(a, what):
    if isinstance(a, rt.Buffer):
        if a.ptr is None:
            raise ValueError(f"{what}: the buffer was freed")
        return a.dtype
    if isinstance(a, np.ndarray):
        d = _NUMPY_DTYPES.get(a.dtype)
        if d is None or not a.flags.c_contiguous:
            raise ValueError(f"{what}: numpy array of dtype {a.dtype} "
                             "(needs a contiguous float32 or float16 array)")
        return d
    if hasattr(a, "data_ptr") and hasattr(a, "dtype"):
        return _torch_dtype(a.dtype)
    raise ValueError(f"{what} must be a weft.Buffer, a numpy array or a tensor, "
                     f"not {type(a).__name__}")


def _size(a):
    if isinstance(a, rt.Buffer):
        return a.size
    if isinstance(a, np.ndarray):
        return a.size
    return a.numel()


def _check_float(x, what="x"):
    d = _dtype_of(x, what)
    if d not in _DTYPES:
        raise ValueError(f"{what} has dtype {d.name}; collectives take fp32, fp16 or bf16")
    return d


def _same_dtype(a, b, what):
    da, db = _dtype_of(a, "x"), _dtype_of(b, what)
    if da is not db:
        raise ValueError(f"{what} has dtype {db.name} but x has {da.name}")


def _is_symmetric(x):
    """Whether x is a symmetric weft.Buffer (peers may reach it)."""
    return isinstance(x, rt.Buffer) and not x.local


def _symmetric(comm, x, n, dtype, grid):
    """x itself when it is a symmetric weft.Buffer; else a copy of it in a
    symmetric staging buffer (one local copy of n elements)."""
    if _is_symmetric(x):
        return x
    stage = comm.buffer("stage", n, dtype)
    K.copy_kernel[grid](x, stage, n, BLOCK=grid.block)
    return stage


def _symmetric_out(comm, out, n, dtype):
    """Where peers push a result meant for out: out itself when it is a
    symmetric weft.Buffer, else a symmetric scratch buffer that _deliver
    copies into out."""
    return out if _is_symmetric(out) else comm.buffer("out", n, dtype)


def _deliver(target, out, n, grid):
    if target is not out:
        K.copy_kernel[grid](target, out, n, BLOCK=grid.block)


class _Grid(tuple):
    """A launch grid of programs, with the BLOCK its kernels take."""

    def __new__(cls, num_programs, block):
        grid = super().__new__(cls, (num_programs,))
        grid.block = block
        return grid


def _programs(work, num_programs, block=None):
    """The grid for `work` elements split between programs: blocks of
    `block`, else narrow blocks while PROGRAMS programs cover the work with
    one each and wide ones beyond; as many programs as blocks, at most
    PROGRAMS, unless num_programs is given."""
    backend = rt.backend()
    cap = PROGRAMS.get(backend, 4)
    if block is None:
        block = BLOCK if work <= cap * BLOCK[backend] else LARGE_BLOCK
    return _Grid(_grid_over(work, block[backend], cap, num_programs)[0], block)


def _grid_over(work, block, cap, num_programs):
    """The 1-D grid for `work` units in blocks of `block`: a program per
    block, at most `cap`, unless num_programs is given."""
    if num_programs is None:
        return (max(1, min(cap, -(-work // block))),)
    return _grid_of(num_programs)


def _ll_launch(kernel, comm, x, out, n, dtype, num_programs, **constexprs):
    """Launches an LL kernel (_ll.py) for n elements of dtype."""
    pack = 32 // dtype.bits
    words = -(-n // pack)
    grid = _grid_over(words, comm.ll_block, comm.ll_programs, num_programs)
    ll, half = comm.ll_buffer(comm.ranks * words)
    kernel[grid](x, out, ll, half, words, n, comm.half_calls, DTYPE=dtype, PACK=pack,
                 BLOCK=LL_BLOCK, SPIN=_ll.SPIN, **constexprs)



def _ll128_launch(kernel, comm, x, out, n, dtype, num_programs, gather=False, **constexprs):
    """Launches an LL128 kernel (_ll128.py) for n elements of dtype."""
    pack = 64 // dtype.bits
    lines = -(-n // (pack * _ll128.DATA))
    grid = _grid_over(lines, LL128_LINES[comm.backend], LL128_PROGRAMS.get(comm.backend, 4),
                      num_programs)
    ll, half = comm.ll_buffer(comm.ranks * lines * _ll128.LINE, "ll128")
    xw, ow = _words(x, ll), _words(out, ll)
    # Whole words where both are 8-byte aligned (and, gathering, where
    # out's parts start on words); the rest element by element.
    full = n // pack if xw is not ll and ow is not ll and not (gather and n % pack) else 0
    half //= _ll128.LINE
    kernel[grid](x, xw, out, ow, ll, half, lines, half // comm.ranks, n, full,
                 comm.half_calls, DTYPE=dtype, PACK=pack, LINES=LL128_LINES, SPIN=_ll.SPIN,
                 ATOMIC=_ll128.ATOMIC_LINES, **constexprs)


def _words(a, spare):
    """a's memory as uint64 words (its whole words), or `spare` (uint64,
    never read) where a is not 8-byte aligned or holds no whole word."""
    words = _size(a) * _dtype_of(a, "x").bits // 64
    if rt.data_ptr(a) % 8 or words == 0:
        return spare
    if isinstance(a, rt.Buffer):
        return rt.Buffer.view(a.ptr, (words,), wl.uint64, a.local)
    if isinstance(a, np.ndarray):
        return a.reshape(-1).view(np.uint8)[:8 * words].view(np.uint64)
    import torch
    return a.reshape(-1).view(torch.uint8)[:8 * words].view(torch.int64)


def _ll_choice(comm, nbytes):
    """The LL protocol auto takes for nbytes per rank, if any."""
    if _ll128.ATOMIC_LINES[comm.backend] and LL128_MIN_BYTES < nbytes <= LL128_MAX_BYTES:
        return "ll128"
    if nbytes <= LL_MAX_BYTES:
        return "ll"
    return None


def _grid_of(num_programs):
    """The 1-D grid of num_programs programs, which the flag rows bound."""
    if not 1 <= int(num_programs) <= K.MAX_PROGRAMS:
        raise ValueError(f"num_programs must be in 1..{K.MAX_PROGRAMS}, got {num_programs}")
    return (int(num_programs),)


def _op(op):
    if op not in _OPS:
        raise ValueError(f"op must be one of {', '.join(_OPS)}, got {op!r}")
    return _OPS[op]


def _hierarchical(comm, name, algorithm):
    """Whether a call takes the hierarchical kernel (_nodes.py): always
    across nodes, where the others' loads and stores cannot reach every
    rank; on one node when asked for."""
    if comm.nodes == 1:
        return algorithm == "hierarchical"
    if algorithm not in ("auto", "hierarchical"):
        raise ValueError(f"{name}: algorithm {algorithm!r} reaches every rank with loads "
                         f"and stores, and this job spans {comm.nodes} nodes; across "
                         "nodes it is 'hierarchical' (or 'auto')")
    return True


def all_reduce(x, out=None, op="sum", algorithm="auto", num_programs=None):
    """out = reduction (sum, max, min) of x over ranks; out=None: in place
    (x is overwritten). Returns out. x: symmetric weft.Buffer (else staged).
    algorithm: "auto" (in a job across nodes "hierarchical"; else multimem
    when multicast is enabled, x is fp32 and op is sum; else LL128 above
    LL128_MIN_BYTES per rank up to LL128_MAX_BYTES where its lines are
    whole (CUDA), else LL up to LL_MAX_BYTES, push up to PUSH_MAX_BYTES,
    else two-shot), or one of "ll", "ll128", "push", "one_shot",
    "two_shot", "multimem", "hierarchical" to force it."""
    _kept("all_reduce", (x, out), (op, algorithm, num_programs), _all_reduce, x, out, op,
          algorithm, num_programs)
    return x if out is None else out


def _kept(name, buffers, options, fn, *args):
    """fn(*args) as a kept call in this context's Comm (_plans.kept).
    Every collective and fused op that counts epochs goes through here."""
    return _plans.kept(_comm, _get_comm, name, buffers, options, fn, *args)


def _all_reduce(x, out, op, algorithm, num_programs):
    dtype = _check_float(x)
    code = _op(op)
    if algorithm not in _ALGORITHMS:
        raise ValueError(f"algorithm must be one of {', '.join(_ALGORITHMS)}")
    n = _size(x)
    if out is None:
        out = x
    else:
        _same_dtype(x, out, "out")
        if _size(out) != n:
            raise ValueError(f"out has {_size(out)} elements but x has {n}")
    comm = _get_comm()
    if _hierarchical(comm, "all_reduce", algorithm):
        algorithm = "hierarchical"
    elif algorithm == "auto":
        if comm.multicast and dtype is wl.float32 and op == "sum":
            algorithm = "multimem"
        else:
            nbytes = n * dtype.bits // 8
            algorithm = _ll_choice(comm, nbytes) or \
                ("push" if nbytes <= PUSH_MAX_BYTES else "two_shot")
    if algorithm == "multimem" and dtype is not wl.float32:
        raise ValueError(f"the multimem all_reduce takes fp32 (multimem ops are "
                         f"scalar in the language), not {dtype.name}")
    if algorithm == "multimem" and op != "sum":
        raise ValueError(f"the multimem all_reduce only sums (multimem has no fp32 "
                         f"{op}), not op={op!r}")
    if n == 0:
        return out
    if algorithm == "hierarchical":
        _hier_all_reduce(comm, x, out, n, dtype, code, num_programs)
        return out
    if algorithm == "ll":  # x and out stay where they are: peers read neither
        _ll_launch(_ll.ll_all_reduce, comm, x, out, n, dtype, num_programs, OP=code)
        return out
    if algorithm == "ll128":
        _ll128_launch(_ll128.ll128_all_reduce, comm, x, out, n, dtype, num_programs, OP=code)
        return out
    if algorithm == "push":  # peers write only the receive buffer
        grid = _programs(n, num_programs, PUSH_BLOCK)
        recv, half = comm.halves("push", comm.ranks * n, dtype)
        K.push_all_reduce[grid](x, out, recv, half, n, comm.flags, comm.epochs, comm.half_calls,
                                OP=code, BLOCK=grid.block)
        return out
    chunk = math.ceil(n / comm.ranks)
    grid = _programs(n if algorithm == "one_shot" else chunk, num_programs)
    xs = _symmetric(comm, x, n, dtype, grid)
    # Staged x: peers read the stage, so x (even as out) is only written locally.
    if algorithm == "one_shot":
        inplace = out is xs
        tmp = comm.buffer("red", n, dtype) if inplace else out
        K.one_shot_all_reduce[grid](xs, out, tmp, comm.flags, n, comm.epochs,
                                    OP=code, INPLACE=inplace, BLOCK=grid.block)
        return out
    # two-shot and multimem write every rank's copy of out.
    target = xs if out is x else _symmetric_out(comm, out, n, dtype)
    if algorithm == "two_shot":
        K.two_shot_all_reduce[grid](xs, target, comm.flags, n, chunk, comm.epochs,
                                    OP=code, BLOCK=grid.block)
    else:
        K.multimem_all_reduce[grid](xs, target, comm.flags, n, chunk, comm.epochs)
    _deliver(target, out, n, grid)
    return out


def _split_between_nodes(nodes, chunk_bytes):
    """Whether the all-reduce among N nodes of each rank's chunk takes two
    steps (a reduce-scatter, then an all-gather: 2 (N-1)/N chunks on each
    rank's link) rather than one exchange (N-1 chunks): once the bytes
    saved, (N-1)(N-2)/N chunks, take longer than the second step's latency
    (docs/multinode.md, "A model"). Never for two nodes, where both move
    one chunk."""
    return (nodes - 1) * (nodes - 2) * chunk_bytes > nodes * NIC_LATENCY_BYTES


def _hier_all_reduce(comm, x, out, n, dtype, code, num_programs):
    """_nodes.hier_all_reduce (or, split, hier_all_reduce_split) of x into
    out (any memory; staged where it is not symmetric), the reduction in
    f32."""
    chunk = math.ceil(n / rt.local_size())
    split = _split_between_nodes(comm.nodes, 4 * chunk)
    sub = math.ceil(chunk / comm.nodes)
    grid = _programs(sub if split else chunk, num_programs)
    xs = _symmetric(comm, x, n, dtype, grid)
    target = xs if out is x else _symmetric_out(comm, out, n, _dtype_of(out, "out"))
    if split:
        recv, half = comm.halves("hier", 2 * comm.nodes * sub, wl.float32)
        part = comm.buffer("hier_part", comm.nodes * sub, wl.float32)
        _nodes.hier_all_reduce_split[grid](xs, target, part, recv, half, comm.flags, n, chunk,
                                           sub, comm.epochs, comm.half_calls, OP=code,
                                           BLOCK=grid.block)
    else:
        recv, half = comm.halves("hier", comm.nodes * chunk, wl.float32)
        _nodes.hier_all_reduce[grid](xs, target, recv, half, comm.flags, n, chunk,
                                     comm.epochs, comm.half_calls, OP=code, BLOCK=grid.block)
    _deliver(target, out, n, grid)


def reduce_scatter(x, out, op="sum", num_programs=None):
    """out (ceil(n / num_ranks) elements) on rank r = reduction over ranks
    of x[r*c:(r+1)*c], c = ceil(n / num_ranks), x read as zero past its end
    (so the last ranks' out ends in zeros when num_ranks does not divide n)."""
    _kept("reduce_scatter", (x, out), (op, num_programs), _reduce_scatter, x, out, op, num_programs)
    return out


def _reduce_scatter(x, out, op, num_programs):
    dtype = _check_float(x)
    code = _op(op)
    _same_dtype(x, out, "out")
    n, ranks = _size(x), rt.num_ranks()
    chunk = math.ceil(n / ranks)
    if _size(out) != chunk:
        raise ValueError(f"reduce_scatter: out has {_size(out)} elements; it needs "
                         f"ceil({n} / {ranks}) = {chunk}")
    if out is x:
        raise ValueError("reduce_scatter: out must not be x")
    comm = _get_comm()
    grid = _programs(chunk, num_programs)
    if n == 0:
        return out
    xs = _symmetric(comm, x, n, dtype, grid)
    if comm.nodes > 1:
        recv, half = comm.halves("hier", comm.nodes * chunk, wl.float32)
        part = comm.buffer("hier_part", comm.nodes * chunk, wl.float32)
        _nodes.hier_reduce_scatter[grid](xs, out, part, recv, half, comm.flags, n, chunk,
                                         comm.epochs, comm.half_calls, OP=code,
                                         BLOCK=grid.block)
        return out
    K.reduce_scatter_kernel[grid](xs, out, comm.flags, n, chunk, comm.epochs,
                                  OP=code, BLOCK=grid.block)
    return out


def all_gather(x, out, num_programs=None, algorithm="auto"):
    """out[p*n:(p+1)*n] = rank p's x; out holds num_ranks * x.size elements.
    algorithm: "auto" (in a job across nodes "hierarchical"; else LL128 or
    LL as all_reduce takes them, else pushes into a symmetric out), "ll",
    "ll128", "push" or "hierarchical" to force one."""
    _kept("all_gather", (x, out), (algorithm, num_programs), _all_gather, x, out,
          num_programs, algorithm)
    return out


def _all_gather(x, out, num_programs, algorithm):
    dtype = _check_float(x)
    _same_dtype(x, out, "out")
    n, ranks = _size(x), rt.num_ranks()
    if _size(out) != ranks * n:
        raise ValueError(f"all_gather: out has {_size(out)} elements; it needs "
                         f"num_ranks * x.size = {ranks * n}")
    if out is x and ranks > 1:
        raise ValueError("all_gather: out must not be x")
    if algorithm not in ("auto", "ll", "ll128", "push", "hierarchical"):
        raise ValueError(f"algorithm must be one of auto, ll, ll128, push, hierarchical, "
                         f"not {algorithm!r}")
    comm = _get_comm()
    if n == 0:
        return out
    if _hierarchical(comm, "all_gather", algorithm):
        grid = _programs(n, num_programs)
        target = _symmetric_out(comm, out, ranks * n, dtype)
        recv, half = comm.halves("hier", comm.nodes * n, dtype)
        _nodes.hier_all_gather[grid](x, target, recv, half, comm.flags, n, comm.epochs,
                                     comm.half_calls, ELEM_BYTES=dtype.bits // 8,
                                     BLOCK=grid.block)
        _deliver(target, out, ranks * n, grid)
        return out
    if algorithm == "auto":
        algorithm = _ll_choice(comm, n * dtype.bits // 8) or "push"
    if algorithm == "ll":
        _ll_launch(_ll.ll_all_gather, comm, x, out, n, dtype, num_programs)
        return out
    if algorithm == "ll128":
        _ll128_launch(_ll128.ll128_all_gather, comm, x, out, n, dtype, num_programs, True)
        return out
    grid = _programs(n, num_programs)
    target = _symmetric_out(comm, out, ranks * n, dtype)
    K.all_gather_kernel[grid](x, target, comm.flags, n, comm.epochs, BLOCK=grid.block)
    _deliver(target, out, ranks * n, grid)
    return out


def all_to_all(x, out, num_programs=None):
    """out[p*m:(p+1)*m] = rank p's x[r*m:(r+1)*m] on rank r, m = x.size /
    num_ranks (x.size must be a multiple of num_ranks)."""
    _kept("all_to_all", (x, out), (num_programs,), _all_to_all, x, out, num_programs)
    return out


def _all_to_all(x, out, num_programs):
    dtype = _check_float(x)
    _same_dtype(x, out, "out")
    n, ranks = _size(x), rt.num_ranks()
    if n % ranks:
        raise ValueError(f"all_to_all: x.size {n} is not a multiple of num_ranks {ranks}")
    if _size(out) != n:
        raise ValueError(f"all_to_all: out has {_size(out)} elements but x has {n}")
    if out is x:
        raise ValueError("all_to_all: out must not be x")
    m = n // ranks
    comm = _get_comm()
    grid = _programs(m, num_programs)
    if n == 0:
        return out
    target = _symmetric_out(comm, out, n, dtype)
    if comm.nodes > 1:
        recv, half = comm.halves("hier", n, dtype)
        _nodes.hier_all_to_all[grid](x, target, recv, half, comm.flags, m, comm.epochs,
                                     comm.half_calls, ELEM_BYTES=dtype.bits // 8,
                                     BLOCK=grid.block)
    else:
        K.all_to_all_kernel[grid](x, target, comm.flags, m, comm.epochs, BLOCK=grid.block)
    _deliver(target, out, n, grid)
    return out


def broadcast(x, root=0, num_programs=None):
    """x on every rank = x of rank root (in place); returns x. x must be a
    symmetric weft.Buffer (it is also the output)."""
    _kept("broadcast", (x,), (root, num_programs), _broadcast, x, root, num_programs)
    return x


def _broadcast(x, root, num_programs):
    dtype = _check_float(x)
    if not _is_symmetric(x):
        raise ValueError("broadcast: x must be a symmetric weft.Buffer (it is written in place)")
    ranks = rt.num_ranks()
    if not isinstance(root, (int, np.integer)) or not 0 <= root < ranks:
        raise ValueError(f"broadcast: root must be a rank in 0..{ranks - 1}, got {root!r}")
    n = x.size
    comm = _get_comm()
    grid = _programs(n, num_programs)
    if n == 0:
        return x
    if comm.nodes > 1:
        recv, half = comm.halves("hier", comm.nodes * n, dtype)
        _nodes.hier_broadcast[grid](x, int(root), recv, half, comm.flags, n, comm.epochs,
                                    comm.half_calls, ELEM_BYTES=dtype.bits // 8,
                                    BLOCK=grid.block)
        return x
    K.broadcast_kernel[grid](x, int(root), comm.flags, n, comm.epochs, BLOCK=grid.block)
    return x


def all_reduce_residual_rmsnorm(x, residual, weight, eps, out, num_programs=None):
    """x, residual, out: (rows, hidden); weight: (hidden,). With
    h = all_reduce(x) + residual (f32): residual <- h (in place, rounded to
    its dtype), out <- residual * rsqrt(mean(h*h) + eps) * weight, where
    mean(h*h) uses the unrounded f32 h. x itself is not modified."""
    _kept("all_reduce_residual_rmsnorm", (x, residual, weight, out), (eps, num_programs), _all_reduce_residual_rmsnorm, x, residual, weight, eps, out, num_programs)
    return out


def _all_reduce_residual_rmsnorm(x, residual, weight, eps, out, num_programs):
    dtype = _check_float(x)
    shape = tuple(getattr(x, "shape", ()))
    if len(shape) != 2:
        raise ValueError(f"x must be 2-D (rows, hidden), got shape {shape}")
    rows, hidden = shape
    for name, a in (("residual", residual), ("out", out)):
        _same_dtype(x, a, name)
        if tuple(a.shape) != shape:
            raise ValueError(f"{name} has shape {tuple(a.shape)} but x has {shape}")
    _same_dtype(x, weight, "weight")
    if _size(weight) != hidden:
        raise ValueError(f"weight has {_size(weight)} elements; it needs hidden = {hidden}")
    if out is x or residual is x:
        raise ValueError("out and residual must not be x")
    comm = _get_comm()
    if num_programs is None:
        num_programs = max(1, min(PROGRAMS.get(rt.backend(), 4), rows))
    grid = _Grid(_grid_of(num_programs)[0], BLOCK)
    if rows * hidden == 0:
        return out
    if comm.nodes > 1:  # the reduction across nodes, then the row's work
        h = comm.buffer("rmsnorm_sum", rows * hidden, wl.float32)
        _hier_all_reduce(comm, x, h, rows * hidden, dtype, _OPS["sum"], None)
        K.residual_rmsnorm_kernel[grid](h, residual, weight, out, rows, hidden, float(eps),
                                        BLOCK=BLOCK)
        return out
    xs = _symmetric(comm, x, rows * hidden, dtype, grid)
    K.all_reduce_residual_rmsnorm_kernel[grid](xs, residual, weight, out, comm.flags, rows,
                                               hidden, float(eps), comm.epochs,
                                               BLOCK=BLOCK)
    return out
