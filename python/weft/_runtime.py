"""ctypes bindings to the runtime (include/weft/runtime.h, libweft.so), the
host API (init, finalize, rank, ...) and symmetric buffers."""
import ctypes as _c
import math
import os

from . import _floats, _libs
from . import language as wl
from ._errors import WeftError

BACKENDS = {None: 0, "host": 1, "cuda": 2, "hip": 3}
_BACKEND_NAMES = {v: k for k, v in BACKENDS.items() if k}
_MODULE_AUTO = 0


class _InitOptions(_c.Structure):
    _fields_ = [("backend", _c.c_int), ("rank", _c.c_int), ("world_size", _c.c_int),
                ("local_rank", _c.c_int), ("device", _c.c_int),
                ("job_id", _c.c_char_p), ("heap_size", _c.c_size_t),
                ("timeout_s", _c.c_double), ("local_size", _c.c_int)]


MAX_RANKS = 128       # abi.h, WEFT_MAX_RANKS
CTX_MULTICAST = 0x1   # abi.h, weft_kernel_context.flags
CTX_ENGINE = 0x4


class KernelContext(_c.Structure):
    """weft_kernel_context (abi.h): what every launch appends."""
    _fields_ = [("rank", _c.c_int32), ("num_ranks", _c.c_int32), ("flags", _c.c_uint32),
                ("abi_version", _c.c_uint32), ("heap_size", _c.c_uint64),
                ("multicast_base", _c.c_uint64), ("wait_timeout_ns", _c.c_uint64),
                ("heap_base", _c.c_uint64 * MAX_RANKS), ("local_rank", _c.c_int32),
                ("local_size", _c.c_int32), ("node", _c.c_int32), ("num_nodes", _c.c_int32),
                ("engine", _c.c_uint64)]


LAUNCH_EARLY_START = 1  # runtime.h, weft_launch_config.flags
LAUNCH_RESIDENT = 2


class LaunchConfig(_c.Structure):
    _fields_ = [("grid", _c.c_uint32 * 3), ("num_threads", _c.c_uint32),
                ("shared_bytes", _c.c_uint32), ("stream", _c.c_void_p),
                ("flags", _c.c_uint32), ("cluster", _c.c_uint32 * 3)]


class TensorDesc(_c.Structure):
    """weft_tensor_desc (abi.h), 256 bytes. ctypes cannot align it to 64
    bytes, nor need it: launches copy kernel arguments by value, and the
    runtime writes it as bytes."""
    _fields_ = [("tensor_map", _c.c_uint8 * 128), ("base", _c.c_uint64),
                ("shape", _c.c_int64 * 5), ("strides", _c.c_int64 * 5),
                ("_pad", _c.c_uint8 * 40)]  # the C struct's tail, to 64 bytes


class TensorMapDim(_c.Structure):
    """weft_tensor_map_dim (runtime.h): one dimension of a tensor map."""
    _fields_ = [("dim", _c.c_int32), ("step", _c.c_int32), ("size", _c.c_int32),
                ("box", _c.c_int32)]


class _Put(_c.Structure):  # runtime.h, weft_put
    _fields_ = [("dst", _c.c_void_p), ("src", _c.c_void_p), ("size", _c.c_size_t),
                ("signal", _c.c_void_p), ("signal_src", _c.c_void_p), ("peer", _c.c_int)]


_lib = None


launch_raw = None  # weft_launch without argtypes (lib())


def lib():
    global _lib
    if _lib is None:
        l = _libs.load("libweft.so")
        vp, pvp = _c.c_void_p, _c.POINTER(_c.c_void_p)
        l.weft_last_error.restype = _c.c_char_p
        l.weft_last_error.argtypes = [vp]
        l.weft_status_string.restype = _c.c_char_p
        l.weft_init_options_default.argtypes = [_c.POINTER(_InitOptions)]
        l.weft_init.argtypes = [_c.POINTER(_InitOptions), pvp]
        for f in ("weft_finalize", "weft_rank", "weft_num_ranks", "weft_local_rank",
                  "weft_local_size", "weft_node", "weft_num_nodes", "weft_barrier",
                  "weft_synchronize", "weft_context_backend"):
            getattr(l, f).argtypes = [vp]
        l.weft_get_kernel_context.argtypes = [vp, _c.POINTER(KernelContext)]
        l.weft_malloc.argtypes = [vp, _c.c_size_t, pvp]
        l.weft_free.argtypes = [vp, vp]
        l.weft_malloc_local.argtypes = [vp, _c.c_size_t, pvp]
        l.weft_free_local.argtypes = [vp, vp]
        l.weft_memcpy.argtypes = [vp, vp, vp, _c.c_size_t]
        l.weft_memset.argtypes = [vp, vp, _c.c_int, _c.c_size_t]
        l.weft_memset_async.argtypes = [vp, vp, _c.c_int, _c.c_size_t, vp]
        l.weft_peer_ptr.argtypes = [vp, vp, _c.c_int, pvp]
        l.weft_put_fork.argtypes = [vp, vp]
        l.weft_put_signal_async.argtypes = [vp, _c.POINTER(_Put), _c.c_size_t]
        l.weft_put_join.argtypes = [vp, vp]
        l.weft_put_wait.argtypes = [vp, vp, _c.c_uint32]
        l.weft_graph_begin.argtypes = [vp, vp]
        l.weft_graph_end.argtypes = [vp, vp, pvp]
        l.weft_graph_launch.argtypes = [vp, vp]
        l.weft_graph_destroy.argtypes = [vp]
        l.weft_module_load.argtypes = [vp, _c.c_char_p, _c.c_size_t, _c.c_int, pvp]
        l.weft_module_get_kernel.argtypes = [vp, _c.c_char_p, pvp]
        l.weft_launch.argtypes = [vp, _c.POINTER(LaunchConfig), pvp, _c.c_size_t]
        # The launch path's own entry (_jit.CompiledKernel._launch), without
        # argtypes: its caller passes ctypes objects only (the kernel's
        # c_void_p, byref of its config, the argv array, a c_size_t), so
        # nothing is converted per call (a conversion costs 0.3-0.5 us).
        global launch_raw
        launch_raw = l["weft_launch"]
        i64p = _c.POINTER(_c.c_int64)
        l.weft_tensor_desc_encode.argtypes = [vp, vp, _c.c_size_t, _c.c_int, i64p, i64p,
                                              _c.c_int, _c.POINTER(TensorMapDim),
                                              _c.c_int, _c.POINTER(TensorDesc)]
        _lib = l
    return _lib


class _State:
    ctx = None
    backend = None
    multinode = False  # the job runs an engine (WEFT_CTX_ENGINE): kernels compile weft.multinode
    generation = 0  # bumped by init: module handles of older contexts are stale
    stream = None   # launches' default stream (weft.stream); None: the context's


state = _State()


def check(status, what, ctx=None):
    if status != 0:
        l = lib()
        name = l.weft_status_string(status).decode()
        message = l.weft_last_error(ctx).decode()
        if not message.startswith(what + ":"):  # the runtime's own messages often do
            message = f"{what}: {message}"
        raise WeftError(f"{message} ({name})", name)


def context():
    if state.ctx is None:
        raise WeftError("weft.init() has not been called")
    return state.ctx


def init(backend=None):
    """Collective: joins the job (weft-run, torchrun, MPI or Slurm ranks;
    a lone process is rank 0 of 1). backend: "host", "cuda", "hip" or None
    (WEFT_BACKEND, else cuda if a GPU is usable, else host)."""
    if state.ctx is not None:
        raise WeftError("weft.init() was already called; weft.finalize() first")
    if backend not in BACKENDS:
        raise ValueError(f"unknown backend {backend!r} (host, cuda, hip or None)")
    l = lib()
    opts = _InitOptions()
    l.weft_init_options_default(_c.byref(opts))
    opts.backend = BACKENDS[backend]
    # A cuda job across nodes runs NVSHMEM, from its pip package unless
    # NVSHMEM_HOME names another installation.
    nvshmem = _libs.pip_nvidia(("nvshmem",))
    if nvshmem and not os.environ.get("NVSHMEM_HOME"):
        os.environ["NVSHMEM_HOME"] = nvshmem.split(":")[0]
    ctx = _c.c_void_p()
    check(l.weft_init(_c.byref(opts), _c.byref(ctx)), "weft_init")
    state.ctx = ctx
    state.backend = _BACKEND_NAMES[l.weft_context_backend(ctx)]
    state.multinode = bool(kernel_context().flags & CTX_ENGINE)
    state.generation += 1


def finalize():
    """Collective: frees every buffer and kernel module of this context."""
    ctx = context()
    state.ctx = None
    check(lib().weft_finalize(ctx), "weft_finalize")


def rank():
    return lib().weft_rank(context())


def num_ranks():
    return lib().weft_num_ranks(context())


def local_rank():
    """This rank's index among the ranks of its machine: the GPU the runtime
    drives (torch tensors passed to kernels belong on torch.device("cuda",
    local_rank())). In a kernel, wl.local_rank() is the index within the
    node; the two differ only for nodes simulated on one machine
    (weft-run --local-size)."""
    return lib().weft_local_rank(context())


def local_size():
    """Ranks per node: the job's ranks in order form nodes of as many
    (docs/multinode.md)."""
    return lib().weft_local_size(context())


def node():
    """This rank's node: rank() // local_size()."""
    return lib().weft_node(context())


def num_nodes():
    """Nodes in the job; above 1, peers on other nodes are reached only with
    wl.put, wl.get and wl.signal."""
    return lib().weft_num_nodes(context())


def kernel_context():
    """The weft_kernel_context every launch appends (a KernelContext)."""
    ctx, out = context(), KernelContext()
    check(lib().weft_get_kernel_context(ctx, _c.byref(out)), "weft_get_kernel_context",
          ctx)
    return out


def backend():
    context()
    return state.backend


def barrier():
    """Host barrier across all ranks, after this rank's launched work."""
    ctx = context()
    check(lib().weft_barrier(ctx), "weft_barrier", ctx)


def stream_handle(stream):
    """The CUstream/hipStream_t of stream: None (the context's own), an int
    handle, or an object with .cuda_stream (torch.cuda.Stream)."""
    if stream is None or isinstance(stream, int):
        return stream
    handle = getattr(stream, "cuda_stream", None)
    if handle is None:
        raise TypeError(f"a stream is an int handle or has .cuda_stream, not {stream!r}")
    return handle


class stream:
    """`with weft.stream(s):` launches in the block (kernels and
    collectives) go to s, e.g. torch.cuda.current_stream() while capturing
    a CUDA graph; None restores the context's own stream."""

    def __init__(self, s):
        self.handle = stream_handle(s)

    def __enter__(self):
        self.saved, state.stream = state.stream, self.handle
        return self

    def __exit__(self, *exc):
        state.stream = self.saved


def data_ptr(x):
    """The address of x's data: a weft.Buffer, a numpy array or a tensor."""
    return x.data_ptr() if hasattr(x, "data_ptr") else x.ctypes.data  # numpy: .ctypes


class _Recorded:
    """A runtime call made like a launch: on weft.stream's stream, recorded
    by a kept call (weft/_plans.py) and made again when it is replayed."""

    def launch(self):
        self._launch(None)

    def _launch(self, stream):
        from . import _plans  # it imports this module
        if _plans.recording is not None:
            _plans.recording.append((self, stream))
        ctx = context()
        self._call(ctx, state.stream if stream is None else stream)


class Puts(_Recorded):
    """Copies to peers by the copy engine (runtime.h,
    weft_put_signal_async): (dst, src, size, signal, signal_src, peer)
    tuples of addresses."""

    def __init__(self, puts):
        self._puts = (_Put * len(puts))(*(_Put(*p) for p in puts))
        self._count = _c.c_size_t(len(puts))

    def _call(self, ctx, stream):
        check(lib().weft_put_signal_async(ctx, self._puts, self._count),
              "weft_put_signal_async", ctx)


class PutFork(_Recorded):
    """Puts made after this start once the launches before it have
    finished, beside those after it (weft_put_fork)."""

    def _call(self, ctx, stream):
        check(lib().weft_put_fork(ctx, stream), "weft_put_fork", ctx)


class PutWait(_Recorded):
    """Puts made after this start once the 32-bit count at address `count`
    has reached `value` (weft_put_wait): a launch counts there as it
    writes what they carry."""

    def __init__(self, count, value):
        self._count, self._value = count, value

    def _call(self, ctx, stream):
        check(lib().weft_put_wait(ctx, self._count, self._value), "weft_put_wait", ctx)


class PutJoin(_Recorded):
    """Later launches wait for the puts made so far (weft_put_join)."""

    def _call(self, ctx, stream):
        check(lib().weft_put_join(ctx, stream), "weft_put_join", ctx)


UNSUPPORTED = 9  # WEFT_ERROR_UNSUPPORTED (status.h)


class Graph:
    """Launches captured into one graph (runtime.h, weft_graph_begin),
    launched whole for the host cost of about one launch; destroyed with
    this object (or by weft.finalize)."""

    def __init__(self, handle):
        self._handle, self._generation = handle, state.generation

    def launch(self, stream):
        """Launches the graph on `stream`; False (launching nothing) where
        the stream is being captured, whose graph is to record the
        launches themselves."""
        status = lib().weft_graph_launch(self._handle, stream)
        if status == UNSUPPORTED:
            return False
        if status:
            check(status, "weft_graph_launch", state.ctx)
        return True

    def __del__(self):
        if self._generation == state.generation and state.ctx is not None:
            lib().weft_graph_destroy(self._handle)


def capture(launch_all):
    """The Graph of what launch_all() launches on weft.stream's stream, not
    run; None where there can be none (the host backend, a stream that
    someone captures already, work that cannot be captured): then nothing
    of it has run either."""
    ctx, stream = context(), state.stream
    if lib().weft_graph_begin(ctx, stream):
        return None
    failed = False
    try:
        launch_all()
    except WeftError:
        failed = True  # whatever the capture holds, it is not all of the call
    finally:
        handle = _c.c_void_p()
        status = lib().weft_graph_end(ctx, stream, _c.byref(handle))
    graph = Graph(handle) if status == 0 else None
    return None if failed else graph  # a graph dropped is destroyed


def memset_async(x, value, nbytes):
    """Sets the first nbytes of x (a weft.Buffer, a numpy array on the
    host, a tensor on GPUs) to the byte value, in order on weft.stream's
    stream without waiting: recorded by a CUDA graph capture."""
    ctx = context()
    check(lib().weft_memset_async(ctx, data_ptr(x), value, nbytes, state.stream),
          "weft_memset_async", ctx)


def tensor_desc(ptr, elem_size, shape, strides, map=None, swizzle=0):
    """The encoded descriptor (a TensorDesc) of a tensor of elem_size-byte
    elements at ptr (an address, or a weft.Buffer, tensor or numpy array:
    its data pointer) on this rank's device: shape and strides (in
    elements) outermost first. map (None: no tensor map) and swizzle
    (bytes) are what an sm_90 kernel reported: the tensor map as a view of
    the tensor, (dim, step, size, box) per map dimension, outermost first
    (weft_tensor_map_dim, runtime.h); the cuda backend then encodes it.
    Raises WeftError naming the value when TMA's rules do not hold
    (runtime.h), on every backend."""
    if not isinstance(ptr, int):
        ptr = data_ptr(ptr)
    rank = len(shape)
    if len(strides) != rank:
        raise ValueError(f"tensor_desc: {len(strides)} strides for {rank} dimensions")
    dims = None
    if map is not None:
        map = [tuple(m) for m in map]
        for m in map:
            if len(m) != 4:
                raise ValueError(f"tensor_desc: map dimension {m} is not (dim, step, "
                                 "size, box)")
        dims = (TensorMapDim * max(len(map), 1))(*map)
    out = TensorDesc()
    ctx = context()
    check(lib().weft_tensor_desc_encode(
        ctx, ptr, elem_size, rank, (_c.c_int64 * rank)(*shape),
        (_c.c_int64 * rank)(*strides), 0 if map is None else len(map), dims,
        swizzle, _c.byref(out)), "weft_tensor_desc_encode", ctx)
    return out


def in_heap(ptr):
    """Whether the address lies in this rank's symmetric heap."""
    ctx = context()
    out = _c.c_void_p()
    return lib().weft_peer_ptr(ctx, ptr, lib().weft_rank(ctx), _c.byref(out)) == 0


def synchronize():
    ctx = context()
    check(lib().weft_synchronize(ctx), "weft_synchronize", ctx)


# numpy has no bfloat16 or float8: their views show the raw bits (_floats).
_NUMPY_TYPESTR = {"i1": "|b1", "i8": "|i1", "i16": "<i2", "i32": "<i4", "i64": "<i8",
                  "u8": "|u1", "u16": "<u2", "u32": "<u4", "u64": "<u8",
                  "fp8e4nv": "|u1", "fp8e5": "|u1", "fp16": "<f2", "bf16": "<u2",
                  "fp32": "<f4", "fp64": "<f8"}


def divisibility(n):
    """16 when n is a multiple of 16, else the largest power of two dividing
    it (pointers: the analysis otherwise assumes 16)."""
    n = int(n)
    return 16 if n % 16 == 0 else n & -n


def pointer_spec(ptr, dtype):
    """The specialisation of a pointer argument to dtype at ptr."""
    return ("*", dtype.name, divisibility(ptr))


class Buffer:
    """A symmetric allocation: the same offset on every rank, so kernels
    reach a peer's copy with peer=r; made collectively. local=True: this
    rank's own memory instead (weft_malloc_local), made and freed by this
    rank alone, which peers cannot reach. Lives until free() or
    finalize()."""

    # spec: the buffer as a kernel argument's specialisation (_jit._describe),
    # fixed while it lives, so launches read it rather than work it out.
    __slots__ = ("ptr", "shape", "dtype", "nbytes", "local", "_generation", "spec")

    def __init__(self, shape, dtype, local=False):
        shape = (shape,) if isinstance(shape, int) else tuple(int(s) for s in shape)
        if not isinstance(dtype, wl.dtype):
            raise TypeError(f"dtype must be a wl dtype, got {dtype!r}")
        ctx = context()
        self.shape, self.dtype = shape, dtype
        self.nbytes = max(1, math.prod(shape)) * max(1, dtype.bits // 8)
        self.local = bool(local)
        out = _c.c_void_p()
        what = "weft_malloc_local" if self.local else "weft_malloc"
        check(getattr(lib(), what)(ctx, self.nbytes, _c.byref(out)), what, ctx)
        self.ptr = out.value
        self._generation = state.generation
        self.spec = pointer_spec(self.ptr, dtype)

    @classmethod
    def view(cls, ptr, shape, dtype, local=False):
        """A Buffer over memory that another object owns (a part of a
        buffer, a tensor in the heap): freeing stays that owner's."""
        v = object.__new__(cls)
        v.ptr, v.shape, v.dtype, v.local = ptr, tuple(shape), dtype, local
        v.nbytes = max(1, math.prod(v.shape)) * max(1, dtype.bits // 8)
        v._generation = state.generation
        v.spec = pointer_spec(ptr, dtype)
        return v

    @property
    def size(self):
        return math.prod(self.shape)

    def data_ptr(self):
        return self.ptr

    def free(self):
        """Collective, like the allocation (a local buffer: this rank's
        alone)."""
        ctx = context()
        what = "weft_free_local" if self.local else "weft_free"
        check(getattr(lib(), what)(ctx, _c.c_void_p(self.ptr)), what, ctx)
        self.ptr = self.spec = None

    def _interface(self):
        if self.ptr is None or self._generation != state.generation or state.ctx is None:
            raise WeftError("the buffer was freed (or weft.finalize() was called)")
        return {"shape": self.shape, "typestr": _NUMPY_TYPESTR[self.dtype.name],
                "data": (self.ptr, False), "version": 3, "strides": None}

    @property
    def __array_interface__(self):
        if state.backend != "host":
            raise AttributeError("__array_interface__: device memory "
                                 f"({state.backend} backend); use __cuda_array_interface__")
        return self._interface()

    @property
    def __cuda_array_interface__(self):
        if state.backend != "cuda":
            raise AttributeError("__cuda_array_interface__ needs the cuda backend")
        face = self._interface()
        face["stream"] = None  # the context's stream; weft_launch orders on it
        return face

    def numpy(self):
        """A zero-copy numpy view (host backend)."""
        import numpy as np
        return np.asarray(self)

    def to_numpy(self, raw=False):
        """A copy of this rank's contents as a numpy array, on every backend,
        taken after this rank's launched work. bfloat16 and the float8
        formats come as float32 values, or with raw=True as their bits."""
        import numpy as np
        out = np.empty(self.shape, np.dtype(self._interface()["typestr"]))
        ctx = state.ctx
        check(lib().weft_memcpy(ctx, out.ctypes.data, self.ptr, out.nbytes), "weft_memcpy", ctx)
        return out if raw or not _floats.is_raw(self.dtype) else \
            _floats.from_bits(out, self.dtype)

    def copy_from(self, values, raw=False):
        """Sets this rank's contents, on every backend, from values: anything
        numpy broadcasts to the buffer's shape and converts to its dtype;
        into bfloat16 and float8 buffers values convert as the compiler
        converts float32 (to nearest even; float8 saturating), or with
        raw=True are the bits. Ordered after launched work."""
        import numpy as np
        if _floats.is_raw(self.dtype) and not raw:
            if np.asarray(values).dtype == _floats.storage(self.dtype):
                # bits or integers? Ask rather than guess (both were meant).
                raise TypeError(f"copy_from of a {np.asarray(values).dtype} array into a "
                                f"{self.dtype!r} buffer: pass float values (converted to "
                                f"nearest even), or raw=True with the bits")
            values = _floats.to_bits(values, self.dtype)
        dtype = np.dtype(self._interface()["typestr"])
        src = np.ascontiguousarray(np.broadcast_to(np.asarray(values, dtype), self.shape))
        ctx = state.ctx
        check(lib().weft_memcpy(ctx, self.ptr, src.ctypes.data, src.nbytes), "weft_memcpy", ctx)

    def __dlpack_device__(self):
        """(device type, device id): (kDLCPU=1, 0) on the host backend,
        (kDLCUDA=2, local rank) on cuda, (kDLROCM=10, local rank) on hip
        (weft.init lets the runtime drive the local rank's device)."""
        context()
        kind = _DL_DEVICE[state.backend]
        return (kind, 0 if kind == _DL_CPU else local_rank())

    def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
        """A PyCapsule "dltensor" holding a DLManagedTensor (unversioned
        DLPack) that views this buffer, zero-copy. The capsule keeps the
        Buffer object alive until the consumer calls the deleter (or, when
        never consumed, until the capsule is collected); free()/finalize()
        still end the memory, as for numpy()'s view. On GPU backends the
        context's work is synchronized first unless stream == -1."""
        self._interface()  # raises if freed
        if copy:
            raise BufferError("weft.Buffer.__dlpack__: copy=True is not supported")
        if dl_device is not None and tuple(dl_device) != self.__dlpack_device__():
            raise BufferError(f"weft.Buffer.__dlpack__: cannot export to device {dl_device}")
        if state.backend != "host" and stream != -1:
            synchronize()
        return _dlpack_capsule(self)

    def __repr__(self):
        return f"weft.Buffer(shape={self.shape}, dtype={self.dtype!r})"


# DLPack (dlpack.h, v0.8 ABI: the unversioned DLManagedTensor) by ctypes.
_DL_CPU = 1
_DL_DEVICE = {"host": _DL_CPU, "cuda": 2, "hip": 10}
# dtype name -> (DLDataTypeCode, bits): kDLInt 0, kDLUInt 1, kDLFloat 2,
# kDLBfloat 4, kDLBool 6 (DLPack 1.1 adds the float8 codes).
_DL_DTYPE = {"i1": (6, 8), "i8": (0, 8), "i16": (0, 16), "i32": (0, 32), "i64": (0, 64),
             "u8": (1, 8), "u16": (1, 16), "u32": (1, 32), "u64": (1, 64),
             "fp8e4nv": (10, 8), "fp8e5": (12, 8),  # kDLFloat8_e4m3fn, kDLFloat8_e5m2
             "fp16": (2, 16), "bf16": (4, 16), "fp32": (2, 32), "fp64": (2, 64)}


class _DLDevice(_c.Structure):
    _fields_ = [("device_type", _c.c_int32), ("device_id", _c.c_int32)]


class _DLDataType(_c.Structure):
    _fields_ = [("code", _c.c_uint8), ("bits", _c.c_uint8), ("lanes", _c.c_uint16)]


class _DLTensor(_c.Structure):
    _fields_ = [("data", _c.c_void_p), ("device", _DLDevice), ("ndim", _c.c_int32),
                ("dtype", _DLDataType), ("shape", _c.POINTER(_c.c_int64)),
                ("strides", _c.POINTER(_c.c_int64)), ("byte_offset", _c.c_uint64)]


class _DLManagedTensor(_c.Structure):
    pass


# address of a live DLManagedTensor -> (the struct, its shape array, the
# Buffer): what the tensor points at stays alive until its deleter runs.
_dl_live = {}
# [capsule, address of its DLManagedTensor] of the capsules handed out and
# not yet seen dropped.
_dl_capsules = []

# A capsule destructor written in Python would run while the consumer's
# exception is pending (a consumer that refuses the tensor drops the
# capsule with its error set), and ctypes cannot run Python code then
# without losing that error. So the capsules have no destructor: each
# __dlpack__ call first releases the tensors of capsules that only this
# list still holds and that no consumer took (still named "dltensor"). A
# consumed capsule is renamed "used_dltensor" and its consumer calls the
# deleter, which only deletes a dict entry.
_DL_DELETER = _c.CFUNCTYPE(None, _c.c_void_p)  # void (*)(DLManagedTensor *)
_DLManagedTensor._fields_ = [("dl_tensor", _DLTensor), ("manager_ctx", _c.c_void_p),
                             ("deleter", _DL_DELETER)]


@_DL_DELETER
def _dl_deleter(managed):
    if managed in _dl_live:
        del _dl_live[managed]


_py = _c.pythonapi
_py.PyCapsule_New.restype = _c.py_object
_py.PyCapsule_New.argtypes = [_c.c_void_p, _c.c_char_p, _c.c_void_p]
_py.PyCapsule_GetName.restype = _c.c_char_p
_py.PyCapsule_GetName.argtypes = [_c.py_object]
_DLTENSOR = _c.c_char_p(b"dltensor")  # capsules keep this pointer: module lifetime


def _dl_sweep():
    """Releases what dropped, unconsumed capsules kept alive."""
    import sys
    keep = []
    for entry in _dl_capsules:
        # references: the list entry and getrefcount's argument
        if sys.getrefcount(entry[0]) > 2:
            keep.append(entry)
        elif _py.PyCapsule_GetName(entry[0]) == b"dltensor":
            _dl_live.pop(entry[1], None)
    _dl_capsules[:] = keep


def _dlpack_capsule(buf):
    _dl_sweep()
    managed = _DLManagedTensor()
    shape = (_c.c_int64 * max(1, len(buf.shape)))(*buf.shape)
    t = managed.dl_tensor
    t.data = buf.ptr
    t.device.device_type, t.device.device_id = buf.__dlpack_device__()
    t.ndim = len(buf.shape)
    t.dtype.code, t.dtype.bits = _DL_DTYPE[buf.dtype.name]
    t.dtype.lanes = 1
    t.shape = shape
    t.strides = None  # compact, C order
    t.byte_offset = 0
    managed.deleter = _dl_deleter
    address = _c.addressof(managed)
    _dl_live[address] = (managed, shape, buf)
    capsule = _py.PyCapsule_New(address, _DLTENSOR, None)
    _dl_capsules.append([capsule, address])
    return capsule


def empty(shape, dtype=wl.float32, local=False):
    return Buffer(shape, dtype, local)


def zeros(shape, dtype=wl.float32, local=False):
    return full(shape, 0, dtype, local)


def full(shape, value, dtype=wl.float32, local=False):
    """A buffer with every element set to value (converted as copy_from
    converts); zeros by weft_memset."""
    buf = Buffer(shape, dtype, local)
    if value == 0:
        ctx = context()
        check(lib().weft_memset(ctx, buf.ptr, 0, buf.nbytes), "weft_memset", ctx)
    else:
        buf.copy_from(value)
    return buf


def module_load(image):
    ctx = context()
    mod = _c.c_void_p()
    check(lib().weft_module_load(ctx, image, len(image), _MODULE_AUTO, _c.byref(mod)),
          "weft_module_load", ctx)
    return mod


def module_get_kernel(mod, name):
    ctx = context()
    kernel = _c.c_void_p()
    check(lib().weft_module_get_kernel(mod, name.encode(), _c.byref(kernel)),
          "weft_module_get_kernel", ctx)
    return kernel
