#!/usr/bin/env bash
# compute-sanitizer (memcheck, racecheck) on every GPU of this machine over
# the rank suite's collective tests at 1000 elements (each collective and
# all-reduce algorithm, f32/f16/bf16), its wl.dot tests (the mma paths),
# the tensor-descriptor kernels (bulk tensor copies on mbarriers), the
# copy engine's puts that wait for a kernel's counts (test_puts_wait), the
# fused all_gather_matmul and the attention ops (Weft from the carried wheel
# or kernel cache). Only Weft's kernels are checked: their names are not C++-mangled,
# and the baselines' (torch's SDPA, whose memory-efficient kernel
# racecheck flags on its own) are. Logs in
# $OUT/sanitize.log; non-zero if a tool reports an error or a test fails.
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
    --kernel-name-exclude regex=^_Z \
    "$python" -m pytest -q -p no:cacheprovider -x -k "1000 or dot or matmul or attention or puts_wait" \
    python/test/ranks/test_collectives.py python/test/ranks/test_ops.py \
    python/test/ranks/test_fused.py python/test/ranks/test_desc_kernels.py \
    python/test/ranks/test_attention.py
done
report_misses
finish sanitize
