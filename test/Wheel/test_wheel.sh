#!/usr/bin/env bash
# The wheel as a user gets it: built from this checkout
# (scripts/build_wheel.sh), at most 40 MB, its compiler free of shared
# LLVM/MLIR, installed with pip into an empty venv (system site-packages
# off; Debian's numpy linked in), then used from a directory outside the
# checkout with no PYTHONPATH or WEFT_LIB_DIR: a kernel compiled for every
# target, the ring example on 3 host ranks through the installed weft-run,
# and the C example built against the installed headers with pkg-config and
# with CMake.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
unset PYTHONPATH WEFT_LIB_DIR
export WEFT_CACHE_DIR=$work/cache

"$root/scripts/build_wheel.sh" > "$work/build.log" 2>&1 || { cat "$work/build.log"; exit 1; }
wheel=$(ls "$root"/dist/weft-*.whl)
size=$(stat -c %s "$wheel")
echo "wheel: $(basename "$wheel"), $((size / 1000000)) MB"
((size <= 40000000)) || { echo "FAIL: the wheel is over 40 MB"; exit 1; }
/usr/bin/python3 -c "import sys, zipfile; sys.stdout.buffer.write(zipfile.ZipFile(sys.argv[1]).read('weft/lib/libWeftCAPI.so'))" "$wheel" > "$work/capi.so"
if readelf -d "$work/capi.so" | grep -E 'NEEDED.*lib(LLVM|MLIR|lld|z3|stdc\+\+)'; then
  echo "FAIL: libWeftCAPI.so needs a shared library the wheel must not"; exit 1
fi

/usr/bin/python3 -m venv "$work/venv"
py=$work/venv/bin/python
"$py" -m pip install -q --no-deps --no-index "$wheel"
site=$("$py" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
ln -s /usr/lib/python3/dist-packages/numpy "$site/numpy"

cd "$work"
"$py" "$root/test/Wheel/check_install.py" "$site"
prefix=$("$py" -m weft prefix)
"$work/venv/bin/weft-compile" --help > /dev/null

cp "$root/examples/python/ring.py" .
"$work/venv/bin/weft-run" -n 3 --timeout 300 -- "$py" ring.py

export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
cc -std=c11 -Wall "$root/examples/c/heap_ring.c" $(pkg-config --cflags --libs weft) \
  -o heap_ring_pc
"$work/venv/bin/weft-run" -n 3 --timeout 60 -- ./heap_ring_pc
cmake -S "$root/test/Wheel/c-example" -B cmake-example -DEXAMPLE="$root/examples/c/heap_ring.c" \
  -DCMAKE_PREFIX_PATH="$prefix" > cmake.log || { cat cmake.log; exit 1; }
cmake --build cmake-example > /dev/null
"$work/venv/bin/weft-run" -n 3 --timeout 60 -- cmake-example/heap_ring
echo "wheel: ok"
