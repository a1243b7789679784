#!/usr/bin/env bash
# Runs the Python rank suite (python/test/ranks, WEFT_TEST_BACKEND=cuda),
# the Python examples and the PyTorch custom ops' test on every GPU of this
# machine (or the first $WEFT_GPUS), with Weft from the carried wheel
# (dist/: kernels compile here) or, without one, from the kernel cache
# warm_cache.sh filled where LLVM is (README, "GPU runs"). The log is
# $OUT/test_python.log. Arguments go to the suite's pytest (`-k matmul`: a
# part of it).
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
source scripts/gpu/common.sh
python_run test_python
"$python" -c 'import sys, numpy, torch; print("python", sys.version.split()[0],
  "numpy", numpy.__version__, "torch", torch.__version__, "cuda", torch.version.cuda)'
"$python" -m pytest --version
export WEFT_TEST_BACKEND=cuda
run=("$build/bin/weft-run" -n "$ngpus" --backend cuda --timeout 900 --)

step pytest "${run[@]}" "$python" -m pytest -q -p no:cacheprovider -rs python/test/ranks "$@"
# The launch, capture and kept-call tests again with every launch eager
# (docs/runtime.md, WEFT_KERNEL_GRAPHS=0; the suite above takes one-launch
# graphs where the GPU keeps up).
WEFT_KERNEL_GRAPHS=0 step pytest-eager "${run[@]}" "$python" -m pytest -q \
  -p no:cacheprovider -rs python/test/ranks/test_ops.py python/test/ranks/test_torch.py \
  python/test/ranks/test_collectives.py -k "arguments or kept or capture or graph or split_k"
for example in examples/python/*.py; do
  step "example-$(basename "$example" .py)" "${run[@]}" "$python" "$example"
done
# The PyTorch custom ops under torchrun, with torch's NCCL process group and
# no weft-run: eager, torch.compile(fullgraph=True) and a CUDA graph of a
# tensor-parallel MLP against torch + NCCL.
if ((ngpus >= 2)); then
  step torchrun "$python" -m torch.distributed.run --nproc-per-node "$ngpus" \
    python/test/torch/tp_mlp.py
fi
report_misses
finish test_python
