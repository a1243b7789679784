#!/usr/bin/env bash
# The mma.sync ceiling of this machine's first GPU (bench/cuda/mma_peak.cu):
# CSV in $OUT/mma-peak-<date>.csv (or bench/results/).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
source scripts/gpu/common.sh
log_to bench_mma_peak
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
step nvcc "$NVCC" -arch=sm_90a -O3 -o "$work/mma_peak" bench/cuda/mma_peak.cu &&
  step mma_peak bash -c "'$work/mma_peak' | tee '${OUT:-bench/results}/mma-peak-$(date -u +%Y-%m-%d).csv'"
finish bench_mma_peak
