#!/usr/bin/env bash
# The latency measurements (bench/README.md, "Latency") on every GPU of this
# machine: the small collectives (bf16, 4 KiB-2 MiB per rank: each Weft
# algorithm, NCCL, torch symmetric memory and the hand-written CUDA
# one-shot, eager and in CUDA graphs) and the host time of eager calls
# (bench/launch_overhead.py: a bare launch against Triton's, the
# collectives, the fused ops at a decode shape; bench/cuda/launch_floor.cu:
# the CUDA runtime's own launch). CSVs into $OUT (or bench/results/):
# latency-<date>-<N>gpu.csv, launch-overhead-<date>-<N>gpu.csv.
# Extra arguments go to bench/collectives.py.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
source scripts/gpu/common.sh   # multicast off (NCCL, NVSHMEM, torch symmetric memory)
python_run bench_latency
dir=${OUT:-bench/results}
day=$(date -u +%Y-%m-%d)
systems=weft,weft_graph,weft_ll,weft_ll_graph,weft_ll128,weft_ll128_graph,weft_push,weft_push_graph
systems+=,weft_one_shot,weft_one_shot_graph,weft_two_shot,weft_two_shot_graph,cuda,cuda_graph
systems+=,nccl,nccl_graph,symm_one_shot,symm_one_shot_graph,symm_two_shot,symm_two_shot_graph
step collectives bench_sweep "$dir/latency-$day-${ngpus}gpu.csv" \
  "$build/bin/weft-run" -n "$ngpus" --backend cuda --timeout 1200 -- "$python" \
  bench/collectives.py --ops all_reduce,all_gather --dtypes bf16 \
  --sizes 4K,16K,64K,256K,1M,2M --systems "$systems" --iters 50 --reps 10 "$@"
# The floor under any eager launch here: the CUDA runtime's own launch.
step floor bash -c "/usr/local/cuda/bin/nvcc -O2 -I include -o $build/launch_floor \
  bench/cuda/launch_floor.cu && $build/launch_floor"
step overhead bench_sweep "$dir/launch-overhead-$day-${ngpus}gpu.csv" \
  "$build/bin/weft-run" -n "$ngpus" --backend cuda --timeout 900 -- \
  "$python" bench/launch_overhead.py --tokens 16 --hidden 4096
report_misses
finish bench_latency
