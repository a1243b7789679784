#!/usr/bin/env bash
# Nsight Compute on the fused GEMMs' kernels and matmul's, one rank on one
# GPU of this machine, from the carried kernel cache: duration, launch
# shape (grid, clusters, registers), speed of light, L2 and DRAM
# throughput, local-memory (spill) traffic. Report in $OUT/ncu-fused.txt
# (or bench/results/). Arguments go to fused.py (default: gemm_rs and
# ag_gemm, "gather" and "overlap", at 8192 x 8192).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
source scripts/gpu/common.sh
python_run ncu_fused
export WEFT_HEAP_SIZE=${WEFT_HEAP_SIZE:-8G}
args=("$@")
[[ ${#args[@]} -gt 0 ]] || args=(--ops gemm_rs,ag_gemm --tokens 8192 --hidden 8192
                                 --systems weft,weft_overlap)
metrics=lts__t_bytes.sum.per_second,dram__bytes.sum.per_second
metrics+=,l1tex__t_bytes_pipe_lsu_mem_local_op_ld.sum,l1tex__t_bytes_pipe_lsu_mem_local_op_st.sum
metrics+=,launch__cluster_dim_x,launch__cluster_dim_y
# Every launch of the kernels: fused.py checks each system once, then
# times --iters calls.
step ncu ncu --target-processes all \
  --kernel-name regex:'^(matmul_reduce_kernel|matmul_kernel|ag_matmul_kernel)$' \
  --launch-count 8 --section SpeedOfLight --section LaunchStats --metrics "$metrics" \
  --log-file "${OUT:-bench/results}/ncu-fused.txt" \
  "$PWD/$build/bin/weft-run" -n 1 --backend cuda -- "$python" bench/fused.py \
  --iters 1 --warmup 0 --reps 1 "${args[@]}"
finish ncu_fused
