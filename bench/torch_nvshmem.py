"""bench/nodes.py's put kernels for torch symmetric memory's NVSHMEM
backend: Triton kernels that call NVSHMEM's device functions through
torch's extern library (torch.distributed._symmetric_memory._nvshmem_triton),
the same exchanges as nodes.py's _pingpong, _stream and _arrived. Imported
only for `--torch` (it needs torch, Triton and NVSHMEM's device bitcode)."""
import triton
import triton.language as tl
import torch.distributed._symmetric_memory._nvshmem_triton as nvshmem
from torch.distributed._symmetric_memory._nvshmem_triton import requires_nvshmem

# NVSHMEM's enumerators (nvshmem_types.h: nvshmemi_amo_t, nvshmemi_cmp_type);
# torch's docstrings give other numbers, its wrappers pass these through.
SIGNAL_SET: tl.constexpr = tl.constexpr(9)
SIGNAL_ADD: tl.constexpr = tl.constexpr(10)
CMP_GE: tl.constexpr = tl.constexpr(5)


# Rank and counters stay arguments: Triton would fold a 1 into the kernel.
@requires_nvshmem
@triton.jit(do_not_specialize=["base", "me"])
def pingpong(buf, flag, nbytes, base, iters, me):
    """`iters` round trips: the even rank of a pair puts with a signal, the
    odd one answers once the signal arrived (nodes.py's _pingpong)."""
    peer = me ^ 1
    for i in range(iters):
        t = base + 2 * i
        if me % 2 == 0:
            nvshmem.putmem_signal_block(buf, buf, nbytes, flag, t + 1, SIGNAL_SET, peer)
            nvshmem.signal_wait_until(flag, CMP_GE, t + 2)
        else:
            nvshmem.signal_wait_until(flag, CMP_GE, t + 1)
            nvshmem.putmem_signal_block(buf, buf, nbytes, flag, t + 2, SIGNAL_SET, peer)


@requires_nvshmem
@triton.jit(do_not_specialize=["me"])
def stream(src, dst, flag, nbytes, share, me):
    """Each program puts its `share` of src into the pair rank's dst and adds
    one to its flag (nodes.py's _stream)."""
    lo = tl.program_id(0).to(tl.int64) * share
    lo = tl.minimum(lo, nbytes)
    count = tl.minimum(nbytes - lo, share)
    nvshmem.putmem_signal_block(dst + lo, src + lo, count, flag, tl.cast(1, tl.int64),
                                SIGNAL_ADD, me ^ 1)


@requires_nvshmem
@triton.jit(do_not_specialize=["expected"])
def arrived(flag, expected):
    """Waits until every program of the pair rank's stream has signalled."""
    nvshmem.signal_wait_until(flag, CMP_GE, expected)
