"""LL128's premise on CUDA (collectives/_ll128.py): every line of the LL128
buffer is stored and loaded by eight threads of one warp, 16 contiguous
bytes each, in one instruction; a line split over two instructions could be
seen half written. Checked in the layouts weft-assign-layouts gives the
buffer's accesses and in the PTX. No GPU needed."""
import os
import re
import subprocess

import pytest

import weft
import weft.language as wl
from weft import _libs
from weft.collectives import _ll128

SIG = {"x": "*{t}:16", "xw": "*u64:16", "out": "*{t}:16", "ow": "*u64:16", "full": "i32", "ll": "*u64:16", "half": "i32", "L": "i32",
       "CAP": "i32", "n": "i32", "calls": "*i64:16"}
LINE_LAYOUT = "sizePerThread = [1, 2], threadsPerWarp = [4, 8]"


def _compile(kernel, dtype, lines, num_warps):
    t, pack = {wl.float32: ("fp32", 2), wl.bfloat16: ("bf16", 4)}[dtype]
    constexprs = {"DTYPE": dtype, "PACK": pack, "LINES": lines, "SPIN": 256, "ATOMIC": 1}
    if kernel is _ll128.ll128_all_reduce:
        constexprs["OP"] = 0
    sig = {k: v.format(t=t) for k, v in SIG.items()}
    return weft.compile(kernel, sig, constexprs, target="cuda:90", num_warps=num_warps)


@pytest.mark.parametrize("kernel", [_ll128.ll128_all_reduce, _ll128.ll128_all_gather])
@pytest.mark.parametrize("dtype", [wl.float32, wl.bfloat16])
@pytest.mark.parametrize("lines,num_warps", [(16, 4), (32, 4), (8, 8)])
def test_lines_are_one_access_per_warp(kernel, dtype, lines, num_warps):
    k = _compile(kernel, dtype, lines, num_warps)
    volatile = re.findall(r"\b(?:ld|st)\.volatile\.global\.(\S+)", k.asm["ptx"])
    assert volatile and set(volatile) == {"v2.b64"}, volatile
    opt = os.path.join(_libs.bin_dir(), "weft-opt")
    laid = subprocess.run(
        [opt, f"--weft-set-target=target=cuda:90 num-warps={num_warps}", "--weft-optimize",
         "--weft-assign-layouts"], input=k.asm["weft"], capture_output=True, text=True,
        check=True).stdout
    accesses = [line for line in laid.splitlines() if re.search(r"weft\.(load|store) volatile",
                                                                line)]
    assert accesses and all(LINE_LAYOUT in line for line in accesses), accesses
