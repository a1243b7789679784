"""The language's types: scalar dtypes, pointers, tensor descriptors and
`constexpr`. `weft.language` re-exports them; the code generator and the
builtins build on them without importing the language module itself."""


class dtype:
    """A scalar element type. `name` is the Triton-style signature spelling
    ("fp32", "i32", "u64"), `mlir` the signless MLIR type."""

    __slots__ = ("name", "mlir", "bits", "kind", "numpy")

    def __init__(self, name, mlir, bits, kind, numpy):
        self.name = name      # "fp32"
        self.mlir = mlir      # "f32"
        self.bits = bits
        self.kind = kind      # "f" float, "i" signed int, "u" unsigned int, "b" bool
        self.numpy = numpy    # numpy dtype string, or None where numpy has none

    is_float = property(lambda self: self.kind == "f")
    is_int = property(lambda self: self.kind in "iub")
    is_signed = property(lambda self: self.kind == "i")
    # float8 formats are storage types: kernels convert them to compute.
    is_fp8 = property(lambda self: self.kind == "f" and self.bits == 8)

    def __repr__(self):
        return "wl." + PUBLIC_NAME[self.name]


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
uint16 = dtype("u16", "i16", 16, "u", "uint16")
uint32 = dtype("u32", "i32", 32, "u", "uint32")
uint64 = dtype("u64", "i64", 64, "u", "uint64")
# numpy has neither bfloat16 nor the float8 formats: their buffers hold raw
# bits (weft.Buffer converts numerically, see _runtime).
float8e4nv = dtype("fp8e4nv", "f8E4M3FN", 8, "f", None)
float8e5 = dtype("fp8e5", "f8E5M2", 8, "f", None)
float16 = dtype("fp16", "f16", 16, "f", "float16")
bfloat16 = dtype("bf16", "bf16", 16, "f", None)
float32 = dtype("fp32", "f32", 32, "f", "float32")
float64 = dtype("fp64", "f64", 64, "f", "float64")

PUBLIC_NAME = {"i1": "int1", "i8": "int8", "i16": "int16", "i32": "int32",
               "i64": "int64", "u8": "uint8", "u16": "uint16", "u32": "uint32",
               "u64": "uint64", "fp8e4nv": "float8e4nv", "fp8e5": "float8e5",
               "fp16": "float16", "bf16": "bfloat16", "fp32": "float32",
               "fp64": "float64"}
DTYPES = {d.name: d for d in (int1, int8, int16, int32, int64, uint8, uint16, uint32,
                              uint64, float8e4nv, float8e5, float16, bfloat16, float32,
                              float64)}


class constexpr:
    """Annotation of a compile-time argument (`BLOCK: wl.constexpr`): its
    value is part of the specialisation and folds into the IR."""

    def __init__(self, value=None):
        self.value = value
