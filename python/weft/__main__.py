"""python3 -m weft COMMAND:

  prefix               the directory holding Weft's bin/, include/, lib/ and
                       share/ (C programs: PKG_CONFIG_PATH=PREFIX/lib/pkgconfig,
                       or CMAKE_PREFIX_PATH=PREFIX for find_package(Weft))
  info                 the compiler, the libraries and the files it takes from
                       this machine (ptxas, libdevice, OCML, compiler-rt)
  language-table       the table of the language's builtins (docs/python.md)
  fill-cache PATH...   compiles the kernel requests a WEFT_CACHE_ONLY=1 run
                       saved under $WEFT_CACHE_MISSES into $WEFT_CACHE_DIR
                       (README, "GPU runs")
"""
import sys

from . import _cache, _capi, _libs
from ._errors import CompilationError


def fill_cache(paths):
    try:
        compiled, present = _cache.fill(paths)
    except (CompilationError, OSError, ValueError, KeyError) as e:
        print(f"weft fill-cache: {e}", file=sys.stderr)
        return 1
    print(f"weft fill-cache: {compiled} compiled, {present} already in {_cache.cache_dir()}")
    return 0


def info():
    print(f"prefix:        {_libs.prefix()}")
    print(f"libraries:     {_libs.lib_dir()}")
    try:
        print(f"compiler:      {_capi.version()}")
    except ImportError as e:
        print(f"compiler:      none ({e})")
        return 1
    for name in ("ptxas", "libdevice", "ocml", "ockl", "host-builtins"):
        try:
            found = _capi.locate(name)
        except CompilationError as e:
            found = f"not found: {e}"
        print(f"{name + ':':<15}{found}")
    print(f"cache:         {_cache.cache_dir()}")
    return 0


def main(argv):
    if argv[:1] == ["prefix"] and len(argv) == 1:
        print(_libs.prefix())
        return 0
    if argv[:1] == ["info"] and len(argv) == 1:
        return info()
    if argv == ["language-table"]:
        from ._builtins import language_table
        print(language_table(), end="")
        return 0
    if argv[:1] == ["fill-cache"] and len(argv) > 1:
        return fill_cache(argv[1:])
    print(__doc__.strip(), file=sys.stderr)
    return 2


sys.exit(main(sys.argv[1:]))
