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
                ("warp_mma", _c.c_int)]


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
            _lib = l
    return _lib


def version():
    return lib().weft_compiler_version().decode()


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
    optionally, num_stages and warp_mma); returns {artifact name: bytes}. A
    failure raises CompilationError located at the Python line of the first
    diagnostic."""
    from ._errors import from_diagnostics
    l = lib()
    opts = _Options()
    l.weft_compile_options_default(_c.byref(opts))
    opts.target = target.encode()
    opts.num_warps = options["num_warps"]
    opts.debug = int(bool(options["debug"]))
    opts.num_stages = options.get("num_stages", 3)
    opts.warp_mma = int(bool(options.get("warp_mma", False)))
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
