#!/usr/bin/env bash
# Compiles the weft kernels that validate_runtime.sh runs into
# build/gpu-kernels (or $1), with build/bin/weft-compile (or $WEFT_COMPILE:
# validate_runtime.sh passes the carried wheel's on a GPU machine).
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-build/gpu-kernels}
mkdir -p "$out"
# bad_peer: the debug checks' report, from a translate to a peer that is no rank.
"${WEFT_COMPILE:-build/bin/weft-compile}" test/E2E/bad_peer.mlir --target=cuda:90 --emit=ptx \
  --debug -o "$out/bad_peer.ptx"
echo "compiled into $out: $(ls "$out" | tr '\n' ' ')"
