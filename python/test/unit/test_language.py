"""The language's one definition: weft.language, docs/python.md's table
and the compiler agree with python/weft/_builtins."""
import os
import re

import pytest

import weft
import weft.language as wl
from weft import _capi
from weft._builtins import METHODS, REGISTRY, language_table
from weft._semantics import MAX_TILE_ELEMENTS

DOCS = os.path.join(os.path.dirname(__file__), "..", "..", "..", "docs", "python.md")


def test_docs_table_is_generated():
    text = open(DOCS).read()
    table = re.search(r"<!-- language-table:begin -->\n(.*)<!-- language-table:end -->", text,
                      re.S).group(1)
    assert table == language_table(), \
        "docs/python.md's table is stale: paste `python3 -m weft language-table` into it"


def test_stubs_are_the_definitions():
    for qualname, entry in REGISTRY.items():
        owner, _, name = qualname.rpartition(".")
        stub = getattr(getattr(wl, owner) if owner else wl, name)
        assert stub.__weft_builtin__ is entry
        assert stub.__doc__ == entry.doc and entry.summary, qualname
    for method, entry in METHODS.items():
        assert entry.method == method


@pytest.mark.parametrize("name", ["reshape", "view", "trans", "permute", "broadcast_to",
                                  "expand_dims", "join", "split", "interleave", "flip",
                                  "cumsum", "cumprod", "associative_scan", "reduce", "argmax",
                                  "argmin", "xor_sum", "exp2", "log2", "sin", "cos", "erf",
                                  "sigmoid", "softmax", "floor", "ceil", "fma", "clamp",
                                  "div_rn", "sqrt_rn", "umulhi", "zeros_like", "full_like",
                                  "multiple_of", "max_contiguous", "assume", "range",
                                  "static_assert", "static_print", "device_print",
                                  "device_assert", "inline_asm_elementwise", "rand", "randn",
                                  "randint", "randint4x", "math.tanh"])
def test_triton_names_exist(name):
    assert name in REGISTRY


@pytest.mark.parametrize("dtype", ["uint8", "uint16", "int16", "float8e4nv", "float8e5"])
def test_dtypes_exist(dtype):
    assert isinstance(getattr(wl, dtype), wl.dtype)


def test_max_tile_elements_agrees_with_the_compiler():
    """The frontend's limit is the dialect's (kMaxTileElements)."""
    side = 1 << 11
    rows = 2 * MAX_TILE_ELEMENTS // side
    ir = ("module { func.func @k(%x: f32) attributes {weft.kernel} { %t = weft.splat %x : "
          f"f32 -> tensor<{rows}x{side}xf32>\n return }} }}\n")
    with pytest.raises(weft.CompilationError, match=f"a tile has at most {MAX_TILE_ELEMENTS}"):
        _capi.compile_ir(ir, "host", {"num_warps": 4, "debug": 0})
