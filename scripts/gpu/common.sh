# Sourced by the scripts that run on a GPU machine (CUDA, no LLVM), from the
# repository root: the multicast guard, logging under $OUT, steps that count
# failures, and the runtime built alone in build-gpu/.

# Multicast (NVLS) objects must never be created on the lent machines.
export NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
unset WEFT_ENABLE_MULTICAST
# A device wait that never completes fails its launch rather than hanging.
export WEFT_WAIT_TIMEOUT=${WEFT_WAIT_TIMEOUT:-120}

build=build-gpu
work=$build/gpu-test
mkdir -p "$work"
failures=0
# Every GPU of the machine, or the first $WEFT_GPUS of them.
ngpus=$(nvidia-smi -L | wc -l)
if [[ -n "${WEFT_GPUS:-}" ]] && ((WEFT_GPUS < ngpus)); then
  ngpus=$WEFT_GPUS
  export CUDA_VISIBLE_DEVICES=$(seq -s, 0 $((ngpus - 1)))
fi

# log_to NAME: everything from here on also goes to $OUT/NAME.log when OUT is set.
log_to() {
  if [[ -n "${OUT:-}" ]]; then
    mkdir -p "$OUT"
    exec > >(tee "$OUT/$1.log") 2>&1
  fi
}

step() { # step NAME CMD...: runs CMD, keeps its output in $work/NAME.log
  local name=$1 start=$SECONDS
  shift
  echo "== $name: $*"
  if "$@" 2>&1 | tee "$work/$name.log"; then
    echo "== $name: ok ($((SECONDS - start)) s)"
  else
    echo "== $name: FAILED ($((SECONDS - start)) s)"
    failures=$((failures + 1))
    return 1
  fi
}

build_runtime() {
  local generator="Unix Makefiles"
  command -v ninja > /dev/null && generator=Ninja
  step configure cmake -S . -B "$build" -G "$generator" -DCMAKE_BUILD_TYPE=Release \
    -DWEFT_ENABLE_COMPILER=OFF -DWEFT_ENABLE_HIP=OFF &&
    step build cmake --build "$build" -j "$(nproc)"
}

# python_env: Python runs Weft from the wheel carried here (dist/, built by
# scripts/build_wheel.sh where LLVM is), installed into $build/site:
# kernels compile here on first launch, into $build/kernel-cache (kept
# while the machine is). Without a wheel, from the kernel cache
# warm_cache.sh filled where LLVM is (WEFT_CACHE_ONLY=1): nothing is
# compiled, and with OUT set misses save their requests under
# $OUT/cache-misses.
python_env() {
  python=${PYTHON:-python3}
  if ! "$python" -c 'import pytest' 2> /dev/null && [[ -d build/pylibs ]]; then
    export PYTHONPATH=$PWD/build/pylibs${PYTHONPATH:+:$PYTHONPATH}  # carried pytest
  fi
  export PYTHONDONTWRITEBYTECODE=1
  local wheel
  wheel=$(ls dist/weft-*.whl 2> /dev/null | tail -n 1)
  if [[ -n $wheel ]]; then
    "$python" -m pip install -q --no-deps --no-index --upgrade --target "$build/site" "$wheel" ||
      return 1
    export PYTHONPATH=$PWD/$build/site${PYTHONPATH:+:$PYTHONPATH}
    export WEFT_CACHE_DIR=${WEFT_CACHE_DIR:-$PWD/$build/kernel-cache}
    echo "weft from $wheel"
    "$python" -m weft info
    return
  fi
  export WEFT_CACHE_ONLY=1 WEFT_CACHE_DIR=${WEFT_GPU_CACHE:-$PWD/build/gpu-cache} \
    WEFT_LIB_DIR=$PWD/$build/lib PYTHONPATH=$PWD/python${PYTHONPATH:+:$PYTHONPATH}
  if [[ -n "${OUT:-}" ]]; then
    export WEFT_CACHE_MISSES=$OUT/cache-misses
  fi
  echo "kernel cache: $WEFT_CACHE_DIR ($(find "$WEFT_CACHE_DIR" -name index.json | wc -l) entries)"
}

# python_run NAME: the start of a script that runs Python from the carried
# cache: log to $OUT/NAME.log, say when and where, build the runtime, set
# the environment.
python_run() {
  log_to "$1"
  date -u
  nvidia-smi -L
  build_runtime || exit 1
  python_env || exit 1
}

# bench_sweep CSV CMD...: a benchmark (bench/*.py with --csv, --resume and
# a Watchdog) run by CMD. A case that hangs becomes a failed row and the
# job exits with status 3; the sweep then goes on in a new job after it
# (--resume), up to 8 times.
bench_sweep() {
  local csv=$1 attempt rc resume=()
  shift
  for attempt in 1 2 3 4 5 6 7 8; do
    "$@" --csv "$csv" "${resume[@]}"
    rc=$?
    ((rc == 3)) || return $rc
    echo "== a case timed out (its row is in $csv): going on after it"
    resume=(--resume)
  done
  return 1
}

# report_misses: how many compile requests this run saved.
report_misses() {
  if [[ -n "${WEFT_CACHE_MISSES:-}" && -d $WEFT_CACHE_MISSES ]]; then
    echo "cache misses saved: $(ls "$WEFT_CACHE_MISSES" | wc -l) in $WEFT_CACHE_MISSES"
  fi
}

# finish NAME: the summary line, and the exit status.
finish() {
  if ((failures)); then
    echo "$1: $failures step(s) FAILED"
    exit 1
  fi
  echo "$1: all steps passed"
}
