#!/usr/bin/env bash
# The attention sweep (bench/attention.py) on every GPU of this machine:
# builds the runtime (build-gpu/), runs it under weft-run, and writes the
# CSV to $OUT/attention-<date>-<N>gpu.csv (or bench/results/ without OUT).
# Extra arguments go to bench/attention.py (e.g. --ops ring --seqs 8192).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
source scripts/gpu/common.sh   # multicast off (NCCL, NVSHMEM, torch symmetric memory)
python_run bench_attention
# Ring and Ulysses scratch: k and v of every rank (2 x R x the shard); the
# ring backward's gathered shards (7 x R x the shard).
export WEFT_HEAP_SIZE=${WEFT_HEAP_SIZE:-8G}
csv=${OUT:-bench/results}/attention-$(date -u +%Y-%m-%d)-${ngpus}gpu.csv
step bench bench_sweep "$csv" "$build/bin/weft-run" -n "$ngpus" --backend cuda \
  --timeout 1800 -- "$python" bench/attention.py "$@"
report_misses
finish bench_attention
