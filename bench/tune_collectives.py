"""Grid sweep for the collectives' bandwidth-bound kernels: elements per
block (BLOCK), programs and warps per program, at one large size. The
defaults in python/weft/collectives (LARGE_BLOCK, PROGRAMS) come from
this sweep (bench/README.md, "Collectives: the grid").

    build-gpu/bin/weft-run -n 2 --backend cuda -- python3 bench/tune_collectives.py \
        --size 256M --csv bench/results/tune-collectives.csv

Each row: one kernel launched --iters times back to back, the mean time per
call on the host clock between two synchronisations (at these sizes a call
takes hundreds of microseconds, so launch overhead is noise); the result is
checked.
"""
import argparse
import itertools
import os
import sys
import time

import numpy as np

# The checkout's package, unless weft is installed.
sys.path.append(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import weft  # noqa: E402
import weft.language as wl  # noqa: E402
from weft import collectives as C  # noqa: E402
from weft.collectives import _kernels as K  # noqa: E402

from collectives import CsvLog, parse_size  # noqa: E402


def ints(text):
    return [int(v) for v in text.split(",")]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--size", default="256M", help="bytes per rank")
    p.add_argument("--dtypes", default="bf16,f32")
    p.add_argument("--blocks", type=ints, default=[1024, 4096, 8192, 16384])
    p.add_argument("--programs", type=ints, default=[32, 64, 128])
    p.add_argument("--warps", type=ints, default=[4, 8])
    p.add_argument("--iters", type=int, default=20)
    p.add_argument("--csv")
    args = p.parse_args()
    weft.init()
    rank, ranks = weft.rank(), weft.num_ranks()
    gpu = weft.backend() != "host"
    comm = C._get_comm()
    log = CsvLog(args.csv, rank)
    for dname in args.dtypes.split(","):
        dtype = {"bf16": wl.bfloat16, "f32": wl.float32}[dname]
        n = parse_size(args.size) // (dtype.bits // 8)
        n -= n % ranks
        chunk = n // ranks
        x = weft.empty((n,), dtype)
        out = weft.empty((n * ranks,), dtype)
        base = (np.arange(n) % 13).astype(np.float32)
        values = base + rank
        x.copy_from(values)  # to bf16 where it is: exact for small integers
        for op, block, warps, programs in itertools.product(
                ("two_shot_all_reduce", "all_gather"), args.blocks, args.warps, args.programs):
            if not gpu and programs != args.programs[0]:
                continue  # host: the grid does not change what is compiled
            grid = C._Grid(programs, weft.PerBackend(host=64, cuda=block, hip=block))
            if op == "all_gather":
                def call():
                    K.all_gather_kernel[grid](x, out, comm.flags, n, comm.epochs,
                                              BLOCK=grid.block, num_warps=warps)
                want = np.concatenate([base + p for p in range(ranks)])
                moved, factor = n * ranks, (ranks - 1) / ranks
            else:
                def call():
                    K.two_shot_all_reduce[grid](x, out, comm.flags, n, chunk, comm.epochs,
                                                OP=0, BLOCK=grid.block, num_warps=warps)
                want = base * ranks + ranks * (ranks - 1) / 2
                moved, factor = n, 2 * (ranks - 1) / ranks
            call()
            weft.synchronize()
            got = out.to_numpy()[:want.size]
            weft.barrier()
            t0 = time.perf_counter()
            for _ in range(args.iters):
                call()
            weft.synchronize()
            us = (time.perf_counter() - t0) / args.iters * 1e6
            row = dict(op=op, dtype=dname, bytes=parse_size(args.size), block=block,
                       programs=programs, warps=warps, mean_us=round(us, 1),
                       busbw_GBps=round(moved * dtype.bits / 8 / (us * 1e-6) / 1e9 * factor, 1),
                       correct=bool(np.array_equal(got, want)))
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
