"""@weft.jit, weft.compile and kernel launches."""
import json
import ctypes as _c
import functools
import math
import os
import struct
import sys

import numpy as np

from . import _cache, _capi, _plans
from . import _runtime as rt
from . import language as wl
from ._codegen import CodeGenerator
from ._function import KernelFunction
from ._launcher import make_launcher
from ._errors import CompilationError, WeftError

# Read once at import: the per-launch path must not consult the environment.
# The default of launches (debug=None) and weft.compile; a launch's
# debug=True/False overrides it, and assigning weft._jit.DEBUG changes it.
DEBUG = os.environ.get("WEFT_DEBUG", "") not in ("", "0")
# Cache warming for a machine without the compiler (README, "GPU runs"):
# every launch here is also compiled for this target, its PerBackend
# constexprs resolved for it, so the cache holds what a run there asks for.
WARM_TARGET = os.environ.get("WEFT_WARM_TARGET") or None
# Launches of kernels the compiler marks "early_start" may begin while the
# stream's previous kernel finishes (runtime.h, WEFT_LAUNCH_EARLY_START);
# WEFT_EARLY_START=0 launches every kernel plainly.
EARLY_START = os.environ.get("WEFT_EARLY_START", "1") not in ("", "0")

# Keyed by numpy's dtype objects: looking one up costs less than its name.
_NUMPY_DTYPES = {np.dtype(d.numpy): d for d in wl.DTYPES.values() if d.numpy}
# How _launch packs a scalar argument's value into its 8-byte slot.
_PACKED = {"i1": "?7x", "i8": "b7x", "i16": "h6x", "i32": "i4x", "i64": "q", "u8": "B7x",
           "u16": "H6x", "u32": "I4x", "u64": "Q", "fp32": "f4x", "fp64": "d"}
_WARP = {"host": 1, "cuda": 32, "hip": 64}


def _shape_divisibility(n):
    """The power of two (at most 256) dividing a tensor descriptor's extent:
    the compiler's one-box bulk copies step through a tensor in multiples
    of up to 64 rows or columns."""
    n = int(n)
    return min(256, n & -n)


class TensorDescriptor:
    """A kernel argument naming a strided tensor that the kernel moves in
    blocks of `block_shape` elements (`desc.load([i, j])`,
    `desc.store([i, j], tile)`: elements outside the tensor read as zero
    and are not written). `tensor`: a weft.Buffer, a numpy array on the
    host or a tensor on GPUs; `shape` and `strides` (elements, outermost
    first) are the tensor's unless given (a view of part of it). On sm_90 a
    pipelined K loop copies its blocks with the bulk tensor copy engine
    (TMA). What that engine needs holds on every backend, and the launch
    checks it: the data 16-byte aligned, every stride but the last (1) a
    multiple of 16 bytes, 1 to 5 dimensions (docs/python.md, "Tensor
    descriptors")."""

    __slots__ = ("tensor", "dtype", "shape", "strides", "block_shape", "spec")

    def __init__(self, tensor, block_shape, shape=None, strides=None):
        self.tensor = tensor
        self.dtype = wl.DTYPES[_describe(tensor, strided=True)[0][1]]
        self.shape = tuple(map(int, shape if shape is not None else tensor.shape))
        self.strides = tuple(map(int, strides if strides is not None else _strides_of(tensor)))
        # PerBackend entries: a block per backend, resolved at launch.
        self.block_shape = tuple([n if isinstance(n, PerBackend) else int(n)
                                  for n in block_shape])
        rank = len(self.shape)
        if not 1 <= rank <= 5 or len(self.strides) != rank or len(self.block_shape) != rank:
            raise ValueError(f"TensorDescriptor: shape {self.shape}, strides {self.strides} "
                             f"and block_shape {self.block_shape} need 1 to 5 dimensions each")
        if any([isinstance(b, int) and b <= 0 for b in self.block_shape]):
            raise ValueError(f"TensorDescriptor: block_shape {self.block_shape} must be positive")
        # Its specialisation (_describe): fixed with the shape.
        self.spec = ("desc", self.dtype.name,
                     (self.block_shape, tuple(map(_shape_divisibility, self.shape))))

    def __repr__(self):
        return (f"TensorDescriptor({self.dtype.name}, shape={self.shape}, "
                f"strides={self.strides}, block_shape={self.block_shape})")

    def detached(self):
        """This descriptor without its tensor (what a launch encodes is the
        address beside it): kept launches (_plans) must not keep tensors
        alive."""
        d = object.__new__(TensorDescriptor)
        for name in self.__slots__:
            setattr(d, name, getattr(self, name))
        d.tensor = None
        return d


def _strides_of(tensor):
    """A tensor's strides in elements: row-major for weft buffers, the
    array's or tensor's own otherwise."""
    if isinstance(tensor, rt.Buffer):
        strides, step = [], 1
        for n in reversed(tensor.shape):
            strides.append(step)
            step *= n
        return tuple(reversed(strides))
    if isinstance(tensor, np.ndarray):
        return tuple(s // tensor.itemsize for s in tensor.strides)
    return tuple(tensor.stride())


# Encoded descriptors by (address, element size, shape, strides, box,
# swizzle, context generation): the matmul ops make new descriptors per
# call, and encoding them costs more than finding them.
_ENCODED = {}


def _encode(desc, ptr, tensor_map, swizzle):
    """desc (its tensor at ptr) encoded with the tensor map the kernel
    reported for it (None: none; compiler.h, "kernels")."""
    key = (ptr, desc.dtype.bits // 8, desc.shape, desc.strides, tensor_map, swizzle,
           rt.state.generation)
    encoded = _ENCODED.get(key)
    if encoded is None:
        if len(_ENCODED) >= 4096:
            _ENCODED.clear()
        encoded = _ENCODED[key] = rt.tensor_desc(key[0], key[1], desc.shape, desc.strides,
                                                 tensor_map, swizzle)
    return encoded


def _describe(arg, strided=False):
    """(its specialisation, the memory it lives in, the value its kernel
    parameter takes) of a run-time argument. The specialisation is
    Triton's: (kind, dtype name, divisibility), a tensor descriptor's
    ("desc", dtype name, (block shape, its extents' divisibility)); the
    memory "host" or "device" (None: the backend's own, or a scalar; see
    _MEMORY); the value an address, a number, or (descriptor, its
    tensor's address). `strided`: the argument may be a strided array (a
    descriptor's tensor). Every launch asks this of every argument, so the
    handler is found by the argument's type (its first instance finds it
    by isinstance)."""
    handler = _DESCRIBE.get(type(arg))
    if handler is None:
        handler = _handler_of(arg)
        _DESCRIBE[type(arg)] = handler
    return handler(arg, strided)


def _describe_desc(desc, strided):
    _, memory, ptr = _describe(desc.tensor, True)
    return desc.spec, memory, (desc, ptr)


def _describe_buffer(buf, strided):
    if buf.spec is None:
        raise TypeError("a freed weft.Buffer cannot be passed to a kernel")
    return buf.spec, None, buf.ptr


def _describe_numpy(arg, strided):
    dtype = _NUMPY_DTYPES.get(arg.dtype)
    if dtype is None or not (strided or arg.flags.c_contiguous):
        raise TypeError(f"numpy argument of dtype {arg.dtype} "
                        f"({'' if arg.flags.c_contiguous else 'not '}contiguous) "
                        "cannot be passed to a kernel")
    ptr = arg.ctypes.data
    return rt.pointer_spec(ptr, dtype), "host", ptr


def _describe_bool(arg, strided):
    return ("", "i1", 0), None, bool(arg)


# The specialisations of an int argument, by its type name and whether 16
# divides it: every launch asks, so they are made once.
_INT_SPECS = {(name, div): ("", name, 16 if div else 0)
              for name in ("i32", "i64", "u64") for div in (False, True)}


def _describe_int(arg, strided):
    arg = int(arg)
    name = "i32" if -2**31 <= arg < 2**31 else "i64" if arg < 2**63 else "u64"
    return _INT_SPECS[name, arg % 16 == 0], None, arg


_FLOAT_SPEC = ("", "fp32", 0)


def _describe_float(arg, strided):
    return _FLOAT_SPEC, None, float(arg)


def _describe_tensor(arg, strided):
    """torch tensors (and objects like them: data_ptr(), a dtype)."""
    dtype = _torch_dtype(arg.dtype)
    if not strided and hasattr(arg, "is_contiguous") and not arg.is_contiguous():
        raise TypeError("a tensor passed to a kernel must be contiguous")
    ptr = arg.data_ptr()
    if getattr(arg, "is_cuda", False):  # torch's flag: no device object made per launch
        return rt.pointer_spec(ptr, dtype), "device", ptr
    device = getattr(getattr(arg, "device", None), "type", None)
    return (rt.pointer_spec(ptr, dtype),
            None if device is None else "host" if device == "cpu" else "device", ptr)


def _handler_of(arg):
    if isinstance(arg, TensorDescriptor):
        return _describe_desc
    if isinstance(arg, rt.Buffer):
        return _describe_buffer
    if isinstance(arg, np.ndarray):
        return _describe_numpy
    if isinstance(arg, (bool, np.bool_)):
        return _describe_bool
    if isinstance(arg, (int, np.integer)):
        return _describe_int
    if isinstance(arg, (float, np.floating)):
        return _describe_float
    if hasattr(arg, "data_ptr") and hasattr(arg, "dtype"):
        return _describe_tensor
    raise TypeError(f"a kernel argument cannot be {type(arg).__name__}")


_DESCRIBE = {}  # argument type -> its _describe handler

_TORCH = {"torch.float32": "fp32", "torch.float16": "fp16", "torch.bfloat16": "bf16",
          "torch.int8": "i8", "torch.int16": "i16", "torch.int32": "i32", "torch.int64": "i64",
          "torch.uint8": "u8", "torch.uint16": "u16", "torch.uint32": "u32",
          "torch.uint64": "u64", "torch.bool": "i1", "torch.float64": "fp64",
          "torch.float8_e4m3fn": "fp8e4nv", "torch.float8_e5m2": "fp8e5"}
_TORCH_DTYPES = {}  # torch's dtype objects -> weft dtypes, as they are met


def torch_dtype_of(dtype):
    """The torch dtype of a weft dtype (`_TORCH` read backwards)."""
    import torch
    for name, weft_name in _TORCH.items():
        if weft_name == dtype.name:
            return getattr(torch, name.split(".")[1])
    raise TypeError(f"weft dtype {dtype.name} has no torch dtype")


def _torch_dtype(dtype):
    """The weft dtype of a torch dtype (TypeError where there is none)."""
    found = _TORCH_DTYPES.get(dtype)
    if found is None:
        found = wl.DTYPES.get(_TORCH.get(str(dtype), ""))
        if found is None:
            raise TypeError(f"tensor dtype {dtype} has no weft dtype")
        _TORCH_DTYPES[dtype] = found
    return found


def _parse_signature_type(text):
    """"*fp32", "i32", "*fp16:16" (divisible by 16) -> (kind, name, div);
    "tensordesc<bf16[128,64]>" -> ("desc", "bf16", ((128, 64), (1, 1))),
    "tensordesc<bf16[128,64]>:256,64" (the tensor's extents divisible by
    256 and 64) -> ("desc", "bf16", ((128, 64), (256, 64)))."""
    text = text.strip()
    if text.startswith("tensordesc<"):
        body, _, divs = text.partition(">:")
        body = body + ">" if divs else body
        inner = body[len("tensordesc<"):-1] if body.endswith(">") else ""
        name, _, block = inner.partition("[")
        try:
            shape = tuple(int(n) for n in block.rstrip("]").split(","))
            divs = tuple(int(n) for n in divs.split(",")) if divs else (1,) * len(shape)
        except ValueError:
            shape = ()
        if name not in wl.DTYPES or not block.endswith("]") or not shape or \
                len(divs) != len(shape):
            raise CompilationError(f"bad tensor descriptor type {text!r} in the signature "
                                   "(tensordesc<bf16[128,64]>, or with the extents' "
                                   "divisibility: tensordesc<bf16[128,64]>:256,64)")
        return ("desc", name, (shape, divs))
    div = 0
    if ":" in text:
        text, d = text.split(":")
        div = int(d)
    kind = "*" if text.startswith("*") else ""
    name = text.lstrip("*")
    if name not in wl.DTYPES:
        raise CompilationError(f"unknown type {text!r} in the signature "
                               f"(one of {', '.join(wl.DTYPES)}, pointers as '*fp32')")
    if kind and not div:
        div = 16
    return (kind, name, div)


_UNSET = object()  # a parameter no argument has bound yet


# Artifacts that are text (as Triton's asm["ptx"] is); the others are bytes.
_TEXT_ARTIFACTS = ("weft", "llir", "ptx", "amdgcn", "asm", "kernels")


class _Artifacts(dict):
    """A compiled kernel's artifacts by name, text as str and binaries
    (cubin, hsaco, so) as bytes. A cuda compile without ptxas has no cubin
    (launches load the PTX): asking for it says why."""

    def __init__(self, artifacts, target):
        super().__init__({name: data.decode() if name in _TEXT_ARTIFACTS else data
                          for name, data in artifacts.items()})
        self.target = target

    def __missing__(self, name):
        if name == "cubin" and self.target.startswith("cuda"):
            _capi.locate("ptxas")  # raises, saying where it looked
            raise CompilationError("no cubin: this kernel was compiled before ptxas was "
                                   "found (clear the kernel cache entry to assemble it)")
        raise KeyError(name)


class CompiledKernel:
    """One specialisation compiled for one target. `asm` holds the C API's
    artifacts by name; `ir` is the tile IR the frontend generated."""

    def __init__(self, name, target, ir, asm, num_warps, arg_specs, cluster=(1, 1, 1)):
        self.name, self.target, self.ir = name, target, ir
        self.asm = _Artifacts(asm, target)
        self.num_warps = num_warps
        self.cluster = cluster
        self.arg_specs = arg_specs
        self._handle = None
        self._generation = -1
        self._cluster = cluster
        self._threads = self._shared = 0
        self._flags = 0  # weft_launch_config.flags of every launch (_kernel)
        # Launch configurations by (grid, stream, resident): launches repeat them.
        self._configs = {}
        # The arguments' values, packed by one struct call into 8-byte
        # slots that _argv points at; a descriptor's entry of _argv points
        # at its encoded TensorDesc instead (_launch), its slot unused.
        self._descs = [i for i, s in enumerate(arg_specs) if s[0] == "desc"]
        self._pack = struct.Struct("<" + "".join(
            "8x" if s[0] == "desc" else "Q" if s[0] else _PACKED[s[1]] for s in arg_specs)
        ).pack_into
        self._values = _c.create_string_buffer(8 * max(1, len(arg_specs)))
        self._count = _c.c_size_t(len(arg_specs))
        base = _c.addressof(self._values)
        self._argv = (_c.c_void_p * max(1, len(arg_specs)))(
            *[base + 8 * i for i in range(len(arg_specs))])
        self._encoded = {}  # descriptor position -> its TensorDesc, kept alive
        self._tensor_maps = {}  # argument index -> (map, swizzle) its bulk copies read

    def _kernel(self):
        if self._generation != rt.state.generation:
            backend = rt.backend()
            image = self.asm.get({"host": "so", "hip": "hsaco"}.get(backend)) if backend != "cuda" \
                else self.asm.get("cubin") or self.asm.get("ptx", "").encode() or None
            if image is None:
                raise WeftError(f"kernel {self.name} was compiled for {self.target}, "
                                f"which the {backend} backend cannot load")
            module = rt.module_load(image)
            self._handle = rt.module_get_kernel(module, self.name)
            # Its pipelined operands' buffers, its producer warps (compiler.h,
            # "kernels").
            settings = json.loads(self.asm.get("kernels", "{}")).get(self.name, {})
            self._threads = settings.get("threads", self.num_warps * _WARP[backend])
            self._shared = settings.get("dynamic_shared_bytes", 0)
            self._configs.clear()
            self._flags = rt.LAUNCH_EARLY_START \
                if EARLY_START and settings.get("early_start") else 0
            self._tensor_maps = {int(i): (tuple(map(tuple, m["map"])), m["swizzle"])
                                 for i, m in settings.get("tensor_maps", {}).items()}
            self._generation = rt.state.generation
        return self._handle

    def launch(self, grid, args, stream=None, resident=False):
        """stream: a CUstream handle; None: weft.stream's, else the context's.
        resident: grid[0] programs at most, cut to those the device runs at
        once (runtime.h, WEFT_LAUNCH_RESIDENT)."""
        self._launch(_grid(grid, self.name), [_describe(arg)[2] for arg in args], stream,
                     resident)

    def _launch(self, grid, values, stream, resident):
        """launch with the arguments' _describe values."""
        if not all(grid):  # an empty grid (no work) launches nothing, as in Triton
            return
        if _plans.recording is not None:
            _plans.recording.append((self, grid, tuple(
                (v[0].detached(), v[1]) if type(v) is tuple else v for v in values),
                stream, resident))
        kernel = self._handle if self._generation == rt.state.generation else self._kernel()
        if stream is None:
            stream = rt.state.stream
        config = self._configs.get((grid, stream, resident))
        if config is None:
            config = self._config(grid, stream, resident)
        if self._descs:
            values = list(values)
            for i in self._descs:  # (descriptor, its tensor's address)
                tensor_map, swizzle = self._tensor_maps.get(i, (None, 0))
                self._encoded[i] = _encode(*values[i], tensor_map, swizzle)
                self._argv[i] = _c.addressof(self._encoded[i])
                values[i] = None
            values = [v for v in values if v is not None]
        self._pack(self._values, 0, *values)
        status = rt.launch_raw(kernel, config, self._argv, self._count)
        if status:
            rt.check(status, f"launch of {self.name}", rt.state.ctx)

    def _config(self, grid, stream, resident):
        """The weft_launch_config of launches of `grid` on `stream`, kept, by
        reference (what rt.launch_raw takes)."""
        config = rt.LaunchConfig()
        config.grid[:] = tuple(grid) + (1,) * (3 - len(grid))
        config.num_threads, config.shared_bytes = self._threads, self._shared
        config.stream = stream
        config.flags = self._flags | (rt.LAUNCH_RESIDENT if resident else 0)
        config.cluster[:] = self._cluster
        if len(self._configs) >= 256:  # bounded whatever grids callers use
            self._configs.clear()
        self._configs[(grid, stream, resident)] = ref = _c.byref(config)  # keeps config
        return ref


def _grid(grid, name):
    """A launch's grid as a tuple of 1 to 3 non-negative ints."""
    dims = (grid,) if isinstance(grid, int) else grid
    if not isinstance(dims, (tuple, list)) or not 1 <= len(dims) <= 3 or any(
            isinstance(d, bool) or not isinstance(d, int) or d < 0 for d in dims):
        raise ValueError(f"{name}: the grid is 1 to 3 non-negative ints (programs along "
                         f"axes 0, 1, 2), not {grid!r}")
    return tuple(dims)


class PerBackend:
    """A constexpr argument whose value depends on the backend the kernel is
    compiled for: PerBackend(host=64, cuda=1024, hip=1024), or a `default`
    for the backends not named. Resolved at each launch for the run's
    backend (and, under WEFT_WARM_TARGET, for the warmed target's).
    Equal ones are one object (where the values hash), so that launches
    find their kernels by identity, not by comparing values."""

    __slots__ = ("values", "default")
    _made = {}  # (default, values) -> the one PerBackend of them

    def __new__(cls, default=None, **values):
        try:
            key = (default, tuple(sorted(values.items())))
            found = cls._made.get(key)
        except TypeError:  # unhashable values: a PerBackend of its own
            key = found = None
        if found is None:
            found = super().__new__(cls)
            found.values, found.default = values, default
            if key is not None:
                cls._made[key] = found
        return found

    def __getitem__(self, backend):
        value = self.values.get(backend, self.default)
        if value is None:
            raise KeyError(f"{self!r} has no value for backend {backend!r}")
        return value

    def __repr__(self):
        items = [f"{k}={v!r}" for k, v in self.values.items()]
        if self.default is not None:
            items.append(f"default={self.default!r}")
        return f"PerBackend({', '.join(items)})"


def _for_backend(value, backend):
    """value, or its value on `backend` where it is a PerBackend."""
    return value[backend] if isinstance(value, PerBackend) else value


def _resolve(constexprs, backend):
    return {k: _for_backend(v, backend) for k, v in constexprs.items()}


def _resolve_specs(specs, backend):
    """Argument specs with tensor descriptors' PerBackend block sizes
    resolved for `backend`."""
    return [(kind, name, (tuple(_for_backend(b, backend) for b in div[0]), div[1]))
            if kind == "desc" else (kind, name, div) for kind, name, div in specs]


def _cluster_shape(cluster):
    """A launch's cluster= (None, or up to three positive extents: the
    programs launched together along each grid axis, at most 8 in all) as
    (x, y, z). On sm_90 the kernel then runs in thread block clusters, and
    the compiler shares the bulk copies of blocks that every program of a
    cluster reads (docs/tile-ir.md, "Clusters"); elsewhere the programs
    run alone, with the same results."""
    if cluster is None:
        return (1, 1, 1)
    shape = tuple(cluster) if isinstance(cluster, (tuple, list)) else (cluster,)
    if not 1 <= len(shape) <= 3 or not all(isinstance(d, int) and d > 0 for d in shape) or \
            math.prod(shape) > 8:
        raise ValueError(f"cluster must be up to three positive extents of at most 8 "
                         f"programs in all, got {cluster!r}")
    return shape + (1,) * (3 - len(shape))


def _backend_of_target(target):
    return target.split(":")[0]


# Where a backend's kernels read local (non-symmetric) arrays from.
_MEMORY = {"host": "host", "cuda": "device", "hip": "device"}


def _target_of_backend(backend):
    if backend == "cuda":
        return "cuda:" + os.environ.get("WEFT_CUDA_ARCH", "90")
    if backend == "hip":
        return "hip:" + os.environ.get("WEFT_HIP_ARCH", "gfx942")
    return "host"


class JITFunction(KernelFunction):
    def __init__(self, fn, do_not_specialize=()):
        super().__init__(fn)
        self.positions = {name: i for i, name in enumerate(self.arg_names)}
        self.runtime_index = [i for i, n in enumerate(self.arg_names) if n not in self.constexprs]
        self.constexpr_index = [i for i, n in enumerate(self.arg_names) if n in self.constexprs]
        self.constexpr_names = [self.arg_names[i] for i in self.constexpr_index]
        runtime_names = [self.arg_names[i] for i in self.runtime_index]
        unknown = set(do_not_specialize) - set(runtime_names)
        if unknown:
            raise CompilationError(f"{fn.__name__}: do_not_specialize names "
                                   f"{', '.join(sorted(unknown))}, not run-time arguments")
        # Positions among the run-time arguments whose divisibility is not a
        # specialisation (a counter would compile a variant every 16 calls).
        self.unspecialized = [i for i, n in enumerate(runtime_names) if n in do_not_specialize]
        self._kernels = {}
        self._launches = {}  # run's key -> (CompiledKernel, resolved constexprs)
        self._forms = {}     # (positional count, keywords) -> _layout's
        self._launcher = make_launcher(self, sys.modules[__name__])

    def specialize(self, arg_specs, constexprs, target, num_warps, debug, num_stages=3,
                   cluster=(1, 1, 1), warp_mma=False, multinode=False):
        """The CompiledKernel for a specialisation (cached in memory and on
        disk). multinode: for a job across nodes (compiler.h)."""
        key = (tuple(arg_specs),
               tuple(sorted(((k, v, type(v)) for k, v in constexprs.items()),
                            key=lambda kv: kv[0])),
               target, num_warps, debug, num_stages, cluster, warp_mma, multinode)
        kernel = self._kernels.get(key)
        if kernel is None:
            params, specs_iter = [], iter(arg_specs)
            for name in self.arg_names:
                if name in self.constexprs:
                    params.append((name, ("constexpr", constexprs[name])))
                else:
                    kind, dname, div = next(specs_iter)
                    dtype = wl.DTYPES[dname]
                    if kind == "desc":
                        block, shape_divs = div
                        params.append((name, ("arg", wl.tensor_descriptor_type(dtype, block),
                                              shape_divs)))
                        continue
                    params.append((name, ("arg", wl.pointer_type(dtype) if kind else dtype,
                                          div or None)))
            gen = CodeGenerator(self, params, cluster=cluster)
            ir = gen.generate()
            options = {"num_warps": num_warps, "debug": int(debug), "num_stages": num_stages,
                       "warp_mma": int(warp_mma)}
            if multinode:  # only then: the cache keys of one node's kernels stay
                options["multinode"] = 1
            asm = _cache.lookup_or_compile(ir, gen.files, self.__name__, target, options)
            kernel = CompiledKernel(self.__name__, target, ir, asm, num_warps, arg_specs,
                                    cluster)
            self._kernels[key] = kernel
        return kernel

    def __getitem__(self, grid):
        if self._launcher is None:
            return lambda *args, **kwargs: self.run(grid, args, kwargs)
        return functools.partial(self._launcher, grid)

    def run(self, grid, args, kwargs):
        num_warps = kwargs.pop("num_warps", 4)
        num_stages = kwargs.pop("num_stages", 3)
        cluster = _cluster_shape(kwargs.pop("cluster", None))
        warp_mma = bool(kwargs.pop("warp_mma", False))
        stream = rt.stream_handle(kwargs.pop("stream", None))
        resident = bool(kwargs.pop("resident", False))
        debug = kwargs.pop("debug", None)
        debug = DEBUG if debug is None else bool(debug)
        if kwargs or len(args) != len(self.arg_names):
            args = self._bind(args, kwargs)
        backend = rt.backend()
        try:
            described = [_describe(args[i]) for i in self.runtime_index]
        except TypeError as e:
            raise TypeError(f"{self.__name__}: {e}") from None
        memory = _MEMORY[backend]
        for i, (_, where, _) in zip(self.runtime_index, described):
            if where is not None and where != memory:
                raise TypeError(f"{self.__name__}: argument {self.arg_names[i]} is "
                                f"{where} memory, which kernels on the {backend} backend "
                                f"cannot reach; pass a weft.Buffer or a "
                                f"{memory} array or tensor")
        specs = [d[0] for d in described]
        for i in self.unspecialized:
            specs[i] = specs[i][:2] + (0,)
        constexprs = tuple(args[i] for i in self.constexpr_index)
        # Launches repeat: the kernel and the resolved constexprs are found
        # by what the call names, resolving nothing (types keep 1 and True
        # apart); a job across nodes compiles its own.
        key = (backend, rt.state.multinode, tuple(specs), constexprs,
               tuple(map(type, constexprs)), num_warps, num_stages, cluster, warp_mma, debug)
        try:
            found = self._launches.get(key)
        except TypeError:  # an unhashable constexpr: resolved every time
            found = key = None
        if found is None:
            found = self._prepare(specs, dict(zip(self.constexpr_names, constexprs)), backend,
                                  num_warps, debug, num_stages, cluster, warp_mma)
            if key is not None:
                if len(self._launches) >= 4096:  # bounded whatever callers pass
                    self._launches.clear()
                self._launches[key] = found
        kernel, resolved = found
        if callable(grid):
            grid = grid(dict(resolved, num_warps=num_warps))
        grid = _grid(grid, self.__name__)
        kernel._launch(grid, [d[2] for d in described], stream, resident)
        return kernel

    def _prepare(self, specs, constexprs, backend, num_warps, debug, num_stages, cluster,
                 warp_mma):
        """(the CompiledKernel, its constexprs resolved) of a launch on
        `backend`, compiled (and under WEFT_WARM_TARGET warmed) as needed."""
        multinode = rt.state.multinode
        if WARM_TARGET:
            warm = _backend_of_target(WARM_TARGET)
            self.specialize(_resolve_specs(specs, warm), _resolve(constexprs, warm),
                            WARM_TARGET, num_warps, debug, num_stages, cluster, warp_mma,
                            multinode)
        resolved = _resolve(constexprs, backend)
        return self.specialize(_resolve_specs(specs, backend), resolved,
                               _target_of_backend(backend), num_warps, debug, num_stages,
                               cluster, warp_mma, multinode), resolved

    def _bind(self, args, kwargs):
        """The arguments in parameter order. Calls of one form (so many
        positional arguments, these keywords) bind alike, so a form's layout
        is worked out once; a form that leaves a parameter unbound or binds
        one twice goes to inspect's binding for its error message."""
        form = (len(args), tuple(kwargs))
        layout = self._forms.get(form)
        if layout is None:
            layout = self._layout(*form)
            if layout is None:
                full = self.signature.bind(*args, **kwargs)
                full.apply_defaults()
                return [full.arguments[n] for n in self.arg_names]
            self._forms[form] = layout
        rest, positions = layout
        bound = list(args) + rest
        for i, value in zip(positions, kwargs.values()):
            bound[i] = value
        return bound

    def _layout(self, count, names):
        """(the defaults of the parameters after the first `count`, the
        positions of the keywords `names`) where a call of that form binds
        every parameter once, else None."""
        positions = [self.positions.get(name, -1) for name in names]
        if count > len(self.arg_names) or min(positions, default=count) < count or \
                len(set(positions)) != len(positions):
            return None
        rest = [self.defaults.get(name, _UNSET) for name in self.arg_names[count:]]
        for i in positions:
            rest[i - count] = None
        if any(value is _UNSET for value in rest):  # `in` would compare arrays
            return None
        return rest, positions


def jit(fn=None, *, do_not_specialize=()):
    """Marks a Python function as a weft kernel (compiled on first launch
    for each specialisation of its arguments). `@jit(do_not_specialize=
    ("epoch",))`: those arguments get no divisibility hint, so their values
    never pick a new specialisation (their type, i32 or i64, still does)."""
    if fn is None:
        return lambda f: JITFunction(f, do_not_specialize)
    return JITFunction(fn, do_not_specialize)


def compile(fn, signature, constexprs=None, target="host", num_warps=4, debug=None,
            num_stages=3, cluster=None, warp_mma=False, multinode=False):
    """Compiles without launching (no GPU needed). signature maps each
    run-time argument to a type: "*fp32", "i32", "fp32", "*fp16:16", ...;
    the options are a launch's (num_warps, num_stages, cluster, warp_mma);
    multinode=True compiles for a job across nodes (what launches do when
    weft.num_nodes() > 1: off-node peers through NVSHMEM or MPI)."""
    if not isinstance(fn, JITFunction):
        raise TypeError("weft.compile takes a @weft.jit function")
    constexprs = dict(constexprs or {})
    for name, value in fn.defaults.items():
        if name in fn.constexprs:
            constexprs.setdefault(name, value)
    missing = [n for n in fn.arg_names if n not in fn.constexprs and n not in signature] + \
              [n for n in fn.constexprs if n not in constexprs]
    if missing:
        raise CompilationError(f"{fn.__name__}: no type or constexpr value for "
                               f"{', '.join(missing)}")
    specs = [_parse_signature_type(signature[n]) for n in fn.arg_names
             if n not in fn.constexprs]
    constexprs = _resolve(constexprs, _backend_of_target(target))
    return fn.specialize(specs, constexprs, target, num_warps,
                         DEBUG if debug is None else bool(debug), num_stages,
                         _cluster_shape(cluster), bool(warp_mma), bool(multinode))
