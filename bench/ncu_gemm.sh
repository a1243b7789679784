#!/usr/bin/env bash
# Nsight Compute on one weft.ops.matmul launch (bench/gemm.py's kernel) on
# one GPU of this machine, from the carried kernel cache: speed of light,
# tensor-pipe activity, L2 and DRAM throughput, shared-memory bank
# conflicts. Report in $OUT/ncu-gemm.txt (or bench/results/). Arguments
# go to gemm.py (default: --shapes 8192x8192x8192).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
source scripts/gpu/common.sh
python_run ncu_gemm
args=("$@")
[[ ${#args[@]} -gt 0 ]] || args=(--shapes 8192x8192x8192)
metrics=sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active
metrics+=,lts__t_bytes.sum.per_second,dram__bytes.sum.per_second
metrics+=,sm__warps_active.avg.pct_of_peak_sustained_active
metrics+=,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum
# The third launch: the first two are the correctness check and a warm-up.
step ncu ncu --target-processes all --kernel-name matmul_kernel --launch-skip 2 \
  --launch-count 1 --section SpeedOfLight --metrics "$metrics" \
  --log-file "${OUT:-bench/results}/ncu-gemm.txt" \
  "$PWD/$build/bin/weft-run" -n 1 --backend cuda -- "$python" bench/gemm.py \
  --iters 3 --reps 1 --warmup 0 --no-graphs "${args[@]}"
finish ncu_gemm
