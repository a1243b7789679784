#!/usr/bin/env bash
# Fills the kernel cache that the GPU scripts run from, here where LLVM is
# (README, "GPU runs"). The rank suite, the Python examples, the litmus
# tests and the collectives, fused-kernel and GEMM benchmarks run on N host
# ranks (WEFT_GPU_RANKS, default 2: the GPU count there) with
# WEFT_WARM_TARGET (default cuda:90):
# every launch is also compiled for that target, its PerBackend constexprs
# resolved for it. That target's entries are then copied into
# build/gpu-cache (or $WEFT_GPU_CACHE), the directory to carry (with
# build/pylibs: pytest, should the GPU image lack it). Arguments name
# directories of requests a GPU run saved on cache misses
# (WEFT_CACHE_MISSES); they are kept in build/gpu-misses and compiled in on
# this and every later warm-up.
set -euo pipefail
cd "$(dirname "$0")/../.."
ranks=${WEFT_GPU_RANKS:-2}
export WEFT_WARM_TARGET=${WEFT_WARM_TARGET:-cuda:90}
# Host and GPU entries side by side: reruns hit both.
export WEFT_CACHE_DIR=$PWD/build/warm-cache
export PYTHONPATH=$PWD/python WEFT_LIB_DIR=$PWD/build/lib PYTHONDONTWRITEBYTECODE=1
out=${WEFT_GPU_CACHE:-$PWD/build/gpu-cache}
run=(build/bin/weft-run -n "$ranks" --timeout 3000 --)

"${run[@]}" /usr/bin/python3 -m pytest -q -p no:cacheprovider python/test/ranks
for example in examples/python/*.py; do
  "${run[@]}" /usr/bin/python3 "$example" > /dev/null
done
# The litmus kernels: iteration counts are not specialised, so a short run
# asks for the kernels a 10^6-iteration run does.
"${run[@]}" /usr/bin/python3 test/litmus/litmus.py --iterations 100 > /dev/null
# The benchmark's Weft kernels: its sizes share these specialisations
# (element counts divisible by 16; one-shot and two-shot all-reduce; the
# small- and the large-message grid).
"${run[@]}" /usr/bin/python3 bench/collectives.py --sizes 4K,4M --iters 1 --warmup 0 \
  --systems weft,weft_one_shot > /dev/null
# The grid sweep's kernels (every block size and warp count it tries).
"${run[@]}" /usr/bin/python3 bench/tune_collectives.py --size 64K --iters 1 > /dev/null
# The fused-kernel benchmark's Weft kernels, every algorithm: small tokens
# and hidden size with the GPU sweep's divisibilities ask for its
# specialisations.
"${run[@]}" /usr/bin/python3 bench/fused.py --tokens 16,64 --hidden 256 --iters 1 \
  --warmup 0 --systems weft,weft_gather,weft_overlap > /dev/null
# The GEMMs that all_gather_matmul (both algorithms), matmul_reduce_scatter
# and matmul_all_reduce run at the fused sweep's prefill shapes, too large to
# run on host ranks: compiled from the blocks matmul picks for them.
PYTHONPATH=$PYTHONPATH:$PWD/bench /usr/bin/python3 - "$ranks" <<'PY'
import os, sys
from weft.ops import _gemm as G, _second_layer as S, _tp as T
from fused import HIDDEN, TOKENS
target = os.environ["WEFT_WARM_TARGET"]
ranks = int(sys.argv[1])
for hidden in HIDDEN:
    for tokens in TOKENS:
        m, n, k = tokens, hidden // ranks, hidden
        G.compile_matmul(m, n, k, target, "*fp32:16")
        T.compile_all_gather_matmul(m, n, k, ranks, target)
        # The second layer: x (tokens x hidden/ranks) @ W (hidden/ranks x hidden).
        for scatter in (True, False):
            S.compile_matmul_reduce(tokens, hidden, hidden // ranks, ranks, scatter, target)
PY
# The GEMM benchmark's kernels, its mma.sync ones too (one rank: it has no
# communication).
build/bin/weft-run -n 1 -- /usr/bin/python3 bench/gemm.py --warp-mma > /dev/null
# Requests GPU runs saved (arguments) are kept in build/gpu-misses and
# compiled on every warm-up, so a new compiler build still has them.
mkdir -p build/gpu-misses
for dir in "$@"; do
  [[ "$(realpath "$dir")" == "$(realpath build/gpu-misses)" ]] ||
    cp "$dir"/*.json build/gpu-misses/
done
if compgen -G "build/gpu-misses/*.json" > /dev/null; then
  /usr/bin/python3 -m weft fill-cache build/gpu-misses
fi
# Only this compiler's entries: a machine without the compiler picks the
# cache's one version directory. The LLVM IR stays here (three quarters of
# the bytes; nothing on a GPU machine reads it), so the cache fits what a
# run carries.
/usr/bin/python3 - "$WEFT_CACHE_DIR" "$out" "$WEFT_WARM_TARGET" <<'PY'
import json, os, shutil, sys
from weft import _cache
src, dst, target = sys.argv[1:]
version = _cache._version_dir(src)
for stale in set(os.listdir(dst) if os.path.isdir(dst) else ()) - {version}:
    shutil.rmtree(os.path.join(dst, stale))
copied = 0
for key in os.listdir(os.path.join(src, version)):
    entry = os.path.join(src, version, key)
    index = os.path.join(entry, "index.json")
    if not os.path.isfile(index):
        continue
    with open(index) as f:
        if json.load(f)["target"] != target:
            continue
    there = os.path.join(dst, version, key)
    if not os.path.isdir(there):
        shutil.copytree(entry, there, ignore=shutil.ignore_patterns("llir"))
        with open(os.path.join(there, "index.json")) as f:
            index = json.load(f)
        index["artifacts"] = [a for a in index["artifacts"] if a != "llir"]
        with open(os.path.join(there, "index.json"), "w") as f:
            json.dump(index, f)
    copied += 1
print(f"warm_cache: {copied} {target} kernels of {version} in {dst}")
PY
du -sh "$out"
# pytest for a GPU image without it: Debian's, pure Python (test_python.sh
# uses it only when the image's python has none).
mkdir -p build/pylibs
for m in pytest _pytest pluggy iniconfig packaging py py.py attr more_itertools; do
  [[ -e /usr/lib/python3/dist-packages/$m ]] && cp -r "/usr/lib/python3/dist-packages/$m" build/pylibs/
done
find build/pylibs -name __pycache__ -prune -exec rm -rf {} +
