"""Programs and ranks, tile creation, shapes, casts, selection and the
compile-time helpers."""
import ast

from .. import _types as ty
from .._semantics import Value, check_shape, mlir_type
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
def local_rank(sem):
    """This rank's index within its node (the job's ranks in order form
    nodes of local_size() ranks)."""
    return sem.emit("weft.local_rank : i32", ty.int32)


@builtin(dtypes="int32")
def local_size(sem):
    """Ranks per node: loads, stores and atomics reach the ranks of this
    node; wl.put, wl.get and wl.signal reach every rank."""
    return sem.emit("weft.local_size : i32", ty.int32)


@builtin(dtypes="int32")
def node(sem):
    """This rank's node: rank() // local_size()."""
    return sem.emit("weft.node : i32", ty.int32)


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
def cast(sem, input, dtype, bitcast=False):
    """`input` converted to `dtype` (`x.to(dtype)`); with `bitcast`, its
    bits reinterpreted as `dtype` of the same width."""
    if not isinstance(dtype, (ty.dtype, ty.pointer_type)):
        raise sem.error(f"{dtype!r} is not a dtype")
    if not bitcast:
        return sem.to(input, dtype)
    x = sem.value(input)
    if isinstance(dtype, ty.pointer_type) or isinstance(x.dtype, ty.pointer_type) or \
            x.dtype.bits != dtype.bits:
        raise sem.error(f"wl.cast(bitcast=True): {x.dtype!r} and {dtype!r} differ in width")
    if x.dtype.mlir == dtype.mlir:
        return Value(x.name, dtype, x.shape)
    return sem.emit(f"arith.bitcast {x.name} : {x.type} to {mlir_type(dtype, x.shape)}",
                    dtype, x.shape)


@builtin()
def zeros_like(sem, input):
    """Zeros of `input`'s shape and dtype."""
    return full_like(sem, input, 0)


@builtin()
def full_like(sem, input, value, dtype=None):
    """`value` in `input`'s shape, of `input`'s dtype unless `dtype`."""
    if not isinstance(input, Value):
        raise sem.error(f"wl.full_like needs a tile or scalar value, not {input!r}")
    return sem.materialize(value, _dtype_arg(sem, dtype or input.dtype, "wl.full_like"),
                           input.shape)


# --- hints the axis analysis takes (weft.axis_hint) -----------------------

def _hint(sem, input, values, attr, op):
    if not isinstance(input, Value) or not input.dtype.is_int or input.dtype is ty.int1:
        raise sem.error(f"wl.{op} applies to integer values, not {input!r}")
    values = tuple(values) if isinstance(values, (tuple, list)) else (values,)
    rank = max(len(input.shape), 1)
    if len(values) == 1 and rank > 1:
        values = (1,) * (rank - 1) + values
    if len(values) != rank or any(
            isinstance(v, bool) or not isinstance(v, int) or v < 1 for v in values):
        raise sem.error(f"wl.{op} takes one positive compile-time int per dimension "
                        f"(or one for the last), not {values!r}")
    if attr == "divisibility" and any(v & (v - 1) for v in values):
        raise sem.error(f"wl.{op}: {values!r} are not all powers of two")
    array = f"array<i64: {', '.join(map(str, values))}>"
    return sem.emit(f"weft.axis_hint {input.name} {{{attr} = {array}}} : {input.type}",
                    input.dtype, input.shape)


@builtin(dtypes="int")
def multiple_of(sem, input, values):
    """`input`, promised to be a multiple of `values` (a power of two; per
    dimension, or for the last): aligned vector accesses follow. A wrong
    promise is undefined behaviour."""
    return _hint(sem, input, values, "divisibility", "multiple_of")


@builtin(dtypes="int")
def max_contiguous(sem, input, values):
    """`input`, promised to hold runs of `values` consecutive integers."""
    return _hint(sem, input, values, "contiguity", "max_contiguous")


@builtin(dtypes="int")
def max_constancy(sem, input, values):
    """`input`, promised to hold runs of `values` equal integers."""
    return _hint(sem, input, values, "constancy", "max_constancy")


@builtin()
def assume(sem, cond):
    """The promise that scalar `cond` holds, for the optimiser (a false
    one is undefined behaviour)."""
    if not isinstance(cond, Value):
        if not cond:
            raise sem.error("wl.assume of a compile-time false")
        return
    if cond.shape:
        raise sem.error("wl.assume takes a scalar condition")
    sem.emit(f"weft.assume {sem.as_bool(cond).name}")


# --- compile time ---------------------------------------------------------

@builtin()
def static_assert(sem, cond, msg=""):
    """A CompilationError with `msg` unless compile-time `cond` holds."""
    if isinstance(cond, Value):
        raise sem.error("wl.static_assert needs a compile-time condition")
    if not cond:
        raise sem.error(f"static assertion failed{': ' + str(msg) if msg else ''}")


@builtin()
def static_print(sem, *values, sep=" ", end="\n"):
    """Prints compile-time values (and what run-time values are) while
    the kernel compiles."""
    print(*values, sep=sep, end=end)


@builtin(name="range")
def range_(sem, arg1, arg2=None, step=None, num_stages=None, prefetch=False,
           warp_specialize=False):
    """range(...) whose loop may carry `num_stages`: the software pipeline's
    depth for this loop's dot operands (overriding the launch's; 1 turns it
    off); prefetch=True: the tiles that the pipelined loops in the body
    copy are ready before the loop starts (nothing in it writes or
    publishes them), so each may copy the next iteration's first stages
    before the code after it; warp_specialize=True: a warpgroup of producer
    warps, launched beside the program's, makes the bulk copies of the
    loop's pipeline (or of the K loop directly in its body) and runs ahead
    of the products (docs/tile-ir.md, "Warp specialisation"; sm_90, where
    the loop's kernel qualifies, else the hint is ignored). For loops
    only."""
    raise sem.error("wl.range is only meaningful as a for loop's iterable")
