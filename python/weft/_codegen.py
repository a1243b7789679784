"""AST -> weft tile IR text.

The generator walks a kernel's Python AST once per specialisation. Python
values (constexpr arguments, literals, dtypes, tuples) are folded while
walking; everything else is a `Value`: an SSA name with a dtype and a shape
(() for scalars), built by the language's operations (_semantics.py). Every op carries `loc("file":line:col)` of the Python
construct it comes from, so the verifiers' diagnostics map back to the
source (see _errors.from_diagnostics).
"""
import ast
import builtins
import json
import operator

from . import _types as ty
from ._builtins import METHODS, REGISTRY, Builtin, memory, shapes
from ._errors import CompilationError
from ._function import KernelFunction
from ._semantics import (PY_NUMBER, Method, Semantics, Value, is_desc, is_ptr, mlir_type,
                         py_dtype)


def builtin_of(fn):
    """The Builtin behind a `weft.language` name, or None."""
    return getattr(fn, "__weft_builtin__", None)


class _Return(Exception):
    """Carries the value of an inlined function's final `return`."""


class CodeGenerator(Semantics, ast.NodeVisitor):
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
        self.inlining = [fn]  # the functions being generated, outermost first
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
            if is_desc(dtype):
                attr = f" {{weft.shape_divisibility = array<i64: {', '.join(map(str, div))}>}}"
            else:
                attr = f" {{weft.divisibility = {div} : i32}}" if div else ""
            args.append(f"%{name}: {dtype.mlir}{attr}")
            self.scope[name] = Value("%" + name, dtype)
        attrs = "weft.kernel"
        if self.cluster != (1, 1, 1):
            attrs += f", weft.cluster = array<i32: {', '.join(map(str, self.cluster))}>"
        head = f"func.func @{self.name}({', '.join(args)}) attributes {{{attrs}}} {{"
        self.visit_block(self.lift_returns(tree.body))
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

    def lift_returns(self, stmts):
        """A kernel's statements with its early returns made structure: in
        `if c: A; return` followed by B, B moves into the else branch (so
        it may be emitted twice). Returns inside loops stay, and fail."""
        for i, stmt in enumerate(stmts):
            if isinstance(stmt, ast.Return):
                if stmt.value is not None:
                    raise self.error("a kernel returns nothing", stmt)
                return stmts[:i]  # what follows never runs
            if isinstance(stmt, ast.If) and any(
                    isinstance(n, ast.Return) for b in (stmt.body, stmt.orelse)
                    for s in b for n in ast.walk(s)):
                rest = stmts[i + 1:]
                lifted = ast.If(test=stmt.test, body=self.lift_returns(stmt.body + rest),
                                orelse=self.lift_returns(stmt.orelse + rest))
                return stmts[:i] + [ast.copy_location(lifted, stmt)]
        return stmts

    def visit_Return(self, node):
        raise self.error("`return` inside a loop is not supported; in a kernel it may end "
                         "any branch, in a @weft.jit function only the function")

    def visit_Assert(self, node):
        test = self.visit(node.test)
        if isinstance(test, Value):
            raise self.error("assert needs a compile-time condition")
        if not test:
            message = self.visit(node.msg) if node.msg else "assertion failed"
            raise self.error(f"static assertion failed: {message}")

    def visit_Break(self, node):
        raise self.error("`break` is not supported in kernels")

    def visit_Continue(self, node):
        raise self.error("`continue` is not supported in kernels; put the rest of the "
                         "loop body under an `if`")

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
            elif isinstance(value, PY_NUMBER):
                out[name] = (py_dtype(value), ())
        return out

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
        loop_attrs = ""
        fn = self.visit(it.func) if isinstance(it, ast.Call) else None
        if builtin_of(fn) is REGISTRY["static_range"]:
            static = True
        elif builtin_of(fn) is REGISTRY["range"]:
            arg_nodes, loop_attrs = self.range_arguments(it)
        elif fn is not range:
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
        if builtin_of(fn) is not REGISTRY["range"]:
            if it.keywords:
                raise self.error("range() takes positional arguments")
            arg_nodes = it.args
        bounds = [self.visit(a) for a in arg_nodes]
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
            any(not isinstance(b, Value) and py_dtype(b) is ty.int64 for b in bounds)
        ity = ty.int64 if wide else ty.int32
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
                      f" : {tys} {self.loc()}")
        self.line(f"}}{loop_attrs} {self.loc()}")
        self.scope.update(results)

    def range_arguments(self, call):
        """The bounds of `wl.range(...)` (AST nodes) and its loop attributes
        (num_stages, prefetch, warp_specialize)."""
        try:
            bound = REGISTRY["range"].signature.bind(*call.args, **{
                k.arg: k.value for k in call.keywords})
        except TypeError as e:
            raise self.error(f"wl.range: {e}") from None
        args = bound.arguments
        nodes = [args[k] for k in ("arg1", "arg2", "step") if args.get(k) is not None]
        if "step" in args and "arg2" not in args:
            raise self.error("wl.range: a step needs both bounds")
        attrs = []
        if args.get("num_stages") is not None:
            stages = self.visit(args["num_stages"])
            if isinstance(stages, bool) or not isinstance(stages, int) or stages < 1:
                raise self.error(f"wl.range: num_stages is a positive compile-time int, "
                                 f"not {stages!r}")
            attrs.append(f"weft.num_stages = {stages} : i32")
        for hint in ("prefetch", "warp_specialize"):
            if args.get(hint) is None:
                continue
            value = self.visit(args[hint])
            if not isinstance(value, bool):
                raise self.error(f"wl.range: {hint} is a compile-time bool, not {value!r}")
            if value:
                attrs.append(f"weft.{hint}")
        return nodes, f" {{{', '.join(attrs)}}}" if attrs else ""

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
            if value.dtype is not ty.int1:
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
                if not isinstance(a, PY_NUMBER) or not isinstance(b, PY_NUMBER):
                    raise self.error(f"`{name}` gets different compile-time "
                                     "values in the branches of a run-time if")
            ref = a if isinstance(a, Value) else b if isinstance(b, Value) else None
            ty = (ref.dtype, ref.shape) if ref else (py_dtype(a if isinstance(a, float) else b), ())
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
            self.line("  scf.yield " + ", ".join(v.name for v in yields[0]) +
                      f" : {tys} {self.loc()}")
        if else_lines or names:
            self.line("} else {")
            self.lines.extend(else_lines)
            if names:
                self.line("  scf.yield " + ", ".join(v.name for v in yields[1]) +
                          f" : {tys} {self.loc()}")
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
        self.line(f"  scf.condition({cond.name})" + (f" {passed} : {tys}" if names else "") +
                  f" {self.loc()}")
        self.line("} do {")
        self.line("^bb0(" + ", ".join(f"{body_args[n].name}: {mlir_type(*types[n])}"
                                     for n in names) + "):")
        self.lines.extend(lines)
        self.line("  scf.yield" + (" " + ", ".join(v.name for v in values) +
                                   f" : {tys}" if names else "") + f" {self.loc()}")
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
        if isinstance(value, ty.constexpr):
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
        if isinstance(base, Value) and is_desc(base.dtype):
            found = memory.desc_attribute(self, base, node.attr)
            return Method(base, found) if callable(found) else found
        if isinstance(base, Value):
            if node.attr == "dtype":
                return base.dtype
            if node.attr == "shape":
                return base.shape
            if node.attr == "T":
                return REGISTRY["trans"].call(self, [base], {})
            if node.attr in METHODS:
                return Method(base, METHODS[node.attr])
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
        taken = sum(1 for i in items if not (isinstance(i, ast.Constant) and i.value is None))
        if taken > len(base.shape):
            raise self.error(f"{taken} indices for a tile of rank {len(base.shape)}")
        result, axis = base, 0
        for item in items:
            if isinstance(item, ast.Constant) and item.value is None:
                result = self.expand_dims(result, axis)
                axis += 1
            elif isinstance(item, ast.Slice):
                if item.lower or item.upper or item.step:
                    raise self.error("tiles are sliced with `:` only; mask a load instead")
                axis += 1
            else:  # a compile-time int takes the dimension away
                result = shapes.index(self, result, axis, self.visit(item))
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
        if x.dtype.is_float or is_ptr(x.dtype):
            raise self.error("~ needs an integer")
        return self.binary(ast.BitXor(), x, -1 if x.dtype is not ty.int1 else True)

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
        if isinstance(fn, Method):
            if isinstance(fn.fn, Builtin):
                return fn.fn.call(self, [fn.value] + args, kwargs)
            try:
                return fn.fn(self, fn.value, *args, **kwargs)
            except TypeError as e:
                raise self.error(f"{fn.fn.__name__.replace('_', '.', 1)}: {e}") from None
        found = builtin_of(fn)
        if found is not None:
            return found.call(self, args, kwargs)
        if isinstance(fn, KernelFunction):
            return self.inline(fn, args, kwargs)
        if fn in (min, max) and any(isinstance(a, Value) for a in args):
            if len(args) != 2 or kwargs:
                raise self.error(f"{fn.__name__}() of values takes two arguments")
            return self.minmax(*args, "min" if fn is min else "max")
        if fn is abs and args and isinstance(args[0], Value):
            return REGISTRY["abs"].call(self, args, kwargs)
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
        if fn in self.inlining:
            raise self.error(f"{fn.__name__}() calls itself: kernels cannot recurse "
                             "(functions are inlined)")
        self.inlining.append(fn)
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
            self.inlining.pop()
            self.scope, self.globals, self.filename, self.line_offset = saved


_MISSING = object()

_PY_UNARY = {ast.UAdd: operator.pos, ast.USub: operator.neg,
             ast.Not: operator.not_, ast.Invert: operator.invert}
_PY_FOLDABLE = {min, max, abs, int, float, bool, len, range, isinstance}
