#!/usr/bin/env bash
# The whole test suite: builds what is needed, then runs every test (the
# runtime's tests under ASan + UBSan first, then everything in build/: lit
# through ctest, the runtime, the C API and the end-to-end kernels) and ends
# with ctest's summary line.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh --asan
export WEFT_REQUIRE_PTXAS=${WEFT_REQUIRE_PTXAS:-0}
jobs=$(nproc)
log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
suite() { # build dir, ctest args...
  local dir=$1; shift
  if ! ctest --test-dir "$dir" -j "$jobs" --output-on-failure "$@" 2>&1 |
         tee -a "$log"; then
    status=1
  fi
}
suite build-asan -L runtime
suite build
# ctest ends with timing lines; the last line is the plain total of both runs.
awk '/tests passed, [0-9]+ tests? failed out of/ {
       failed += $4; total += $NF }
     END { printf "%d passed, %d failed\n", total - failed, failed }' "$log"
exit $status
