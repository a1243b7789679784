"""python3 -m weft fill-cache PATH...: compiles the kernel requests a
WEFT_CACHE_ONLY=1 run saved under $WEFT_CACHE_MISSES into $WEFT_CACHE_DIR
(README, "GPU runs")."""
import sys

from . import _cache
from ._errors import CompilationError


def main(argv):
    if len(argv) < 2 or argv[0] != "fill-cache":
        print(__doc__.strip(), file=sys.stderr)
        return 2
    try:
        compiled, present = _cache.fill(argv[1:])
    except (CompilationError, OSError, ValueError, KeyError) as e:
        print(f"weft fill-cache: {e}", file=sys.stderr)
        return 1
    print(f"weft fill-cache: {compiled} compiled, {present} already in {_cache.cache_dir()}")
    return 0


sys.exit(main(sys.argv[1:]))
