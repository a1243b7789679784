"""Collectives benchmark: Weft against NCCL (torch.distributed), torch's
symmetric-memory all-reduce and hand-written CUDA (bench/cuda), in one
process per rank and one run (bench/README.md).

    build-gpu/bin/weft-run -n 2 --backend cuda -- python3 bench/collectives.py \
        --csv bench/results/collectives.csv

Every system runs the same sizes (bytes per rank) and dtypes. Each
measurement: warm-up calls, then --iters calls each between two CUDA events
on the current stream; median and min of those. "graph" systems capture
--iters calls in one CUDA graph and time --reps replays (per call). Every
result is checked against the exact answer (inputs are small integers) in
the same run. On the host backend (cache warming, scripts/gpu/warm_cache.sh)
only Weft runs, timed on the host clock, at the sizes given.
"""
import argparse
import contextlib
import csv
import datetime
import functools
import os
import platform
import subprocess
import sys
import threading
import time

import numpy as np

# The checkout's package, unless weft is installed.
sys.path.append(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import weft  # noqa: E402
import weft.language as wl  # noqa: E402
from weft import collectives as C  # noqa: E402
from weft.collectives import _kernels as K  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OPS = ("all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast")
DTYPES = {"bf16": wl.bfloat16, "f32": wl.float32}
# The systems weft_<algorithm> force an algorithm of these ops ("weft" is
# auto: what a caller gets).
WEFT_ALGORITHMS = {"all_reduce": ("auto", "ll", "ll128", "push", "one_shot", "two_shot"),
                   "all_gather": ("auto", "ll", "ll128", "push")}
# nccl-tests' bus bandwidth factors: busbw = algbw * factor(ranks).
BUS_FACTOR = {"all_reduce": lambda n: 2 * (n - 1) / n, "all_gather": lambda n: (n - 1) / n,
              "reduce_scatter": lambda n: (n - 1) / n, "all_to_all": lambda n: (n - 1) / n,
              "broadcast": lambda n: 1.0}


def parse_size(text):
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    text = text.strip().upper().rstrip("IB")
    return int(float(text[:-1]) * units[text[-1]]) if text[-1] in units else int(text)


def fmt_size(n):
    for unit, shift in (("G", 30), ("M", 20), ("K", 10)):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return f"{n >> shift}{unit}"
    return str(n)


def default_sizes():
    return [4096 * 4 ** k for k in range(11)]  # 4 KiB .. 4 GiB: trimmed by --max-size


class Run:
    """One rank's view: the buffers of a (dtype, size) and its checks."""

    def __init__(self, args):
        self.args = args
        self.rank, self.ranks = weft.rank(), weft.num_ranks()
        self.gpu = weft.backend() != "host"
        self.torch = None
        if self.gpu:
            import torch
            import torch.distributed as dist
            self.torch, self.dist = torch, dist
            self.device = torch.device("cuda", weft.local_rank())
            torch.cuda.set_device(self.device)
            dist.init_process_group("nccl", init_method=f"tcp://127.0.0.1:{args.port}",
                                    rank=self.rank, world_size=self.ranks,
                                    device_id=self.device)
            self.cuda_kernels = (self._load_cuda_kernels()
                                 if {"cuda", "cuda_graph"} & set(args.systems) else None)

    # -- timing ---------------------------------------------------------
    def time(self, fn, graph):
        """(median, min) microseconds per call of fn. Eager: --iters calls,
        each between two events (host launch overhead included, as a caller
        sees it). Graph: --iters calls captured in one graph, replayed
        --reps times between two events; a sample is a replay's time per
        call."""
        a = self.args
        if not self.gpu:
            for _ in range(a.warmup):
                fn()
            times = []
            for _ in range(a.iters):
                weft.barrier()
                t0 = time.perf_counter()
                fn()
                times.append((time.perf_counter() - t0) * 1e6)
            return float(np.median(times)), float(np.min(times))
        torch = self.torch
        stream = torch.cuda.current_stream()
        calls, samples, run = 1, a.iters, fn
        if graph:
            fn()  # loads modules and allocates scratch outside the capture
            torch.cuda.synchronize()
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g), weft.stream(torch.cuda.current_stream()):
                for _ in range(a.iters):
                    fn()
            calls, samples, run = a.iters, a.reps, g.replay
        with weft.stream(stream):
            for _ in range(a.warmup if not graph else 1):
                run()
            events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
                      for _ in range(samples)]
            torch.cuda.synchronize()
            self.dist.barrier()
            for start, end in events:
                start.record()
                run()
                end.record()
            torch.cuda.synchronize()
        times = [s.elapsed_time(e) * 1e3 / calls for s, e in events]
        return float(np.median(times)), float(np.min(times))

    # -- data -----------------------------------------------------------
    # Memoised: a (size, dtype) row checks every system against the same
    # arrays, which take seconds to build at 1 GiB per rank.
    @functools.lru_cache(maxsize=16)
    def pattern(self, n, rank):
        """Rank `rank`'s input: small integers (float32), exact in bf16 sums."""
        return ((np.arange(n, dtype=np.int32) % 13 * 7 + 3 * rank) % 13 - 6).astype(np.float32)

    @functools.lru_cache(maxsize=1)
    def expected(self, op, n, root=0):
        xs = [self.pattern(n, p) for p in range(self.ranks)]
        if op == "all_reduce":
            return sum(xs)
        if op == "all_gather":
            return np.concatenate(xs)
        if op == "reduce_scatter":
            chunk = n // self.ranks
            return sum(xs)[self.rank * chunk:(self.rank + 1) * chunk]
        if op == "all_to_all":
            m = n // self.ranks
            return np.concatenate([xs[p][self.rank * m:(self.rank + 1) * m]
                                   for p in range(self.ranks)])
        return xs[root]

    def to_bits(self, values, dtype):
        a = np.asarray(values, np.float32)
        if dtype is wl.bfloat16:
            return (a.view(np.uint32) >> 16).astype(np.uint16)  # exact: small integers
        return a

    def from_bits(self, a, dtype):
        if dtype is wl.bfloat16:
            return (a.astype(np.uint32) << 16).view(np.float32)
        return a

    # -- systems --------------------------------------------------------
    def weft_call(self, op, x, out, algorithm="auto"):
        if op == "all_reduce":
            return lambda: C.all_reduce(x, out, algorithm=algorithm)
        if op == "all_gather":
            return lambda: C.all_gather(x, out, algorithm=algorithm)
        if op == "reduce_scatter":
            return lambda: C.reduce_scatter(x, out)
        if op == "all_to_all":
            return lambda: C.all_to_all(x, out)
        return lambda: C.broadcast(x, 0)

    def nccl_call(self, op, t_in, t_out):
        dist = self.dist
        if op == "all_reduce":
            return lambda: dist.all_reduce(t_in)
        if op == "all_gather":
            return lambda: dist.all_gather_into_tensor(t_out, t_in)
        if op == "reduce_scatter":
            return lambda: dist.reduce_scatter_tensor(t_out, t_in)
        if op == "all_to_all":
            return lambda: dist.all_to_all_single(t_out, t_in)
        return lambda: dist.broadcast(t_in, 0)

    def _load_cuda_kernels(self):
        """bench/cuda/collectives.cu, compiled by nvcc here (the GPU machine)."""
        nvcc = os.environ.get("NVCC", "/usr/local/cuda/bin/nvcc")
        out = os.path.join(ROOT, "build-gpu", "bench", "collectives.cubin")
        os.makedirs(os.path.dirname(out), exist_ok=True)
        if self.rank == 0:
            subprocess.run([nvcc, "-arch=sm_90", "-O3", "-cubin", "-I", os.path.join(ROOT, "include"),
                            "-o", out, os.path.join(ROOT, "bench", "cuda", "collectives.cu")],
                           check=True)
        self.dist.barrier()
        with open(out, "rb") as f:
            image = f.read()
        from weft._jit import CompiledKernel
        ptr, i64 = ("*", "u8", 16), ("", "i64", 0)
        spec = [ptr, ptr, ptr, ptr, i64]
        names = [f"{kind}_v{v}" for v in (1, 2, 8, 16)
                 for kind in ("one_shot_all_reduce_f32", "one_shot_all_reduce_bf16", "all_gather")]
        kernels = {name: CompiledKernel(name, "cuda:90", None, {"cubin": image}, 4, spec)
                   for name in names}
        self.cuda_flags = weft.zeros((K.NUM_PHASES * K.MAX_PROGRAMS * self.ranks,), wl.int64)
        self.cuda_epochs = weft.zeros((K.MAX_PROGRAMS,), wl.int64)
        weft.barrier()
        return kernels

    def cuda_call(self, op, dtype, x, out, n):
        grid = C._programs(n, None)  # the Weft kernels' grid for the same work
        # 16-byte vectors per thread per block (bench/cuda/collectives.cu).
        vecs = grid.block["cuda"] * dtype.bits // 8 // (16 * 128)
        flags, epochs = self.cuda_flags, self.cuda_epochs
        if op == "all_reduce":
            k = self.cuda_kernels[f"one_shot_all_reduce_{'bf16' if dtype is wl.bfloat16 else 'f32'}"
                                  f"_v{vecs}"]
            args = [x, out, flags, epochs, n]
        else:
            k = self.cuda_kernels[f"all_gather_v{vecs}"]
            args = [x, out, flags, epochs, x.nbytes]
        return lambda: k.launch(grid, args)  # weft.stream's stream, like the others

    def symm_call(self, algorithm, t):
        ops = self.torch.ops.symm_mem
        group = self.dist.group.WORLD.group_name
        if algorithm == "one_shot":
            return lambda: ops.one_shot_all_reduce(t, "sum", group)
        return lambda: ops.two_shot_all_reduce_(t, "sum", group)

    # -- one (op, dtype, size) --------------------------------------------
    def measure(self, op, dname, nbytes):
        dtype = DTYPES[dname]
        esize = dtype.bits // 8
        n = nbytes // esize
        if op in ("reduce_scatter", "all_to_all"):
            n -= n % self.ranks
        out_n = {"all_gather": n * self.ranks, "reduce_scatter": n // self.ranks}.get(op, n)
        x = weft.empty((n,), dtype)
        out = weft.empty((out_n,), dtype)
        results = []

        def check(read):
            return bool(np.array_equal(self.from_bits(read(), dtype), self.expected(op, n)))

        def reset():
            x.copy_from(self.to_bits(self.pattern(n, self.rank), dtype), raw=True)

        def weft_out():
            return (x if op == "broadcast" else out).to_numpy(raw=True)

        for system in self.args.systems:
            graph = system.endswith("_graph")
            base = system[:-6] if graph else system
            if base in ("nccl", "symm_one_shot", "symm_two_shot", "cuda") and not self.gpu:
                continue
            if base.startswith("symm") and op != "all_reduce":
                continue
            if base == "cuda" and op not in ("all_reduce", "all_gather"):
                continue
            algorithm = base[5:] if base.startswith("weft_") else "auto"
            if algorithm not in WEFT_ALGORITHMS.get(op, ("auto",)):
                continue
            if self.log.done(op=op, dtype=dname, bytes=nbytes, system=system):
                continue  # --resume: measured (or timed out) in an earlier run
            row = dict(self.env, op=op, dtype=dname, bytes=nbytes, system=system,
                       median_us=float("nan"), min_us=float("nan"),
                       busbw_GBps=float("nan"), correct=False, error="")
            with self.watchdog.case(row):
                try:
                    if base.startswith("weft") or base == "cuda":
                        fn = (self.cuda_call(op, dtype, x, out, n) if base == "cuda" else
                              self.weft_call(op, x, out, algorithm))
                        reset()
                        fn()
                        ok = check(weft_out)
                        median, best = self.time(fn, graph)
                    elif base == "nccl":
                        fn, ok = self._nccl(op, dtype, n, out_n)
                        median, best = self.time(fn, graph)
                    else:
                        fn, ok = self._symm(base[5:], dtype, n)
                        median, best = self.time(fn, graph)
                    error = ""
                except Exception as e:  # noqa: BLE001 - reported in the CSV, the sweep goes on
                    median = best = float("nan")
                    ok, error = False, f"{type(e).__name__}: {str(e).splitlines()[0][:200]}"
                    if base.startswith("weft") or base == "cuda":
                        raise
            algbw = (out_n if op == "all_gather" else n) * esize / (median * 1e-6) / 1e9
            results.append(dict(row, median_us=round(median, 3), min_us=round(best, 3),
                                busbw_GBps=round(algbw * BUS_FACTOR[op](self.ranks), 2),
                                correct=ok, error=error))
        weft.barrier()
        x.free()
        out.free()
        return results

    def _nccl(self, op, dtype, n, out_n):
        torch = self.torch
        tdtype = torch.bfloat16 if dtype is wl.bfloat16 else torch.float32
        values = torch.from_numpy(self.pattern(n, self.rank))
        t_in = values.to(self.device, tdtype)
        t_out = torch.empty(out_n, dtype=tdtype, device=self.device)
        fn = self.nccl_call(op, t_in, t_out)
        fn()
        got = (t_in if op in ("all_reduce", "broadcast") else t_out).float().cpu().numpy()
        ok = bool(np.array_equal(got, self.expected(op, n)))
        return fn, ok

    def _symm(self, algorithm, dtype, n):
        torch = self.torch
        import torch.distributed._symmetric_memory as symm
        tdtype = torch.bfloat16 if dtype is wl.bfloat16 else torch.float32
        t = symm.empty(n, dtype=tdtype, device=self.device)
        symm.rendezvous(t, self.dist.group.WORLD.group_name)
        t.copy_(torch.from_numpy(self.pattern(n, self.rank)))
        fn = self.symm_call(algorithm, t)
        res = fn()
        torch.cuda.synchronize()
        got = (t if res is None or algorithm == "two_shot" else res).float().cpu().numpy()
        ok = bool(np.array_equal(got, self.expected("all_reduce", n)))
        return fn, ok


def environment(ranks=None, backend=None):
    """The run's machine and versions, a CSV row's first columns; `ranks`
    and `backend` are Weft's job's unless given (a job without Weft)."""
    ranks = weft.num_ranks() if ranks is None else ranks
    backend = weft.backend() if backend is None else backend
    info = {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "host": platform.node(), "ranks": ranks, "backend": backend}
    if backend == "cuda":
        import torch
        nccl = torch.cuda.nccl.version()
        info.update(gpu=torch.cuda.get_device_name(), torch=torch.__version__,
                    cuda=torch.version.cuda,
                    nccl=".".join(map(str, nccl)) if isinstance(nccl, tuple) else str(nccl))
        try:
            info["driver"] = subprocess.run(
                ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                capture_output=True, text=True).stdout.split()[0]
        except (OSError, IndexError):
            info["driver"] = "?"
    return info


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--ops", default=",".join(OPS))
    p.add_argument("--dtypes", default="bf16,f32")
    p.add_argument("--sizes", default=None, help="comma list (4K,1M,...); default 4K..--max-size")
    p.add_argument("--max-size", default="1G")
    p.add_argument("--iters", type=int, default=20)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--reps", type=int, default=5, help="replays of a graph of --iters calls")
    p.add_argument("--systems", default="weft,weft_graph,weft_one_shot,weft_one_shot_graph,"
                   "cuda,cuda_graph,nccl,nccl_graph,symm_one_shot,symm_one_shot_graph,"
                   "symm_two_shot,symm_two_shot_graph")
    p.add_argument("--port", type=int, default=29517)
    p.add_argument("--csv", default=None)
    timeout_arguments(p)
    args = p.parse_args()
    args.systems = args.systems.split(",")
    max_size = parse_size(args.max_size)
    sizes = [parse_size(s) for s in args.sizes.split(",")] if args.sizes else \
        [s for s in default_sizes() if s <= max_size]

    weft.init()
    run = Run(args)
    log = watch(run, args)
    for op in args.ops.split(","):
        for dname in args.dtypes.split(","):
            for nbytes in sizes:
                for r in run.measure(op, dname, nbytes):
                    log.add(r)
                    if run.rank == 0:
                        print(f"{op:15s} {dname:5s} {fmt_size(nbytes):>5s} {r['system']:20s} "
                              f"median {r['median_us']:10.2f} us  min {r['min_us']:10.2f} us  "
                              f"busbw {r['busbw_GBps']:8.2f} GB/s  "
                              f"{'ok' if r['correct'] else 'WRONG ' + r['error']}", flush=True)
    finish(run, log)


def timeout_arguments(p):
    """--case-timeout and --resume (here and bench/fused.py)."""
    p.add_argument("--case-timeout", type=float, default=300,
                   help="seconds a case may take before it is a failed row (Watchdog)")
    p.add_argument("--resume", action="store_true",
                   help="keep the CSV's rows and measure only the cases it lacks")


def watch(run, args):
    """The run's CSV log; sets run.env (environment()), run.log and
    run.watchdog."""
    run.env = environment()
    run.log = CsvLog(args.csv, run.rank, args.resume)
    run.watchdog = Watchdog(args.case_timeout, run.log, run.rank)
    return run.log


class CsvLog:
    """A sweep's rows (here and bench/fused.py); rank 0 writes each to the
    CSV as it comes, so that a run cut short keeps what it measured. With
    resume, the CSV's rows are kept (every rank reads them, so all skip
    the same cases: done) and new rows are appended."""

    def __init__(self, path, rank, resume=False):
        self.earlier, self.fields = [], None
        if resume and path and os.path.exists(path):
            with open(path, newline="") as f:
                reader = csv.DictReader(f)
                self.earlier, self.fields = list(reader), reader.fieldnames
        self.path = path if rank == 0 else None
        self.rows = []
        self.file = self.writer = None

    def done(self, **fields):
        """Whether an earlier run's row has these fields."""
        return any(all(r.get(k) == str(v) for k, v in fields.items()) for r in self.earlier)

    def add(self, row):
        self.rows.append(row)
        if not self.path:
            return
        if self.writer is None:
            os.makedirs(os.path.dirname(os.path.abspath(self.path)), exist_ok=True)
            self.file = open(self.path, "a" if self.earlier else "w", newline="")
            # Appended rows follow the file's header (a column they lack
            # stays empty; one it lacks is an error, not a shifted row).
            self.writer = csv.DictWriter(self.file, fieldnames=self.fields or list(row),
                                         restval="")
            if not self.earlier:
                self.writer.writeheader()
        self.writer.writerow(row)
        self.file.flush()

    def wrong(self):
        """Rows, of this run and the resumed ones, whose result was wrong
        without an error to explain it."""
        return [r for r in self.earlier + self.rows
                if str(r["correct"]) == "False" and not r["error"]]

    def close(self):
        if self.file:
            self.file.close()


class Watchdog:
    """A case that runs past `seconds` (a kernel that never ends) becomes a
    failed row instead of a lost run: rank 0 writes the row, then every
    rank exits with status 3, so weft-run ends the job; run again with
    --resume to go on after it (bench/run_collectives.sh and run_fused.sh
    do). Weft's own waits give up sooner (WEFT_WAIT_TIMEOUT, set by
    scripts/gpu/common.sh); this catches everyone else's."""

    EXIT = 3

    def __init__(self, seconds, log, rank):
        self.seconds, self.log, self.rank = seconds, log, rank

    @contextlib.contextmanager
    def case(self, row):
        # The other ranks wait longer, so rank 0 is the one that writes.
        timer = threading.Timer(self.seconds + (0 if self.rank == 0 else 10), self._fire, (row,))
        timer.daemon = True
        timer.start()
        try:
            yield
        finally:
            timer.cancel()

    def _fire(self, row):
        if self.rank == 0:
            self.log.add(dict(row, correct=False,
                              error=f"timeout: no result in {self.seconds:g} s"))
            print(f"TIMEOUT after {self.seconds:g} s: {row}", flush=True)
        os._exit(self.EXIT)


def finish(run, log):
    """The end of a benchmark run (here and bench/fused.py): the CSV is
    closed, every rank leaves NCCL and weft, and a rank that saw a wrong
    result (one not explained by an error) exits 1."""
    bad = log.wrong()
    log.close()
    if run.gpu:
        run.dist.destroy_process_group()
    weft.finalize()
    if bad:
        print(f"rank {run.rank}: {len(bad)} wrong results", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
