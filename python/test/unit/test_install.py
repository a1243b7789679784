"""Where the package finds its native parts, and the errors of a machine
that lacks them: an unsupported system, a missing library, no ptxas, no
PyTorch. (test/Wheel installs the wheel itself and uses it.)"""
import importlib
import os
import subprocess
import sys

import pytest

import weft
import weft.language as wl
from weft import _capi, _libs


@weft.jit
def negate(x, n, BLOCK: wl.constexpr):
    offs = wl.arange(0, BLOCK)
    wl.store(x + offs, -wl.load(x + offs, mask=offs < n), mask=offs < n)


def test_unsupported_system_is_named():
    assert _libs.unsupported_system("linux", "x86_64") is None
    why = _libs.unsupported_system("darwin", "arm64")
    assert "x86-64 Linux" in why and "darwin on arm64" in why


def test_old_glibc_says_which_is_needed():
    error = ("/lib/x86_64-linux-gnu/libc.so.6: version `GLIBC_2.36' not found (required "
             "by /x/libWeftCAPI.so), version `GLIBC_2.34' not found")
    message = _libs.explain_load_error("/x/libWeftCAPI.so", error)
    assert "needs glibc 2.36 or newer" in message and "Supported systems" in message


def test_missing_library_says_what_to_do(monkeypatch, tmp_path):
    monkeypatch.setenv("WEFT_LIB_DIR", str(tmp_path))
    with pytest.raises(ImportError, match=r"libWeftCAPI.so is not in \$WEFT_LIB_DIR .*"
                                          r"install the Weft wheel.*WEFT_CACHE_ONLY"):
        _libs.load("libWeftCAPI.so")


def test_checkout_layout():
    # This test runs from the checkout: its build tree, or WEFT_LIB_DIR.
    assert os.path.isfile(os.path.join(_libs.lib_dir(), "libWeftCAPI.so"))
    assert _libs.prefix().endswith("build")


def test_locate_names_every_place_looked_at(monkeypatch):
    monkeypatch.setenv("PTXAS", "/nonexistent/ptxas")
    with pytest.raises(weft.CompilationError,
                       match=r"a cubin needs ptxas, but no ptxas was found \(looked for "
                             r"/nonexistent/ptxas; \$PTXAS names the file\)"):
        _capi.locate("ptxas")
    with pytest.raises(weft.CompilationError, match="no file named 'nvcc'"):
        _capi.locate("nvcc")
    assert _capi.locate("host-builtins").endswith("libclang_rt.builtins-x86_64.a")


def test_cubin_without_ptxas_raises_where_ptx_still_compiles(monkeypatch, tmp_path):
    monkeypatch.setenv("WEFT_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("PTXAS", str(tmp_path / "ptxas"))
    k = weft.compile(negate, signature={"x": "*fp32", "n": "i32"}, constexprs={"BLOCK": 32},
                     target="cuda:90")
    assert ".entry negate" in k.asm["ptx"] and "cubin" not in k.asm
    with pytest.raises(weft.CompilationError, match=r"no ptxas was found \(looked for "):
        k.asm["cubin"]
    with pytest.raises(KeyError):
        k.asm["hsaco"]


def test_pip_roots(monkeypatch, tmp_path):
    for name in ("cu13", "cuda_nvcc", "nvshmem"):
        (tmp_path / "nvidia" / name).mkdir(parents=True)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(_libs, "_pip_roots", {})
    importlib.invalidate_caches()
    sys.modules.pop("nvidia", None)
    roots = _capi.pip_cuda_roots().split(":")
    assert [str(tmp_path / "nvidia" / n) for n in ("cu13", "cuda_nvcc")] == \
        [r for r in roots if r.startswith(str(tmp_path))]
    assert str(tmp_path / "nvidia" / "nvshmem") in _capi.pip_nvshmem_roots().split(":")


def test_torch_ops_without_torch_says_so():
    probe = "import importlib.util, sys; sys.exit(importlib.util.find_spec('torch') is None)"
    if subprocess.run([sys.executable, "-c", probe]).returncode == 0:
        pytest.skip("torch is installed here: the GPU machines test weft.torch_ops")
    run = subprocess.run([sys.executable, "-c", "import weft.torch_ops"],
                         capture_output=True, text=True)
    assert run.returncode != 0
    assert "weft.torch_ops needs PyTorch 2.4 or newer" in run.stderr


def test_main_prefix_and_info():
    run = subprocess.run([sys.executable, "-m", "weft", "prefix"], capture_output=True,
                         text=True, check=True)
    assert run.stdout.strip() == _libs.prefix()
    run = subprocess.run([sys.executable, "-m", "weft", "info"], capture_output=True,
                         text=True, check=True)
    assert "weft 0." in run.stdout and "host-builtins:" in run.stdout
    run = subprocess.run([sys.executable, "-m", "weft", "nonsense"], capture_output=True,
                         text=True)
    assert run.returncode == 2 and "fill-cache" in run.stderr
