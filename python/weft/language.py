"""The kernel language: `import weft.language as wl`.

Nothing here runs on its own. `@weft.jit` reads a kernel's AST and turns
each `wl.*` call into weft IR through the builtin's one definition
(python/weft/_builtins/); the names below are made from those definitions
(same signature and documentation) and, outside a kernel, say that they
only work inside one. The dtypes and `constexpr` are the real ones.
"""
import types as _types_module

from ._builtins import REGISTRY as _REGISTRY
from ._types import (DTYPES, bfloat16, constexpr, dtype, float8e4nv, float8e5,  # noqa: F401
                     float16, float32, float64, int1, int8, int16, int32, int64,
                     pointer_type, tensor_descriptor_type, uint8, uint16, uint32, uint64)


def _stub(entry):
    def stub(*args, **kwargs):
        raise RuntimeError(f"wl.{entry.qualname} can only be used inside a @weft.jit kernel")
    stub.__name__ = entry.name
    stub.__qualname__ = entry.qualname
    stub.__doc__ = entry.doc
    stub.__signature__ = entry.signature
    stub.__weft_builtin__ = entry
    return stub


def _namespace(name):
    module = _types_module.ModuleType(f"{__name__}.{name}", f"wl.{name}: builtins of the "
                                      f"language's `{name}` namespace")
    globals()[name] = module
    return module


for _entry in _REGISTRY.values():
    _owner, _, _name = _entry.qualname.rpartition(".")
    _scope = globals() if not _owner else vars(globals().get(_owner) or _namespace(_owner))
    _scope[_name] = _stub(_entry)
del _entry, _owner, _name, _scope
