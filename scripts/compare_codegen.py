"""Shows that a change to the compiler changed no generated code: compile
a corpus of kernels with one build, then with another, and compare.

The corpus is the compile requests a run records with WEFT_CACHE_MISSES=DIR
(each kernel it compiled: its IR, target and options), e.g. the GPU
warm-up, which runs the rank suite, the examples, the litmus tests and the
benchmarks with every launch also compiled for cuda:90:

    WEFT_CACHE_MISSES=build/corpus scripts/gpu/warm_cache.sh
    PYTHONPATH=python /usr/bin/python3 scripts/compare_codegen.py compile build/corpus OLD
    ... change and rebuild the compiler ...
    PYTHONPATH=python /usr/bin/python3 scripts/compare_codegen.py compile build/corpus NEW
    PYTHONPATH=python /usr/bin/python3 scripts/compare_codegen.py diff OLD NEW

`compile` writes, per request, the target code (ptx, amdgcn or asm) and the
launch settings ("kernels") as OUT/<key>.<target>.<artifact>, or the
compiler's error as OUT/<key>.<target>.error; each cuda:90 request is also
compiled for hip:gfx942. `diff` lists what differs and exits non-zero if
anything does.
"""
import json
import os
import sys

from weft import _capi
from weft._errors import CompilationError

COMPARED = ("ptx", "amdgcn", "asm", "kernels")
ALSO = {"cuda:90": "hip:gfx942"}  # the same IR, compiled for another GPU too


def compile_corpus(requests, out):
    os.makedirs(out, exist_ok=True)
    names = sorted(f for f in os.listdir(requests) if f.endswith(".json"))
    for count, name in enumerate(names, 1):
        with open(os.path.join(requests, name)) as f:
            r = json.load(f)
        for target in (r["target"], ALSO.get(r["target"])):
            if target is None:
                continue
            stem = os.path.join(out, f"{r['key']}.{target.replace(':', '_')}")
            try:
                arts = _capi.compile_ir(r["ir"], target, r["options"])
            except CompilationError as e:
                arts = {"error": str(e).encode()}
            for artifact in COMPARED + ("error",):
                if artifact in arts:
                    with open(f"{stem}.{artifact}", "wb") as f:
                        f.write(arts[artifact])
        if count % 50 == 0:
            print(f"compare_codegen: {count} of {len(names)} requests", flush=True)
    print(f"compare_codegen: {len(names)} requests compiled into {out}")
    return 0


def diff(old, new):
    a, b = set(os.listdir(old)), set(os.listdir(new))
    differ = sorted(n for n in a & b
                    if open(os.path.join(old, n), "rb").read() !=
                    open(os.path.join(new, n), "rb").read())
    for label, names in (("only in " + old, a - b), ("only in " + new, b - a),
                         ("different", differ)):
        for n in sorted(names):
            print(f"{label}: {n}")
    same = len(a & b) - len(differ)
    print(f"compare_codegen: {same} files the same, {len(differ)} different, "
          f"{len(a ^ b)} in one tree only")
    return 1 if differ or a ^ b else 0


def main(argv):
    if len(argv) == 3 and argv[0] == "compile":
        return compile_corpus(argv[1], argv[2])
    if len(argv) == 3 and argv[0] == "diff":
        return diff(argv[1], argv[2])
    print(__doc__.strip(), file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
