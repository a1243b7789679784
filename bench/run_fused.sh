#!/usr/bin/env bash
# The fused-kernel sweep (bench/fused.py; docs/python.md, "Fused kernels")
# on every GPU of this machine: builds the runtime (build-gpu/), runs it
# under weft-run from the carried kernel cache, and writes the CSV to
# $OUT/fused-<date>-<N>gpu.csv (or bench/results/ without OUT). Extra
# arguments go to bench/fused.py (e.g. --ops gemm_rs --tokens 16,8192).
# With --overhead first, bench/launch_overhead.py runs instead (the host
# time of an eager call), into launch-overhead-<date>-<N>gpu.csv.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
source scripts/gpu/common.sh   # multicast off (NCCL, NVSHMEM, torch symmetric memory)
python_run bench_fused
# Operands, the fused ops' scratch (GEMM + reduce-scatter: M x H f32 at
# 8192 x 8192 = 256 MiB, grown by powers of two) and the MoE receive
# buffers (E/R x R*C x H bf16, up to 512 MiB at 8192 tokens), with room.
export WEFT_HEAP_SIZE=${WEFT_HEAP_SIZE:-8G}
script=fused name=fused
if [[ ${1:-} == --overhead ]]; then
  shift
  script=launch_overhead name=launch-overhead
fi
csv=${OUT:-bench/results}/$name-$(date -u +%Y-%m-%d)-${ngpus}gpu.csv
step bench bench_sweep "$csv" "$build/bin/weft-run" -n "$ngpus" --backend cuda \
  --timeout 1800 -- "$python" bench/$script.py "$@"
report_misses
finish bench_fused
