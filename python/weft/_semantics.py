"""The typed operations of the language, as weft IR text.

`Semantics` builds what `wl.*` calls and Python operators mean on `Value`s
(SSA names with a dtype and a shape, () for scalars): constants, casts and
promotion, broadcasting, arithmetic, compares, reductions, memory accesses
with their orders and scopes, signals and waits, multimem. It emits through
the generator it is mixed into (`CodeGenerator` in _codegen.py: `emit`,
`line`, `fresh`, `loc`, `error`), which owns the walk over the AST.
"""
import ast
import operator
import struct

from . import language as wl

ORDERS = ("weak", "relaxed", "acquire", "release", "acq_rel", "seq_cst")
SCOPES = ("cta", "gpu", "sys")
WAIT_CMPS = ("eq", "ne", "ge", "gt", "le", "lt")
SIGNAL_OPS = ("set", "add")
MULTIMEM_OPS = ("add", "min", "max")
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


def mlir_type(dtype, shape):
    if not shape:
        return dtype.mlir
    return "tensor<" + "x".join(map(str, shape)) + "x" + dtype.mlir + ">"


def is_ptr(dtype):
    return isinstance(dtype, wl.pointer_type)


def is_desc(dtype):
    return isinstance(dtype, wl.tensor_descriptor_type)


def float_literal(value, dtype):
    """A float constant as its bit pattern: exact, and valid for inf/nan."""
    if dtype.mlir == "f64":
        return "0x%016X" % struct.unpack("<Q", struct.pack("<d", value))[0]
    if dtype.mlir == "f16":
        return "0x%04X" % struct.unpack("<H", struct.pack("<e", value))[0]
    bits = struct.unpack("<I", struct.pack("<f", value))[0]
    if dtype.mlir == "bf16":  # round to nearest even
        bits = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
        return "0x%04X" % bits
    return "0x%08X" % bits


def py_dtype(value):
    if isinstance(value, bool):
        return wl.int1
    if isinstance(value, int):
        return wl.int32 if -2**31 <= value < 2**31 else wl.int64
    return wl.float32


class Method:
    __slots__ = ("value", "name")

    def __init__(self, value, name):
        self.value, self.name = value, name


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

    def as_bool(self, v):
        if isinstance(v, Value):
            return v if v.dtype is wl.int1 else self.compare(ast.NotEq(), v, 0)
        return bool(v)

    def constant(self, value, dtype):
        if is_ptr(dtype):
            raise self.error("a Python number cannot be a pointer")
        if dtype.is_float:
            text = float_literal(float(value), dtype)
        elif dtype is wl.int1:
            text = "true" if value else "false"
        else:
            if isinstance(value, float):
                value = int(value)
            value &= (1 << dtype.bits) - 1
            if value >= 1 << (dtype.bits - 1):
                value -= 1 << dtype.bits
            text = str(value)
        return self.emit(f"arith.constant {text} : {dtype.mlir}", dtype)

    def to(self, x, dtype):
        if not isinstance(dtype, (wl.dtype, wl.pointer_type)):
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
        if dtype is wl.int1:
            return self.compare(ast.NotEq(), x, 0)
        if src.is_float and dtype.is_float:
            if src.mlir == dtype.mlir:
                return x
            if src.bits == dtype.bits:  # f16 <-> bf16 through f32
                return self.cast(self.cast(x, wl.float32), dtype)
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
                return wl.float32
            return da
        db = b.dtype
        if da == db:
            return da
        if da.is_float or db.is_float:
            if da.is_float and db.is_float:
                if da.bits == db.bits or max(da.bits, db.bits) == 16:
                    return wl.float32 if da.bits == 16 else da
                return da if da.bits > db.bits else db
            return da if da.is_float else db
        if da is wl.int1 or db is wl.int1:
            return db if da is wl.int1 else da
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
        x, y, dtype = self.operands(a, b)
        kind = type(op)
        if kind is ast.Div and not dtype.is_float:
            dtype = wl.float32
            x, y = self.cast(x, dtype), self.cast(y, dtype)
        name = _ARITH.get((kind, dtype.kind if dtype.kind != "b" else "u"))
        if name is None:
            raise self.error(f"operator {kind.__name__} is not defined for {dtype!r}")
        return self.emit(f"arith.{name} {x.name}, {y.name} : {x.type}", dtype, x.shape)

    def addptr(self, ptr, off):
        if isinstance(off, Value):
            if not off.dtype.is_int or off.dtype is wl.int1:
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
                         wl.int1, x.shape)

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
                         f"{mlir_type(wl.int1, shape)}, {x.type}", dtype, shape)

    # --- wl.* -----------------------------------------------------------

    def _axis(self, axis):
        if axis not in (0, 1, 2):
            raise self.error("a grid axis is 0, 1 or 2")
        return "xyz"[axis]

    def wl_program_id(self, axis):
        return self.emit(f"weft.program_id {self._axis(axis)} : i32", wl.int32)

    def wl_num_programs(self, axis):
        return self.emit(f"weft.num_programs {self._axis(axis)} : i32", wl.int32)

    def wl_rank(self):
        return self.emit("weft.rank : i32", wl.int32)

    def wl_num_ranks(self):
        return self.emit("weft.num_ranks : i32", wl.int32)

    def wl_arange(self, start, end):
        if isinstance(start, Value) or isinstance(end, Value):
            raise self.error("wl.arange needs compile-time bounds")
        return self.emit(f"weft.make_range {start}, {end} : tensor<{end - start}xi32>",
                         wl.int32, (end - start,))

    def _shape(self, shape):
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        if not shape or any(isinstance(s, Value) or not isinstance(s, int) for s in shape):
            raise self.error("a tile shape is a tuple of compile-time ints")
        return shape

    def wl_full(self, shape, value, dtype):
        return self.materialize(value, dtype, self._shape(shape))

    def wl_zeros(self, shape, dtype):
        return self.wl_full(shape, 0, dtype)

    def wl_where(self, cond, a, b):
        return self.where(cond, a, b)

    def wl_cdiv(self, a, b):
        return self.binary(ast.FloorDiv(), self.binary(ast.Sub(), self.binary(
            ast.Add(), a, b), 1), b)

    def reduce(self, x, axis, kind):
        if not isinstance(x, Value) or not x.shape:
            raise self.error(f"wl.{kind} reduces a tile")
        if is_ptr(x.dtype):
            raise self.error(f"wl.{kind} of pointers")
        if axis is None:
            if len(x.shape) > 1:
                # One reduction of the flattened tile: the lowering cannot
                # reduce the sliced result of a first reduction.
                n = 1
                for d in x.shape:
                    n *= d
                x = self.emit(f"weft.reshape {x.name} : {x.type} -> "
                              f"{mlir_type(x.dtype, (n,))}", x.dtype, (n,))
            axis = 0
        if axis < 0:
            axis += len(x.shape)
        if not 0 <= axis < len(x.shape):
            raise self.error(f"axis {axis} is out of range for shape {x.shape}")
        dtype = x.dtype
        work = dtype
        if dtype.is_float and dtype.bits < 32:
            work = wl.float32  # accumulate half precision in f32
        elif kind == "sum" and dtype.is_int and dtype.bits < 32:
            work = dtype = wl.int32 if dtype.kind != "u" else wl.uint32
        x = self.cast(x, work)
        shape = x.shape[:axis] + x.shape[axis + 1:]
        k = "f" if work.is_float else ("u" if work.kind in "ub" else "i")
        combine = {"sum": {"f": "addf", "i": "addi", "u": "addi"},
                   "max": {"f": "maximumf", "i": "maxsi", "u": "maxui"},
                   "min": {"f": "minimumf", "i": "minsi", "u": "minui"}}[kind][k]
        res, a, b, c = self.fresh(), self.fresh(), self.fresh(), self.fresh()
        rty = mlir_type(work, shape)
        loc = self.loc()
        self.line(f"{res} = weft.reduce {x.name} axis = {axis} : {x.type} -> {rty} {{")
        self.line(f"^bb0({a}: {work.mlir}, {b}: {work.mlir}):")
        self.line(f"  {c} = arith.{combine} {a}, {b} : {work.mlir} {loc}")
        self.line(f"  weft.reduce.return {c} : {work.mlir} {loc}")
        self.line(f"}} {loc}")
        return self.cast(Value(res, work, shape), dtype)

    def wl_sum(self, x, axis=None):
        return self.reduce(x, axis, "sum")

    def wl_max(self, x, axis=None):
        return self.reduce(x, axis, "max")

    def wl_min(self, x, axis=None):
        return self.reduce(x, axis, "min")

    def wl_dot(self, a, b, acc=None, out_dtype=wl.float32):
        for name, x in (("a", a), ("b", b)):
            if not isinstance(x, Value) or len(x.shape) != 2:
                raise self.error(f"wl.dot: {name} must be a 2-D tile")
        if a.dtype != b.dtype or a.dtype not in (wl.float16, wl.bfloat16, wl.float32):
            raise self.error(f"wl.dot multiplies two float16, bfloat16 or float32 tiles "
                             f"of one dtype, not {a.dtype!r} and {b.dtype!r}")
        if a.shape[1] != b.shape[0]:
            raise self.error(f"wl.dot: a is {a.shape[0]}x{a.shape[1]} but b is "
                             f"{b.shape[0]}x{b.shape[1]}: their K differ")
        if out_dtype != wl.float32:
            raise self.error(f"wl.dot accumulates in float32, not {out_dtype!r}")
        shape = (a.shape[0], b.shape[1])
        if acc is None:
            acc = self.wl_zeros(shape, wl.float32)
        elif not isinstance(acc, Value) or acc.shape != shape:
            raise self.error(f"wl.dot: acc must be a {shape[0]}x{shape[1]} tile")
        acc = self.cast(acc, wl.float32)
        return self.emit(f"weft.dot {a.name}, {b.name}, {acc.name} : {a.type}, {b.type}, "
                         f"{acc.type} -> {acc.type}", wl.float32, shape)

    def _unary_math(self, op, x):
        if not isinstance(x, Value):
            x = self.constant(x, wl.float32)
        if is_ptr(x.dtype):
            raise self.error(f"math.{op} of a pointer")
        if not x.dtype.is_float:
            x = self.cast(x, wl.float32)
        return self.emit(f"math.{op} {x.name} : {x.type}", x.dtype, x.shape)

    def wl_exp(self, x):
        return self._unary_math("exp", x)

    def wl_log(self, x):
        return self._unary_math("log", x)

    def wl_sqrt(self, x):
        return self._unary_math("sqrt", x)

    def wl_rsqrt(self, x):
        return self._unary_math("rsqrt", x)

    def wl_abs(self, x):
        if not isinstance(x, Value):
            return abs(x)
        if x.dtype.is_float:
            return self.emit(f"math.absf {x.name} : {x.type}", x.dtype, x.shape)
        if x.dtype.kind in "ub":
            return x
        return self.emit(f"math.absi {x.name} : {x.type}", x.dtype, x.shape)

    def _minmax(self, a, b, kind):
        if not isinstance(a, Value) and not isinstance(b, Value):
            return max(a, b) if kind == "max" else min(a, b)
        x, y, dtype = self.operands(a, b)
        suffix = "f" if dtype.is_float else ("ui" if dtype.kind in "ub" else "si")
        name = ("maximum" if kind == "max" else "minimum") if dtype.is_float else kind
        return self.emit(f"arith.{name}{suffix} {x.name}, {y.name} : {x.type}",
                         dtype, x.shape)

    def wl_maximum(self, a, b):
        return self._minmax(a, b, "max")

    def wl_minimum(self, a, b):
        return self._minmax(a, b, "min")

    def _choice(self, what, value, allowed):
        if value not in allowed:
            raise self.error(f"unknown {what} {value!r} (expected one of "
                             f"{', '.join(allowed)})")
        return value

    def _ptr(self, ptr, op):
        if not isinstance(ptr, Value) or not is_ptr(ptr.dtype):
            raise self.error(f"wl.{op} needs a pointer or a tile of pointers")
        return ptr

    def _peer(self, ptr, peer):
        if peer is None:
            return ptr
        return self.wl_translate(ptr, peer)

    def _order(self, order, scope):
        self._choice("memory order", order, ORDERS)
        self._choice("scope", scope, SCOPES)
        return f"{order} {scope} "

    def wl_translate(self, ptr, peer):
        ptr = self._ptr(ptr, "translate")
        peer = self.materialize(peer, wl.int32)
        return self.emit(f"weft.translate {ptr.name}, {peer.name} : {ptr.type}",
                         ptr.dtype, ptr.shape)

    def _mask(self, mask):
        return None if mask is None else self.as_bool(mask) if isinstance(mask, Value) \
            else self.constant(bool(mask), wl.int1)

    def wl_load(self, ptr, mask=None, other=None, peer=None, order="weak", scope="sys"):
        ptr = self._ptr(ptr, "load")
        mask = self._mask(mask)
        shape = self.broadcast_shape(ptr.shape, getattr(mask, "shape", ()),
                                     getattr(other, "shape", ()))
        ptr = self._peer(self.broadcast_to(ptr, shape), peer)
        ordered = self._order(order, scope) if order != "weak" else ""
        text = f"weft.load {ordered}{ptr.name}"
        if mask is not None:
            text += f", mask {self.broadcast_to(mask, shape).name}"
        if other is not None:
            text += f", other {self.materialize(other, ptr.dtype.elem, shape).name}"
        return self.emit(f"{text} : {ptr.type}", ptr.dtype.elem, shape)

    def wl_store(self, ptr, value, mask=None, peer=None, order="weak", scope="sys"):
        ptr = self._ptr(ptr, "store")
        mask = self._mask(mask)
        shape = self.broadcast_shape(ptr.shape, getattr(value, "shape", ()),
                                     getattr(mask, "shape", ()))
        ptr = self._peer(self.broadcast_to(ptr, shape), peer)
        value = self.materialize(value, ptr.dtype.elem, shape)
        ordered = self._order(order, scope) if order != "weak" else ""
        text = f"weft.store {ordered}{ptr.name}, {value.name}"
        if mask is not None:
            text += f", mask {self.broadcast_to(mask, shape).name}"
        self.emit(f"{text} : {ptr.type}")

    # --- tensor descriptors ---------------------------------------------

    def desc_attribute(self, desc, attr):
        kind = desc.dtype
        if attr in ("load", "store"):
            return Method(desc, attr)
        if attr == "dtype":
            return kind.elem
        if attr == "block_shape":
            return kind.block_shape
        if attr == "shape":  # the tensor's, known at launch
            return tuple(self.emit(f"weft.desc_dim {desc.name}, {d} : {kind.mlir}", wl.int64)
                         for d in range(len(kind.block_shape)))
        raise self.error(f"a tensor descriptor has no attribute `{attr}` (load, store, "
                         "dtype, block_shape, shape)")

    def _desc_offsets(self, desc, offsets, op):
        rank = len(desc.dtype.block_shape)
        if not isinstance(offsets, (tuple, list)) or len(offsets) != rank:
            raise self.error(f"desc.{op} takes a list of {rank} offsets, one per dimension")
        values = []
        for offset in offsets:
            if isinstance(offset, Value) and (offset.shape or not offset.dtype.is_int):
                raise self.error(f"desc.{op}: offsets are integer scalars")
            values.append(self.materialize(offset, wl.int32).name)
        return ", ".join(values)

    def desc_load(self, desc, offsets):
        """The block at `offsets` (zeros outside the tensor)."""
        kind = desc.dtype
        offs = self._desc_offsets(desc, offsets, "load")
        return self.emit(f"weft.desc_load {desc.name}[{offs}] : {kind.mlir} -> "
                         f"{mlir_type(kind.elem, kind.block_shape)}", kind.elem, kind.block_shape)

    def desc_store(self, desc, offsets, value):
        """Writes the block at `offsets`, inside the tensor only."""
        kind = desc.dtype
        offs = self._desc_offsets(desc, offsets, "store")
        if isinstance(value, Value) and \
                self.broadcast_shape(value.shape, kind.block_shape) != kind.block_shape:
            raise self.error(f"desc.store: a {value.shape} tile is not a "
                             f"{kind.block_shape} block")
        value = self.materialize(value, kind.elem, kind.block_shape)
        self.emit(f"weft.desc_store {desc.name}[{offs}], {value.name} : {kind.mlir}, "
                  f"{value.type}")

    def _rmw(self, kind, ptr, value, mask, peer, order, scope):
        ptr = self._ptr(ptr, "atomic_" + kind)
        mask = self._mask(mask)
        shape = self.broadcast_shape(ptr.shape, getattr(value, "shape", ()),
                                     getattr(mask, "shape", ()))
        ptr = self._peer(self.broadcast_to(ptr, shape), peer)
        elem = ptr.dtype.elem
        value = self.materialize(value, elem, shape)
        if kind == "add" and elem.is_float:
            kind = "fadd"
        elif kind in ("max", "min") and elem.kind == "u":
            kind = "u" + kind
        text = f"weft.atomic_rmw {kind} {self._order(order, scope)}{ptr.name}, {value.name}"
        if mask is not None:
            text += f", mask {self.broadcast_to(mask, shape).name}"
        return self.emit(f"{text} : {ptr.type}", elem, shape)

    def wl_atomic_add(self, ptr, value, mask=None, peer=None, order="acq_rel", scope="gpu"):
        return self._rmw("add", ptr, value, mask, peer, order, scope)

    def wl_atomic_max(self, ptr, value, mask=None, peer=None, order="acq_rel", scope="gpu"):
        return self._rmw("max", ptr, value, mask, peer, order, scope)

    def wl_atomic_min(self, ptr, value, mask=None, peer=None, order="acq_rel", scope="gpu"):
        return self._rmw("min", ptr, value, mask, peer, order, scope)

    def wl_atomic_and_(self, ptr, value, mask=None, peer=None, order="acq_rel", scope="gpu"):
        return self._rmw("and", ptr, value, mask, peer, order, scope)

    def wl_atomic_or_(self, ptr, value, mask=None, peer=None, order="acq_rel", scope="gpu"):
        return self._rmw("or", ptr, value, mask, peer, order, scope)

    def wl_atomic_xor(self, ptr, value, mask=None, peer=None, order="acq_rel", scope="gpu"):
        return self._rmw("xor", ptr, value, mask, peer, order, scope)

    def wl_atomic_xchg(self, ptr, value, mask=None, peer=None, order="acq_rel", scope="gpu"):
        return self._rmw("xchg", ptr, value, mask, peer, order, scope)

    def wl_atomic_cas(self, ptr, cmp, value, peer=None, order="acq_rel", scope="gpu"):
        ptr = self._ptr(ptr, "atomic_cas")
        shape = self.broadcast_shape(ptr.shape, getattr(cmp, "shape", ()),
                                     getattr(value, "shape", ()))
        ptr = self._peer(self.broadcast_to(ptr, shape), peer)
        elem = ptr.dtype.elem
        cmp = self.materialize(cmp, elem, shape)
        value = self.materialize(value, elem, shape)
        return self.emit(f"weft.atomic_cas {self._order(order, scope)}{ptr.name}, "
                         f"{cmp.name}, {value.name} : {ptr.type}", elem, shape)

    def wl_fence(self, order="acq_rel", scope="sys"):
        self.emit("weft.fence " + self._order(order, scope).strip())

    def _flag(self, ptr, op):
        ptr = self._ptr(ptr, op)
        if ptr.shape:
            raise self.error(f"wl.{op} takes a scalar flag pointer, not a tile")
        return ptr

    def wl_signal(self, ptr, value, peer=None, op="set", order="release", scope="sys"):
        ptr = self._peer(self._flag(ptr, "signal"), peer)
        self._choice("signal op", op, SIGNAL_OPS)
        value = self.materialize(value, ptr.dtype.elem)
        self.emit(f"weft.signal {op} {self._order(order, scope)}{ptr.name}, "
                  f"{value.name} : {ptr.type}")

    def wl_wait(self, ptr, value, cmp="eq", order="acquire", scope="sys"):
        ptr = self._flag(ptr, "wait")
        self._choice("wait comparison", cmp, WAIT_CMPS)
        value = self.materialize(value, ptr.dtype.elem)
        return self.emit(f"weft.wait {cmp} {self._order(order, scope)}{ptr.name}, "
                         f"{value.name} : {ptr.type}", ptr.dtype.elem)

    def wl_barrier(self):
        self.emit("weft.barrier")

    def wl_multicast(self, ptr):
        ptr = self._flag(ptr, "multicast")
        return self.emit(f"weft.multicast {ptr.name} : {ptr.type}",
                         wl.pointer_type(ptr.dtype.elem, multicast=True))

    def _mptr(self, ptr, op):
        if not isinstance(ptr, Value) or not is_ptr(ptr.dtype) or \
                not ptr.dtype.multicast or ptr.shape:
            raise self.error(f"wl.{op} needs a scalar multicast pointer "
                             "(from wl.multicast)")
        return ptr

    def _multimem_kind(self, op, elem):
        self._choice("multimem op", op, MULTIMEM_OPS)
        return "u" + op if op != "add" and elem.kind == "u" else op

    def wl_multimem_ld_reduce(self, mptr, op="add", order="relaxed", scope="sys"):
        mptr = self._mptr(mptr, "multimem_ld_reduce")
        elem = mptr.dtype.elem
        kind = self._multimem_kind(op, elem)
        return self.emit(f"weft.multimem_ld_reduce {kind} {self._order(order, scope)}"
                         f"{mptr.name} : {mptr.type} -> {elem.mlir}", elem)

    def wl_multimem_store(self, mptr, value, order="relaxed", scope="sys"):
        mptr = self._mptr(mptr, "multimem_store")
        value = self.materialize(value, mptr.dtype.elem)
        self.emit(f"weft.multimem_store {self._order(order, scope)}{mptr.name}, "
                  f"{value.name} : {mptr.type}, {value.type}")

    def wl_multimem_red(self, mptr, value, op="add", order="relaxed", scope="sys"):
        mptr = self._mptr(mptr, "multimem_red")
        kind = self._multimem_kind(op, mptr.dtype.elem)
        value = self.materialize(value, mptr.dtype.elem)
        self.emit(f"weft.multimem_red {kind} {self._order(order, scope)}{mptr.name}, "
                  f"{value.name} : {mptr.type}, {value.type}")

    def wl_static_range(self, *args):
        raise self.error("wl.static_range is only meaningful as a for loop's iterable")
