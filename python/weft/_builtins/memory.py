"""Memory: loads, stores and atomics (on this rank or a peer's copy),
fences, signals and waits, barriers, bulk puts and gets, multimem, tensor
descriptors."""
from .. import _types as ty
from .._semantics import Value, is_ptr, mlir_type
from . import builtin

ORDERS = ("weak", "relaxed", "acquire", "release", "acq_rel", "seq_cst")
SCOPES = ("cta", "gpu", "sys")
WAIT_CMPS = ("eq", "ne", "ge", "gt", "le", "lt")
SIGNAL_OPS = ("set", "add")
MULTIMEM_OPS = ("add", "min", "max")


def _choice(sem, what, value, allowed):
    if value not in allowed:
        raise sem.error(f"unknown {what} {value!r} (expected one of {', '.join(allowed)})")
    return value


def _ptr(sem, ptr, op):
    if not isinstance(ptr, Value) or not is_ptr(ptr.dtype):
        raise sem.error(f"wl.{op} needs a pointer or a tile of pointers")
    return ptr


def _peer(sem, ptr, peer):
    return ptr if peer is None else translate(sem, ptr, peer)


def _order(sem, order, scope):
    _choice(sem, "memory order", order, ORDERS)
    _choice(sem, "scope", scope, SCOPES)
    return f"{order} {scope} "


def _fit(sem, op, what, value, shape):
    """`value`'s shape broadcast to the pointers' `shape`: an access has the
    shape of its pointers, and a mask, value or `other` cannot widen it (a
    2-D value through a 1-D pointer tile would write each address many
    times)."""
    vshape = getattr(value, "shape", ())
    if len(vshape) > len(shape) or any(
            a != b and a != 1 for a, b in zip(vshape[::-1], shape[::-1])):
        raise sem.error(f"wl.{op}: the {what} is {vshape or 'a scalar'} but the pointers are "
                        f"{shape or 'a scalar'}; an access has its pointers' shape "
                        "(broadcast the pointers to the shape you mean)")


def _mask(sem, op, mask, shape):
    """The mask as i1, still of its own shape (the access broadcasts it)."""
    if mask is None:
        return None
    _fit(sem, op, "mask", mask, shape)
    return sem.as_bool(mask) if isinstance(mask, Value) else sem.constant(bool(mask), ty.int1)


@builtin(dtypes="pointer")
def translate(sem, ptr, peer):
    """The address of `ptr`'s object in rank `peer`'s symmetric heap."""
    ptr = _ptr(sem, ptr, "translate")
    peer = sem.materialize(peer, ty.int32)
    return sem.emit(f"weft.translate {ptr.name}, {peer.name} : {ptr.type}",
                    ptr.dtype, ptr.shape)


LOAD_CACHE = ("ca", "cg", "cv", "cs")
STORE_CACHE = ("wb", "cg", "cs", "wt")
EVICTION = ("evict_first", "evict_last", "evict_normal")


def _hints(sem, op, order, cache_modifier, eviction_policy, volatile, allowed):
    """The access's `volatile`, `cache X` and `evict X` words (Triton's
    spellings, with or without the leading dot); for weak accesses only."""
    cache = cache_modifier.lstrip(".") if isinstance(cache_modifier, str) else cache_modifier
    evict = eviction_policy
    if cache:
        _choice(sem, f"cache modifier of wl.{op}", cache, allowed)
    if evict:
        _choice(sem, "eviction policy", evict, EVICTION)
    if (cache or evict or volatile) and order != "weak":
        raise sem.error(f"wl.{op}: cache hints and volatile are for weak accesses, "
                        f"not {order} ones")
    words = " volatile" if volatile else ""
    words += f" cache {cache}" if cache else ""
    words += f" evict {evict}" if evict and evict != "evict_normal" else ""
    return words


@builtin()
def load(sem, pointer, mask=None, other=None, peer=None, order="weak", scope="sys",
         cache_modifier="", eviction_policy="", volatile=False):
    """The values at `pointer` (a pointer or a tile of them; on rank
    `peer` if given) where `mask` holds, else `other` (undefined without
    one); ordered with `order` at `scope` unless weak. Weak loads take
    Triton's hints: `cache_modifier` (.ca, .cg, .cv, .cs),
    `eviction_policy` (evict_first, evict_last) and `volatile`."""
    ptr = _ptr(sem, pointer, "load")
    shape = ptr.shape
    mask = _mask(sem, "load", mask, shape)
    ptr = _peer(sem, ptr, peer)
    ordered = _order(sem, order, scope) if order != "weak" else ""
    hints = _hints(sem, "load", order, cache_modifier, eviction_policy, volatile, LOAD_CACHE)
    text = f"weft.load{hints} {ordered}{ptr.name}"
    if mask is not None:
        text += f", mask {sem.broadcast_to(mask, shape).name}"
    if other is not None:
        _fit(sem, "load", "other value", other, shape)
        text += f", other {sem.materialize(other, ptr.dtype.elem, shape).name}"
    return sem.emit(f"{text} : {ptr.type}", ptr.dtype.elem, shape)


@builtin()
def store(sem, pointer, value, mask=None, peer=None, order="weak", scope="sys",
          cache_modifier="", eviction_policy="", volatile=False):
    """Writes `value` (converted to the pointee type) at `pointer` where
    `mask` holds; on rank `peer` if given; ordered unless weak. Weak stores
    take `cache_modifier` (.wb, .cg, .cs, .wt), `eviction_policy` and
    `volatile`."""
    ptr = _ptr(sem, pointer, "store")
    shape = ptr.shape
    _fit(sem, "store", "value", value, shape)
    mask = _mask(sem, "store", mask, shape)
    ptr = _peer(sem, ptr, peer)
    value = sem.materialize(value, ptr.dtype.elem, shape)
    ordered = _order(sem, order, scope) if order != "weak" else ""
    hints = _hints(sem, "store", order, cache_modifier, eviction_policy, volatile, STORE_CACHE)
    text = f"weft.store{hints} {ordered}{ptr.name}, {value.name}"
    if mask is not None:
        text += f", mask {sem.broadcast_to(mask, shape).name}"
    sem.emit(f"{text} : {ptr.type}")


def _rmw(sem, kind, ptr, value, mask, peer, order, scope):
    op = "atomic_" + kind
    ptr = _ptr(sem, ptr, op)
    shape = ptr.shape
    _fit(sem, op, "value", value, shape)
    mask = _mask(sem, op, mask, shape)
    ptr = _peer(sem, ptr, peer)
    elem = ptr.dtype.elem
    value = sem.materialize(value, elem, shape)
    if kind == "add" and elem.is_float:
        kind = "fadd"
    elif kind in ("max", "min") and elem.kind == "u":
        kind = "u" + kind
    text = f"weft.atomic_rmw {kind} {_order(sem, order, scope)}{ptr.name}, {value.name}"
    if mask is not None:
        text += f", mask {sem.broadcast_to(mask, shape).name}"
    return sem.emit(f"{text} : {ptr.type}", elem, shape)


@builtin(dtypes="int, float32, float64")
def atomic_add(sem, pointer, val, mask=None, peer=None, order="acq_rel", scope="gpu"):
    """Adds `val` at `pointer` atomically; the old values."""
    return _rmw(sem, "add", pointer, val, mask, peer, order, scope)


@builtin(dtypes="int")
def atomic_max(sem, pointer, val, mask=None, peer=None, order="acq_rel", scope="gpu"):
    """Stores max(old, val) atomically; the old values."""
    return _rmw(sem, "max", pointer, val, mask, peer, order, scope)


@builtin(dtypes="int")
def atomic_min(sem, pointer, val, mask=None, peer=None, order="acq_rel", scope="gpu"):
    """Stores min(old, val) atomically; the old values."""
    return _rmw(sem, "min", pointer, val, mask, peer, order, scope)


@builtin(dtypes="int")
def atomic_and(sem, pointer, val, mask=None, peer=None, order="acq_rel", scope="gpu"):
    """Stores old & val atomically; the old values."""
    return _rmw(sem, "and", pointer, val, mask, peer, order, scope)


@builtin(dtypes="int")
def atomic_or(sem, pointer, val, mask=None, peer=None, order="acq_rel", scope="gpu"):
    """Stores old | val atomically; the old values."""
    return _rmw(sem, "or", pointer, val, mask, peer, order, scope)


@builtin(dtypes="int")
def atomic_xor(sem, pointer, val, mask=None, peer=None, order="acq_rel", scope="gpu"):
    """Stores old ^ val atomically; the old values."""
    return _rmw(sem, "xor", pointer, val, mask, peer, order, scope)


@builtin(dtypes="int, float")
def atomic_xchg(sem, pointer, val, mask=None, peer=None, order="acq_rel", scope="gpu"):
    """Stores val atomically; the old values."""
    return _rmw(sem, "xchg", pointer, val, mask, peer, order, scope)


@builtin(dtypes="int")
def atomic_cas(sem, pointer, cmp, val, peer=None, order="acq_rel", scope="gpu"):
    """Stores val where the old value equals cmp, atomically; the old
    values."""
    ptr = _ptr(sem, pointer, "atomic_cas")
    shape = ptr.shape
    _fit(sem, "atomic_cas", "comparand", cmp, shape)
    _fit(sem, "atomic_cas", "value", val, shape)
    ptr = _peer(sem, ptr, peer)
    elem = ptr.dtype.elem
    cmp = sem.materialize(cmp, elem, shape)
    val = sem.materialize(val, elem, shape)
    return sem.emit(f"weft.atomic_cas {_order(sem, order, scope)}{ptr.name}, "
                    f"{cmp.name}, {val.name} : {ptr.type}", elem, shape)


@builtin()
def fence(sem, order="acq_rel", scope="sys"):
    """A memory fence of the program."""
    sem.emit("weft.fence " + _order(sem, order, scope).strip())


def _flag(sem, ptr, op, what="flag pointer"):
    ptr = _ptr(sem, ptr, op)
    if ptr.shape:
        raise sem.error(f"wl.{op} takes a scalar {what}, not a tile")
    return ptr


@builtin(dtypes="int")
def signal(sem, pointer, value, peer=None, op="set", order="release", scope="sys"):
    """Sets (op='set') or adds to (op='add') the flag at `pointer`, on rank
    `peer` if given (any rank, on any node), once per program, releasing the
    program's writes."""
    ptr = _flag(sem, pointer, "signal")
    _choice(sem, "signal op", op, SIGNAL_OPS)
    value = sem.materialize(value, ptr.dtype.elem)
    to = "" if peer is None else f" peer {sem.materialize(peer, ty.int32).name}"
    sem.emit(f"weft.signal {op} {_order(sem, order, scope)}{ptr.name}, "
             f"{value.name}{to} : {ptr.type}")


@builtin(dtypes="int")
def wait(sem, pointer, value, cmp="eq", order="acquire", scope="sys"):
    """Waits until the flag at `pointer` compares `cmp` to `value`; the value
    seen."""
    ptr = _flag(sem, pointer, "wait")
    _choice(sem, "wait comparison", cmp, WAIT_CMPS)
    value = sem.materialize(value, ptr.dtype.elem)
    return sem.emit(f"weft.wait {cmp} {_order(sem, order, scope)}{ptr.name}, "
                    f"{value.name} : {ptr.type}", ptr.dtype.elem)


@builtin()
def barrier(sem):
    """Every program of the launch on every rank arrives before any leaves."""
    sem.emit("weft.barrier")


def _bytes(sem, nbytes, op):
    if isinstance(nbytes, Value) and (nbytes.shape or not nbytes.dtype.is_int):
        raise sem.error(f"wl.{op}: nbytes is an integer scalar, not {nbytes!r}")
    if not isinstance(nbytes, Value) and (isinstance(nbytes, bool) or
                                          not isinstance(nbytes, int) or nbytes < 0):
        raise sem.error(f"wl.{op}: nbytes is a byte count, not {nbytes!r}")
    return sem.materialize(nbytes, ty.int64)


@builtin()
def put(sem, dst, src, nbytes, peer, signal=None, signal_value=1, signal_op="set"):
    """Copies `nbytes` from this rank's `src` into rank `peer`'s copy of
    the symmetric `dst` (any rank, on any node; the whole program takes
    part). Non-blocking: `src` may change, and the data be read there, only
    after wl.quiet() or the receiver's wait on `signal`: with `signal` (a
    64-bit flag), peer's copy of it is set to (or, with signal_op='add',
    increased by) `signal_value` once the bytes are there. To another
    node on GPUs, `src` is Weft's memory (the heap or a local buffer)."""
    d, s = _flag(sem, dst, "put", "pointer"), _flag(sem, src, "put", "pointer")
    n, p = _bytes(sem, nbytes, "put"), sem.materialize(peer, ty.int32)
    text = f"weft.put {d.name}, {s.name}, {n.name}, {p.name}"
    types = f"{d.type}, {s.type}"
    if signal is not None:
        flag = _flag(sem, signal, "put")
        if flag.dtype.elem.bits != 64 or not flag.dtype.elem.is_int:
            raise sem.error(f"wl.put: the signal is a 64-bit integer flag (NVSHMEM's "
                            f"signals are), not a pointer to {flag.dtype.elem!r}")
        _choice(sem, "signal op", signal_op, SIGNAL_OPS)
        value = sem.materialize(signal_value, ty.int64)
        text += f" signal {signal_op} {flag.name}, {value.name}"
        types += f", {flag.type}"
    sem.emit(f"{text} : {types}")


@builtin()
def get(sem, dst, src, nbytes, peer):
    """Copies `nbytes` of rank `peer`'s copy of the symmetric `src` into
    this rank's `dst` (any rank, on any node; the whole program takes part);
    the bytes are there when it returns. From another node on GPUs, `dst`
    is Weft's memory (the heap or a local buffer)."""
    d, s = _flag(sem, dst, "get", "pointer"), _flag(sem, src, "get", "pointer")
    n, p = _bytes(sem, nbytes, "get"), sem.materialize(peer, ty.int32)
    sem.emit(f"weft.get {d.name}, {s.name}, {n.name}, {p.name} : {d.type}, {s.type}")


@builtin()
def quiet(sem):
    """Completes every earlier wl.put of the program: the bytes are at the
    peers and the sources may be reused."""
    sem.emit("weft.quiet")


@builtin(dtypes="pointer")
def multicast(sem, pointer):
    """The multicast address of a symmetric object (for multimem_*)."""
    ptr = _flag(sem, pointer, "multicast")
    return sem.emit(f"weft.multicast {ptr.name} : {ptr.type}",
                    ty.pointer_type(ptr.dtype.elem, multicast=True))


def _mptr(sem, ptr, op):
    if not isinstance(ptr, Value) or not is_ptr(ptr.dtype) or \
            not ptr.dtype.multicast or ptr.shape:
        raise sem.error(f"wl.{op} needs a scalar multicast pointer (from wl.multicast)")
    return ptr


def _multimem_kind(sem, op, elem):
    _choice(sem, "multimem op", op, MULTIMEM_OPS)
    return "u" + op if op != "add" and elem.kind == "u" else op


@builtin(dtypes="int, float")
def multimem_ld_reduce(sem, mptr, op="add", order="relaxed", scope="sys"):
    """The reduction (add, min, max) of the value at mptr over every rank."""
    mptr = _mptr(sem, mptr, "multimem_ld_reduce")
    elem = mptr.dtype.elem
    kind = _multimem_kind(sem, op, elem)
    return sem.emit(f"weft.multimem_ld_reduce {kind} {_order(sem, order, scope)}"
                    f"{mptr.name} : {mptr.type} -> {elem.mlir}", elem)


@builtin(dtypes="int, float")
def multimem_store(sem, mptr, value, order="relaxed", scope="sys"):
    """Stores value at mptr on every rank."""
    mptr = _mptr(sem, mptr, "multimem_store")
    value = sem.materialize(value, mptr.dtype.elem)
    sem.emit(f"weft.multimem_store {_order(sem, order, scope)}{mptr.name}, "
             f"{value.name} : {mptr.type}, {value.type}")


@builtin(dtypes="int, float")
def multimem_red(sem, mptr, value, op="add", order="relaxed", scope="sys"):
    """Reduces value into mptr on every rank (add, min, max)."""
    mptr = _mptr(sem, mptr, "multimem_red")
    kind = _multimem_kind(sem, op, mptr.dtype.elem)
    value = sem.materialize(value, mptr.dtype.elem)
    sem.emit(f"weft.multimem_red {kind} {_order(sem, order, scope)}{mptr.name}, "
             f"{value.name} : {mptr.type}, {value.type}")


# --- tensor descriptors (desc.load, desc.store, desc.shape) --------------

def desc_attribute(sem, desc, attr):
    """What `desc.<attr>` is in a kernel."""
    kind = desc.dtype
    if attr == "load":
        return desc_load
    if attr == "store":
        return desc_store
    if attr == "dtype":
        return kind.elem
    if attr == "block_shape":
        return kind.block_shape
    if attr == "shape":  # the tensor's, known at launch
        return tuple(sem.emit(f"weft.desc_dim {desc.name}, {d} : {kind.mlir}", ty.int64)
                     for d in range(len(kind.block_shape)))
    raise sem.error(f"a tensor descriptor has no attribute `{attr}` (load, store, "
                    "dtype, block_shape, shape)")


def _desc_offsets(sem, desc, offsets, op):
    rank = len(desc.dtype.block_shape)
    if not isinstance(offsets, (tuple, list)) or len(offsets) != rank:
        raise sem.error(f"desc.{op} takes a list of {rank} offsets, one per dimension")
    values = []
    for offset in offsets:
        if isinstance(offset, Value) and (offset.shape or not offset.dtype.is_int):
            raise sem.error(f"desc.{op}: offsets are integer scalars")
        values.append(sem.materialize(offset, ty.int32).name)
    return ", ".join(values)


def desc_load(sem, desc, offsets):
    """The block at `offsets` (zeros outside the tensor)."""
    kind = desc.dtype
    offs = _desc_offsets(sem, desc, offsets, "load")
    return sem.emit(f"weft.desc_load {desc.name}[{offs}] : {kind.mlir} -> "
                    f"{mlir_type(kind.elem, kind.block_shape)}", kind.elem, kind.block_shape)


def desc_store(sem, desc, offsets, value):
    """Writes the block at `offsets`, inside the tensor only."""
    kind = desc.dtype
    offs = _desc_offsets(sem, desc, offsets, "store")
    if isinstance(value, Value) and \
            sem.broadcast_shape(value.shape, kind.block_shape) != kind.block_shape:
        raise sem.error(f"desc.store: a {value.shape} tile is not a {kind.block_shape} block")
    value = sem.materialize(value, kind.elem, kind.block_shape)
    sem.emit(f"weft.desc_store {desc.name}[{offs}], {value.name} : {kind.mlir}, "
             f"{value.type}")
