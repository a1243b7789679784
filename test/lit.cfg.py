# lit configuration for Weft's FileCheck suites (Dialect/, Target/, Plugin/,
# ...). The build tree's lit.site.cfg.py sets the paths and loads this file.
import os
import shutil

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
config.excludes = ["CAPI", "E2E", "Inputs", "Runtime", "tools",
                   "CMakeLists.txt", "lit.cfg.py"]

# ptxas-check, the compiler's library search and the tests read these; lit
# starts tests with a clean environment otherwise.
llvm_config.with_system_environment(["PTXAS", "CUDA_HOME", "WEFT_REQUIRE_PTXAS",
                                     "WEFT_LIBDEVICE", "WEFT_OCML", "ROCM_PATH",
                                     "WEFT_HOST_BUILTINS"])
llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)


def find_ptxas():
    """The ptxas the compiler itself would use (see findPtxas())."""
    candidates = [os.environ.get("PTXAS", "")]
    if os.environ.get("CUDA_HOME"):
        candidates.append(os.path.join(os.environ["CUDA_HOME"], "bin", "ptxas"))
    candidates.append("/usr/local/cuda/bin/ptxas")
    candidates.append(shutil.which("ptxas") or "")
    for path in candidates:
        if path and os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    return None


if find_ptxas():
    config.available_features.add("ptxas")


def find_device_library(override, root_variable, roots, relative):
    """The math library the compiler would link (DeviceLibraries.cpp)."""
    if os.environ.get(override):
        candidates = [os.environ[override]]
    else:
        if os.environ.get(root_variable):
            roots = [os.environ[root_variable]] + roots
        candidates = [os.path.join(root, relative) for root in roots]
    return any(os.path.isfile(path) for path in candidates)


if find_device_library("WEFT_LIBDEVICE", "CUDA_HOME", ["/usr/local/cuda"],
                       "nvvm/libdevice/libdevice.10.bc"):
    config.available_features.add("libdevice")
if find_device_library("WEFT_OCML", "ROCM_PATH",
                       ["/opt/rocm", "/usr/lib/x86_64-linux-gnu"],
                       "amdgcn/bitcode/ocml.bc"):
    config.available_features.add("ocml")

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
