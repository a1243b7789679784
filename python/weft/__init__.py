"""Weft: multi-GPU tile kernels in Python.

    import weft
    import weft.language as wl

See docs/python.md.
"""
from . import language
from ._autotune import Config, autotune, heuristics
from ._errors import CompilationError, WeftError
from ._graphs import CUDAGraph, cuda_graph
from ._jit import CompiledKernel, JITFunction, PerBackend, TensorDescriptor, compile, jit
from ._runtime import (Buffer, backend, barrier, empty, finalize, full, init,
                       local_rank, local_size, node, num_nodes, num_ranks, rank, stream,
                       synchronize, zeros)
from . import collectives  # noqa: E402  (after jit: its kernels use it)
from . import ops  # noqa: E402

__all__ = ["language", "collectives", "ops", "Config", "autotune", "heuristics", "CompilationError", "WeftError", "CompiledKernel",
           "CUDAGraph", "cuda_graph",
           "JITFunction", "PerBackend", "TensorDescriptor", "compile", "jit", "Buffer", "backend", "barrier", "empty",
           "finalize", "full", "init", "local_rank", "local_size", "node", "num_nodes",
           "num_ranks", "rank", "stream", "synchronize", "zeros"]
