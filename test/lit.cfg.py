# lit configuration for Weft's FileCheck suites (Dialect/, Target/, Plugin/,
# ...). The build tree's lit.site.cfg.py sets the paths and loads this file.
import ctypes
import os

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "Weft"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.weft_obj_root, "test")
# Directories of other test drivers (ctest) and data files that are not
# lit tests themselves.
config.excludes = ["CAPI", "E2E", "Inputs", "Runtime", "Wheel", "tools",
                   "CMakeLists.txt", "lit.cfg.py"]

# The compiler's search for ptxas and its libraries and the tests read
# these; lit starts tests with a clean environment otherwise.
llvm_config.with_system_environment(["PTXAS", "CUDA_HOME", "WEFT_REQUIRE_PTXAS",
                                     "WEFT_LIBDEVICE", "WEFT_OCML", "ROCM_PATH",
                                     "WEFT_HOST_BUILTINS"])
llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)


def compiler_locate(name):
    """The machine's file `name` (ptxas, libdevice, ocml) as the compiler
    finds it, asked through its C API (weft_compiler_locate), or None."""
    c = ctypes
    capi = c.CDLL(os.path.join(config.weft_lib_dir, "libWeftCAPI.so"))
    capi.weft_compiler_create.argtypes = [c.POINTER(c.c_void_p)]
    capi.weft_compiler_locate.argtypes = [c.c_void_p, c.c_void_p, c.c_char_p,
                                          c.POINTER(c.c_void_p)]
    capi.weft_compiler_destroy.argtypes = [c.c_void_p]
    capi.weft_string_free.argtypes = [c.c_void_p]
    compiler, path = c.c_void_p(), c.c_void_p()
    if capi.weft_compiler_create(c.byref(compiler)) != 0:
        raise RuntimeError("weft_compiler_create failed")
    try:
        if capi.weft_compiler_locate(compiler, None, name.encode(), c.byref(path)) != 0:
            return None
        found = c.string_at(path.value).decode()
        capi.weft_string_free(path)
        return found
    finally:
        capi.weft_compiler_destroy(compiler)


for name in ("ptxas", "libdevice", "ocml", "ockl"):
    if compiler_locate(name):
        config.available_features.add(name)
# %ptxas (tools/ptxas-check) assembles with the ptxas the compiler uses.
config.environment["WEFT_TEST_PTXAS"] = compiler_locate("ptxas") or ""

config.substitutions.append(("%plugin_dir", config.weft_lib_dir))
config.substitutions.append(
    ("%ptxas", os.path.join(config.test_source_root, "tools", "ptxas-check")))

tools = [
    "weft-opt",
    "weft-compile",
    ToolSubst("mlir-opt", command=os.path.join(config.llvm_tools_dir, "mlir-opt")),
    ToolSubst("llvm-nm", command=os.path.join(config.llvm_tools_dir, "llvm-nm")),
    ToolSubst("llvm-readelf",
              command=os.path.join(config.llvm_tools_dir, "llvm-readelf")),
]
llvm_config.add_tool_substitutions(tools, [config.weft_tools_dir])
