#!/usr/bin/env bash
# Builds the wheel, offline, from Debian packages (README, "Install"):
# dist/weft-<version>-py3-none-manylinux_<glibc>_x86_64.whl, with the
# compiler (LLVM, MLIR and LLD linked in), the runtime, the tools, the C
# headers and the CMake and pkg-config files. The CMake tree is
# build-wheel/ ($WEFT_WHEEL_BUILD_DIR).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install_packages.sh
rm -f dist/weft-*.whl
/usr/bin/python3 -m build --wheel --no-isolation --outdir dist "$@"
ls -l dist/weft-*.whl
