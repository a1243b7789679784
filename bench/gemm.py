"""GEMM benchmark: C = A @ B in the DSL (weft.ops.matmul: wl.dot in a K
loop) against torch.matmul (cuBLAS), bf16 in, f32 accumulate, in one
process (bench/README.md).

    build-gpu/bin/weft-run -n 1 --backend cuda -- python3 bench/gemm.py --csv out.csv

Each shape: warm-up, then --iters calls between CUDA events; median and
min; TFLOP/s from the median; results checked against torch in the same
run. On the host backend (cache warming) it runs small shapes with the same
specialisations and checks them against numpy.
"""
import argparse
import csv
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import weft  # noqa: E402
import weft.language as wl  # noqa: E402

SHAPES = [(1024, 1024, 1024), (4096, 4096, 4096), (8192, 8192, 8192),
          (16, 4096, 4096), (64, 4096, 4096), (128, 4096, 4096),
          (16, 8192, 8192), (64, 8192, 8192), (128, 8192, 8192)]


def run_host(shapes):
    rng = np.random.default_rng(0)
    for m, n, k in shapes:
        a = weft.empty((m, k), wl.bfloat16)
        b = weft.empty((k, n), wl.bfloat16)
        c = weft.empty((m, n), wl.float32)
        x = rng.integers(-2, 3, (m, k)).astype(np.float32)
        y = rng.integers(-2, 3, (k, n)).astype(np.float32)
        a.copy_from((x.view(np.uint32) >> 16).astype(np.uint16))
        b.copy_from((y.view(np.uint32) >> 16).astype(np.uint16))
        t0 = time.perf_counter()
        weft.ops.matmul(a, b, c)
        ms = (time.perf_counter() - t0) * 1e3
        ok = np.array_equal(c.to_numpy(), x @ y)
        print(f"host {m}x{n}x{k}: {ms:.1f} ms {'ok' if ok else 'WRONG'}")
        for buf in (a, b, c):
            buf.free()
        if not ok:
            sys.exit(1)


def run_gpu(args):
    import torch
    device = torch.device("cuda", weft.local_rank())
    torch.cuda.set_device(device)
    rows = []
    for m, n, k in [tuple(map(int, s.split("x"))) for s in args.shapes.split(",")] \
            if args.shapes else SHAPES:
        a = weft.empty((m, k), wl.bfloat16)
        b = weft.empty((k, n), wl.bfloat16)
        c = weft.empty((m, n), wl.float32)
        ta, tb = torch.from_dlpack(a), torch.from_dlpack(b)
        ta.copy_(torch.randint(-2, 3, (m, k), device=device).to(torch.bfloat16))
        tb.copy_(torch.randint(-2, 3, (k, n), device=device).to(torch.bfloat16))
        tc = torch.from_dlpack(c)
        td = torch.empty(m, n, dtype=torch.bfloat16, device=device)  # outside the timing
        systems = {"weft": lambda: weft.ops.matmul(a, b, c),
                   "torch": lambda: torch.matmul(ta, tb, out=td)}
        expect = ta.float() @ tb.float()  # exact: small integers
        with weft.stream(torch.cuda.current_stream()):
            systems["weft"]()
            torch.cuda.synchronize()
            ok = bool(torch.equal(tc, expect))
            for name, fn in systems.items():
                for _ in range(args.warmup):
                    fn()
                events = [(torch.cuda.Event(enable_timing=True),
                           torch.cuda.Event(enable_timing=True)) for _ in range(args.iters)]
                for s, e in events:
                    s.record()
                    fn()
                    e.record()
                torch.cuda.synchronize()
                times = sorted(s.elapsed_time(e) for s, e in events)
                median = float(np.median(times))
                row = dict(m=m, n=n, k=k, system=name, median_ms=round(median, 4),
                           min_ms=round(times[0], 4),
                           tflops=round(2 * m * n * k / (median * 1e-3) / 1e12, 2),
                           correct=ok if name == "weft" else True,
                           gpu=torch.cuda.get_device_name(), torch=torch.__version__)
                rows.append(row)
                print(f"{m:5d}x{n:5d}x{k:5d} {name:6s} median {median:9.4f} ms "
                      f"{row['tflops']:7.2f} TFLOP/s {'ok' if row['correct'] else 'WRONG'}",
                      flush=True)
        for buf in (a, b, c):
            buf.free()
    if args.csv:
        with open(args.csv, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)
    if not all(r["correct"] for r in rows):
        sys.exit(1)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--shapes", default=None, help="MxNxK,... (default: the issue's shapes)")
    p.add_argument("--iters", type=int, default=20)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--csv", default=None)
    args = p.parse_args()
    weft.init()
    if weft.backend() == "host":
        run_host([(32, 32, 32), (16, 48, 256)])  # the second one splits K
    else:
        run_gpu(args)
    weft.finalize()


if __name__ == "__main__":
    main()
