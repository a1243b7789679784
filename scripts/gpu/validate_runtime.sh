#!/usr/bin/env bash
# Validates libweft's CUDA backend on a GPU machine, from
# the repository root: builds the runtime alone, builds test/Runtime/gpu
# with nvcc, and runs it on every GPU through weft-run with each heap kind
# (WEFT_CUDA_HEAP=vmm, ipc), then its error and tensor-map cases.
# Everything is also written to $OUT/validate_runtime.log when OUT is set.
# Exits non-zero on any failure.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
source scripts/gpu/common.sh
log_to validate_runtime

NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
kernels=${WEFT_GPU_KERNELS:-build/gpu-kernels}

date -u
nvidia-smi -L
nvidia-smi topo -m || true
"$NVCC" --version | tail -n 2
build_runtime || exit 1
step nvcc-cubin "$NVCC" -arch=sm_90 -Iinclude -cubin -o "$work/peer_kernels.cubin" \
  test/Runtime/gpu/peer_kernels.cu || exit 1
step nvcc-ptx "$NVCC" -arch=sm_90 -Iinclude -ptx -o "$work/peer_kernels.ptx" \
  test/Runtime/gpu/peer_kernels.cu || exit 1
step cc-peer-test cc -std=c11 -O2 -Wall -Wextra -Werror -Iinclude \
  test/Runtime/gpu/peer_test.c -L"$build/lib" -lweft -Wl,-rpath,"$PWD/$build/lib" \
  -o "$work/peer_test" || exit 1

# The host-backend suite, plus the backends case, which here expects CUDA
# to initialise and to be the default.
step ctest ctest --test-dir "$build" -L runtime -j 8 --output-on-failure

run=("$build/bin/weft-run" -n "$ngpus" --backend cuda --timeout 300 --)
# The cubin under the VMM heap, the PTX (JIT) under the IPC heap.
for heap in vmm ipc; do
  module=$work/peer_kernels.cubin
  [[ $heap == ipc ]] && module=$work/peer_kernels.ptx
  if step "peers-$heap" env WEFT_CUDA_HEAP=$heap WEFT_DEBUG=1 \
      "${run[@]}" "$work/peer_test" peers "$module" 256; then
    # The heap kind asked for is the one every rank mapped (counted as
    # matches: the ranks' lines can share one line of the log).
    if [[ $(grep -o "cuda backend: device [0-9]* ([^)]*), $heap heap" "$work/peers-$heap.log" |
            wc -l) != "$ngpus" ]]; then
      echo "== peers-$heap: FAILED: not every rank reports a $heap heap"
      failures=$((failures + 1))
    fi
  fi
done
step errors "${run[@]}" "$work/peer_test" errors "$work/peer_kernels.ptx"
# Tensor maps (cuTensorMapEncodeTiled) driving bulk tensor copies.
step tensor-desc "${run[@]}" "$work/peer_test" tensor-desc "$work/peer_kernels.cubin"
# Programmatic dependent launch (cuLaunchKernelEx).
step early-start "${run[@]}" "$work/peer_test" early-start "$work/peer_kernels.cubin"
# Resident launches: the grid cut to what fits at once, per shape.
step resident "${run[@]}" "$work/peer_test" resident "$work/peer_kernels.cubin"
# Kernels from the weft compiler: compiled here with the carried wheel's
# weft-compile, else carried in $kernels (scripts/gpu/compile_kernels.sh
# where LLVM is).
if [[ ! -f $kernels/bad_peer.ptx ]] && python_env > /dev/null && [[ -d $build/site ]]; then
  step compile-kernels env WEFT_COMPILE="$build/site/weft/bin/weft-compile" \
    scripts/gpu/compile_kernels.sh "$kernels"
fi
if [[ -f $kernels/bad_peer.ptx ]]; then
  step debug "${run[@]}" "$work/peer_test" debug "$kernels/bad_peer.ptx"
else
  echo "== debug: skipped ($kernels/bad_peer.ptx missing: run scripts/gpu/compile_kernels.sh where LLVM is and carry $kernels)"
fi
if ((ngpus >= 2)); then
  step same-device "$build/bin/weft-run" -n 2 --backend cuda --timeout 120 -- \
    "$work/peer_test" same-device "$work/peer_kernels.ptx"
fi

echo "== bandwidth (GB/s per direction, all ranks at once):"
for heap in vmm ipc; do
  echo "   $heap heap:"
  grep -h "GB/s" "$work/peers-$heap.log" | sed 's/^/     /'
done
finish validate_runtime
