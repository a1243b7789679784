"""Shapes: reshaping, broadcasting, permuting, joining and splitting tiles.
Element order is row-major throughout, as in numpy."""
import ast

from .._semantics import Value, check_shape, is_ptr, mlir_type
from . import builtin


def _tile(sem, x, op):
    if not isinstance(x, Value) or not x.shape:
        raise sem.error(f"wl.{op} needs a tile, not {x!r}")
    return x


def _dims(args):
    """`f(x, 2, 3)` and `f(x, (2, 3))` alike."""
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        return tuple(args[0])
    return tuple(args)


def _axis(sem, axis, rank, op):
    if isinstance(axis, Value) or isinstance(axis, bool) or not isinstance(axis, int):
        raise sem.error(f"wl.{op}: an axis is a compile-time int, not {axis!r}")
    if not -rank <= axis < rank:
        raise sem.error(f"wl.{op}: axis {axis} is out of range for rank {rank}")
    return axis % rank


def numel(shape):
    n = 1
    for d in shape:
        n *= d
    return n


@builtin(method=True)
def reshape(sem, input, *shape, can_reorder=False):
    """`input`'s elements in row-major order as a tile of `shape` (the same
    number of elements); `can_reorder` is accepted and changes nothing."""
    x = _tile(sem, input, "reshape")
    shape = check_shape(sem, _dims(shape))
    if numel(shape) != numel(x.shape):
        raise sem.error(f"wl.reshape: {x.shape} has {numel(x.shape)} elements, "
                        f"{shape} has {numel(shape)}")
    if shape == x.shape:
        return x
    return sem.emit(f"weft.reshape {x.name} : {x.type} -> {mlir_type(x.dtype, shape)}",
                    x.dtype, shape)


@builtin(method=True)
def view(sem, input, *shape):
    """wl.reshape (Weft keeps the order, which Triton's view need not)."""
    return reshape(sem, input, *shape)


@builtin(method=True)
def ravel(sem, input):
    """`input` as a 1-D tile in row-major order."""
    x = _tile(sem, input, "ravel")
    return reshape(sem, x, numel(x.shape))


@builtin(method=True)
def broadcast_to(sem, input, *shape):
    """`input` broadcast to `shape` (numpy's rules)."""
    shape = check_shape(sem, _dims(shape))
    x = sem.value(input)
    if sem.broadcast_shape(x.shape, shape) != shape:
        raise sem.error(f"wl.broadcast_to: {x.shape} does not broadcast to {shape}")
    return sem.broadcast_to(x, shape)


@builtin()
def broadcast(sem, input, other):
    """`input` and `other` broadcast to their common shape."""
    shape = sem.broadcast_shape(getattr(input, "shape", ()), getattr(other, "shape", ()))
    return tuple(sem.broadcast_to(v, shape) if isinstance(v, Value) else v
                 for v in (input, other))


@builtin(method=True)
def expand_dims(sem, input, axis):
    """`input` with a new dimension of 1 at `axis` (or at each of several
    axes, numbered in the result)."""
    x = sem.value(input)
    axes = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
    rank = len(x.shape) + len(axes)
    axes = sorted(_axis(sem, a, rank, "expand_dims") for a in axes)
    if len(set(axes)) != len(axes):
        raise sem.error("wl.expand_dims: an axis is given twice")
    for a in axes:
        x = sem.expand_dims(x, a)
    return x


@builtin(method=True)
def permute(sem, input, *dims):
    """`input` with its dimensions reordered: result dimension i is input
    dimension dims[i]."""
    x = _tile(sem, input, "permute")
    order = _dims(dims)
    if sorted(order) != list(range(len(x.shape))):
        raise sem.error(f"wl.permute: {order} is not a permutation of the "
                        f"{len(x.shape)} dimensions of {x.shape}")
    if order == tuple(range(len(x.shape))):
        return x
    shape = tuple(x.shape[d] for d in order)
    return sem.emit(f"weft.trans {x.name}, [{', '.join(map(str, order))}] : {x.type} -> "
                    f"{mlir_type(x.dtype, shape)}", x.dtype, shape)


@builtin(method=True)
def trans(sem, input, *dims):
    """wl.permute; without dims, the dimensions reversed (`x.T` of a 2-D
    tile is its transpose)."""
    x = _tile(sem, input, "trans")
    order = _dims(dims) or tuple(reversed(range(len(x.shape))))
    return permute(sem, x, order)


@builtin()
def join(sem, a, b):
    """`a` and `b` (broadcast to one shape and dtype) as one tile with a
    new last dimension of 2: [..., 0] is a, [..., 1] is b."""
    if not isinstance(a, Value) and not isinstance(b, Value):
        raise sem.error("wl.join needs at least one run-time value")
    x, y, dtype = sem.operands(a, b)
    shape = check_shape(sem, x.shape + (2,))
    return sem.emit(f"weft.join {x.name}, {y.name} : {x.type} -> "
                    f"{mlir_type(dtype, shape)}", dtype, shape)


@builtin(method=True)
def split(sem, a):
    """The two halves of `a` along its last dimension, which is 2: the
    (lhs, rhs) that wl.join took."""
    x = _tile(sem, a, "split")
    if x.shape[-1] != 2:
        raise sem.error(f"wl.split: the last dimension of {x.shape} is not 2")
    if len(x.shape) == 1:  # two scalars: through a 1x2 tile
        x = sem.expand_dims(x, 0)
    shape = x.shape[:-1]
    res = sem.fresh()
    sem.line(f"{res}:2 = weft.split {x.name} : {x.type} -> {mlir_type(x.dtype, shape)} "
             f"{sem.loc()}")
    halves = (Value(f"{res}#0", x.dtype, shape), Value(f"{res}#1", x.dtype, shape))
    if a.shape == (2,):
        return tuple(sem.reduce(h, 0, "sum", keep_type=True) for h in halves)
    return halves


@builtin()
def interleave(sem, a, b):
    """The elements of `a` and `b` alternating along the last dimension
    (which doubles)."""
    joined = join(sem, a, b)
    shape = joined.shape[:-2] + (joined.shape[-2] * 2,)
    return reshape(sem, joined, shape)


@builtin(method=True)
def flip(sem, x, dim=None):
    """`x` reversed along `dim` (the last dimension when None)."""
    x = _tile(sem, x, "flip")
    axis = len(x.shape) - 1 if dim is None else _axis(sem, dim, len(x.shape), "flip")
    if x.shape[axis] == 1:
        return x
    return sem.emit(f"weft.flip {x.name} axis = {axis} : {x.type}", x.dtype, x.shape)


def index(sem, x, axis, k):
    """`x[..., k, ...]` for a compile-time `k` along `axis`: the tile less
    that dimension (a scalar from a 1-D tile). Elements are not addressable
    in registers, so it selects `k` and reduces the axis away."""
    n = x.shape[axis]
    if isinstance(k, bool) or not isinstance(k, int):
        raise sem.error(f"a tile is indexed with compile-time ints, `:` and None, not {k!r}")
    if not -n <= k < n:
        raise sem.error(f"index {k} is out of range for dimension {axis} of {x.shape}")
    if is_ptr(x.dtype):
        raise sem.error("indexing a tile of pointers; offset the base pointer instead")
    k %= n
    picked = sem.where(sem.compare(ast.Eq(), sem.positions(x.shape, axis), k), x, 0)
    return sem.reduce(picked, axis, "sum", keep_type=True)
