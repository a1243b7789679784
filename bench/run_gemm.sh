#!/usr/bin/env bash
# The GEMM benchmark (bench/gemm.py: wl.dot against torch.matmul) on one
# GPU of this machine, from the carried kernel cache; CSV in
# $OUT/gemm-<date>.csv (or bench/results/). Extra arguments go to gemm.py.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
source scripts/gpu/common.sh
python_run bench_gemm
step gemm bench_sweep "${OUT:-bench/results}/gemm-$(date -u +%Y-%m-%d).csv" \
  "$build/bin/weft-run" -n 1 --backend cuda --timeout 1200 -- "$python" bench/gemm.py "$@"
report_misses
finish bench_gemm
