#!/usr/bin/env bash
# Jobs across nodes on this machine's GPUs (docs/multinode.md), with Weft
# from the carried wheel (kernels compile here and link NVSHMEM's device
# library from the nvidia-nvshmem package torch brings):
#   - what that package holds: the device functions the compiler calls;
#   - python/test/ranks/test_nodes.py with every GPU its own node
#     (`--local-size 1`: NVSHMEM, over its P2P transport here, for every
#     peer), where there are two GPUs or more, else two ranks sharing one;
#   - the same on one node with NVSHMEM's heap (WEFT_CUDA_HEAP=nvshmem:
#     kernels compiled for an engine, NVSHMEM started, its device state
#     initialised in every module) and on one node with Weft's own heap.
# The log is $OUT/test_nodes.log. Arguments go to pytest.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
source scripts/gpu/common.sh
python_run test_nodes
export WEFT_TEST_BACKEND=cuda WEFT_BOOTSTRAP_TIMEOUT=120 WEFT_COLLECTIVE_TIMEOUT=120
nvshmem=$("$python" -c 'import os, nvidia.nvshmem as m; print(os.path.dirname(m.__file__))' \
  2> /dev/null || "$python" -c 'import os, nvidia; print(os.path.join(list(nvidia.__path__)[0], "nvshmem"))')
# The bitcode's string table runs its names together: match, don't split.
step nvshmem-package bash -c "ls $nvshmem/lib && grep -aoE 'nvshmemx?_(putmem(_signal)?_nbi_block|getmem_block|signal_op|uint32_atomic_(set|add)|quiet)' \
  $nvshmem/lib/libnvshmem_device.bc | sort -u"
tests=("$python" -m pytest -q -p no:cacheprovider -rs python/test/ranks/test_nodes.py "$@")
if ((ngpus >= 2)); then
  step nodes-nvshmem "$build/bin/weft-run" -n "$ngpus" --local-size 1 --backend cuda \
    --timeout 500 -- "${tests[@]}"
else
  # One GPU: two one-rank nodes share it (NVSHMEM's multiple processes per
  # GPU; their kernels time-slice, so this checks results, not speed): the
  # machine's local rank, which picks the device, is 0 for both.
  step nodes-nvshmem-one-gpu "$build/bin/weft-run" -n 2 --local-size 1 --backend cuda \
    --timeout 500 -- env WEFT_LOCAL_RANK=0 "${tests[@]}"
fi
step one-node-nvshmem-heap env WEFT_CUDA_HEAP=nvshmem "$build/bin/weft-run" -n "$ngpus" \
  --backend cuda --timeout 500 -- "${tests[@]}"
step one-node "$build/bin/weft-run" -n "$ngpus" --backend cuda --timeout 500 -- "${tests[@]}"
report_misses
finish test_nodes
