"""What the rank tests run on: WEFT_TEST_BACKEND (default host; cuda on a
GPU machine, README "GPU runs"), and local (non-symmetric) arrays of that
backend: numpy arrays on the host, torch tensors on the rank's GPU."""
import os

import numpy as np

import weft

BACKEND = os.environ.get("WEFT_TEST_BACKEND", "host")


def local(values):
    """values (a numpy array) as a local kernel argument of this backend."""
    if BACKEND == "host":
        return np.ascontiguousarray(values)
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
