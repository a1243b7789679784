"""Transfers between ranks on the path their placement gives: NVSHMEM's in
a job across nodes, the program's own stores within a node; and the same
exchange through torch symmetric memory's NVSHMEM backend (bench/README.md,
"Across nodes"). bench/run_nodes.sh runs the three jobs into one CSV:

    weft-run -n 2 --local-size 1 --backend cuda -- python3 bench/nodes.py --csv F
        system weft_nvshmem: every peer on another node (NVSHMEM)
    weft-run -n 2 --backend cuda -- python3 bench/nodes.py --csv F
        system weft_store: one node (wl.put is the program's stores)
    weft-run -n 2 --backend cuda -- python3 bench/nodes.py --torch --csv F
        system torch_nvshmem: the same puts from Triton kernels calling NVSHMEM
        through torch's extern library (bench/torch_nvshmem.py), and
        torch.ops.symm_mem.nvshmem_all_to_all

Ranks pair up (r with r ^ 1). put_latency: one kernel makes --iters round
trips of a put with its signal (each rank waits for the other's), half a
round trip a row. put_bandwidth: both ranks of a pair put `bytes` to each
other at once, split between --programs programs, then wait for the
other's signals (a launch of each a sample, host-timed between
synchronizations), bytes / time one way. all_to_all:
`bytes` to every rank, a call a sample, eager. Every transfer's data is
checked (put_latency's: its signals arrive).
"""
import argparse
import os
import sys
import time

import numpy as np

# The checkout's package, unless weft is installed.
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.append(os.path.join(HERE, "..", "python"))
sys.path.append(HERE)
import weft  # noqa: E402
import weft.language as wl  # noqa: E402
from weft import collectives as C  # noqa: E402
from weft._jit import _NUMPY_DTYPES  # noqa: E402  (numpy's dtypes as Weft's)
import collectives as CB  # noqa: E402  (the CSV log and the watchdog)


@weft.jit(do_not_specialize=("base",))
def _pingpong(buf, flag, nbytes, base, iters):
    """--iters round trips: the even rank of a pair puts, the odd one
    answers once the put's signal arrived."""
    me = wl.rank()
    for i in range(iters):
        t = base + 2 * i
        if me % 2 == 0:
            wl.put(buf, buf, nbytes, me ^ 1, signal=flag, signal_value=t + 1)
            wl.wait(flag, t + 2, cmp="ge")
        else:
            wl.wait(flag, t + 1, cmp="ge")
            wl.put(buf, buf, nbytes, me ^ 1, signal=flag, signal_value=t + 2)


@weft.jit
def _stream(src, dst, flag, nbytes):
    """Each program puts its share (16-byte multiples) of src into the pair
    rank's dst and adds one to its flag."""
    share = wl.cdiv(wl.cdiv(nbytes, wl.num_programs(0)), 16) * 16
    lo = wl.program_id(0) * share
    lo = nbytes if lo > nbytes else lo
    count = nbytes - lo if lo + share > nbytes else share
    wl.put(dst + lo, src + lo, count, wl.rank() ^ 1, signal=flag, signal_op="add")


@weft.jit(do_not_specialize=("expected",))
def _arrived(flag, expected):
    """Waits, in a launch of its own (programs of one launch need not run at
    once), until every program of the pair rank's stream has signalled."""
    wl.wait(flag, expected, cmp="ge")


def parse_sizes(text):
    return [CB.parse_size(s) for s in text.split(",") if s]


def timed(fn, samples, sync):
    """The median and best seconds of `samples` calls of fn, each between
    two synchronizations."""
    times = []
    for _ in range(samples):
        sync()
        start = time.perf_counter()
        fn()
        sync()
        times.append(time.perf_counter() - start)
    times.sort()
    return times[len(times) // 2], times[0]


def _row(env, op, nbytes, system):
    """A case's CSV row before it has run (a watchdog's timeout logs it)."""
    return dict(env, op=op, bytes=nbytes, system=system, median_us=float("nan"),
                min_us=float("nan"), GBps=float("nan"), correct=False, error="")


def _report(log, me, row, median, best, ok, per=1, rate=False):
    """Logs a case from its median and best seconds (of `per` events a
    sample: round trips' halves), with its GB/s where `rate`; rank 0
    prints it."""
    us, best_us = median / per * 1e6, best / per * 1e6
    r = dict(row, median_us=round(us, 3), min_us=round(best_us, 3), correct=ok)
    if rate:
        r["GBps"] = round(row["bytes"] / median / 1e9, 1)
    log.log.add(r)
    if me == 0:
        gbps = f" {r['GBps']:7.1f} GB/s" if rate else ""
        print(f"{r['system']:13s} {r['op']:13s} {CB.fmt_size(r['bytes']):>5s}: {us:10.2f} us"
              f"{gbps} {'ok' if ok else 'WRONG'}", flush=True)


class WeftSystem:
    """Weft on the path the job's placement gives."""

    def __init__(self):
        weft.init()
        self.me, self.ranks = weft.rank(), weft.num_ranks()
        # Across nodes the engine is NVSHMEM on GPUs, MPI on the host backend.
        engine = "nvshmem" if weft.backend() == "cuda" else "mpi"
        self.name = f"weft_{engine}" if weft.num_nodes() > 1 else "weft_store"
        self.sync, self.barrier = weft.synchronize, weft.barrier

    def array(self, values):
        """A symmetric array holding the numpy `values`, of their dtype."""
        buf = weft.empty(values.shape, _NUMPY_DTYPES[values.dtype])
        buf.copy_from(values)
        return buf

    def to_numpy(self, buf):
        return buf.to_numpy()

    def free(self, *bufs):
        for buf in bufs:
            buf.free()

    def pingpong(self, buf, flag, nbytes, base, iters):
        _pingpong[(1,)](buf, flag, nbytes, base, iters)

    def stream(self, src, dst, flag, nbytes, programs):
        _stream[(programs,)](src, dst, flag, nbytes)

    def arrived(self, flag, expected):
        _arrived[(1,)](flag, expected)

    def all_to_all(self, x, out):
        C.all_to_all(x, out)

    def close(self):
        weft.finalize()


class TorchSystem:
    """torch symmetric memory's NVSHMEM backend: Triton kernels calling
    NVSHMEM (bench/torch_nvshmem.py) and its all_to_all."""

    def __init__(self, port):
        import torch
        import torch.distributed as dist
        import torch.distributed._symmetric_memory as symm_mem
        import torch_nvshmem
        self.torch, self.dist, self.symm_mem, self.kernels = torch, dist, symm_mem, torch_nvshmem
        self.me, self.ranks = int(os.environ["WEFT_RANK"]), int(os.environ["WEFT_WORLD_SIZE"])
        self.device = torch.device("cuda", int(os.environ.get("WEFT_LOCAL_RANK", self.me)))
        torch.cuda.set_device(self.device)
        dist.init_process_group("nccl", init_method=f"tcp://127.0.0.1:{port}", rank=self.me,
                                world_size=self.ranks, device_id=self.device)
        symm_mem.set_backend("NVSHMEM")
        self.group = dist.group.WORLD.group_name
        self.name = "torch_nvshmem"
        self.sync, self.barrier = torch.cuda.synchronize, dist.barrier

    def array(self, values):
        src = self.torch.from_numpy(values)
        t = self.symm_mem.empty(values.shape, dtype=src.dtype, device=self.device)
        t.copy_(src)
        self.symm_mem.rendezvous(t, group=self.group)
        return t

    def to_numpy(self, t):
        return t.cpu().numpy()

    def free(self, *tensors):
        pass  # torch frees symmetric tensors with their last reference

    def pingpong(self, buf, flag, nbytes, base, iters):
        self.kernels.pingpong[(1,)](buf, flag, nbytes, base, iters, self.me)

    def stream(self, src, dst, flag, nbytes, programs):
        per = (nbytes + programs - 1) // programs
        share = (per + 15) // 16 * 16          # _stream's: 16-byte multiples
        self.kernels.stream[(programs,)](src, dst, flag, nbytes, share, self.me)

    def arrived(self, flag, expected):
        self.kernels.arrived[(1,)](flag, expected)

    def all_to_all(self, x, out):
        self.torch.ops.symm_mem.nvshmem_all_to_all(x, out, self.group)

    def close(self):
        self.dist.destroy_process_group()


def rows(args, log, system):
    """Every case of one system, each checked, into the log."""
    me, ranks, name = system.me, system.ranks, system.name

    def row(op, nbytes):
        return _row(log.env, op, nbytes, name)

    def todo(op, nbytes):
        return not log.log.done(op=op, bytes=nbytes, system=name)

    # One flag, and the count of its signals so far, per kernel: each only
    # grows (the ping-pong's set, the stream's add).
    flags = {k: system.array(np.zeros(1, np.int64)) for k in ("pingpong", "stream")}
    counts = {k: 0 for k in flags}
    system.barrier()

    for nbytes in filter(lambda n: todo("put_latency", n), parse_sizes(args.latency_sizes)):
        buf = system.array(np.zeros(max(nbytes, 1), np.uint8))
        with log.watchdog.case(row("put_latency", nbytes)):
            def call():
                system.pingpong(buf, flags["pingpong"], nbytes, counts["pingpong"], args.iters)
                counts["pingpong"] += 2 * args.iters
            call()
            median, best = timed(call, args.samples, system.sync)
        _report(log, me, row("put_latency", nbytes), median, best, True, per=2 * args.iters)
        system.barrier()
        system.free(buf)

    for nbytes in filter(lambda n: todo("put_bandwidth", n), parse_sizes(args.bandwidth_sizes)):
        src = system.array(((np.arange(nbytes) * 7 + me) % 251).astype(np.uint8))
        dst = system.array(np.zeros(nbytes, np.uint8))
        system.barrier()
        with log.watchdog.case(row("put_bandwidth", nbytes)):
            def call():
                system.stream(src, dst, flags["stream"], nbytes, args.programs)
                counts["stream"] += args.programs
                system.arrived(flags["stream"], counts["stream"])
            call()
            system.sync()
            ok = np.array_equal(system.to_numpy(dst), (np.arange(nbytes) * 7 + (me ^ 1)) % 251)
            median, best = timed(call, args.samples, system.sync)
        _report(log, me, row("put_bandwidth", nbytes), median, best, ok, rate=True)
        system.barrier()
        system.free(src, dst)

    for nbytes in filter(lambda n: todo("all_to_all", n), parse_sizes(args.all_to_all_sizes)):
        m = nbytes // 4
        x = system.array((np.arange(ranks * m) % 1000 + 1000.0 * me).astype(np.float32))
        out = system.array(np.zeros(ranks * m, np.float32))
        with log.watchdog.case(row("all_to_all", nbytes)):
            system.all_to_all(x, out)
            system.sync()
            want = np.concatenate([np.arange(me * m, (me + 1) * m) % 1000 + 1000.0 * p
                                   for p in range(ranks)])
            ok = np.array_equal(system.to_numpy(out), want)
            median, best = timed(lambda: system.all_to_all(x, out), args.samples, system.sync)
        _report(log, me, row("all_to_all", nbytes), median, best, ok)
        system.barrier()
        system.free(x, out)
    system.free(*flags.values())


def table(path):
    """The CSV's rows side by side: per op and size, each system's median
    (and GB/s) and its ratio to the engine's path (weft_nvshmem or
    weft_mpi): what crossing a node costs against staying in one, and
    against torch's NVSHMEM."""
    import csv
    from collections import defaultdict
    cases = defaultdict(dict)
    with open(path) as f:
        for r in csv.DictReader(f):
            if r["correct"] == "True":
                cases[(r["op"], int(r["bytes"]))][r["system"]] = r
    for (op, nbytes), systems in sorted(cases.items()):
        base = next((systems[s] for s in ("weft_nvshmem", "weft_mpi") if s in systems), None)
        cells = []
        for name, r in sorted(systems.items()):
            us = float(r["median_us"])
            cell = f"{name} {us:.2f} us"
            if r["GBps"] not in ("", "nan"):
                cell += f" ({float(r['GBps']):.1f} GB/s)"
            if base is not None and r is not base:
                cell += f" = {us / float(base['median_us']):.2f}x"
            cells.append(cell)
        print(f"{op:13s} {CB.fmt_size(nbytes):>5s}: " + "; ".join(cells))


class _Log:
    """CB's CSV log and watchdog for one rank (CB.watch without weft)."""

    def __init__(self, args, rank, env):
        self.env = env
        self.log = CB.CsvLog(args.csv, rank, args.resume)
        self.watchdog = CB.Watchdog(args.case_timeout, self.log, rank)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--latency-sizes", default="8,1K,64K")
    p.add_argument("--bandwidth-sizes", default="1M,16M,256M")
    p.add_argument("--all-to-all-sizes", default="8K,1M,64M")
    p.add_argument("--iters", type=int, default=200, help="round trips a latency sample")
    p.add_argument("--samples", type=int, default=20)
    p.add_argument("--programs", type=int, default=64, help="programs of a put_bandwidth")
    p.add_argument("--torch", action="store_true", help="torch symmetric memory's rows")
    p.add_argument("--port", type=int, default=29533)
    p.add_argument("--csv", default=None)
    p.add_argument("--table", metavar="CSV", help="print a CSV's table of ratios and exit")
    CB.timeout_arguments(p)
    args = p.parse_args()
    if args.table:
        table(args.table)
        return
    if args.torch:
        system = TorchSystem(args.port)
        env = CB.environment(system.ranks, "cuda")
    else:
        system = WeftSystem()
        env = CB.environment()
    if system.ranks % 2:
        raise SystemExit("bench/nodes.py pairs ranks: run an even number of them")
    log = _Log(args, system.me, env)
    rows(args, log, system)
    system.close()
    bad = log.log.wrong()
    log.log.close()
    if bad:
        print(f"{len(bad)} wrong results", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
