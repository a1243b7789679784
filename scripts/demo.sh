#!/usr/bin/env bash
# The demo: builds Weft (installing what is missing), then compiles
# examples/ring/ring.mlir in-process and runs it on 4 ranks of the host
# target, printing what each rank received.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh
echo "--- the kernel (examples/ring/ring.mlir), lowered for sm_90:"
build/bin/weft-compile examples/ring/ring.mlir --target=cuda:90 --emit=ptx |
  grep -E 'atom|ld\.(acquire|relaxed)|st\.|fence' | head -n 12
echo "--- running it on 4 ranks of the host target:"
WEFT_WAIT_TIMEOUT=30 build/bin/weft-run -n 4 --timeout 60 -- \
  build/bin/weft-ring examples/ring/ring.mlir
