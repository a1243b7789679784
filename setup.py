"""The wheel's native half (pyproject.toml has the rest): CMake builds the
compiler with LLVM, MLIR and LLD linked in (WEFT_LINK_LLVM_STATIC) and the
runtime, and installs them, stripped, into the package directory (bin/,
include/, lib/, share/: python/weft/_libs.py finds them there). One wheel
serves every Python 3 (ctypes, no extension module); it is tagged for the
glibc of the machine that built it, the oldest it runs on."""
import os
import platform
import re
import subprocess

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py
from wheel.bdist_wheel import bdist_wheel

ROOT = os.path.dirname(os.path.abspath(__file__))
# CMake's tree for the wheel, beside the development build/: with ccache's
# base directory at the checkout, the two share their objects.
BUILD = os.environ.get("WEFT_WHEEL_BUILD_DIR", os.path.join(ROOT, "build-wheel"))


def version():
    with open(os.path.join(ROOT, "CMakeLists.txt")) as f:
        return re.search(r"project\(weft\b.*?VERSION (\S+?)\)", f.read(), re.S).group(1)


class build_native(build_py):
    """build_py, then the CMake build installed into the built package."""

    def run(self):
        super().run()
        jobs = str(os.cpu_count() or 2)
        configure = ["cmake", "-S", ROOT, "-B", BUILD, "-G", "Ninja",
                     "-DCMAKE_BUILD_TYPE=Release", "-DWEFT_LINK_LLVM_STATIC=ON",
                     "-DWEFT_BUILD_TESTS=OFF", "-DCMAKE_INSTALL_LIBDIR=lib"]
        subprocess.check_call(configure)
        subprocess.check_call(["cmake", "--build", BUILD, "-j", jobs])
        subprocess.check_call(["cmake", "--install", BUILD, "--strip", "--prefix",
                               os.path.join(os.path.abspath(self.build_lib), "weft")])


class NativeDistribution(Distribution):
    """Native files in the package: built into the platform's tree, the
    wheel's root platlib."""

    def has_ext_modules(self):
        return True


class platform_wheel(bdist_wheel):
    """py3-none-manylinux_<glibc>_<arch>: native code, no Python ABI."""

    def get_tag(self):
        libc, glibc = platform.libc_ver()
        if libc != "glibc":
            raise SystemExit("weft: the wheel is built on a glibc Linux system")
        major, minor = glibc.split(".")[:2]
        return "py3", "none", f"manylinux_{major}_{minor}_{platform.machine()}"


setup(version=version(), distclass=NativeDistribution,
      cmdclass={"build_py": build_native, "bdist_wheel": platform_wheel},
      options={"build": {"build_base": os.path.join(BUILD, "setuptools")}})
