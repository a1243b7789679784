"""Run by test_wheel.sh with an installed wheel's Python, outside the
checkout: the package and its libraries are the installed ones, and a kernel
compiles for every target, with the files the wheel carries (OCML for hip
math, compiler-rt's builtins for host bf16)."""
import os
import sys

import weft
import weft.language as wl
from weft import _libs

site = sys.argv[1]
for path in (weft.__file__, _libs.lib_dir()):
    assert os.path.realpath(path).startswith(os.path.realpath(site)), (path, site)


@weft.jit
def scaled_exp(x, y, n, BLOCK: wl.constexpr):
    offs = wl.program_id(0) * BLOCK + wl.arange(0, BLOCK)
    mask = offs < n
    v = wl.load(x + offs, mask=mask).to(wl.float32)
    wl.store(y + offs, wl.exp(v).to(wl.bfloat16), mask=mask)


expected = {"cuda:90": ("ptx", "cubin"), "hip:gfx942": ("amdgcn", "hsaco"),
            "host": ("asm", "so")}
for target, names in expected.items():
    kernel = weft.compile(scaled_exp, signature={"x": "*bf16", "y": "*bf16", "n": "i32"},
                          constexprs={"BLOCK": 128}, target=target)
    for name in names:
        assert kernel.asm[name], (target, name)
    print(f"{target}: {', '.join(sorted(kernel.asm))}")
