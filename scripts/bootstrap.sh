#!/usr/bin/env bash
# Installs what Weft builds with (Debian packages only) when it is missing,
# then configures and builds build/ (and, with --asan, build-asan/: the
# runtime under AddressSanitizer + UBSan). Safe to run again: it only does
# the work that is left.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install_packages.sh

jobs=$(nproc)
configure() { # dir, extra cmake args...
  local dir=$1; shift
  [ -f "$dir/build.ninja" ] || cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release "$@"
  cmake --build "$dir" -j "$jobs"
}
configure build
if [ "${1:-}" = "--asan" ]; then
  configure build-asan -DWEFT_ENABLE_COMPILER=OFF -DWEFT_SANITIZE=ON
fi
