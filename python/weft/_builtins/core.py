"""Programs and ranks, tile creation, shapes, casts, selection and the
compile-time helpers."""
import ast

from .. import _types as ty
from .._semantics import Value, check_shape
from . import builtin


def _axis(sem, axis):
    if axis not in (0, 1, 2):
        raise sem.error("a grid axis is 0, 1 or 2")
    return "xyz"[axis]


@builtin(dtypes="int32")
def program_id(sem, axis):
    """Index of this program along grid axis 0, 1 or 2."""
    return sem.emit(f"weft.program_id {_axis(sem, axis)} : i32", ty.int32)


@builtin(dtypes="int32")
def num_programs(sem, axis):
    """Number of programs along grid axis 0, 1 or 2."""
    return sem.emit(f"weft.num_programs {_axis(sem, axis)} : i32", ty.int32)


@builtin(dtypes="int32")
def rank(sem):
    """This process's rank."""
    return sem.emit("weft.rank : i32", ty.int32)


@builtin(dtypes="int32")
def num_ranks(sem):
    """Number of ranks."""
    return sem.emit("weft.num_ranks : i32", ty.int32)


@builtin(dtypes="int32")
def arange(sem, start, end):
    """The 1-D int32 tile start, start + 1, ..., end - 1 (compile-time
    bounds; end - start a power of two)."""
    for bound in (start, end):
        if isinstance(bound, Value) or isinstance(bound, bool) or not isinstance(bound, int):
            raise sem.error(f"wl.arange needs compile-time bounds (ints), not {bound!r}")
    if end <= start:
        raise sem.error(f"wl.arange({start}, {end}) is empty")
    (n,) = check_shape(sem, (end - start,))
    return sem.emit(f"weft.make_range {start}, {end} : tensor<{n}xi32>", ty.int32, (n,))


def _dtype_arg(sem, dtype, what):
    if not isinstance(dtype, ty.dtype):
        raise sem.error(f"{what}: {dtype!r} is not a dtype")
    return dtype


@builtin()
def full(sem, shape, value, dtype):
    """A tile of `shape` with every element `value`, of `dtype`."""
    return sem.materialize(value, _dtype_arg(sem, dtype, "wl.full"), check_shape(sem, shape))


@builtin()
def zeros(sem, shape, dtype):
    """A tile of `shape` of zeros of `dtype`."""
    return full(sem, shape, 0, dtype)


@builtin()
def where(sem, condition, x, y):
    """Element-wise `x` where `condition` holds, else `y`; broadcasting."""
    return sem.where(condition, x, y)


@builtin(dtypes="int")
def cdiv(sem, x, div):
    """ceil(x / div), of compile-time values or integer scalars and tiles."""
    return sem.binary(ast.FloorDiv(), sem.binary(ast.Sub(), sem.binary(
        ast.Add(), x, div), 1), div)


@builtin()
def static_range(sem, *args):
    """range(...) that the compiler unrolls: compile-time bounds, the loop
    variable a compile-time int in each copy of the body (for loops only)."""
    raise sem.error("wl.static_range is only meaningful as a for loop's iterable")



@builtin(method="to")
def cast(sem, input, dtype):
    """`input` converted to `dtype` (`x.to(dtype)`)."""
    if not isinstance(dtype, (ty.dtype, ty.pointer_type)):
        raise sem.error(f"{dtype!r} is not a dtype")
    return sem.to(input, dtype)
