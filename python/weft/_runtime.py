"""ctypes bindings to the runtime (include/weft/runtime.h, libweft.so), the
host API (init, finalize, rank, ...) and symmetric buffers."""
import ctypes as _c
import math

from . import _libs
from . import language as wl
from ._errors import WeftError

BACKENDS = {None: 0, "host": 1, "cuda": 2, "hip": 3}
_BACKEND_NAMES = {v: k for k, v in BACKENDS.items() if k}
_MODULE_AUTO = 0


class _InitOptions(_c.Structure):
    _fields_ = [("backend", _c.c_int), ("rank", _c.c_int), ("world_size", _c.c_int),
                ("local_rank", _c.c_int), ("device", _c.c_int),
                ("job_id", _c.c_char_p), ("heap_size", _c.c_size_t),
                ("timeout_s", _c.c_double)]


class LaunchConfig(_c.Structure):
    _fields_ = [("grid", _c.c_uint32 * 3), ("num_threads", _c.c_uint32),
                ("shared_bytes", _c.c_uint32), ("stream", _c.c_void_p)]


_lib = None


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
        for f in ("weft_finalize", "weft_rank", "weft_num_ranks", "weft_barrier",
                  "weft_synchronize", "weft_context_backend"):
            getattr(l, f).argtypes = [vp]
        l.weft_malloc.argtypes = [vp, _c.c_size_t, pvp]
        l.weft_free.argtypes = [vp, vp]
        l.weft_peer_ptr.argtypes = [vp, vp, _c.c_int, pvp]
        l.weft_module_load.argtypes = [vp, _c.c_char_p, _c.c_size_t, _c.c_int, pvp]
        l.weft_module_get_kernel.argtypes = [vp, _c.c_char_p, pvp]
        l.weft_launch.argtypes = [vp, _c.POINTER(LaunchConfig), pvp, _c.c_size_t]
        _lib = l
    return _lib


class _State:
    ctx = None
    backend = None
    generation = 0  # bumped by init: module handles of older contexts are stale


state = _State()


def check(status, what, ctx=None):
    if status != 0:
        l = lib()
        name = l.weft_status_string(status).decode()
        raise WeftError(f"{what}: {l.weft_last_error(ctx).decode()} ({name})", name)


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
    ctx = _c.c_void_p()
    check(l.weft_init(_c.byref(opts), _c.byref(ctx)), "weft_init")
    state.ctx = ctx
    state.backend = _BACKEND_NAMES[l.weft_context_backend(ctx)]
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


def backend():
    context()
    return state.backend


def barrier():
    """Host barrier across all ranks, after this rank's launched work."""
    ctx = context()
    check(lib().weft_barrier(ctx), "weft_barrier", ctx)


def synchronize():
    ctx = context()
    check(lib().weft_synchronize(ctx), "weft_synchronize", ctx)


_NUMPY_TYPESTR = {"i1": "|b1", "i8": "|i1", "i16": "<i2", "i32": "<i4", "i64": "<i8",
                  "u8": "|u1", "u32": "<u4", "u64": "<u8", "fp16": "<f2",
                  "bf16": "<u2",  # numpy has no bfloat16: the raw bits
                  "fp32": "<f4", "fp64": "<f8"}


class Buffer:
    """A symmetric allocation: the same offset on every rank, so kernels
    reach a peer's copy with peer=r. Lives until free() or finalize()."""

    __slots__ = ("ptr", "shape", "dtype", "nbytes", "_generation")

    def __init__(self, shape, dtype):
        shape = (shape,) if isinstance(shape, int) else tuple(int(s) for s in shape)
        if not isinstance(dtype, wl.dtype):
            raise TypeError(f"dtype must be a wl dtype, got {dtype!r}")
        ctx = context()
        self.shape, self.dtype = shape, dtype
        self.nbytes = max(1, math.prod(shape)) * max(1, dtype.bits // 8)
        out = _c.c_void_p()
        check(lib().weft_malloc(ctx, self.nbytes, _c.byref(out)), "weft_malloc", ctx)
        self.ptr = out.value
        self._generation = state.generation

    @property
    def size(self):
        return math.prod(self.shape)

    def data_ptr(self):
        return self.ptr

    def free(self):
        """Collective, like the allocation."""
        ctx = context()
        check(lib().weft_free(ctx, _c.c_void_p(self.ptr)), "weft_free", ctx)
        self.ptr = None

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

    def __repr__(self):
        return f"weft.Buffer(shape={self.shape}, dtype={self.dtype!r})"


def empty(shape, dtype=wl.float32):
    return Buffer(shape, dtype)


def zeros(shape, dtype=wl.float32):
    return full(shape, 0, dtype)


def full(shape, value, dtype=wl.float32):
    """Fills through the host view on the host backend; GPU backends need a
    kernel for this and are left to the caller (empty + a fill kernel)."""
    buf = Buffer(shape, dtype)
    if state.backend != "host":
        from ._jit import fill
        fill(buf, value)
    else:
        buf.numpy()[...] = value
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
