#!/usr/bin/env bash
# The memory-model litmus tests (test/litmus, docs/memory-model.md) on every
# GPU of this machine, 10^6 iterations per instance (or $1), from the
# carried kernel cache. Table in $OUT/litmus.log, rows in $OUT/litmus.json;
# non-zero if a correct variant shows a forbidden outcome.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
source scripts/gpu/common.sh
python_run litmus
export WEFT_WAIT_TIMEOUT=60  # a handshake that never completes fails the launch
step litmus "$build/bin/weft-run" -n "$ngpus" --backend cuda --timeout 1800 -- \
  "$python" test/litmus/litmus.py --iterations "${1:-1000000}" --json "${OUT:-$work}/litmus.json"
report_misses
finish litmus
