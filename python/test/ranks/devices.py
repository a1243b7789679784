"""What the rank tests run on: WEFT_TEST_BACKEND (default host; cuda on a
GPU machine, README "GPU runs"), local (non-symmetric) arrays of that
backend: numpy arrays on the host, torch tensors on the rank's GPU,
values as a buffer of a dtype holds them, and whether the compiler is here."""
import os

import numpy as np

import weft
import weft.language as wl
from weft import _capi

BACKEND = os.environ.get("WEFT_TEST_BACKEND", "host")


def local(values):
    """values (a numpy array) as a local kernel argument of this backend.
    Host arrays start on 256 bytes, as a GPU allocator's do, so that host
    runs specialise kernels (on the pointers' alignment, on whether tensor
    descriptors fit) as GPU runs do and warm the cache for them."""
    if BACKEND == "host":
        values = np.asarray(values)
        raw = np.empty(values.nbytes + 256, np.uint8)
        start = -raw.ctypes.data % 256
        aligned = raw[start:start + values.nbytes].view(values.dtype).reshape(values.shape)
        aligned[...] = values
        return aligned
    import torch
    return torch.from_numpy(np.ascontiguousarray(values)).to(
        torch.device(BACKEND, weft.local_rank()))


def host(x):
    """A numpy copy of a local array, a tensor or a weft.Buffer."""
    if isinstance(x, weft.Buffer):
        return x.to_numpy()
    if isinstance(x, np.ndarray):
        return x
    return x.cpu().numpy()


def to_bits(a, dtype):
    """Float values -> what a buffer of dtype holds (copy_from, to_numpy):
    bf16 as its uint16 bits, rounded to nearest even."""
    a = np.asarray(a, np.float64)
    if dtype is wl.float32:
        return a.astype(np.float32)
    if dtype is wl.float16:
        return a.astype(np.float16)
    u = a.astype(np.float32).view(np.uint32).astype(np.uint64)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def buffer_of(values, dtype):
    """A new weft.Buffer of dtype holding values (numpy floats, as to_bits
    gives them to a buffer)."""
    buf = weft.empty(values.shape, dtype)
    buf.copy_from(to_bits(values, dtype))
    return buf


def compiler_available():
    """The compiler can be loaded here (not on the GPU machines, which run
    from a carried cache)."""
    try:
        _capi.version()
        return True
    except ImportError:
        return False
