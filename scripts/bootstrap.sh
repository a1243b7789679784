#!/usr/bin/env bash
# Installs what Weft builds with (Debian packages only) when it is missing,
# then configures and builds build/ (and, with --asan, build-asan/: the
# runtime under AddressSanitizer + UBSan). Safe to run again: it only does
# the work that is left.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(cmake ninja-build ccache gcc g++ llvm-22-dev libmlir-22-dev
          mlir-22-tools llvm-22-tools lld-22 liblld-22-dev libclang-rt-22-dev
          libamdhip64-dev
          rocm-device-libs python3-pytest python3-numpy)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" \
    || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "weft: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" = 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi

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
