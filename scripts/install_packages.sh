#!/usr/bin/env bash
# Installs the Debian packages Weft builds, tests and packages with, those
# that are missing (bootstrap.sh and build_wheel.sh run it).
set -euo pipefail

packages=(cmake ninja-build ccache gcc g++ pkg-config llvm-22-dev libmlir-22-dev
          mlir-22-tools llvm-22-tools lld-22 liblld-22-dev libclang-rt-22-dev
          zlib1g-dev libzstd-dev libamdhip64-dev rocm-device-libs
          libopenmpi-dev openmpi-bin
          python3-pytest python3-numpy python3-build python3-setuptools
          python3-wheel python3-venv python3-pip)
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
