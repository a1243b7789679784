"""Where Weft's native parts are, and loading its libraries with errors
that say what to do.

The layout (bin/, include/, lib/, share/) is found, in order:
  $WEFT_LIB_DIR       the libraries' directory, an explicit choice;
  this package        an installed wheel holds the layout inside weft/;
  build/ beside it    a checkout (python/weft -> ../../build).
"""
import ctypes
import importlib.util
import os
import platform
import re
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
_CHECKOUT_BUILD = os.path.normpath(os.path.join(_HERE, "..", "..", "build"))


def prefix():
    """The directory holding bin/, include/, lib/ and share/: the installed
    package's own, else the checkout's build tree."""
    if os.path.isdir(os.path.join(_HERE, "lib")):
        return _HERE
    return _CHECKOUT_BUILD


def lib_dir():
    return os.environ.get("WEFT_LIB_DIR") or os.path.join(prefix(), "lib")


def bin_dir():
    return os.path.join(prefix(), "bin")


def unsupported_system(system=None, machine=None):
    """Why this machine cannot run Weft's libraries, or None: they are
    x86-64 Linux ELF files."""
    system = system or sys.platform
    machine = machine or platform.machine()
    if not system.startswith("linux") or machine not in ("x86_64", "AMD64"):
        return (f"Weft's libraries are built for x86-64 Linux; this is {system} on "
                f"{machine}")
    return None


def explain_load_error(path, error):
    """The message for a library at `path` that exists but that the dynamic
    loader refused with `error` (its text)."""
    needed = re.findall(r"GLIBC_(\d+(?:\.\d+)+)", error)
    if needed:
        have = os.confstr("CS_GNU_LIBC_VERSION") if hasattr(os, "confstr") else "?"
        newest = max(needed, key=lambda v: tuple(map(int, v.split("."))))
        return (f"cannot load {path}: it needs glibc {newest} or newer and this system "
                f"has {have}. Install a Weft wheel built for this glibc (one built on "
                "the oldest system you run on works on every newer one; README, "
                "'Supported systems')")
    return f"cannot load {path}: {error}"


def load(name):
    """ctypes.CDLL of the library `name` (libweft.so, libWeftCAPI.so); an
    ImportError that says what to do when it is missing or cannot load."""
    path = os.path.join(lib_dir(), name)
    why = unsupported_system()
    if why:
        raise ImportError(why)
    if not os.path.isfile(path):
        where = "$WEFT_LIB_DIR" if os.environ.get("WEFT_LIB_DIR") else \
            "this installation"
        hint = "build the checkout (README, 'Quick start') or install the Weft wheel"
        if name == "libWeftCAPI.so":
            hint += ("; a machine without the compiler runs kernels from a cache "
                     "filled elsewhere (WEFT_CACHE_ONLY=1, README 'GPU runs')")
        raise ImportError(f"{name} is not in {where} ({path}): {hint}")
    try:
        return ctypes.CDLL(path)
    except OSError as e:
        raise ImportError(explain_load_error(path, str(e))) from None


# ':'-separated directories of NVIDIA's pip packages, by their names.
_pip_roots = {}


def pip_nvidia(names):
    """The directories nvidia/<name> of installed pip packages (NVIDIA's
    share the `nvidia` namespace package: nvidia-cuda-nvcc's cu13 or
    cuda_nvcc, nvidia-nvshmem's nvshmem), ':'-separated, found once."""
    if names not in _pip_roots:
        try:
            spec = importlib.util.find_spec("nvidia")
        except (ImportError, ValueError):
            spec = None
        bases = list(spec.submodule_search_locations or []) if spec else []
        _pip_roots[names] = ":".join(os.path.join(base, name) for base in bases
                                     for name in names
                                     if os.path.isdir(os.path.join(base, name)))
    return _pip_roots[names]
