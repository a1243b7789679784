#!/usr/bin/env bash
# Transfers across nodes against within a node and against torch symmetric
# memory's NVSHMEM backend (bench/nodes.py; bench/README.md, "Across
# nodes"), on the first two GPUs of this machine, each its own node for the
# first job: put latency and bandwidth, all_to_all. One CSV into $OUT (or
# bench/results/): nodes-<date>-2gpu.csv, and the table of ratios. Extra
# arguments go to bench/nodes.py.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
source scripts/gpu/common.sh   # multicast off (NCCL, NVSHMEM, torch symmetric memory)
python_run bench_nodes
if ((ngpus < 2)); then
  echo "bench_nodes: needs two GPUs"
  exit 1
fi
dir=${OUT:-bench/results}
csv=$dir/nodes-$(date -u +%Y-%m-%d)-2gpu.csv
run=("$build/bin/weft-run" -n 2 --backend cuda --timeout 500)
bench=("$python" bench/nodes.py --case-timeout 120 "$@")
step weft-nvshmem bench_sweep "$csv" "${run[@]}" --local-size 1 -- "${bench[@]}"
step weft-store bench_sweep "$csv" "${run[@]}" -- "${bench[@]}" --resume
step torch-nvshmem bench_sweep "$csv" "${run[@]}" -- "${bench[@]}" --torch --resume
step table "$python" bench/nodes.py --table "$csv"
finish bench_nodes
