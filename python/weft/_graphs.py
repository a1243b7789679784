"""weft.cuda_graph: launches captured once into a CUDA graph and replayed
at the cost of one launch (docs/python.md, "Host API")."""
from . import _runtime as rt
from ._errors import WeftError


class CUDAGraph:
    """fn() (kernels, collectives, torch ops) captured into a CUDA graph
    through torch.cuda.CUDAGraph. fn runs `warmup` times eagerly first, so
    that its kernels are compiled and loaded and the collectives' scratch
    buffers are allocated before the capture (neither can be captured); its
    effects happen those times too. Calling the graph (or .replay()) runs
    everything fn launched again, on torch's current stream, with the same
    buffers; .result is what fn returned while captured."""

    def __init__(self, fn, warmup=1):
        if rt.backend() != "cuda":
            raise WeftError(f"weft.cuda_graph needs the cuda backend, not {rt.backend()}")
        try:
            import torch
        except ImportError:
            raise WeftError("weft.cuda_graph captures through torch.cuda.CUDAGraph; "
                            "torch is not installed") from None
        if not isinstance(warmup, int) or warmup < 1:
            raise ValueError(f"warmup must be a positive int (a capture cannot load "
                             f"modules or allocate), got {warmup!r}")
        # Warm up on a side stream, as torch.cuda.graph's own callers do:
        # the capture stream must not be the legacy default stream.
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side), rt.stream(side):
            for _ in range(warmup):
                fn()
        torch.cuda.current_stream().wait_stream(side)
        torch.cuda.synchronize()
        self.graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(self.graph), rt.stream(torch.cuda.current_stream()):
            self.result = fn()

    def replay(self):
        self.graph.replay()
        return self.result

    __call__ = replay


def cuda_graph(fn, warmup=1):
    """fn's launches as a CUDAGraph (see there): `g = weft.cuda_graph(lambda:
    C.all_reduce(x))`, then `g()` per step."""
    return CUDAGraph(fn, warmup)
