"""The type rules of the language and the IR they emit.

`Semantics` is what Python operators and the builtins (_builtins/) share on
`Value`s (SSA names with a dtype and a shape, () for scalars): constants,
casts and promotion, broadcasting, arithmetic, compares, selection,
reductions, dot. It emits through the generator it is mixed into
(`CodeGenerator` in _codegen.py: `emit`, `line`, `fresh`, `loc`,
`error`), which owns the walk over the AST.
"""
import ast
import operator

import numpy as np

from . import _floats
from . import _types as ty

PY_NUMBER = (bool, int, float)


class Value:
    __slots__ = ("name", "dtype", "shape")

    def __init__(self, name, dtype, shape=()):
        self.name = name
        self.dtype = dtype   # wl.dtype or wl.pointer_type
        self.shape = tuple(shape)

    @property
    def type(self):
        return mlir_type(self.dtype, self.shape)

    def __repr__(self):  # how error messages name it
        if self.shape:
            return f"a {self.dtype!r} tile of shape {self.shape}"
        return f"a run-time {self.dtype!r}"


def mlir_type(dtype, shape):
    if not shape:
        return dtype.mlir
    return "tensor<" + "x".join(map(str, shape)) + "x" + dtype.mlir + ">"


def is_ptr(dtype):
    return isinstance(dtype, ty.pointer_type)


def is_desc(dtype):
    return isinstance(dtype, ty.tensor_descriptor_type)


def float_literal(value, dtype):
    """A float constant as its bit pattern: exact, valid for inf/nan, and
    rounded as the compiler converts (bfloat16 and float8 by _floats; out
    of range is inf, or float8's saturation)."""
    if _floats.is_raw(dtype):
        bits = int(_floats.to_bits(value, dtype))
    else:
        with np.errstate(over="ignore"):
            bits = int(np.array(value, dtype.numpy).view(f"u{dtype.bits // 8}"))
    return "0x%0*X" % (dtype.bits // 4, bits)


def py_dtype(value):
    if isinstance(value, bool):
        return ty.int1
    if isinstance(value, int):
        return ty.int32 if -2**31 <= value < 2**31 else ty.int64
    return ty.float32


class Method:
    """`value.name` of a tile or descriptor, before the call: `fn` is a
    builtin (_builtins.Builtin) or a function of (sem, value, *args)."""

    __slots__ = ("value", "fn")

    def __init__(self, value, fn):
        self.value, self.fn = value, fn


# Triton's rule for tile shapes; the limit on a tile's elements is the
# dialect's kMaxTileElements (2^16: Triton's 2^20 takes minutes to compile).
MAX_TILE_ELEMENTS = 1 << 16


def check_shape(sem, shape):
    """`shape` (an int or a sequence of them) as a tuple, once it is known
    to follow the rule for tiles: compile-time ints, each a power of two,
    at most MAX_TILE_ELEMENTS elements in all. The dialect checks the same
    (weft.make_range, weft.splat, ...), so MLIR input obeys it too."""
    dims = (shape,) if isinstance(shape, int) else shape
    if not isinstance(dims, (tuple, list)) or not dims:
        raise sem.error(f"a tile shape is an int or a tuple of ints, not {shape!r}")
    numel = 1
    for d in dims:
        if isinstance(d, Value) or isinstance(d, bool) or not isinstance(d, int):
            raise sem.error(f"tile dimensions are compile-time ints, not {d!r} "
                            f"(in shape {shape!r})")
        if d < 1 or d & (d - 1):
            raise sem.error(f"tile dimensions must be powers of two, and {d} is not "
                            f"(in shape {tuple(dims)}); mask a power-of-two tile instead")
        numel *= d
    if numel > MAX_TILE_ELEMENTS:
        raise sem.error(f"a tile of shape {tuple(dims)} has {numel} elements, more than "
                        f"the {MAX_TILE_ELEMENTS} a tile may have")
    return tuple(dims)


PY_BINARY = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
    ast.Div: operator.truediv, ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod,
    ast.Pow: operator.pow, ast.LShift: operator.lshift, ast.RShift: operator.rshift,
    ast.BitAnd: operator.and_, ast.BitOr: operator.or_, ast.BitXor: operator.xor,
    ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt,
    ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge,
    ast.Is: operator.is_, ast.IsNot: operator.is_not,
    ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b,
}

# (operator, kind) -> arith op; kind "f" float, "i" signed, "u" unsigned/bool.
_ARITH = {}
for _k in "iu":
    _ARITH.update({(ast.Add, _k): "addi", (ast.Sub, _k): "subi", (ast.Mult, _k): "muli",
                   (ast.BitAnd, _k): "andi", (ast.BitOr, _k): "ori",
                   (ast.BitXor, _k): "xori", (ast.LShift, _k): "shli"})
_ARITH.update({(ast.FloorDiv, "i"): "divsi", (ast.FloorDiv, "u"): "divui",
               (ast.Mod, "i"): "remsi", (ast.Mod, "u"): "remui",
               (ast.RShift, "i"): "shrsi", (ast.RShift, "u"): "shrui",
               (ast.Add, "f"): "addf", (ast.Sub, "f"): "subf", (ast.Mult, "f"): "mulf",
               (ast.Div, "f"): "divf", (ast.Mod, "f"): "remf"})
_CMPI = {ast.Lt: "slt", ast.LtE: "sle", ast.Gt: "sgt", ast.GtE: "sge",
         ast.Eq: "eq", ast.NotEq: "ne"}
_CMPF = {ast.Lt: "olt", ast.LtE: "ole", ast.Gt: "ogt", ast.GtE: "oge",
         ast.Eq: "oeq", ast.NotEq: "une"}


class Semantics:
    """Mixed into CodeGenerator: the ops, on top of its emission."""

    # --- values, casts, broadcasting -----------------------------------

    def materialize(self, value, dtype, shape=()):
        if isinstance(value, Value):
            return self.broadcast_to(self.cast(value, dtype), shape)
        return self.broadcast_to(self.constant(value, dtype), shape)

    def value(self, v):
        """`v` as a Value: a Python number becomes a constant of its
        literal type (py_dtype: bool, int32 or int64, float32)."""
        return v if isinstance(v, Value) else self.constant(v, py_dtype(v))

    def as_bool(self, v):
        if isinstance(v, Value):
            return v if v.dtype is ty.int1 else self.compare(ast.NotEq(), v, 0)
        return bool(v)

    def constant(self, value, dtype):
        if is_ptr(dtype):
            raise self.error("a Python number cannot be a pointer")
        if dtype.is_float:
            text = float_literal(float(value), dtype)
        elif dtype is ty.int1:  # a bool attribute has its type
            return self.emit(f"arith.constant {'true' if value else 'false'}", dtype)
        else:
            if isinstance(value, float):
                value = int(value)
            value &= (1 << dtype.bits) - 1
            if value >= 1 << (dtype.bits - 1):
                value -= 1 << dtype.bits
            text = str(value)
        return self.emit(f"arith.constant {text} : {dtype.mlir}", dtype)

    def to(self, x, dtype):
        if not isinstance(dtype, (ty.dtype, ty.pointer_type)):
            raise self.error(f"{dtype!r} is not a dtype")
        if not isinstance(x, Value):
            return self.constant(x, dtype)
        return self.cast(x, dtype)

    def cast(self, x, dtype):
        src = x.dtype
        if src == dtype:
            return x
        if is_ptr(src) or is_ptr(dtype):
            raise self.error(f"cannot convert {src!r} to {dtype!r}")
        t_in, t_out = x.type, mlir_type(dtype, x.shape)
        if (src.is_fp8 or dtype.is_fp8) and not (src.is_float and dtype.is_float):
            # float8 is a storage type: to and from integers through float32
            return self.cast(self.cast(x, ty.float32), dtype)
        if dtype is ty.int1:
            return self.compare(ast.NotEq(), x, 0)
        if src.is_float and dtype.is_float:
            if src.mlir == dtype.mlir:
                return x
            if src.bits == dtype.bits:  # f16 <-> bf16 through f32
                return self.cast(self.cast(x, ty.float32), dtype)
            op = "arith.extf" if dtype.bits > src.bits else "arith.truncf"
        elif src.is_float:
            op = "arith.fptoui" if dtype.kind == "u" else "arith.fptosi"
        elif dtype.is_float:
            op = "arith.uitofp" if src.kind in "ub" else "arith.sitofp"
        elif dtype.bits == src.bits:
            return Value(x.name, dtype, x.shape)  # signedness only
        elif dtype.bits > src.bits:
            op = "arith.extui" if src.kind in "ub" else "arith.extsi"
        else:
            op = "arith.trunci"
        return self.emit(f"{op} {x.name} : {t_in} to {t_out}", dtype, x.shape)

    def expand_dims(self, x, axis):
        shape = list(x.shape)
        if axis > len(shape):
            raise self.error("None past the tile's rank")
        shape.insert(axis, 1)
        return self.emit(f"weft.expand_dims {x.name} axis = {axis} : {x.type} -> "
                         f"{mlir_type(x.dtype, shape)}", x.dtype, shape)

    def broadcast_shape(self, *shapes):
        out = ()
        for shape in shapes:
            if len(shape) > len(out):
                out = (1,) * (len(shape) - len(out)) + out
            shape = (1,) * (len(out) - len(shape)) + tuple(shape)
            merged = []
            for a, b in zip(out, shape):
                if a != b and 1 not in (a, b):
                    raise self.error(f"shapes {out} and {shape} do not broadcast")
                merged.append(max(a, b))
            out = tuple(merged)
        return out

    def broadcast_to(self, x, shape):
        shape = tuple(shape)
        if x.shape == shape:
            return x
        if not x.shape:
            return self.emit(f"weft.splat {x.name} : {x.type} -> "
                             f"{mlir_type(x.dtype, shape)}", x.dtype, shape)
        while len(x.shape) < len(shape):
            x = self.expand_dims(x, 0)
        if x.shape == shape:
            return x
        return self.emit(f"weft.broadcast {x.name} : {x.type} -> "
                         f"{mlir_type(x.dtype, shape)}", x.dtype, shape)

    def promote(self, a, b):
        """The common dtype of two operands (Python numbers adopt the
        other's kind, as in Triton)."""
        if not isinstance(a, Value):
            a, b = b, a
        da = a.dtype
        if not isinstance(b, Value):
            if isinstance(b, float) and not isinstance(b, bool) and not da.is_float:
                return ty.float32
            return da
        db = b.dtype
        if da == db:
            return da
        if da.is_float or db.is_float:
            if da.is_float and db.is_float:
                if da.bits == db.bits or max(da.bits, db.bits) == 16:
                    return ty.float32 if da.bits == 16 else da
                return da if da.bits > db.bits else db
            return da if da.is_float else db
        if da is ty.int1 or db is ty.int1:
            return db if da is ty.int1 else da
        if da.bits != db.bits:
            return da if da.bits > db.bits else db
        return da if da.kind == "u" else db

    def operands(self, a, b):
        dtype = self.promote(a, b)
        shape = self.broadcast_shape(getattr(a, "shape", ()), getattr(b, "shape", ()))
        return self.materialize(a, dtype, shape), self.materialize(b, dtype, shape), dtype

    def binary(self, op, a, b):
        if not isinstance(a, Value) and not isinstance(b, Value):
            try:
                return PY_BINARY[type(op)](a, b)
            except KeyError:
                raise self.error(f"unsupported operator {type(op).__name__}") from None
        for x, y in ((a, b), (b, a)):
            if isinstance(x, Value) and is_ptr(x.dtype):
                if isinstance(op, ast.Add) or (isinstance(op, ast.Sub) and x is a):
                    off = y if isinstance(op, ast.Add) else self.binary(ast.Sub(), 0, y)
                    return self.addptr(x, off)
                raise self.error("pointers support + and - of an integer only")
        if isinstance(op, ast.Pow):
            return self.power(a, b)
        x, y, dtype = self.operands(a, b)
        kind = type(op)
        if kind is ast.Div and not dtype.is_float:
            dtype = ty.float32
            x, y = self.cast(x, dtype), self.cast(y, dtype)
        if kind is ast.Mod and dtype.is_float and dtype.bits < 32:
            # fmod is exact, so through f32 it is the same; gfx942 has no
            # bf16 frem.
            wide = self.binary(op, self.cast(x, ty.float32), self.cast(y, ty.float32))
            return self.cast(wide, dtype)
        name = _ARITH.get((kind, dtype.kind if dtype.kind != "b" else "u"))
        if name is None:
            raise self.error(f"operator {kind.__name__} is not defined for {dtype!r}")
        return self.emit(f"arith.{name} {x.name}, {y.name} : {x.type}", dtype, x.shape)

    def power(self, a, b):
        """a ** b: by multiplications for a compile-time integral exponent
        (of integers or floats), math.powf of floats otherwise."""
        if isinstance(a, Value) and isinstance(b, PY_NUMBER) and not isinstance(b, bool) \
                and float(b).is_integer() and abs(b) <= 64:
            n = int(b)
            if n < 0 and not a.dtype.is_float:
                raise self.error("an integer to a negative power")
            result, square, k = None, a, abs(n)
            while k:
                if k & 1:
                    result = square if result is None else self.binary(ast.Mult(), result, square)
                k >>= 1
                if k:
                    square = self.binary(ast.Mult(), square, square)
            if result is None:
                result = self.materialize(1, a.dtype, a.shape)
            return self.binary(ast.Div(), 1.0, result) if n < 0 else result
        x, y, dtype = self.operands(a, b)
        if not dtype.is_float:
            raise self.error("** of integers needs a compile-time integer exponent")
        return self.emit(f"math.powf {x.name}, {y.name} : {x.type}", dtype, x.shape)

    def addptr(self, ptr, off):
        if isinstance(off, Value):
            if not off.dtype.is_int or off.dtype is ty.int1:
                raise self.error("a pointer offset must be an integer")
        else:
            if not isinstance(off, int):
                raise self.error("a pointer offset must be an integer")
            off = self.constant(off, py_dtype(off))
        shape = self.broadcast_shape(ptr.shape, off.shape)
        ptr, off = self.broadcast_to(ptr, shape), self.broadcast_to(off, shape)
        return self.emit(f"weft.addptr {ptr.name}, {off.name} : {ptr.type}, {off.type}",
                         ptr.dtype, shape)

    def compare(self, op, a, b):
        if not isinstance(a, Value) and not isinstance(b, Value):
            return PY_BINARY[type(op)](a, b)
        x, y, dtype = self.operands(a, b)
        if is_ptr(dtype):
            raise self.error("pointers cannot be compared")
        if dtype.is_float:
            pred = _CMPF[type(op)]
            opname = "arith.cmpf"
        else:
            pred = _CMPI[type(op)]
            if dtype.kind in "ub" and pred[0] == "s":
                pred = "u" + pred[1:]
            opname = "arith.cmpi"
        return self.emit(f"{opname} {pred}, {x.name}, {y.name} : {x.type}",
                         ty.int1, x.shape)

    def where(self, cond, a, b):
        cond = self.as_bool(cond)
        if not isinstance(cond, Value):
            return a if cond else b
        dtype = self.promote(a, b) if isinstance(a, Value) or isinstance(b, Value) \
            else py_dtype(a if isinstance(a, float) else b)
        shape = self.broadcast_shape(cond.shape, getattr(a, "shape", ()),
                                     getattr(b, "shape", ()))
        c = self.broadcast_to(cond, shape)
        x, y = self.materialize(a, dtype, shape), self.materialize(b, dtype, shape)
        return self.emit(f"arith.select {c.name}, {x.name}, {y.name} : "
                         f"{mlir_type(ty.int1, shape)}, {x.type}", dtype, shape)

    # --- shared by several builtins ----------------------------------

    def positions(self, shape, axis):
        """Each element's index along `axis` of a tile of `shape`, as an
        int32 tile of `shape`'s rank (1 along the other dimensions: it
        broadcasts)."""
        n = shape[axis]
        pos = self.emit(f"weft.make_range 0, {n} : tensor<{n}xi32>", ty.int32, (n,))
        for _ in range(axis):
            pos = self.expand_dims(pos, 0)
        while len(pos.shape) < len(shape):
            pos = self.expand_dims(pos, len(pos.shape))
        return pos

    def reduce_axis(self, x, axis, op):
        """(x, axis) with axis None resolved: one reduction of the
        flattened tile (the lowering cannot reduce the sliced result of a
        first reduction) and negative axes counted from the end."""
        if not isinstance(x, Value) or not x.shape:
            raise self.error(f"wl.{op} needs a tile, not {x!r}")
        if is_ptr(x.dtype):
            raise self.error(f"wl.{op} of pointers")
        if axis is None:
            if len(x.shape) > 1:
                n = 1
                for d in x.shape:
                    n *= d
                x = self.emit(f"weft.reshape {x.name} : {x.type} -> "
                              f"{mlir_type(x.dtype, (n,))}", x.dtype, (n,))
            return x, 0
        if isinstance(axis, bool) or not isinstance(axis, int):
            raise self.error(f"wl.{op}: the axis is a compile-time int or None, not {axis!r}")
        if not -len(x.shape) <= axis < len(x.shape):
            raise self.error(f"wl.{op}: axis {axis} is out of range for shape {x.shape}")
        return x, axis % len(x.shape)

    def keep_dims(self, result, shape, axis):
        """A reduction's result with the reduced axis back as a 1 (every
        axis of `shape` for axis None)."""
        if axis is None or not result.shape:
            return self.broadcast_to(result, (1,) * len(shape) if axis is None else
                                     shape[:axis % len(shape)] + (1,))
        return self.expand_dims(result, axis % len(shape))

    def combine(self, op, srcs, axis, body, reverse=False):
        """`weft.reduce` or `weft.scan` (op) of the tiles `srcs` (one shape)
        along `axis`, combining with `body(firsts, seconds)`, which emits
        the combination of two elements of each operand (scalar Values of
        the operands' dtypes) and returns one value per operand."""
        dtypes = [s.dtype for s in srcs]
        shape = srcs[0].shape
        rshape = shape[:axis] + shape[axis + 1:] if op == "reduce" else shape
        loc = self.loc()
        res = self.fresh()
        firsts = [Value(self.fresh(), d) for d in dtypes]
        seconds = [Value(self.fresh(), d) for d in dtypes]
        multi = len(srcs) > 1
        self.line(f"{res}{':%d' % len(srcs) if multi else ''} = weft.{op} "
                  f"{', '.join(s.name for s in srcs)} axis = {axis}"
                  f"{' reverse' if reverse else ''} : {', '.join(s.type for s in srcs)} -> "
                  f"{', '.join(mlir_type(d, rshape) for d in dtypes)} {{")
        self.line("^bb0(" + ", ".join(f"{v.name}: {v.dtype.mlir}"
                                      for v in firsts + seconds) + "):")
        self.indent += 2
        try:
            out = body(firsts, seconds)
            if len(out) != len(srcs):
                raise self.error(f"the combine function returns {len(out)} values for "
                                 f"{len(srcs)} operands")
            out = [self.materialize(v, d) for v, d in zip(out, dtypes)]
            for v in out:
                if v.shape:
                    raise self.error("the combine function returns a tile; it combines "
                                     "scalars")
            self.line(f"weft.{op}.return {', '.join(v.name for v in out)} : "
                      f"{', '.join(d.mlir for d in dtypes)} {loc}")
        finally:
            self.indent -= 2
        self.line(f"}} {loc}")
        return [Value(res + (f"#{i}" if multi else ""), d, rshape)
                for i, d in enumerate(dtypes)]

    def accumulator(self, dtype, kind):
        """The dtype a sum or product of `dtype` is computed in: half
        precision in float32, integers narrower than 32 bits in (u)int32."""
        if dtype.is_fp8:
            raise self.error(f"{dtype!r} is a storage type: convert it before reducing")
        if dtype.is_float and dtype.bits < 32:
            return ty.float32
        if kind in ("sum", "prod") and dtype.is_int and dtype.bits < 32:
            return ty.uint32 if dtype.kind == "u" else ty.int32
        return dtype

    def arith_combiner(self, kind, dtype):
        """The body of a reduction or scan by `kind` (sum, prod, max, min,
        xor_sum) on scalars of `dtype`."""
        k = "f" if dtype.is_float else ("u" if dtype.kind in "ub" else "i")
        name = {"sum": {"f": "addf", "i": "addi", "u": "addi"},
                "prod": {"f": "mulf", "i": "muli", "u": "muli"},
                "max": {"f": "maximumf", "i": "maxsi", "u": "maxui"},
                "min": {"f": "minimumf", "i": "minsi", "u": "minui"},
                "xor_sum": {"i": "xori", "u": "xori"}}[kind].get(k)
        if name is None:
            raise self.error(f"wl.{kind} is not defined for {dtype!r}")
        return lambda a, b: [self.emit(f"arith.{name} {a[0].name}, {b[0].name} : "
                                       f"{dtype.mlir}", dtype)]

    def reduce(self, x, axis, kind, keep_dims=False, keep_type=False):
        """The reduction of `x` by `kind` along `axis` (None: all of it);
        sums and products of narrow types accumulate wider
        (`accumulator`), and the result stays wider for integer sums unless
        `keep_type`."""
        shape = getattr(x, "shape", ())
        flat, ax = self.reduce_axis(x, axis, kind)
        dtype = x.dtype
        work = self.accumulator(dtype, kind)
        (res,) = self.combine("reduce", [self.cast(flat, work)], ax,
                              self.arith_combiner(kind, work))
        if not (work.is_int and kind in ("sum", "prod")) or keep_type:
            res = self.cast(res, dtype)
        return self.keep_dims(res, shape, axis) if keep_dims else res

    def dot(self, a, b, acc, out_dtype):
        for name, x in (("a", a), ("b", b)):
            if not isinstance(x, Value) or len(x.shape) != 2:
                raise self.error(f"wl.dot: {name} must be a 2-D tile")
        if a.dtype != b.dtype or a.dtype not in (ty.float16, ty.bfloat16, ty.float32):
            raise self.error(f"wl.dot multiplies two float16, bfloat16 or float32 tiles "
                             f"of one dtype, not {a.dtype!r} and {b.dtype!r}")
        if a.shape[1] != b.shape[0]:
            raise self.error(f"wl.dot: a is {a.shape[0]}x{a.shape[1]} but b is "
                             f"{b.shape[0]}x{b.shape[1]}: their K differ")
        if out_dtype != ty.float32:
            raise self.error(f"wl.dot accumulates in float32, not {out_dtype!r}")
        shape = (a.shape[0], b.shape[1])
        if acc is None:
            acc = self.materialize(0, ty.float32, shape)
        elif not isinstance(acc, Value) or acc.shape != shape:
            raise self.error(f"wl.dot: acc must be a {shape[0]}x{shape[1]} tile")
        acc = self.cast(acc, ty.float32)
        return self.emit(f"weft.dot {a.name}, {b.name}, {acc.name} : {a.type}, {b.type}, "
                         f"{acc.type} -> {acc.type}", ty.float32, shape)

    def minmax(self, a, b, kind):
        if not isinstance(a, Value) and not isinstance(b, Value):
            return max(a, b) if kind == "max" else min(a, b)
        x, y, dtype = self.operands(a, b)
        suffix = "f" if dtype.is_float else ("ui" if dtype.kind in "ub" else "si")
        name = ("maximum" if kind == "max" else "minimum") if dtype.is_float else kind
        return self.emit(f"arith.{name}{suffix} {x.name}, {y.name} : {x.type}",
                         dtype, x.shape)
