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
    x = r[16]


def test_tile_index():
    expect_error(tile_index, "x = r[16]", "index 16 is out of range for dimension 0")


@weft.jit
def tile_slice(p):
    r = wl.arange(0, 16)
    x = r[2:4]


def test_tile_slice():
    expect_error(tile_slice, "x = r[2:4]", "sliced with `:` only")


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


# --- what a new user met (issue 36): each a clear error at its line ------

@weft.jit
def odd_arange(p, N: wl.constexpr):
    offs = wl.arange(0, N)
    wl.store(p + offs, offs)


@pytest.mark.parametrize("n", [3, 5, 6, 7, 10, 12, 20, 24, 48, 96, 100])
@pytest.mark.parametrize("target", ["host", "cuda:90"])
def test_non_power_of_two_tile(n, target):
    expect_error(odd_arange, "wl.arange(0, N)", f"powers of two, and {n} is not",
                 constexprs={"N": n}, target=target)


def test_float_block():
    expect_error(odd_arange, "wl.arange(0, N)", "compile-time bounds (ints), not 16.0",
                 constexprs={"N": 16.0})


@weft.jit
def too_large(p):
    t = wl.zeros((256, 512), wl.float32)


def test_tile_too_large():
    expect_error(too_large, "wl.zeros", "more than the 65536 a tile may have")


@weft.jit
def wide_store(p):
    offs = wl.arange(0, 16)
    v = wl.zeros((4, 16), wl.float32)
    wl.store(p + offs, v)


def test_value_wider_than_pointers():
    expect_error(wide_store, "wl.store(p + offs, v)", "an access has its pointers' shape",
                 signature={"p": "*fp32"})


@weft.jit
def wide_mask(p):
    offs = wl.arange(0, 16)
    m = wl.arange(0, 4)[:, None] < offs[None, :]
    x = wl.load(p + offs, mask=m)


def test_mask_wider_than_pointers():
    expect_error(wide_mask, "wl.load(p + offs, mask=m)", "the mask is (4, 16)")


@weft.jit
def recursive(p, depth: wl.constexpr):
    recursive(p, depth)


def test_recursion():
    expect_error(recursive, "recursive(p, depth)", "kernels cannot recurse",
                 constexprs={"depth": 2})


@weft.jit
def uses_continue(p):
    for i in range(4):
        continue


def test_continue():
    expect_error(uses_continue, "        continue", "`continue` is not supported in kernels")


@weft.jit
def return_in_loop(p):
    for i in range(4):
        if i == 2:
            return


def test_return_in_loop():
    expect_error(return_in_loop, "            return", "`return` inside a loop")


@weft.jit
def fp8_math(p):
    x = wl.load(p + wl.arange(0, 16))
    y = wl.exp(x)


def test_float8_is_storage():
    expect_error(fp8_math, "wl.exp(x)", "storage type: convert it",
                 signature={"p": "*fp8e4nv"})


@weft.jit
def bad_cache_modifier(p):
    wl.store(p, 1, cache_modifier=".ca")


def test_store_cache_modifier():
    expect_error(bad_cache_modifier, 'cache_modifier=".ca"', "unknown cache modifier of wl.store")


@weft.jit
def hinted_acquire(p):
    x = wl.load(p, order="acquire", cache_modifier=".cg")


def test_hint_on_ordered_load():
    expect_error(hinted_acquire, 'cache_modifier=".cg"', "cache hints and volatile are for weak")


@weft.jit
def bad_num_stages(p):
    for i in wl.range(0, 4, num_stages=0):
        pass


def test_range_num_stages():
    expect_error(bad_num_stages, "wl.range", "num_stages is a positive compile-time int")


@weft.jit
def bad_prefetch(p):
    for i in wl.range(0, 4, prefetch=1):
        wl.store(p + i, 1.0)


def test_range_prefetch():
    expect_error(bad_prefetch, "wl.range", "prefetch is a compile-time bool, not 1")


@weft.jit
def bad_warp_specialize(p):
    for i in wl.range(0, 4, warp_specialize="yes"):
        wl.store(p + i, 1.0)


def test_range_warp_specialize():
    expect_error(bad_warp_specialize, "wl.range",
                 "warp_specialize is a compile-time bool, not 'yes'")


@weft.jit
def failing_static_assert(p, B: wl.constexpr):
    wl.static_assert(B % 16 == 0, "B must be a multiple of 16")


def test_static_assert():
    expect_error(failing_static_assert, "wl.static_assert", "B must be a multiple of 16",
                 constexprs={"B": 24})


@weft.jit
def bad_split(p):
    a, b = wl.split(wl.zeros((4, 4), wl.float32))


def test_split_needs_pairs():
    expect_error(bad_split, "wl.split", "the last dimension of (4, 4) is not 2")


def test_grid_with_four_dimensions():
    with pytest.raises(ValueError, match="1 to 3"):
        weft._jit._grid((1, 1, 1, 5), "kernel")


def test_ptx_is_text():
    compiled = weft.compile(odd_arange, {"p": "*i32"}, {"N": 16}, target="cuda:90")
    assert isinstance(compiled.asm["ptx"], str) and ".entry odd_arange" in compiled.asm["ptx"]
