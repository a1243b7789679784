"""The matrix's kernels compiled for the GPU targets: cuda:90 assembled by
ptxas (where this machine has it) and hip:gfx942 to a code object, for
each dtype at an odd 2-D extent (a masked 4x8 tile) and an odd 1-D one;
and the access hints as each target spells them."""
import numpy as np
import pytest

import weft
import weft.language as wl
from devices import compiler_available
from matrix import CASES, FLOAT8, FLOATS, INTS, NUMERIC, dtype_id, extents
import test_casts
import test_dot
import test_elementwise as ew
import test_program
import test_reductions
import test_shapes
from matrix import binary_kernel, tiles_kernel, unary_kernel

pytestmark = pytest.mark.skipif(not compiler_available(), reason="needs the compiler")

TARGETS = ["cuda:90", "hip:gfx942"]
CASES_2D = [((3, 5), (4, 8)), ((7,), (8,))]


def _ptxas():
    try:
        weft._capi.locate("ptxas")
        return True
    except Exception:
        return False


def compile_for(kernel, target, pointers, constexprs, case=CASES_2D[0]):
    """Compiles `kernel` with its pointer parameters of `pointers` dtypes
    (in order) and its integers as i32; the binary of the target."""
    _, _, bm, bn = extents(case)
    constexprs = dict(constexprs, BM=bm, BN=bn) if "BM" in kernel.arg_names else constexprs
    names = [n for n in kernel.arg_names if n not in kernel.constexprs]
    ptr_names = [n for n in names if n not in ("M", "N", "K", "n", "seed")]
    signature = {n: "*" + d.name for n, d in zip(ptr_names, pointers)}
    signature.update({n: "i32" for n in names if n not in signature})
    compiled = weft.compile(kernel, signature, constexprs, target=target)
    if target.startswith("cuda"):
        binary = compiled.asm["cubin"] if _ptxas() else compiled.asm["ptx"]
    else:
        binary = compiled.asm["hsaco"]
    assert binary
    CASES[target] += 1
    return compiled


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("dtype", FLOATS, ids=dtype_id)
def test_float_kernels(target, dtype):
    for case in CASES_2D:
        for table in (ew.FLOAT_ANY, ew.FLOAT_POSITIVE, ew.FLOAT_UNIT):
            compile_for(unary_kernel, target, [dtype, dtype],
                        {"FNS": tuple(f for f, _ in table), "OTHER": 1}, case)
        compile_for(binary_kernel, target, [dtype] * 3,
                    {"FNS": tuple(f for f, _ in ew.FLOAT_BINARY)}, case)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("dtype", INTS, ids=dtype_id)
def test_integer_kernels(target, dtype):
    ops = ew._int_ops(dtype)
    for case in CASES_2D:
        compile_for(binary_kernel, target, [dtype] * 3, {"FNS": tuple(f for f, _ in ops)}, case)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("dtype", NUMERIC, ids=dtype_id)
def test_tile_kernels(target, dtype):
    x = np.zeros((4, 8), dtype.numpy or np.float32)
    table = test_reductions._numpy_reductions(x, dtype)
    for out in {d.name: d for _, _, d in table}.values():
        compile_for(tiles_kernel, target, [dtype, out],
                    {"FNS": tuple(f for f, _, d in table if d is out)}, ((4, 8), (4, 8)))
    compile_for(tiles_kernel, target, [dtype, dtype],
                {"FNS": tuple(f for f, _ in test_shapes._references(x))}, ((4, 8), (4, 8)))
    compile_for(binary_kernel, target, [dtype, dtype, wl.int8],
                {"FNS": tuple(f for f, _ in ew.COMPARES)})


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("src", NUMERIC + FLOAT8, ids=dtype_id)
def test_conversion_kernels(target, src):
    compile_for(test_casts.cast_kernel, target, [src, wl.uint64],
                {"DTYPES": tuple(test_casts.TARGETS)})


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("dtype", FLOATS + FLOAT8, ids=dtype_id)
def test_constant_kernels(target, dtype):
    compile_for(test_casts.constants_kernel, target, [dtype, dtype], {"BN": 8})


@pytest.mark.parametrize("target", TARGETS)
def test_program_kernels(target):
    compile_for(test_program.random_kernel, target, [wl.uint32, wl.float32, wl.float32],
                {"BLOCK": 128})
    compile_for(test_program.early_exit, target, [wl.int32], {"BLOCK": 32})
    compile_for(test_program.asserting, target, [wl.int32], {"BLOCK": 16})
    compile_for(test_program.printer, target, [wl.float32], {"BLOCK": 4})
    compile_for(test_program.staged_sum, target, [wl.float32, wl.float32],
                {"BLOCK": 64, "STAGES": 3})


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("dtype", test_dot.DTYPES, ids=dtype_id)
def test_dot_kernels(target, dtype):
    """The masked shapes and operand variants of test_dot, and a K loop at
    the instruction multiples (mma.sync, wgmma and MFMA where they apply)."""
    for (_, (bm, bn, bk)), (trans_a, trans_b, acc, round_out) in zip(test_dot.SHAPES[1:4],
                                                                      test_dot.VARIANTS[1:]):
        out = dtype if round_out else wl.float32
        compile_for(test_dot.dot_kernel, target, [dtype, dtype, wl.float32, out],
                    {"BK": bk, "TRANS_A": trans_a, "TRANS_B": trans_b, "ACC": acc, "OUT": out},
                    ((bm, bn), (bm, bn)))
    compile_for(test_dot.k_loop_kernel, target, [dtype] * 3, {"BK": 32, "OUT": dtype},
                ((64, 64), (64, 64)))


def test_hints_in_ptx():
    ptx = compile_for(test_program.hinted_copy, "cuda:90", [wl.float32, wl.float32],
                      {"BLOCK": 64}).asm["ptx"]
    assert "ld.global.cg" in ptx and "st.global.cs" in ptx
    assert "evict_first" in ptx and "evict_last" in ptx
    assert "ld.volatile.global" in ptx


def test_hints_in_amdgcn():
    asm = compile_for(test_program.hinted_copy, "hip:gfx942", [wl.float32, wl.float32],
                      {"BLOCK": 64}).asm["amdgcn"]
    assert " nt" in asm or "sc0 sc1" in asm  # streaming / system-coherent accesses


def test_inline_asm_cuda():
    text, constraints = test_program.ASM["cuda"]
    ptx = compile_for(test_program.shifted, "cuda:90", [wl.int32, wl.int32],
                      {"BLOCK": 32, "ASM_TEXT": text, "CONSTRAINTS": constraints}).asm["ptx"]
    assert "shl.b32" in ptx
