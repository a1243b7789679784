"""Element-wise math and matrix products."""
import ast

from .. import _types as ty
from .._semantics import Value
from . import builtin


@builtin(dtypes="float16, bfloat16, float32")
def dot(sem, input, other, acc=None, out_dtype=ty.float32):
    """acc + input @ other of 2-D tiles, accumulated in float32."""
    return sem.dot(input, other, acc, out_dtype)


def _float(sem, x, what):
    """`x` as a float Value: Python numbers as float32, integers converted
    to float32 (as Triton does for its math functions)."""
    if not isinstance(x, Value):
        x = sem.constant(x, ty.float32)
    if isinstance(x.dtype, ty.pointer_type):
        raise sem.error(f"{what} of a pointer")
    if x.dtype.is_fp8:
        raise sem.error(f"{x.dtype!r} is a storage type: convert it before {what}")
    return x if x.dtype.is_float else sem.cast(x, ty.float32)


def _unary(sem, op, x, fastmath="", what=None):
    x = _float(sem, x, what or f"wl.{op}")
    flags = f" fastmath<{fastmath}>" if fastmath else ""
    return sem.emit(f"math.{op} {x.name}{flags} : {x.type}", x.dtype, x.shape)


def _binary_float(sem, op, x, y):
    x, y, dtype = sem.operands(_float(sem, x, op) if not isinstance(y, Value) else x,
                               _float(sem, y, op) if not isinstance(x, Value) else y)
    if not dtype.is_float:
        x, y, dtype = sem.cast(x, ty.float32), sem.cast(y, ty.float32), ty.float32
    return sem.emit(f"{op} {x.name}, {y.name} : {x.type}", dtype, x.shape)


# Functions of one float, by the math dialect's op: (name, doc). Those
# Triton has in triton.language are also wl.<name>; every one is wl.math.<name>.
_TOP_LEVEL = {"exp": "e ** x.", "exp2": "2 ** x.", "log": "The natural logarithm.",
              "log2": "The base-2 logarithm.", "sqrt": "The square root (correctly rounded).",
              "rsqrt": "1 / sqrt(x).", "sin": "The sine.", "cos": "The cosine.",
              "erf": "The error function.", "floor": "The largest integer <= x.",
              "ceil": "The smallest integer >= x."}
_MATH_ONLY = {"tanh": "The hyperbolic tangent.", "sinh": "The hyperbolic sine.",
              "cosh": "The hyperbolic cosine.", "tan": "The tangent.",
              "asin": "The arc sine.", "acos": "The arc cosine.", "atan": "The arc tangent.",
              "asinh": "The inverse hyperbolic sine.", "acosh": "The inverse hyperbolic cosine.",
              "atanh": "The inverse hyperbolic tangent.", "log10": "The base-10 logarithm.",
              "log1p": "log(1 + x), precise near 0.", "expm1": "e ** x - 1, precise near 0.",
              "cbrt": "The cube root.", "trunc": "x rounded toward zero.",
              "rint": "x rounded to the nearest integer, ties to even.",
              "round": "x rounded to the nearest integer, ties away from zero.",
              "erfc": "1 - erf(x)."}


def _define_unary(op, doc, top_level):
    def impl(sem, x):
        return _unary(sem, "roundeven" if op == "rint" else op, x)
    impl.__name__ = op
    impl.__doc__ = doc
    builtin(op, namespace="math", dtypes="float")(impl)
    if top_level:
        builtin(op, dtypes="float")(impl)


for _op, _doc in _TOP_LEVEL.items():
    _define_unary(_op, _doc, True)
for _op, _doc in _MATH_ONLY.items():
    _define_unary(_op, _doc, False)


@builtin(dtypes="float")
@builtin(namespace="math", dtypes="float")
def fma(sem, x, y, z):
    """x * y + z, rounded once."""
    shape = sem.broadcast_shape(*(getattr(v, "shape", ()) for v in (x, y, z)))
    dtype = sem.promote(sem.promote(_float(sem, x, "wl.fma"), y), z)
    if not dtype.is_float:
        dtype = ty.float32
    x, y, z = (sem.materialize(v, dtype, shape) for v in (x, y, z))
    return sem.emit(f"math.fma {x.name}, {y.name}, {z.name} : {x.type}", dtype, shape)


@builtin(dtypes="float")
@builtin(namespace="math", dtypes="float")
def div_rn(sem, x, y):
    """x / y, correctly rounded (what `/` of floats is too)."""
    return _binary_float(sem, "arith.divf", x, y)


@builtin(dtypes="float")
@builtin(namespace="math", dtypes="float")
def sqrt_rn(sem, x):
    """The square root, correctly rounded (what wl.sqrt is too)."""
    return _unary(sem, "sqrt", x)


# The approximate forms (`afn`, docs/tile-ir.md, "Math"): the GPU's
# exponential unit alone, without the range scaling that keeps denormal
# arguments and results (3 instructions fewer an element on NVPTX; the
# softmax of flash attention runs one per score).
@builtin(namespace="math", dtypes="float")
def fast_exp2(sem, x):
    """2 ** x by the GPU's approximation: results below 2 ** -126 are 0
    (f32, NVPTX; the host computes wl.exp2)."""
    return _unary(sem, "exp2", x, "afn", "wl.math.fast_exp2")


@builtin(namespace="math", dtypes="float")
def fast_exp(sem, x):
    """e ** x as fast_exp2(x * log2(e)): results below 2 ** -126 are 0
    (NVPTX), and the product's rounding adds an error growing with |x|
    (f32; the host computes wl.exp)."""
    return _unary(sem, "exp", x, "afn", "wl.math.fast_exp")


@builtin(namespace="math", dtypes="float")
def pow(sem, x, y):
    """x ** y of floats."""
    return _binary_float(sem, "math.powf", x, y)


@builtin(namespace="math", dtypes="float")
def atan2(sem, y, x):
    """The angle of (x, y)."""
    return _binary_float(sem, "math.atan2", y, x)


@builtin(namespace="math", dtypes="float")
def copysign(sem, x, y):
    """|x| with the sign of y."""
    return _binary_float(sem, "math.copysign", x, y)


@builtin(namespace="math", dtypes="float")
def isnan(sem, x):
    """True where x is NaN."""
    x = _float(sem, x, "wl.math.isnan")
    return sem.compare(ast.NotEq(), x, x)


@builtin(namespace="math", dtypes="float")
def isinf(sem, x):
    """True where x is infinite."""
    x = _float(sem, x, "wl.math.isinf")
    return sem.compare(ast.Eq(), abs_(sem, x), float("inf"))


@builtin(dtypes="float")
def sigmoid(sem, x):
    """1 / (1 + e ** -x)."""
    x = _float(sem, x, "wl.sigmoid")
    neg = sem.emit(f"arith.negf {x.name} : {x.type}", x.dtype, x.shape)
    return sem.binary(ast.Div(), 1.0, sem.binary(ast.Add(), 1.0, _unary(sem, "exp", neg)))


@builtin(dtypes="float")
def softmax(sem, x, dim=None, keep_dims=False, ieee_rounding=False):
    """e ** x normalised to sum to 1 along `dim` (the last when None),
    computed as e ** (x - max) in float32 for half precision."""
    x = _float(sem, x, "wl.softmax")
    if not x.shape:
        raise sem.error("wl.softmax needs a tile")
    axis = len(x.shape) - 1 if dim is None else dim
    work = sem.cast(x, ty.float32) if x.dtype.bits < 32 else x
    z = sem.binary(ast.Sub(), work, sem.reduce(work, axis, "max", keep_dims=True))
    num = _unary(sem, "exp", z)
    den = sem.reduce(num, axis, "sum", keep_dims=True)
    return sem.cast(sem.binary(ast.Div(), num, den), x.dtype)


@builtin(dtypes="numeric")
def clamp(sem, x, min, max):
    """x limited to [min, max] element-wise (NaN stays NaN)."""
    return sem.minmax(sem.minmax(x, min, "max"), max, "min")


# The double width of 64-bit products; not a dtype of the language.
_INT128 = {k: ty.dtype("i128", "i128", 128, k, None) for k in "iu"}


@builtin(dtypes="int32, uint32, int64, uint64")
@builtin(namespace="math", dtypes="int32, uint32, int64, uint64")
def umulhi(sem, x, y):
    """The high half of the double-width product of two integers (signed
    for signed types)."""
    x, y, dtype = sem.operands(x, y)
    if not dtype.is_int or dtype.bits not in (32, 64):
        raise sem.error(f"wl.umulhi needs 32- or 64-bit integers, not {dtype!r}")
    wide = {32: ty.uint64 if dtype.kind == "u" else ty.int64, 64: _INT128[dtype.kind]}[dtype.bits]
    product = sem.binary(ast.Mult(), sem.cast(x, wide), sem.cast(y, wide))
    return sem.cast(sem.binary(ast.RShift(), product, dtype.bits), dtype)


@builtin(name="abs", dtypes="numeric")
def abs_(sem, x):
    """|x|."""
    if not isinstance(x, Value):
        return abs(x)
    if x.dtype.is_float:
        return sem.emit(f"math.absf {x.name} : {x.type}", x.dtype, x.shape)
    if x.dtype.kind in "ub":
        return x
    return sem.emit(f"math.absi {x.name} : {x.type}", x.dtype, x.shape)


@builtin(dtypes="numeric")
def maximum(sem, x, y):
    """The larger of x and y, element-wise (NaN if either is NaN)."""
    return sem.minmax(x, y, "max")


@builtin(dtypes="numeric")
def minimum(sem, x, y):
    """The smaller of x and y, element-wise (NaN if either is NaN)."""
    return sem.minmax(x, y, "min")
