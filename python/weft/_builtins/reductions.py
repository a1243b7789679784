"""Reductions along an axis (or of the whole tile) and scans."""
from . import builtin


@builtin(name="sum", method=True, dtypes="numeric")
def sum_(sem, input, axis=None):
    """The sum along `axis`, or of every element for None; half-precision
    floats accumulate in float32, integers narrower than 32 bits in int32."""
    return sem.reduce(input, axis, "sum")


@builtin(name="max", method=True, dtypes="numeric")
def max_(sem, input, axis=None):
    """The largest element along `axis`, or of the tile for None."""
    return sem.reduce(input, axis, "max")


@builtin(name="min", method=True, dtypes="numeric")
def min_(sem, input, axis=None):
    """The smallest element along `axis`, or of the tile for None."""
    return sem.reduce(input, axis, "min")
