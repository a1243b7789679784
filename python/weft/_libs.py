"""Where the shared libraries are: $WEFT_LIB_DIR, else build/lib of the
checkout this package lives in (python/weft -> ../../build/lib)."""
import ctypes
import os

_HERE = os.path.dirname(os.path.abspath(__file__))


def lib_dir():
    return os.environ.get("WEFT_LIB_DIR") or \
        os.path.normpath(os.path.join(_HERE, "..", "..", "build", "lib"))


def load(name):
    path = os.path.join(lib_dir(), name)
    try:
        return ctypes.CDLL(path)
    except OSError as e:
        raise ImportError(f"cannot load {path} ({e}); build Weft (README) or "
                          "set WEFT_LIB_DIR to the directory holding it") from None
