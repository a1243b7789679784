"""A Python function as the code generator sees it: its AST, where its
source is, its signature and which parameters are compile-time. Kernels
(@weft.jit, _jit.py) and the functions they inline are both; this module
knows nothing of compiling, so the code generator and the language's own
Weft-written helpers can use it without importing the launch path."""
import ast
import inspect
import textwrap

from . import _types as ty
from ._errors import CompilationError


def _is_constexpr(annotation):
    return annotation is ty.constexpr or (
        isinstance(annotation, str) and annotation.split(".")[-1] == "constexpr")


class KernelFunction:
    def __init__(self, fn):
        self.fn = fn
        self.__name__ = fn.__name__
        self.__doc__ = fn.__doc__
        lines, start = inspect.getsourcelines(fn)
        tree = ast.parse(textwrap.dedent("".join(lines)))
        self.tree = tree.body[0]
        if not isinstance(self.tree, ast.FunctionDef):
            raise CompilationError("@weft.jit decorates a function")
        self.filename = inspect.getsourcefile(fn) or "<unknown>"
        self.line_offset = start - 1
        self.signature = inspect.signature(fn)
        self.arg_names = list(self.signature.parameters)
        self.constexprs = {name for name, p in self.signature.parameters.items()
                           if _is_constexpr(p.annotation)}
        self.defaults = {name: p.default for name, p in self.signature.parameters.items()
                         if p.default is not inspect.Parameter.empty}

    def __repr__(self):
        return f"<weft.jit {self.__name__}>"

    def __call__(self, *args, **kwargs):
        raise RuntimeError(f"launch a kernel with {self.__name__}[grid](...); "
                           "called from another kernel, it is inlined")
