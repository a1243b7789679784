"""The kernel language: `import weft.language as wl`.

Nothing here runs on its own. `@weft.jit` reads a kernel's AST and turns each
`wl.*` call into weft IR (python/weft/_semantics.py); these definitions give the
names, their documentation and the dtypes. Calling one outside a kernel is a
mistake, and says so.
"""


class dtype:
    """A scalar element type. `name` is the Triton-style signature spelling
    ("fp32", "i32", "u64"), `mlir` the signless MLIR type."""

    __slots__ = ("name", "mlir", "bits", "kind", "numpy")

    def __init__(self, name, mlir, bits, kind, numpy):
        self.name = name      # "fp32"
        self.mlir = mlir      # "f32"
        self.bits = bits
        self.kind = kind      # "f" float, "i" signed int, "u" unsigned int, "b" bool
        self.numpy = numpy    # numpy dtype string

    is_float = property(lambda self: self.kind == "f")
    is_int = property(lambda self: self.kind in "iub")
    is_signed = property(lambda self: self.kind == "i")

    def __repr__(self):
        return "wl." + _PUBLIC_NAME[self.name]


class pointer_type:
    """`!weft.ptr<elem>`; `multicast` for the addresses wl.multicast makes."""

    __slots__ = ("elem", "multicast")

    def __init__(self, elem, multicast=False):
        self.elem = elem
        self.multicast = multicast

    @property
    def name(self):
        return "*" + self.elem.name

    @property
    def mlir(self):
        suffix = ", multicast" if self.multicast else ""
        return f"!weft.ptr<{self.elem.mlir}{suffix}>"

    def __eq__(self, other):
        return (isinstance(other, pointer_type) and other.elem is self.elem
                and other.multicast == self.multicast)

    def __hash__(self):
        return hash((self.elem.name, self.multicast))

    def __repr__(self):
        return f"pointer_type({self.elem!r})"


class tensor_descriptor_type:
    """`!weft.tensordesc<BxCxelem>`: the kernel-side type of a
    weft.TensorDescriptor argument, a tensor of `elem` moved in blocks of
    `block_shape` (desc.load / desc.store)."""

    __slots__ = ("elem", "block_shape")

    def __init__(self, elem, block_shape):
        self.elem = elem
        self.block_shape = tuple(int(b) for b in block_shape)

    @property
    def name(self):
        return f"tensordesc<{self.elem.name}[{','.join(map(str, self.block_shape))}]>"

    @property
    def mlir(self):
        return f"!weft.tensordesc<{'x'.join(map(str, self.block_shape))}x{self.elem.mlir}>"

    def __eq__(self, other):
        return (isinstance(other, tensor_descriptor_type) and other.elem is self.elem
                and other.block_shape == self.block_shape)

    def __hash__(self):
        return hash((self.elem.name, self.block_shape))

    def __repr__(self):
        return f"tensor_descriptor_type({self.elem!r}, {self.block_shape})"


int1 = dtype("i1", "i1", 1, "b", "bool")
int8 = dtype("i8", "i8", 8, "i", "int8")
int16 = dtype("i16", "i16", 16, "i", "int16")
int32 = dtype("i32", "i32", 32, "i", "int32")
int64 = dtype("i64", "i64", 64, "i", "int64")
uint8 = dtype("u8", "i8", 8, "u", "uint8")
uint32 = dtype("u32", "i32", 32, "u", "uint32")
uint64 = dtype("u64", "i64", 64, "u", "uint64")
float16 = dtype("fp16", "f16", 16, "f", "float16")
bfloat16 = dtype("bf16", "bf16", 16, "f", None)  # numpy has no bfloat16
float32 = dtype("fp32", "f32", 32, "f", "float32")
float64 = dtype("fp64", "f64", 64, "f", "float64")

_PUBLIC_NAME = {"i1": "int1", "i8": "int8", "i16": "int16", "i32": "int32",
                "i64": "int64", "u8": "uint8", "u32": "uint32", "u64": "uint64",
                "fp16": "float16", "bf16": "bfloat16", "fp32": "float32",
                "fp64": "float64"}
DTYPES = {d.name: d for d in (int1, int8, int16, int32, int64, uint8, uint32,
                              uint64, float16, bfloat16, float32, float64)}


class constexpr:
    """Annotation of a compile-time argument (`BLOCK: wl.constexpr`): its
    value is part of the specialisation and folds into the IR."""

    def __init__(self, value=None):
        self.value = value


def _only_in_kernels(name, doc):
    def stub(*args, **kwargs):
        raise RuntimeError(f"wl.{name} can only be used inside a @weft.jit kernel")
    stub.__name__ = stub.__qualname__ = name
    stub.__doc__ = doc
    return stub


# name -> one-line meaning; the code generator implements each of them.
_BUILTINS = {
    "program_id": "program_id(axis): index of this program along grid axis 0, 1 or 2",
    "num_programs": "num_programs(axis): number of programs along a grid axis",
    "rank": "rank(): this process's rank",
    "num_ranks": "num_ranks(): number of ranks",
    "arange": "arange(start, end): the 1-D i32 tile start..end-1 (constexpr bounds)",
    "zeros": "zeros(shape, dtype): a tile of zeros",
    "full": "full(shape, value, dtype): a tile of one value",
    "where": "where(cond, a, b): element-wise select, broadcasting",
    "sum": "sum(x, axis=None): reduction; axis None reduces to a scalar",
    "max": "max(x, axis=None): reduction",
    "min": "min(x, axis=None): reduction",
    "dot": "dot(a, b, acc=None, out_dtype=float32): acc + a @ b of 2-D tiles, in float32",
    "exp": "exp(x)", "log": "log(x)", "sqrt": "sqrt(x)", "rsqrt": "rsqrt(x)",
    "abs": "abs(x)",
    "maximum": "maximum(a, b): element-wise", "minimum": "minimum(a, b): element-wise",
    "load": "load(ptr, mask=None, other=None, peer=None, order='weak', scope='sys')",
    "store": "store(ptr, value, mask=None, peer=None, order='weak', scope='sys')",
    "atomic_add": "atomic_add(ptr, value, mask=None, peer=None, order='acq_rel', scope='gpu')",
    "atomic_max": "atomic_max(ptr, value, ...)", "atomic_min": "atomic_min(ptr, value, ...)",
    "atomic_and_": "atomic_and_(ptr, value, ...)", "atomic_or_": "atomic_or_(ptr, value, ...)",
    "atomic_xor": "atomic_xor(ptr, value, ...)", "atomic_xchg": "atomic_xchg(ptr, value, ...)",
    "atomic_cas": "atomic_cas(ptr, cmp, value, peer=None, order='acq_rel', scope='gpu')",
    "fence": "fence(order='acq_rel', scope='sys')",
    "signal": "signal(ptr, value, peer=None, op='set', order='release', scope='sys')",
    "wait": "wait(ptr, value, cmp='eq', order='acquire', scope='sys'): the value seen",
    "barrier": "barrier(): every program of the launch on every rank",
    "translate": "translate(ptr, peer): the address of rank peer's copy",
    "multicast": "multicast(ptr): the multicast address of a symmetric object",
    "multimem_ld_reduce": "multimem_ld_reduce(mptr, op='add', order='relaxed', scope='sys')",
    "multimem_store": "multimem_store(mptr, value, order='relaxed', scope='sys')",
    "multimem_red": "multimem_red(mptr, value, op='add', order='relaxed', scope='sys')",
    "static_range": "static_range(...): a range the compiler unrolls",
    "cdiv": "cdiv(a, b): ceil(a / b) on constexprs or scalars",
}

for _name, _doc in _BUILTINS.items():
    globals()[_name] = _only_in_kernels(_name, _doc)
del _name, _doc
