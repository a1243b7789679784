#!/usr/bin/env bash
# The collectives sweep on every GPU of this machine (bench/README.md):
# builds the runtime (build-gpu/), runs bench/collectives.py under weft-run
# from the carried kernel cache, and writes the CSV to
# $OUT/collectives-<date>-<N>gpu.csv (or bench/results/ without OUT).
# Extra arguments go to bench/collectives.py (e.g. --max-size 16M).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
source scripts/gpu/common.sh
python_run bench_collectives
# x, out (num_ranks x x for all_gather) and the collectives' scratch of the
# largest size, with room to spare.
export WEFT_HEAP_SIZE=${WEFT_HEAP_SIZE:-$(( (ngpus + 6) ))G}
csv=${OUT:-bench/results}/collectives-$(date -u +%Y-%m-%d)-${ngpus}gpu.csv
step bench bench_sweep "$csv" "$build/bin/weft-run" -n "$ngpus" --backend cuda \
  --timeout 1800 -- "$python" bench/collectives.py "$@"
report_misses
finish bench_collectives
