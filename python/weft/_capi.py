"""ctypes bindings to the compiler C API (include/weft/compiler.h,
libWeftCAPI.so). Loaded on first use: a GPU machine without LLVM runs from
the kernel cache and never loads it."""
import ctypes
import threading

from . import _libs
from ._errors import CompilationError

_c = ctypes


class _Options(_c.Structure):
    _fields_ = [("target", _c.c_char_p), ("num_warps", _c.c_int),
                ("opt_level", _c.c_int), ("debug", _c.c_int), ("num_stages", _c.c_int),
                ("warp_mma", _c.c_int), ("cuda_roots", _c.c_char_p),
                ("multinode", _c.c_int), ("nvshmem_roots", _c.c_char_p)]


_lib = None
_local = threading.local()  # one weft_compiler (one MLIRContext) per thread
_lock = threading.Lock()


def lib():
    global _lib
    with _lock:
        if _lib is None:
            l = _libs.load("libWeftCAPI.so")
            l.weft_compiler_last_error.restype = _c.c_char_p
            l.weft_compiler_last_error.argtypes = [_c.c_void_p]
            l.weft_compiler_version.restype = _c.c_char_p
            l.weft_compiler_create.argtypes = [_c.POINTER(_c.c_void_p)]
            l.weft_compile.argtypes = [_c.c_void_p, _c.c_char_p, _c.c_size_t,
                                       _c.POINTER(_Options), _c.POINTER(_c.c_void_p)]
            l.weft_artifacts_names.restype = _c.c_char_p
            l.weft_artifacts_names.argtypes = [_c.c_void_p]
            l.weft_artifacts_get.argtypes = [_c.c_void_p, _c.c_char_p,
                                             _c.POINTER(_c.c_void_p),
                                             _c.POINTER(_c.c_size_t)]
            l.weft_artifacts_destroy.argtypes = [_c.c_void_p]
            l.weft_compile_options_default.argtypes = [_c.POINTER(_Options)]
            l.weft_compiler_locate.argtypes = [_c.c_void_p, _c.POINTER(_Options), _c.c_char_p,
                                               _c.POINTER(_c.c_void_p)]
            l.weft_string_free.argtypes = [_c.c_void_p]
            _lib = l
    return _lib


def version():
    return lib().weft_compiler_version().decode()


def pip_cuda_roots():
    """The CUDA toolkits pip packages hold (nvidia-cuda-nvcc: nvidia/cu13
    for CUDA 13, nvidia/cuda_nvcc for CUDA 12), which the compiler searches
    for ptxas and libdevice after the machine's own (compiler.h,
    cuda_roots)."""
    return _libs.pip_nvidia(("cu13", "cuda_nvcc"))


def pip_nvshmem_roots():
    """NVSHMEM's pip package (nvidia-nvshmem-cu*, which torch brings: its
    lib/libnvshmem_device.bc), where the compiler looks for NVSHMEM's device
    library after $NVSHMEM_HOME (compiler.h, nvshmem_roots)."""
    return _libs.pip_nvidia(("nvshmem",))


def _options(target="host", num_warps=4, debug=False, num_stages=3, warp_mma=False,
             multinode=False):
    opts = _Options()
    lib().weft_compile_options_default(_c.byref(opts))
    opts.target = target.encode()
    opts.num_warps = num_warps
    opts.debug = int(bool(debug))
    opts.num_stages = num_stages
    opts.warp_mma = int(bool(warp_mma))
    opts.cuda_roots = pip_cuda_roots().encode() or None
    opts.multinode = int(bool(multinode))
    opts.nvshmem_roots = pip_nvshmem_roots().encode() or None
    return opts


def locate(name):
    """The path of the machine's file `name` that compiles use ("ptxas",
    "libdevice", "ocml", "ockl", "host-builtins"); CompilationError saying where the
    compiler looked when it has none."""
    l = lib()
    comp = _compiler()
    path = _c.c_void_p()
    opts = _options()
    if l.weft_compiler_locate(comp, _c.byref(opts), name.encode(), _c.byref(path)) != 0:
        raise CompilationError(l.weft_compiler_last_error(comp).decode())
    try:
        return _c.string_at(path.value).decode()
    finally:
        l.weft_string_free(path)


def _compiler():
    comp = getattr(_local, "compiler", None)
    if comp is None:
        comp = _c.c_void_p()
        if lib().weft_compiler_create(_c.byref(comp)) != 0:
            raise CompilationError("weft_compiler_create failed")
        _local.compiler = comp
    return comp


def compile_ir(ir, target, options):
    """Compiles IR text with `options` (a launch's: num_warps, debug and,
    optionally, num_stages, warp_mma and multinode); returns {artifact
    name: bytes}. A failure raises CompilationError located at the Python
    line of the first diagnostic."""
    from ._errors import from_diagnostics
    l = lib()
    opts = _options(target, options["num_warps"], options["debug"],
                    options.get("num_stages", 3), options.get("warp_mma", False),
                    options.get("multinode", False))
    data = ir.encode()
    comp = _compiler()
    arts = _c.c_void_p()
    if l.weft_compile(comp, data, len(data), _c.byref(opts), _c.byref(arts)) != 0:
        raise from_diagnostics(l.weft_compiler_last_error(comp).decode(),
                               f"weft_compile for {target}")
    try:
        out = {}
        for name in l.weft_artifacts_names(arts).decode().split(","):
            if not name:
                continue
            ptr, size = _c.c_void_p(), _c.c_size_t()
            if l.weft_artifacts_get(arts, name.encode(), _c.byref(ptr), _c.byref(size)) == 0:
                out[name] = _c.string_at(ptr, size.value)
        return out
    finally:
        l.weft_artifacts_destroy(arts)
