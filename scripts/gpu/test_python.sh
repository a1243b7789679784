#!/usr/bin/env bash
# Runs the Python rank suite (python/test/ranks, WEFT_TEST_BACKEND=cuda) and
# the Python examples on every GPU of this machine, from the kernel cache
# warm_cache.sh filled where LLVM is (README, "GPU runs"): build/gpu-cache,
# or $WEFT_GPU_CACHE. Nothing is compiled here (WEFT_CACHE_ONLY=1); with OUT
# set, a miss saves its compile request under $OUT/cache-misses for
# `scripts/gpu/warm_cache.sh DIR` there, and the log is $OUT/test_python.log.
# Arguments go to pytest (`-k matmul`: a part of the suite).
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
source scripts/gpu/common.sh
python_run test_python
"$python" -c 'import sys, numpy, torch; print("python", sys.version.split()[0],
  "numpy", numpy.__version__, "torch", torch.__version__, "cuda", torch.version.cuda)'
"$python" -m pytest --version
export WEFT_TEST_BACKEND=cuda
run=("$build/bin/weft-run" -n "$ngpus" --backend cuda --timeout 900 --)

step pytest "${run[@]}" "$python" -m pytest -q -p no:cacheprovider -rs python/test/ranks "$@"
for example in examples/python/*.py; do
  step "example-$(basename "$example" .py)" "${run[@]}" "$python" "$example"
done
report_misses
finish test_python
