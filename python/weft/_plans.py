"""Kept launches: a call's launches recorded once and launched again when
the same call comes back.

A latency-bound call's Python (checking its arguments, choosing an
algorithm and a grid, describing every kernel argument) costs as much as
its launches, and an application repeats the same calls on the same
buffers. The collectives, the fused ops and weft.ops.matmul keep, under
what a call depends on, the launches it made (each kernel with its grid,
argument values, stream option and residency; the copy engine's puts,
_runtime._Recorded), and a repeat makes those launches only.

What a call depends on: its name, its options, the identities of its
buffers (a live weft.Buffer by address, dtype and shape; a tensor by
address, dtype, shape and strides; an op's handle by its buffers' addresses;
anything else, or a freed buffer, means the call is not kept) and
weft._jit.DEBUG. A kept call is valid while the
context's scratch buffers stay where they were (Comm.version, bumped when
one is made or grows) and its LL buffer is not due for renewal. Only calls
whose effects are launches and scratch buffers may be kept: a call that
reads data back, allocates its result or decides by values it reads is not.
A kept launch holds addresses, not buffers or tensors (tensor descriptors
are kept detached), so keeping a call keeps no memory alive. Like
weft.stream, recording assumes one thread launches at a time.

Where the backend has graphs (CUDA, HIP), a call repeated GRAPH_AFTER
times is captured into one graph (runtime.h, weft_graph_begin), and its
repeats launch that: about 2 us of the host's time for the whole call on
an H200, where each kernel launch costs 4.4 (bench/README.md, "Latency").
Not where the call's launches name streams of their own, nor inside a
capture of someone else's (a CUDA graph being captured records the
launches themselves), nor when a kept call is part of another's record.
"""
import contextlib
import sys

from . import _jit
from . import _runtime as rt

recording = None  # the launches of the call being recorded (CompiledKernel._launch)
# The repeat of a kept call from which it launches as a graph: a call made
# twice should not pay a capture (tens of microseconds).
GRAPH_AFTER = 2


class Plan:
    """A kept call: the scratch version it was recorded at, its launches
    (kernels: (kernel, grid, values, stream, resident); runtime calls:
    (call, stream)), its repeats so far and its graph once made."""

    __slots__ = ("version", "launches", "repeats", "graph")

    def __init__(self, version, launches):
        self.version, self.launches, self.repeats, self.graph = version, launches, 0, None
        # Launches that name a stream of their own stay launches.
        if any(launch[-2 if len(launch) == 5 else -1] is not None for launch in launches):
            self.repeats = None

    def launch(self):
        for launch in self.launches:
            launch[0]._launch(*launch[1:])


def identity(a):
    """What a kept call depends on of a buffer argument, or None: an
    object that holds buffers for an op (weft.ops.MoeDispatch) says so in
    its plan_identity, None once they are freed."""
    if type(a) is rt.Buffer:
        return a.spec and (a.ptr, a.dtype, a.shape)
    torch = sys.modules.get("torch")
    if torch is not None and type(a) is torch.Tensor:
        return (a.data_ptr(), a.dtype, a.shape, a.stride())
    return getattr(a, "plan_identity", None)


def key(name, buffers, options):
    """The key of a call (None: not kept): buffers may hold None (an
    argument left out), options should be hashable (else not kept)."""
    ids = []
    for b in buffers:
        i = None if b is None else identity(b)
        if i is None and b is not None:
            return None
        ids.append(i)
    return (name, tuple(ids), options, _jit.DEBUG)


class Local:
    """What replay and record need of a Comm, for calls that communicate
    not at all (weft.ops.matmul): no scratch (version 0), no LL buffer.
    Making a Comm is collective, so a local call must not."""

    def __init__(self):
        self.generation = rt.state.generation
        self.kept = {}
        self.version = 0
        self.calls = 0

    @staticmethod
    def renewal_due():
        return False


_local = None


def local():
    """This context's Local."""
    global _local
    if _local is None or _local.generation != rt.state.generation:
        _local = Local()
    return _local


def replay(comm, k):
    """Makes the launches kept under k, where still valid; whether it did."""
    if k is None or comm is None or comm.generation != rt.state.generation:
        return False
    try:
        plan = comm.kept.get(k)
    except TypeError:  # an unhashable option: the call checks and says what it is
        return False
    if plan is None or plan.version != comm.version or comm.renewal_due():
        return False
    if recording is not None:  # part of a call being recorded: its launches
        plan.launch()
        return True
    comm.calls += 1
    if plan.graph is None and plan.repeats is not None:
        plan.repeats += 1
        if plan.repeats == GRAPH_AFTER:
            plan.graph = rt.capture(plan.launch)
    if plan.graph is None or not plan.graph.launch(rt.state.stream):
        plan.launch()
    return True


def kept(comm, comm_of, name, buffers, options, fn, *args):
    """fn(*args) as a kept call: the launches kept under (name, buffers,
    options) made again where comm (a Comm or Local, or None: none yet)
    holds them (returning None), else fn runs, its launches are kept in
    comm_of()'s and its result returned. fn's effects must be launches
    and scratch buffers only; name None: never kept (only counted)."""
    k = None if name is None else key(name, buffers, options)
    if not replay(comm, k):
        with record(comm_of, k):
            return fn(*args)
    return None


@contextlib.contextmanager
def record(comm_of, k):
    """Keeps under k (unless None) the launches made in the block, unless
    it raises; comm_of() is the context's Comm afterwards. The outermost
    call counts one call (Comm.calls) whether it runs or is replayed, so
    every rank counts alike."""
    global recording
    outer, recording = recording, []
    try:
        yield
        launches = tuple(recording)
    finally:
        recording = outer
    comm = comm_of()
    if outer is None:
        comm.calls += 1
    else:  # a call inside another: the outer one keeps its launches
        outer.extend(launches)
    if k is None:
        return
    if len(comm.kept) >= 1024:  # bounded whatever callers pass
        comm.kept.clear()
    try:
        comm.kept[k] = Plan(comm.version, launches)
    except TypeError:  # an unhashable option
        pass
