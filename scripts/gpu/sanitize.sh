#!/usr/bin/env bash
# compute-sanitizer (memcheck, racecheck) over every collective on every GPU
# of this machine: the rank suite's collective tests at 1000 elements (each
# collective and all-reduce algorithm, f32/f16/bf16), from the carried
# kernel cache. Logs in $OUT/sanitize.log; non-zero if a tool reports an
# error or a test fails.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
source scripts/gpu/common.sh
python_run sanitize
export WEFT_TEST_BACKEND=cuda
export WEFT_WAIT_TIMEOUT=600  # the tools slow ranks down unevenly
sanitizer=${COMPUTE_SANITIZER:-/usr/local/cuda/bin/compute-sanitizer}
"$sanitizer" --version | tail -n 1
for tool in memcheck racecheck; do
  step "$tool" "$build/bin/weft-run" -n "$ngpus" --backend cuda --timeout 1800 -- \
    "$sanitizer" --tool "$tool" --error-exitcode 9 --print-limit 20 \
    "$python" -m pytest -q -p no:cacheprovider -x python/test/ranks/test_collectives.py -k 1000
done
report_misses
finish sanitize
