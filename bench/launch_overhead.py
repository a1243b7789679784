"""Host time per call of the fused ops: what a caller's thread spends in
one eager call of bench/fused.py's Weft system (its cases, the same
buffers), split into the runtime's weft_launch and the rest (the Python
frontend: the op's checks and plan, finding the kernel, packing the
arguments). The GPU is not waited for inside a batch, so on a GPU this is
the cost that an eager call adds before its kernels start; on the host
backend weft_launch also runs the kernels.

    build-gpu/bin/weft-run -n 1 --backend cuda -- python3 bench/launch_overhead.py
    build/bin/weft-run -n 1 -- /usr/bin/python3 bench/launch_overhead.py --hidden 256

Each row: --batches batches of --calls calls, between them a device
synchronisation and a barrier; the median batch's time per call (and
the fastest's).
"""
import argparse
import cProfile
import io
import pstats
import time

import collectives as CB  # bench/collectives.py: the environment, the CSV
import fused as F         # bench/fused.py: the cases
import weft  # noqa: E402  (on sys.path through collectives)
from weft import _runtime as rt  # noqa: E402


class LaunchClock:
    """Wraps the runtime's weft_launch to count its calls and time them."""

    def __init__(self):
        self.lib = rt.lib()
        self.real = self.lib.weft_launch
        self.seconds, self.calls = 0.0, 0
        self.lib.weft_launch = self._timed

    def _timed(self, *args):
        start = time.perf_counter()
        status = self.real(*args)
        self.seconds += time.perf_counter() - start
        self.calls += 1
        return status

    def reset(self):
        self.seconds, self.calls = 0.0, 0


def profile(fn, calls, top):
    """The `top` functions by their own time over `calls` calls of fn."""
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(calls):
        fn()
    profiler.disable()
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(top)
    return out.getvalue()


def measure(run, clock, fn, args):
    """(us per call, of it in weft_launch, launches per call), the median
    batch's, and the fastest batch's us per call."""
    with run.on_stream():
        for _ in range(args.warmup):
            fn()
        batches = []
        for _ in range(args.batches):
            run.sync()
            weft.barrier()
            clock.reset()
            start = time.perf_counter()
            for _ in range(args.calls):
                fn()
            total = time.perf_counter() - start
            batches.append((total, clock.seconds, clock.calls))
        run.sync()
    batches.sort()
    total, launch, calls = batches[len(batches) // 2]
    return (total / args.calls * 1e6, launch / args.calls * 1e6, calls / args.calls,
            batches[0][0] / args.calls * 1e6)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    F.case_arguments(p, "16,256", "4096")
    p.add_argument("--calls", type=int, default=200)
    p.add_argument("--batches", type=int, default=5)
    p.add_argument("--warmup", type=int, default=20)
    p.add_argument("--port", type=int, default=29521)
    p.add_argument("--csv", default=None)
    p.add_argument("--profile", type=int, default=0,
                   help="also print the N functions with the most own time (cProfile)")
    args = p.parse_args()
    args.systems = ["weft"]

    weft.init()
    run = F.Bench(args)
    clock = LaunchClock()
    env = CB.environment()
    log = CB.CsvLog(args.csv, run.rank)
    for op in args.ops.split(","):
        for tokens, hidden in F.shapes(args, op):
            if op in ("ag_gemm", "gemm_rs") and tokens % run.ranks:
                continue
            systems, checks, bufs = run.case(op, tokens, hidden)
            per_call, launch, launches, best = measure(run, clock, systems["weft"], args)
            ok = checks["weft"]()
            row = dict(op=op, tokens=tokens, hidden=hidden, host_us=round(per_call, 2),
                       best_us=round(best, 2),
                       launch_us=round(launch, 2), frontend_us=round(per_call - launch, 2),
                       launches=round(launches, 2), correct=ok, error="")
            log.add(dict(env, **row))
            if run.rank == 0:
                print(f"{op:10s} M={tokens:5d} H={hidden:5d} {per_call:8.2f} us a call "
                      f"(best batch {best:.2f}): "
                      f"frontend {per_call - launch:7.2f}, weft_launch {launch:7.2f} "
                      f"({launches:.0f} launches)  {'ok' if ok else 'WRONG'}", flush=True)
            if args.profile:
                with run.on_stream():
                    report = profile(systems["weft"], args.calls, args.profile)
                run.sync()
                if run.rank == 0:
                    print(report, flush=True)
            weft.barrier()
            for b in bufs:
                b.free()
    CB.finish(run, log)


if __name__ == "__main__":
    main()
