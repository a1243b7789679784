#!/usr/bin/env bash
# Runs the language's test matrix (python/test/language: ops x dtypes x
# shapes against numpy, the kernels written from the docs, random programs)
# on one GPU of this machine (WEFT_TEST_BACKEND=cuda), with Weft from the
# carried wheel (dist/: kernels compile here), then more random programs
# than CI's: WEFT_RANDOM_PROGRAMS (2000, about 3 minutes on an H200) of a
# new seed each day, WEFT_RANDOM_SEED to repeat one (2500 programs found a
# ptxas miscompile, docs/design.md, "Targets"; 2000 found a scan layout
# that made ptxas run for minutes, docs/tile-ir.md; 1500 of seed 99 a
# ptxas error in abs, "Targets" again). The log is
# $OUT/test_language.log; arguments go to the first pytest.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
export WEFT_GPUS=1
source scripts/gpu/common.sh
python_run test_language
export WEFT_TEST_BACKEND=cuda
step pytest "$build/bin/weft-run" -n 1 --backend cuda --timeout 900 -- \
  "$python" -m pytest -q -p no:cacheprovider -rs python/test/language "$@"
programs=${WEFT_RANDOM_PROGRAMS:-2000} seed=${WEFT_RANDOM_SEED:-$(date -u +%Y%m%d)}
step random_programs env WEFT_RANDOM_PROGRAMS="$programs" WEFT_RANDOM_SEED="$seed" \
  "$build/bin/weft-run" -n 1 --backend cuda --timeout 900 -- \
  "$python" -m pytest -q -p no:cacheprovider python/test/language/test_programs.py
finish test_language
