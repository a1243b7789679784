"""Every rejected kernel raises CompilationError at the right Python line."""
import inspect

import pytest

import weft
import weft.language as wl


def line_of(fn, needle):
    lines, start = inspect.getsourcelines(fn.fn)
    for i, text in enumerate(lines):
        if needle in text:
            return start + i
    raise AssertionError(needle)


def expect_error(fn, needle, message, signature=None, constexprs=None, target="host"):
    with pytest.raises(weft.CompilationError) as info:
        weft.compile(fn, signature=signature or {"p": "*i32"},
                     constexprs=constexprs or {}, target=target)
    err = info.value
    assert err.filename == __file__
    assert err.lineno == line_of(fn, needle), str(err)
    assert message in err.msg, str(err)
    assert needle.strip() in err.construct
    return err


@weft.jit
def bad_load_order(p):
    x = 1
    v = wl.load(p, order="release")


def test_wrong_order_for_load_from_verifier():
    expect_error(bad_load_order, 'order="release"', "order 'release' is invalid for a load")


@weft.jit
def bad_store_order(p):
    wl.store(p, 1, order="acquire")


def test_wrong_order_for_store():
    expect_error(bad_store_order, "wl.store", "invalid for a store")


@weft.jit
def unknown_scope(p):
    wl.fence(scope="device")


def test_unknown_scope():
    expect_error(unknown_scope, "wl.fence", "unknown scope 'device'")


@weft.jit
def unknown_signal_op(p):
    wl.signal(p, 1, op="mul")


def test_unknown_signal_op():
    expect_error(unknown_signal_op, "wl.signal", "unknown signal op 'mul'")


@weft.jit
def peer_scope(p):
    wl.store(p, 1, peer=1, order="release", scope="gpu")


def test_narrow_scope_on_peer_from_verifier():
    expect_error(peer_scope, "wl.store", "cannot order an access to a peer's memory")


@weft.jit
def float_flag(p):
    wl.signal(p, 1)


def test_dtype_mismatch_flag():
    expect_error(float_flag, "wl.signal", "must be signless integer",
                 signature={"p": "*fp32"})


@weft.jit
def float_atomic_max(p):
    wl.atomic_max(p, 1.0)


def test_dtype_mismatch_atomic():
    expect_error(float_atomic_max, "wl.atomic_max", "needs an integer element type",
                 signature={"p": "*fp32"})


@weft.jit
def with_statement(p):
    with open("x"):
        pass


def test_unsupported_python():
    expect_error(with_statement, "with open", "unsupported Python construct in a kernel: With")


@weft.jit
def uses_break(p):
    for i in range(4):
        break


def test_break():
    expect_error(uses_break, "        break", "`break` is not supported")


@weft.jit
def undefined_name(p):
    wl.store(p, nothing_here)


def test_undefined_name():
    expect_error(undefined_name, "nothing_here", "`nothing_here` is not defined")


@weft.jit
def bad_broadcast(p):
    a = wl.arange(0, 16)
    b = wl.arange(0, 32)
    c = a + b


def test_shapes_do_not_broadcast():
    expect_error(bad_broadcast, "c = a + b", "do not broadcast")


@weft.jit
def tile_condition(p):
    if wl.arange(0, 4) > 1:
        wl.store(p, 1)


def test_tile_condition():
    expect_error(tile_condition, "if wl.arange", "must be a scalar")


@weft.jit
def loop_type_change(p):
    acc = wl.load(p)
    for i in range(3):
        acc = acc.to(wl.float32)


def test_loop_carried_type_change():
    expect_error(loop_type_change, "for i in range", "loop-carried `acc`")


@weft.jit
def tile_index(p):
    r = wl.arange(0, 16)
    x = r[3]


def test_tile_index():
    expect_error(tile_index, "x = r[3]", "indexed with `:` and `None`")


@weft.jit
def dynamic_arange(p, n):
    r = wl.arange(0, n)


def test_dynamic_arange():
    expect_error(dynamic_arange, "wl.arange", "compile-time bounds",
                 signature={"p": "*i32", "n": "i32"})


@weft.jit
def returns_value(p):
    return 1


def test_kernel_returns_value():
    expect_error(returns_value, "return 1", "a kernel returns nothing")


def test_missing_signature():
    with pytest.raises(weft.CompilationError, match="no type or constexpr value for p"):
        weft.compile(bad_store_order, signature={})


def test_unknown_signature_type():
    with pytest.raises(weft.CompilationError, match="unknown type"):
        weft.compile(bad_store_order, signature={"p": "*float"})


def test_stub_outside_kernel():
    with pytest.raises(RuntimeError, match="inside a @weft.jit kernel"):
        wl.program_id(0)
