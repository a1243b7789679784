"""What the rank tests run on: WEFT_TEST_BACKEND, else the backend
weft-run was given (WEFT_BACKEND: `weft-run --backend cuda` runs the GPU
logic, torch tensors and head_dim 128 included, without further
settings), else host; local (non-symmetric) arrays of that
backend: numpy arrays on the host, torch tensors on the rank's GPU,
values as a buffer of a dtype holds them, and whether the compiler is here."""
import os

import numpy as np

import weft
from weft import _capi, _floats

BACKEND = os.environ.get("WEFT_TEST_BACKEND") or os.environ.get("WEFT_BACKEND") or "host"


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


def rounded(values, dtype):
    """Float values rounded to dtype, as float64 (bf16 as the compiler
    rounds, weft._floats)."""
    values = np.asarray(values, np.float64)
    if _floats.is_raw(dtype):
        return _floats.from_bits(_floats.to_bits(values, dtype), dtype).astype(np.float64)
    return values.astype(dtype.numpy).astype(np.float64)


def buffer_of(values, dtype):
    """A new weft.Buffer of dtype holding values (converted as copy_from
    converts)."""
    buf = weft.empty(values.shape, dtype)
    buf.copy_from(values)
    return buf


def compiler_available():
    """The compiler can be loaded here (not on the GPU machines, which run
    from a carried cache)."""
    try:
        _capi.version()
        return True
    except ImportError:
        return False
