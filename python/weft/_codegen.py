"""AST -> weft tile IR text.

The generator walks a kernel's Python AST once per specialisation. Python
values (constexpr arguments, literals, dtypes, tuples) are folded while
walking; everything else is a `Value`: an SSA name with a dtype and a shape
(() for scalars). Every op carries `loc("file":line:col)` of the Python
construct it comes from, so the verifiers' diagnostics map back to the
source (see _errors.from_diagnostics).
"""
import ast
import builtins
import json
import operator
import struct

from . import language as wl
from ._errors import CompilationError

ORDERS = ("weak", "relaxed", "acquire", "release", "acq_rel", "seq_cst")
SCOPES = ("cta", "gpu", "sys")
WAIT_CMPS = ("eq", "ne", "ge", "gt", "le", "lt")
SIGNAL_OPS = ("set", "add")
MULTIMEM_OPS = ("add", "min", "max")

_LANGUAGE_FUNCS = {id(getattr(wl, n)): n for n in wl._BUILTINS}
_PY_NUMBER = (bool, int, float)


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


def _is_ptr(dtype):
    return isinstance(dtype, wl.pointer_type)


def _is_desc(dtype):
    return isinstance(dtype, wl.tensor_descriptor_type)


def _float_literal(value, dtype):
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


def _py_dtype(value):
    if isinstance(value, bool):
        return wl.int1
    if isinstance(value, int):
        return wl.int32 if -2**31 <= value < 2**31 else wl.int64
    return wl.float32


class _Return(Exception):
    """Carries the value of an inlined function's final `return`."""


class CodeGenerator(ast.NodeVisitor):
    def __init__(self, fn, params, debug_name=None, cluster=(1, 1, 1)):
        """fn: a JITFunction; params: [(name, ("arg", dtype, divisibility) |
        ("constexpr", value))]; a tensor descriptor's divisibility is its
        extents' (one per dimension); cluster: the kernel's cluster shape
        (weft.cluster)."""
        self.fn = fn
        self.params = params
        self.cluster = cluster
        self.name = debug_name or fn.__name__
        self.lines = []
        self.indent = 4
        self.counter = 0
        self.files = set()
        self.node = None
        self.scope = {}
        self.globals = fn.fn.__globals__
        self.filename = fn.filename
        self.line_offset = fn.line_offset

    # --- emission -------------------------------------------------------

    def fresh(self):
        self.counter += 1
        return f"%{self.counter}"

    def loc(self):
        node = self.node
        line = getattr(node, "lineno", 1) + self.line_offset
        col = getattr(node, "col_offset", 0) + 1
        self.files.add(self.filename)
        return f"loc({json.dumps(self.filename)}:{line}:{col})"

    def line(self, text):
        self.lines.append(" " * self.indent + text)

    def emit(self, rhs, dtype=None, shape=()):
        if dtype is None:
            self.line(f"{rhs} {self.loc()}")
            return None
        name = self.fresh()
        self.line(f"{name} = {rhs} {self.loc()}")
        return Value(name, dtype, shape)

    def error(self, message, node=None):
        node = node or self.node
        line = getattr(node, "lineno", None)
        return CompilationError(message, self.filename,
                                line + self.line_offset if line else None)

    # --- driver ---------------------------------------------------------

    def generate(self):
        tree = self.fn.tree
        self.node = tree
        args = []
        for name, spec in self.params:
            if spec[0] == "constexpr":
                self.scope[name] = spec[1]
                continue
            _, dtype, div = spec
            if _is_desc(dtype):
                attr = f" {{weft.shape_divisibility = array<i64: {', '.join(map(str, div))}>}}"
            else:
                attr = f" {{weft.divisibility = {div} : i32}}" if div else ""
            args.append(f"%{name}: {dtype.mlir}{attr}")
            self.scope[name] = Value("%" + name, dtype)
        attrs = "weft.kernel"
        if self.cluster != (1, 1, 1):
            attrs += f", weft.cluster = array<i32: {', '.join(map(str, self.cluster))}>"
        head = f"func.func @{self.name}({', '.join(args)}) attributes {{{attrs}}} {{"
        body = tree.body
        if body and isinstance(body[-1], ast.Return):
            if body[-1].value is not None:
                raise self.error("a kernel returns nothing", body[-1])
            body = body[:-1]
        self.visit_block(body)
        self.node = tree
        self.line(f"return {self.loc()}")
        return "module {\n  " + head + "\n" + "\n".join(self.lines) + \
            f"\n  }} {self.loc()}\n}}\n"

    def visit_block(self, stmts):
        for stmt in stmts:
            self.visit(stmt)

    def visit(self, node):
        saved = self.node
        self.node = node
        try:
            return super().visit(node)
        finally:
            self.node = saved

    def generic_visit(self, node):
        what = type(node).__name__
        raise self.error(f"unsupported Python construct in a kernel: {what}")

    # --- statements -----------------------------------------------------

    def visit_Expr(self, node):
        if isinstance(node.value, ast.Constant):  # docstrings, `...`
            return
        self.visit(node.value)

    def visit_Pass(self, node):
        pass

    def visit_Assign(self, node):
        value = self.visit(node.value)
        for target in node.targets:
            self.assign(target, value)

    def visit_AnnAssign(self, node):
        if node.value is None:
            raise self.error("an annotation without a value declares nothing")
        self.assign(node.target, self.visit(node.value))

    def visit_AugAssign(self, node):
        if not isinstance(node.target, ast.Name):
            raise self.error("augmented assignment to anything but a name")
        current = self.lookup(node.target.id, node.target)
        self.assign(node.target, self.binary(node.op, current,
                                             self.visit(node.value)))

    def assign(self, target, value):
        if isinstance(target, ast.Name):
            self.scope[target.id] = value
        elif isinstance(target, (ast.Tuple, ast.List)):
            if not isinstance(value, tuple) or len(value) != len(target.elts):
                raise self.error("cannot unpack this value into "
                                 f"{len(target.elts)} names")
            for t, v in zip(target.elts, value):
                self.assign(t, v)
        else:
            raise self.error("assignment to "
                             f"{type(target).__name__} is not supported "
                             "(kernels write memory with wl.store)")

    def visit_Return(self, node):
        raise self.error("`return` is only supported as the last statement "
                         "of a function")

    def visit_Assert(self, node):
        test = self.visit(node.test)
        if isinstance(test, Value):
            raise self.error("assert needs a compile-time condition")
        if not test:
            message = self.visit(node.msg) if node.msg else "assertion failed"
            raise self.error(f"static assertion failed: {message}")

    def visit_Break(self, node):
        raise self.error("`break` is not supported in kernels")

    visit_Continue = visit_Break

    # --- control flow ---------------------------------------------------

    @staticmethod
    def assigned_names(stmts):
        names = []
        for stmt in stmts:
            for sub in ast.walk(stmt):
                if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store) \
                        and sub.id not in names:
                    names.append(sub.id)
        return names

    def carried(self, stmts, exclude=()):
        """The names a loop body reassigns that live before the loop: a
        loop-carried value each. Python numbers become i32/i64/f32/i1."""
        out = {}
        for name in self.assigned_names(stmts):
            if name in exclude or name not in self.scope:
                continue
            value = self.scope[name]
            if isinstance(value, Value):
                out[name] = (value.dtype, value.shape)
            elif isinstance(value, _PY_NUMBER):
                out[name] = (_py_dtype(value), ())
        return out

    def materialize(self, value, dtype, shape=()):
        if isinstance(value, Value):
            return self.broadcast_to(self.cast(value, dtype), shape)
        return self.broadcast_to(self.constant(value, dtype), shape)

    def run_region(self, stmts, bind, yield_names, types, after=None):
        """Emits `stmts` into a new list of lines with `bind` added to the
        scope; returns (lines, yielded values or the first mismatching
        name). Names defined in the region stay local to it."""
        saved_lines, saved_scope = self.lines, self.scope
        self.lines, self.scope = [], dict(saved_scope)
        self.indent += 2
        try:
            self.scope.update(bind)
            self.visit_block(stmts)
            if after:
                after()
            values = []
            for name in yield_names:
                value = self.scope[name]
                dtype, shape = types[name]
                if isinstance(value, Value) and \
                        (value.dtype != dtype or value.shape != shape):
                    return None, (name, value)
                values.append(self.materialize(value, dtype, shape))
            return self.lines, values
        finally:
            self.indent -= 2
            self.lines, self.scope = saved_lines, saved_scope

    def loop_types(self, stmts, exclude, build):
        """Runs build(types) until the body keeps every carried type; a name
        that started as a Python number takes the type the body gives it."""
        types = self.carried(stmts, exclude)
        for _ in range(len(types) + 1):
            result = build(types)
            if result[0] is not None:
                return types, result
            name, value = result[1]
            if isinstance(self.scope[name], Value):
                raise self.error(
                    f"loop-carried `{name}` is {types[name][0]!r} of shape "
                    f"{types[name][1]} before the loop and {value.dtype!r} of "
                    f"shape {value.shape} in its body; convert it explicitly")
            types[name] = (value.dtype, value.shape)
        raise self.error("loop-carried types do not settle")

    def visit_For(self, node):
        if node.orelse:
            raise self.error("for ... else is not supported")
        if not isinstance(node.target, ast.Name):
            raise self.error("the loop variable must be a single name")
        it = node.iter
        static = False
        if isinstance(it, ast.Call):
            fn = self.visit(it.func)
            if fn is wl.static_range:
                static = True
            elif fn is not range:
                fn = None
        else:
            fn = None
        if fn is None:
            seq = self.visit(it)
            if isinstance(seq, (tuple, list)):
                for item in seq:
                    self.scope[node.target.id] = item
                    self.visit_block(node.body)
                return
            raise self.error("kernels loop over range(...), wl.static_range(...) "
                             "or a compile-time tuple")
        if it.keywords:
            raise self.error("range() takes positional arguments")
        bounds = [self.visit(a) for a in it.args]
        if not 1 <= len(bounds) <= 3:
            raise self.error("range() takes 1 to 3 arguments")
        if len(bounds) == 1:
            bounds = [0] + bounds
        if len(bounds) == 2:
            bounds.append(1)
        if static:
            if any(isinstance(b, Value) for b in bounds):
                raise self.error("wl.static_range needs compile-time bounds")
            for i in range(*bounds):
                self.scope[node.target.id] = i
                self.visit_block(node.body)
            return
        step = bounds[2]
        if not isinstance(step, Value) and step <= 0:
            raise self.error("range() in a kernel needs a positive step")
        wide = any(isinstance(b, Value) and b.dtype.bits == 64 for b in bounds) or \
            any(not isinstance(b, Value) and _py_dtype(b) is wl.int64 for b in bounds)
        ity = wl.int64 if wide else wl.int32
        lb, ub, st = (self.materialize(b, ity) for b in bounds)
        var = node.target.id
        iv = self.fresh()

        def build(types):
            names = list(types)
            args = {n: Value(self.fresh(), *types[n]) for n in names}
            bind = dict(args)
            bind[var] = Value(iv, ity)
            lines, values = self.run_region(node.body, bind, names, types)
            return (lines, values, args) if lines is not None else (None, values)

        types, (lines, values, args) = self.loop_types(node.body, (var,), build)
        names = list(types)
        inits = [self.materialize(self.scope[n], *types[n]) for n in names]
        head = f"scf.for {iv} = {lb.name} to {ub.name} step {st.name}"
        if names:
            tys = ", ".join(mlir_type(*types[n]) for n in names)
            head += " iter_args(" + ", ".join(
                f"{args[n].name} = {v.name}" for n, v in zip(names, inits)) + \
                f") -> ({tys})"
        head += f" : {ity.mlir} {{"
        results = self.region_op(head, names, types)
        self.lines.extend(lines)
        if names:
            self.line("  scf.yield " + ", ".join(v.name for v in values) +
                      f" : {tys}")
        self.line(f"}} {self.loc()}")
        self.scope.update(results)

    def region_op(self, head, names, types):
        """Writes `%r:N = head` and returns the values %r#i for `names`."""
        if not names:
            self.line(head)
            return {}
        res = self.fresh()
        suffix = f":{len(names)}" if len(names) > 1 else ""
        self.line(f"{res}{suffix} = {head}")
        return {n: Value(res + (f"#{i}" if len(names) > 1 else ""), *types[n])
                for i, n in enumerate(names)}

    def condition(self, value):
        if isinstance(value, Value):
            if value.shape:
                raise self.error("a condition must be a scalar, not a tile")
            if value.dtype is not wl.int1:
                value = self.compare(ast.NotEq(), value, 0)
        return value

    def visit_If(self, node):
        cond = self.condition(self.visit(node.test))
        if not isinstance(cond, Value):
            self.visit_block(node.body if cond else node.orelse)
            return
        before = self.scope
        branches = []
        for stmts in (node.body, node.orelse):
            saved_lines, saved_scope = self.lines, self.scope
            self.lines, self.scope = [], dict(before)
            self.indent += 2
            try:
                self.visit_block(stmts)
                branches.append((self.lines, self.scope))
            finally:
                self.indent -= 2
                self.lines, self.scope = saved_lines, saved_scope
        (then_lines, then_scope), (else_lines, else_scope) = branches
        names, types = [], {}
        for name in then_scope:
            a, b = then_scope[name], else_scope.get(name, _MISSING)
            if b is _MISSING or (a is before.get(name) and b is before.get(name)):
                continue
            if not isinstance(a, Value) and not isinstance(b, Value):
                if type(a) is type(b) and a == b:
                    self.scope[name] = a
                    continue
                if not isinstance(a, _PY_NUMBER) or not isinstance(b, _PY_NUMBER):
                    raise self.error(f"`{name}` gets different compile-time "
                                     "values in the branches of a run-time if")
            ref = a if isinstance(a, Value) else b if isinstance(b, Value) else None
            ty = (ref.dtype, ref.shape) if ref else (_py_dtype(a if isinstance(a, float) else b), ())
            for v in (a, b):
                if isinstance(v, Value) and (v.dtype != ty[0] or v.shape != ty[1]):
                    raise self.error(f"`{name}` has different types in the two "
                                     "branches of the if; convert it explicitly")
            names.append(name)
            types[name] = ty
        yields = []
        for lines, scope in ((then_lines, then_scope), (else_lines, else_scope)):
            saved = self.lines
            self.lines = lines
            self.indent += 2
            try:
                yields.append([self.materialize(scope[n], *types[n]) for n in names])
            finally:
                self.indent -= 2
                self.lines = saved
        tys = ", ".join(mlir_type(*types[n]) for n in names)
        head = f"scf.if {cond.name}" + (f" -> ({tys})" if names else "") + " {"
        results = self.region_op(head, names, types)
        self.lines.extend(then_lines)
        if names:
            self.line("  scf.yield " + ", ".join(v.name for v in yields[0]) + f" : {tys}")
        if else_lines or names:
            self.line("} else {")
            self.lines.extend(else_lines)
            if names:
                self.line("  scf.yield " + ", ".join(v.name for v in yields[1]) + f" : {tys}")
        self.line(f"}} {self.loc()}")
        self.scope.update(results)

    def visit_While(self, node):
        if node.orelse:
            raise self.error("while ... else is not supported")

        def build(types):
            names = list(types)
            cond_args = {n: Value(self.fresh(), *types[n]) for n in names}
            body_args = {n: Value(self.fresh(), *types[n]) for n in names}
            cond_box = []

            def test():
                cond_box.append(self.condition(self.visit(node.test)))
            cond_lines, _ = self.run_region([], cond_args, [], types, after=test)
            cond = cond_box[0]
            if not isinstance(cond, Value):
                raise self.error("a while loop needs a run-time condition")
            lines, values = self.run_region(node.body, body_args, names, types)
            if lines is None:
                return None, values
            return lines, values, cond_lines, cond, cond_args, body_args

        types, (lines, values, cond_lines, cond, cond_args, body_args) = \
            self.loop_types(node.body, (), build)
        names = list(types)
        inits = [self.materialize(self.scope[n], *types[n]) for n in names]
        tys = ", ".join(mlir_type(*types[n]) for n in names)
        head = "scf.while (" + ", ".join(
            f"{cond_args[n].name} = {v.name}" for n, v in zip(names, inits)) + \
            f") : ({tys}) -> ({tys}) {{"
        results = self.region_op(head, names, types)
        self.lines.extend(cond_lines)
        passed = ", ".join(cond_args[n].name for n in names)
        self.line(f"  scf.condition({cond.name})" + (f" {passed} : {tys}" if names else ""))
        self.line("} do {")
        self.line("^bb0(" + ", ".join(f"{body_args[n].name}: {mlir_type(*types[n])}"
                                     for n in names) + "):")
        self.lines.extend(lines)
        self.line("  scf.yield" + (" " + ", ".join(v.name for v in values) +
                                   f" : {tys}" if names else ""))
        self.line(f"}} {self.loc()}")
        self.scope.update(results)

    # --- expressions ----------------------------------------------------

    def lookup(self, name, node=None):
        if name in self.scope:
            return self.scope[name]
        if name in self.globals:
            value = self.globals[name]
        elif hasattr(builtins, name):
            value = getattr(builtins, name)
        else:
            raise self.error(f"name `{name}` is not defined", node)
        if isinstance(value, wl.constexpr):
            value = value.value
        return value

    def visit_Name(self, node):
        return self.lookup(node.id, node)

    def visit_Constant(self, node):
        return node.value

    def visit_Tuple(self, node):
        return tuple(self.visit(e) for e in node.elts)

    visit_List = visit_Tuple

    def visit_Attribute(self, node):
        base = self.visit(node.value)
        if isinstance(base, Value) and _is_desc(base.dtype):
            return self.desc_attribute(base, node.attr)
        if isinstance(base, Value):
            if node.attr == "dtype":
                return base.dtype
            if node.attr == "shape":
                return base.shape
            if node.attr == "to":
                return _Method(base, "to")
            raise self.error(f"a tile value has no attribute `{node.attr}`")
        try:
            return getattr(base, node.attr)
        except AttributeError:
            raise self.error(f"`{ast.unparse(node)}` does not exist") from None

    def visit_Subscript(self, node):
        base = self.visit(node.value)
        index = node.slice
        if not isinstance(base, Value):
            return base[self.visit(index)]
        items = index.elts if isinstance(index, ast.Tuple) else [index]
        result, axis = base, 0
        for item in items:
            if isinstance(item, ast.Constant) and item.value is None:
                result = self.expand_dims(result, axis)
            elif isinstance(item, ast.Slice) and not (item.lower or item.upper or item.step):
                pass
            else:
                raise self.error("tiles are indexed with `:` and `None` only "
                                 "(x[:, None]); use pointers to address elements")
            axis += 1
        if axis - sum(1 for i in items if isinstance(i, ast.Constant)) > len(base.shape):
            raise self.error("too many `:` for the tile's rank")
        return result

    def visit_BinOp(self, node):
        return self.binary(node.op, self.visit(node.left), self.visit(node.right))

    def visit_UnaryOp(self, node):
        x = self.visit(node.operand)
        if not isinstance(x, Value):
            return _PY_UNARY[type(node.op)](x)
        if isinstance(node.op, ast.UAdd):
            return x
        if isinstance(node.op, ast.USub):
            return self.binary(ast.Sub(), 0, x) if not x.dtype.is_float else \
                self.emit(f"arith.negf {x.name} : {x.type}", x.dtype, x.shape)
        if isinstance(node.op, ast.Not):
            return self.compare(ast.Eq(), x, 0)
        if x.dtype.is_float or _is_ptr(x.dtype):
            raise self.error("~ needs an integer")
        return self.binary(ast.BitXor(), x, -1 if x.dtype is not wl.int1 else True)

    def visit_BoolOp(self, node):
        values = [self.visit(v) for v in node.values]
        if not any(isinstance(v, Value) for v in values):
            result = values[0]
            for v in values[1:]:
                result = (result and v) if isinstance(node.op, ast.And) else (result or v)
            return result
        op = ast.BitAnd() if isinstance(node.op, ast.And) else ast.BitOr()
        result = self.as_bool(values[0])
        for v in values[1:]:
            result = self.binary(op, result, self.as_bool(v))
        return result

    def as_bool(self, v):
        if isinstance(v, Value):
            return v if v.dtype is wl.int1 else self.compare(ast.NotEq(), v, 0)
        return bool(v)

    def visit_Compare(self, node):
        if len(node.ops) != 1:
            raise self.error("chained comparisons are not supported; use `and`")
        return self.compare(node.ops[0], self.visit(node.left),
                            self.visit(node.comparators[0]))

    def visit_IfExp(self, node):
        cond = self.visit(node.test)
        if not isinstance(cond, Value):
            return self.visit(node.body if cond else node.orelse)
        return self.where(self.as_bool(cond), self.visit(node.body),
                          self.visit(node.orelse))

    def visit_Call(self, node):
        fn = self.visit(node.func)
        args = [self.visit(a) for a in node.args if not isinstance(a, ast.Starred)]
        if len(args) != len(node.args):
            raise self.error("*args are not supported in kernels")
        kwargs = {k.arg: self.visit(k.value) for k in node.keywords}
        if None in kwargs:
            raise self.error("**kwargs are not supported in kernels")
        if isinstance(fn, _Method):
            if fn.name in ("load", "store"):
                try:
                    return getattr(self, "desc_" + fn.name)(fn.value, *args, **kwargs)
                except TypeError as e:
                    raise self.error(f"desc.{fn.name}: {e}") from None
            if node.keywords or len(args) != 1:
                raise self.error("x.to(dtype) takes one dtype")
            return self.to(fn.value, args[0])
        name = _LANGUAGE_FUNCS.get(id(fn))
        if name is not None:
            impl = getattr(self, "wl_" + name)
            try:
                return impl(*args, **kwargs)
            except TypeError as e:
                raise self.error(f"wl.{name}: {e}") from None
        from ._jit import JITFunction
        if isinstance(fn, JITFunction):
            return self.inline(fn, args, kwargs)
        if fn in (min, max) and any(isinstance(a, Value) for a in args):
            if len(args) != 2 or kwargs:
                raise self.error(f"{fn.__name__}() of values takes two arguments")
            return self.wl_minimum(*args) if fn is min else self.wl_maximum(*args)
        if fn is abs and args and isinstance(args[0], Value):
            return self.wl_abs(args[0])
        if fn in _PY_FOLDABLE and not any(isinstance(a, Value) for a in args):
            return fn(*args, **kwargs)
        what = getattr(fn, "__name__", type(fn).__name__)
        raise self.error(f"calling `{what}` is not supported in a kernel")

    def inline(self, fn, args, kwargs):
        """Calls another @weft.jit function by generating its body in place."""
        params = list(fn.signature.parameters)
        bound = dict(zip(params, args))
        bound.update(kwargs)
        for name, value in fn.defaults.items():
            bound.setdefault(name, value)
        missing = [p for p in params if p not in bound]
        if missing or len(args) > len(params) or len(bound) != len(params):
            raise self.error(f"{fn.__name__}() got the wrong arguments")
        saved = (self.scope, self.globals, self.filename, self.line_offset)
        self.scope, self.globals = bound, fn.fn.__globals__
        self.filename, self.line_offset = fn.filename, fn.line_offset
        try:
            body = fn.tree.body
            result = None
            if body and isinstance(body[-1], ast.Return):
                self.visit_block(body[:-1])
                if body[-1].value is not None:
                    result = self.visit(body[-1].value)
            else:
                self.visit_block(body)
            return result
        finally:
            self.scope, self.globals, self.filename, self.line_offset = saved

    # --- values, casts, broadcasting -----------------------------------

    def constant(self, value, dtype):
        if _is_ptr(dtype):
            raise self.error("a Python number cannot be a pointer")
        if dtype.is_float:
            text = _float_literal(float(value), dtype)
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
        if _is_ptr(src) or _is_ptr(dtype):
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
                return _PY_BINARY[type(op)](a, b)
            except KeyError:
                raise self.error(f"unsupported operator {type(op).__name__}") from None
        for x, y in ((a, b), (b, a)):
            if isinstance(x, Value) and _is_ptr(x.dtype):
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
            off = self.constant(off, _py_dtype(off))
        shape = self.broadcast_shape(ptr.shape, off.shape)
        ptr, off = self.broadcast_to(ptr, shape), self.broadcast_to(off, shape)
        return self.emit(f"weft.addptr {ptr.name}, {off.name} : {ptr.type}, {off.type}",
                         ptr.dtype, shape)

    def compare(self, op, a, b):
        if not isinstance(a, Value) and not isinstance(b, Value):
            return _PY_BINARY[type(op)](a, b)
        x, y, dtype = self.operands(a, b)
        if _is_ptr(dtype):
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
            else _py_dtype(a if isinstance(a, float) else b)
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
        if _is_ptr(x.dtype):
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
        if _is_ptr(x.dtype):
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
        if not isinstance(ptr, Value) or not _is_ptr(ptr.dtype):
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
            return _Method(desc, attr)
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
        if not isinstance(ptr, Value) or not _is_ptr(ptr.dtype) or \
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


class _Method:
    __slots__ = ("value", "name")

    def __init__(self, value, name):
        self.value, self.name = value, name


_MISSING = object()

_PY_BINARY = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
    ast.Div: operator.truediv, ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod,
    ast.Pow: operator.pow, ast.LShift: operator.lshift, ast.RShift: operator.rshift,
    ast.BitAnd: operator.and_, ast.BitOr: operator.or_, ast.BitXor: operator.xor,
    ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt,
    ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge,
    ast.Is: operator.is_, ast.IsNot: operator.is_not,
    ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b,
}
_PY_UNARY = {ast.UAdd: operator.pos, ast.USub: operator.neg,
             ast.Not: operator.not_, ast.Invert: operator.invert}
_PY_FOLDABLE = {min, max, abs, int, float, bool, len, range, isinstance}

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
