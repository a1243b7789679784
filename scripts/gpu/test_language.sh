#!/usr/bin/env bash
# Runs the language's test matrix (python/test/language: ops x dtypes x
# shapes against numpy, the kernels written from the docs, random programs)
# on one GPU of this machine (WEFT_TEST_BACKEND=cuda), with Weft from the
# carried wheel (dist/: kernels compile here). The log is
# $OUT/test_language.log; arguments go to pytest.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
export WEFT_GPUS=1
source scripts/gpu/common.sh
python_run test_language
export WEFT_TEST_BACKEND=cuda
step pytest "$build/bin/weft-run" -n 1 --backend cuda --timeout 900 -- \
  "$python" -m pytest -q -p no:cacheprovider -rs python/test/language "$@"
finish test_language
