"""Printing, assertions and inline assembly."""
import json

from .. import _types as ty
from .._semantics import Value, is_ptr, mlir_type
from . import builtin


def _printable(sem, v):
    """`v` as weft.print shows it right: unsigned integers and booleans
    zero-extended to int64 (printf's %lld), float8 converted to float32."""
    if not isinstance(v, Value):
        v = sem.constant(v, ty.float32 if isinstance(v, float) else ty.int64)
    if is_ptr(v.dtype):
        raise sem.error("wl.device_print of a pointer")
    if v.dtype.kind in "ub":
        return sem.cast(v, ty.uint64)
    if v.dtype.is_fp8:
        return sem.cast(v, ty.float32)
    return v


@builtin()
def device_print(sem, prefix, *args, hex=False):
    """Prints `prefix` and the values from every program as the kernel
    runs: scalars once per program, tiles one line per element with its
    coordinates (`pid (0, 0, 0) idx (3) x: 1.5`). Tiles printed together
    have one shape."""
    if not isinstance(prefix, str):
        raise sem.error("wl.device_print: the prefix is a string")
    values = [_printable(sem, a) for a in args]
    shapes = {v.shape for v in values if v.shape}
    if len(shapes) > 1:
        raise sem.error(f"wl.device_print: tiles of shapes {sorted(shapes)} in one call")
    text = f"weft.print {json.dumps(prefix)}"
    if values:
        text += f", {', '.join(v.name for v in values)} : {', '.join(v.type for v in values)}"
    sem.emit(text + (" {hex}" if hex else ""))


@builtin()
def device_assert(sem, cond, msg=""):
    """Where `cond` (a scalar or every element of a tile) is false, the
    program stops and the launch fails with `msg`, the kernel and the
    source line, reported at the next synchronisation. Checked only in
    debug launches (`kernel[grid](..., debug=True)` or WEFT_DEBUG=1), as
    in Triton."""
    if not isinstance(msg, str):
        raise sem.error("wl.device_assert: the message is a string")
    if not isinstance(cond, Value):
        if not cond:
            raise sem.error(f"wl.device_assert of a compile-time false: {msg}")
        return
    c = sem.as_bool(cond)
    if c.shape:  # every element: the smallest of the booleans
        c = sem.reduce(c, None, "min")
    sem.emit(f"weft.assert {c.name}, {json.dumps(msg or 'assertion failed')}")


@builtin()
def inline_asm_elementwise(sem, asm, constraints, args, dtype, is_pure, pack):
    """Runs `asm` (LLVM inline-assembly syntax for the target: PTX, AMDGCN
    or x86) on `pack` elements of `args` (broadcast to one shape) at a time;
    `constraints` as LLVM has them, outputs first; `dtype` the result's (a
    tuple for several results)."""
    if not isinstance(asm, str) or not isinstance(constraints, str):
        raise sem.error("wl.inline_asm_elementwise: asm and constraints are strings")
    if isinstance(pack, bool) or not isinstance(pack, int) or pack < 1:
        raise sem.error("wl.inline_asm_elementwise: pack is a positive int")
    values = [sem.value(v) for v in (args if isinstance(args, (tuple, list)) else (args,))]
    shape = sem.broadcast_shape(*(v.shape for v in values))
    values = [sem.broadcast_to(v, shape) for v in values]
    dtypes = list(dtype) if isinstance(dtype, (tuple, list)) else [dtype]
    for d in dtypes:
        if not isinstance(d, ty.dtype):
            raise sem.error(f"wl.inline_asm_elementwise: {d!r} is not a dtype")
    results = ", ".join(mlir_type(d, shape) for d in dtypes)
    head = (f"weft.inline_asm {json.dumps(asm)} {json.dumps(constraints)}"
            f"{' pure' if is_pure else ''} pack {pack} {', '.join(v.name for v in values)} : "
            f"({', '.join(v.type for v in values)}) -> ({results})")
    res = sem.fresh()
    sem.line(f"{res}{':%d' % len(dtypes) if len(dtypes) > 1 else ''} = {head} {sem.loc()}")
    if len(dtypes) == 1 and not isinstance(dtype, (tuple, list)):
        return Value(res, dtypes[0], shape)
    return tuple(Value(f"{res}#{i}" if len(dtypes) > 1 else res, d, shape)
                 for i, d in enumerate(dtypes))
