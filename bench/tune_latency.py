"""Grid sweep for the latency-bound all_reduce kernels (LL, LL128 and push):
words, lines or elements per block, programs and warps per program, at the
sizes where the defaults in python/weft/collectives (LL_BLOCK, LL128_LINES,
PROGRAMS, LL_MAX_BYTES, LL128_MAX_BYTES) decide (bench/README.md,
"Latency").

    build-gpu/bin/weft-run -n 2 --backend cuda -- python3 bench/tune_latency.py \\
        --sizes 64K,256K,1M --csv bench/results/tune-latency.csv

Each row: --iters calls of one kernel captured in a CUDA graph, replayed
--reps times; the median replay's time per call (the figure that the
graph rows of bench/collectives.py report). The result is checked.
"""
import argparse
import itertools

import numpy as np

import collectives as CB  # bench/collectives.py: sizes, the CSV, the sys.path
import weft  # noqa: E402
import weft.language as wl  # noqa: E402
from weft import collectives as C  # noqa: E402
from weft.collectives import _kernels as K, _ll, _ll128  # noqa: E402


def ints(text):
    return [int(v) for v in text.split(",")]


def graph_us(torch, call, iters, reps):
    """Median time per call of `iters` calls in one graph, over `reps` replays."""
    call()
    torch.cuda.synchronize()
    graph = weft.cuda_graph(lambda: [call() for _ in range(iters)])
    times = []
    for _ in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        graph()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end) * 1e3 / iters)
    return float(np.median(times))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sizes", default="64K,256K,1M", help="bytes per rank (bf16)")
    # LL blocks of 2048 words need more shared memory for their layout
    # conversions than a program has (a CompilationError). Push blocks are
    # four times --blocks elements; LL128 blocks are --lines lines.
    p.add_argument("--blocks", type=ints, default=[256, 512, 1024])
    p.add_argument("--lines", type=ints, default=[8, 16, 32])
    p.add_argument("--programs", type=ints, default=[32, 64, 128, 256])
    p.add_argument("--warps", type=ints, default=[4, 8])
    p.add_argument("--kinds", default="ll,ll128,push")
    p.add_argument("--iters", type=int, default=20)
    p.add_argument("--reps", type=int, default=10)
    p.add_argument("--csv")
    args = p.parse_args()
    weft.init("cuda")
    import torch
    torch.cuda.set_device(weft.local_rank())
    rank, ranks = weft.rank(), weft.num_ranks()
    comm = C._get_comm()
    log = CB.CsvLog(args.csv, rank)
    for nbytes in map(CB.parse_size, args.sizes.split(",")):
        n = nbytes // 2
        x, out = weft.empty((n,), wl.bfloat16), weft.empty((n,), wl.bfloat16)
        base = (np.arange(n) % 13).astype(np.float32)
        x.copy_from(base + rank)
        want = base * ranks + ranks * (ranks - 1) / 2
        words = n // 2
        lines = -(-words // (2 * _ll128.DATA))
        ll, half = comm.ll_buffer(ranks * words)
        ll128, half128 = comm.ll_buffer(ranks * lines * _ll128.LINE, "ll128")
        half128 //= _ll128.LINE
        recv, rhalf = comm.halves("push", ranks * n, wl.bfloat16)
        grids = [(kind, block) for kind in args.kinds.split(",")
                 for block in (args.lines if kind == "ll128" else args.blocks)]
        for (kind, block), warps, programs in itertools.product(
                grids, args.warps, args.programs):
            work, width = {"ll": (words, block), "ll128": (lines, block),
                           "push": (n, 4 * block)}[kind]  # push blocks: elements
            if programs > -(-work // width):
                continue  # more programs than blocks of work
            if kind == "ll":
                def call():
                    _ll.ll_all_reduce[(programs,)](x, out, ll, half, words, n, comm.half_calls,
                                                   OP=0, DTYPE=wl.bfloat16, PACK=2,
                                                   BLOCK=block, SPIN=_ll.SPIN,
                                                   num_warps=warps)
            elif kind == "ll128":
                def call():
                    _ll128.ll128_all_reduce[(programs,)](
                        x, C._words(x, ll128), out, C._words(out, ll128), ll128, half128,
                        lines, half128 // ranks, n, n // 4, comm.half_calls,
                        OP=0, DTYPE=wl.bfloat16, PACK=4, LINES=block, SPIN=_ll.SPIN,
                        ATOMIC=_ll128.ATOMIC_LINES, num_warps=warps)
            else:
                def call():
                    K.push_all_reduce[(programs,)](x, out, recv, rhalf, n, comm.flags,
                                                   comm.epochs, comm.half_calls, OP=0, BLOCK=width,
                                                   num_warps=warps)
            us = graph_us(torch, call, args.iters, args.reps)
            row = dict(kind=kind, bytes=nbytes, block=width, programs=programs, warps=warps,
                       graph_us=round(us, 3),
                       correct=bool(np.array_equal(out.to_numpy(), want)))
            log.add(row)
            if rank == 0:
                print(row, flush=True)
        weft.barrier()
        x.free()
        out.free()
    log.close()
    weft.finalize()


if __name__ == "__main__":
    main()
