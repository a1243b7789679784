"""Reductions along an axis (or of the whole tile) and scans. A combine
function is a @weft.jit function of two elements of each operand (all of
the first's, then all of the second's) returning one value per operand."""
import ast

from .._function import KernelFunction
from .._semantics import Value
from . import builtin


@builtin(name="sum", method=True, dtypes="numeric")
def sum_(sem, input, axis=None, keep_dims=False):
    """The sum along `axis`, or of every element for None; half-precision
    floats accumulate in float32 (the result is converted back), integers
    narrower than 32 bits in (u)int32 (the result's type)."""
    return sem.reduce(input, axis, "sum", keep_dims)


@builtin(name="max", method=True, dtypes="numeric")
def max_(sem, input, axis=None, return_indices=False, keep_dims=False):
    """The largest element along `axis`, or of the tile for None (NaN if
    any is NaN); with `return_indices`, (values, wl.argmax's indices)."""
    if return_indices:
        return _arg(sem, input, axis, "max", keep_dims)
    return sem.reduce(input, axis, "max", keep_dims)


@builtin(name="min", method=True, dtypes="numeric")
def min_(sem, input, axis=None, return_indices=False, keep_dims=False):
    """The smallest element along `axis`, or of the tile for None (NaN if
    any is NaN); with `return_indices`, (values, wl.argmin's indices)."""
    if return_indices:
        return _arg(sem, input, axis, "min", keep_dims)
    return sem.reduce(input, axis, "min", keep_dims)


@builtin(method=True, dtypes="int")
def xor_sum(sem, input, axis=None, keep_dims=False):
    """The exclusive or of the elements along `axis`, or of the tile."""
    if isinstance(input, Value) and not input.dtype.is_int:
        raise sem.error(f"wl.xor_sum needs integers, not {input.dtype!r}")
    return sem.reduce(input, axis, "xor_sum", keep_dims)


@builtin(method=True, dtypes="numeric")
def argmax(sem, input, axis, keep_dims=False):
    """The index (int32) of the largest element along `axis` (None: in
    the flattened tile); the first of equal ones, and NaN counts as the
    largest, as in numpy."""
    return _arg(sem, input, axis, "max", keep_dims)[1]


@builtin(method=True, dtypes="numeric")
def argmin(sem, input, axis, keep_dims=False):
    """The index (int32) of the smallest element along `axis` (None: in
    the flattened tile); the first of equal ones, and NaN counts as the
    smallest, as in numpy."""
    return _arg(sem, input, axis, "min", keep_dims)[1]


def _arg(sem, x, axis, kind, keep_dims):
    """(extremum, its index) by one reduction of (values, indices)."""
    op = "arg" + kind
    shape = getattr(x, "shape", ())
    flat, ax = sem.reduce_axis(x, axis, op)
    work = sem.accumulator(flat.dtype, kind)
    values = sem.cast(flat, work)
    idx = sem.broadcast_to(sem.positions(flat.shape, ax), flat.shape)
    better = ast.Gt() if kind == "max" else ast.Lt()

    def body(a, b):
        (av, ai), (bv, bi) = a, b
        first = sem.compare(ast.Lt(), ai, bi)
        wins = sem.compare(better, av, bv)
        tie = sem.binary(ast.BitAnd(), sem.compare(ast.Eq(), av, bv), first)
        take_a = sem.binary(ast.BitOr(), wins, tie)
        if work.is_float:  # NaN wins; the first of two NaNs
            a_nan, b_nan = sem.compare(ast.NotEq(), av, av), sem.compare(ast.NotEq(), bv, bv)
            not_b_nan = sem.compare(ast.Eq(), b_nan, False)
            take_a = sem.where(a_nan, sem.binary(ast.BitOr(), not_b_nan, first),
                               sem.binary(ast.BitAnd(), not_b_nan, take_a))
        return [sem.where(take_a, av, bv), sem.where(take_a, ai, bi)]

    value, index = sem.combine("reduce", [values, idx], ax, body)
    value = sem.cast(value, flat.dtype)
    if keep_dims:
        value, index = (sem.keep_dims(v, shape, axis) for v in (value, index))
    return value, index


def _combine_fn(sem, fn, op):
    if not isinstance(fn, KernelFunction):
        raise sem.error(f"wl.{op}: combine_fn must be a @weft.jit function, not {fn!r}")

    def body(firsts, seconds):
        out = sem.inline(fn, firsts + seconds, {})
        return list(out) if isinstance(out, tuple) else [out]
    return body


def _operands(sem, input, op):
    srcs = list(input) if isinstance(input, tuple) else [input]
    for s in srcs:
        if not isinstance(s, Value) or not s.shape:
            raise sem.error(f"wl.{op} needs tiles, not {s!r}")
        if s.shape != srcs[0].shape:
            raise sem.error(f"wl.{op}: operands of shapes {srcs[0].shape} and {s.shape}")
        if s.dtype.is_fp8:
            raise sem.error(f"{s.dtype!r} is a storage type: convert it before wl.{op}")
    return srcs


@builtin(name="reduce", dtypes="numeric")
def reduce_(sem, input, axis, combine_fn, keep_dims=False):
    """`input` (a tile or a tuple of tiles of one shape) reduced along
    `axis` (None: all of it) with `combine_fn`, which must be associative
    and commutative (threads combine in any order)."""
    srcs = _operands(sem, input, "reduce")
    shape = srcs[0].shape
    flat = [sem.reduce_axis(s, axis, "reduce") for s in srcs]
    ax = flat[0][1]
    out = sem.combine("reduce", [f for f, _ in flat], ax, _combine_fn(sem, combine_fn, "reduce"))
    if keep_dims:
        out = [sem.keep_dims(v, shape, axis) for v in out]
    return tuple(out) if isinstance(input, tuple) else out[0]


@builtin(dtypes="numeric")
def associative_scan(sem, input, axis, combine_fn, reverse=False):
    """Inclusive scans of `input` (a tile or a tuple of tiles of one shape)
    along `axis` with `combine_fn`, which must be associative; `reverse`
    scans from the end."""
    srcs = _operands(sem, input, "associative_scan")
    _, ax = sem.reduce_axis(srcs[0], axis, "associative_scan")
    out = sem.combine("scan", srcs, ax, _combine_fn(sem, combine_fn, "associative_scan"),
                      reverse=bool(reverse))
    return tuple(out) if isinstance(input, tuple) else out[0]


def _scan(sem, input, axis, reverse, dtype, kind):
    (x,) = _operands(sem, input, "cum" + kind)
    _, ax = sem.reduce_axis(x, axis, "cum" + kind)
    work = dtype if dtype is not None else sem.accumulator(x.dtype, kind)
    (out,) = sem.combine("scan", [sem.cast(x, work)], ax, sem.arith_combiner(kind, work),
                         reverse=bool(reverse))
    if dtype is None and work.is_float:
        out = sem.cast(out, x.dtype)
    return out


@builtin(method=True, dtypes="numeric")
def cumsum(sem, input, axis=0, reverse=False, dtype=None):
    """Inclusive prefix sums along `axis` (in `dtype` if given; else as
    wl.sum accumulates)."""
    return _scan(sem, input, axis, reverse, dtype, "sum")


@builtin(method=True, dtypes="numeric")
def cumprod(sem, input, axis=0, reverse=False, dtype=None):
    """Inclusive prefix products along `axis` (in `dtype` if given; else as
    wl.sum accumulates)."""
    return _scan(sem, input, axis, reverse, dtype, "prod")
