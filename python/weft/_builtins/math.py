"""Element-wise math and matrix products."""
from .. import _types as ty
from .._semantics import Value
from . import builtin


@builtin(dtypes="float16, bfloat16, float32")
def dot(sem, input, other, acc=None, out_dtype=ty.float32):
    """acc + input @ other of 2-D tiles, accumulated in float32."""
    return sem.dot(input, other, acc, out_dtype)


def _unary(sem, op, x):
    if not isinstance(x, Value):
        x = sem.constant(x, ty.float32)
    if isinstance(x.dtype, ty.pointer_type):
        raise sem.error(f"math.{op} of a pointer")
    if not x.dtype.is_float:
        x = sem.cast(x, ty.float32)
    return sem.emit(f"math.{op} {x.name} : {x.type}", x.dtype, x.shape)


@builtin(dtypes="float")
def exp(sem, x):
    """e ** x."""
    return _unary(sem, "exp", x)


@builtin(dtypes="float")
def log(sem, x):
    """The natural logarithm."""
    return _unary(sem, "log", x)


@builtin(dtypes="float")
def sqrt(sem, x):
    """The square root."""
    return _unary(sem, "sqrt", x)


@builtin(dtypes="float")
def rsqrt(sem, x):
    """1 / sqrt(x)."""
    return _unary(sem, "rsqrt", x)


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
