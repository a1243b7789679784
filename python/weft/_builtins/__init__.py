"""Every builtin of the language, defined once.

A builtin is a function whose first parameter is the code generator
(`sem`, with the emission primitives and type rules of _semantics.py) and
whose other parameters are the builtin's own, with their defaults; the
first line of its docstring says what it does. From that one definition
`weft.language` makes the stub kernels call (same signature and doc,
callable only inside a kernel), docs/python.md's language table is
generated (`python3 -m weft language-table`), and the code generator binds
a call's arguments with the signature and calls the definition.

The definitions live by area: core.py (programs, creation, casts, hints,
compile-time helpers), shapes.py (reshaping, permuting, joining),
reductions.py (reductions and scans), math.py (element-wise math,
`wl.math`), memory.py (loads, stores, atomics, signals, multimem),
debug.py (printing, assertions, inline assembly), random.py (Philox,
written in Weft).
"""
import inspect

ALL_TARGETS = "host, cuda, hip"


class Builtin:
    """One builtin: `qualname` is how kernels spell it after `wl.`
    ("sum", "math.tanh"); `method` the tile method it is also (`x.sum()`);
    `dtypes` and `targets` what the language table says about it."""

    __slots__ = ("name", "qualname", "impl", "signature", "doc", "method", "dtypes",
                 "targets")

    def __init__(self, impl, name, namespace, method, dtypes, targets):
        signature = inspect.signature(impl)
        self.signature = signature.replace(
            parameters=list(signature.parameters.values())[1:])
        self.name = name
        self.qualname = f"{namespace}.{name}" if namespace else name
        self.impl = impl
        self.doc = inspect.cleandoc(impl.__doc__ or "")
        self.method = method
        self.dtypes = dtypes
        self.targets = targets

    @property
    def summary(self):
        return self.doc.split("\n\n")[0].replace("\n", " ")

    def call(self, sem, args, kwargs):
        """Binds a call's arguments to the signature (a wrong call is a
        CompilationError at its line) and emits the builtin."""
        try:
            bound = self.signature.bind(*args, **kwargs)
        except TypeError as e:
            raise sem.error(f"wl.{self.qualname}: {e}") from None
        bound.apply_defaults()
        return self.impl(sem, *bound.args, **bound.kwargs)


REGISTRY = {}   # qualname -> Builtin, in definition order
METHODS = {}    # tile method name -> Builtin


def builtin(name=None, *, namespace="", method=None, dtypes="any", targets=ALL_TARGETS):
    """Registers the decorated function as builtin `name` (its own name
    without a trailing underscore by default); `method=True` makes it a tile
    method of the same name as well, a string names the method."""
    def register(impl):
        own = name or impl.__name__.rstrip("_")
        method_name = own if method is True else method
        entry = Builtin(impl, own, namespace, method_name, dtypes, targets)
        if entry.qualname in REGISTRY:
            raise ValueError(f"builtin {entry.qualname} is defined twice")
        REGISTRY[entry.qualname] = entry
        if method_name:
            METHODS[method_name] = entry
        return impl
    return register


def language_table():
    """docs/python.md's table of the language, from the definitions: one
    row per builtin (signature, dtypes, targets, what it does)."""
    rows = ["| op | dtypes | targets | what it does |", "|---|---|---|---|"]
    for entry in REGISTRY.values():
        signature = str(entry.signature).replace("|", "\\|")
        also = f" (also `x.{entry.method}()`)" if entry.method else ""
        rows.append(f"| `wl.{entry.qualname}{signature}` | {entry.dtypes} | {entry.targets} "
                    f"| {entry.summary.replace('|', chr(92) + '|')}{also} |")
    return "\n".join(rows) + "\n"


# The definitions register themselves on import.
from . import core, shapes, reductions, math, memory, debug, random  # noqa: E402,F401
