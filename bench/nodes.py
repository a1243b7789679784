"""Transfers between ranks on the path their placement gives: NVSHMEM's in
a job across nodes, the program's own stores within a node; and the same
exchange through torch symmetric memory's NVSHMEM backend (bench/README.md,
"Across nodes"). bench/run_nodes.sh runs the three jobs into one CSV:

    weft-run -n 2 --local-size 1 --backend cuda -- python3 bench/nodes.py --csv F
        system weft_nvshmem: every peer on another node (NVSHMEM)
    weft-run -n 2 --backend cuda -- python3 bench/nodes.py --csv F
        system weft_store: one node (wl.put is the program's stores)
    weft-run -n 2 --backend cuda -- python3 bench/nodes.py --torch --csv F
        system torch_nvshmem: torch.ops.symm_mem.nvshmem_all_to_all

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


def weft_rows(args, log):
    me, ranks = weft.rank(), weft.num_ranks()
    # Across nodes the engine is NVSHMEM on GPUs, MPI on the host backend.
    engine = "nvshmem" if weft.backend() == "cuda" else "mpi"
    system = f"weft_{engine}" if weft.num_nodes() > 1 else "weft_store"
    env = log.env
    # One flag, and the count of its signals so far, per kernel: each only
    # grows (the ping-pong's set, the stream's add).
    flags = {k: weft.zeros((1,), wl.int64) for k in ("pingpong", "stream")}
    counts = {k: 0 for k in flags}
    weft.barrier()

    def row(op, nbytes):
        return _row(env, op, nbytes, system)

    for nbytes in parse_sizes(args.latency_sizes):
        if log.log.done(op="put_latency", bytes=nbytes, system=system):
            continue
        buf = weft.zeros((max(nbytes, 1),), wl.uint8)
        with log.watchdog.case(row("put_latency", nbytes)):
            def call():
                _pingpong[(1,)](buf, flags["pingpong"], nbytes, counts["pingpong"], args.iters)
                counts["pingpong"] += 2 * args.iters
            call()
            median, best = timed(call, args.samples, weft.synchronize)
        _report(log, me, row("put_latency", nbytes), median, best, True, per=2 * args.iters)
        weft.barrier()
        buf.free()

    for nbytes in parse_sizes(args.bandwidth_sizes):
        if log.log.done(op="put_bandwidth", bytes=nbytes, system=system):
            continue
        src, dst = weft.empty((nbytes,), wl.uint8), weft.zeros((nbytes,), wl.uint8)
        pattern = (np.arange(nbytes) * 7 + me) % 251
        src.copy_from(pattern)
        weft.barrier()
        with log.watchdog.case(row("put_bandwidth", nbytes)):
            def call():
                _stream[(args.programs,)](src, dst, flags["stream"], nbytes)
                counts["stream"] += args.programs
                _arrived[(1,)](flags["stream"], counts["stream"])
            call()
            ok = np.array_equal(dst.to_numpy(), (np.arange(nbytes) * 7 + (me ^ 1)) % 251)
            median, best = timed(call, args.samples, weft.synchronize)
        _report(log, me, row("put_bandwidth", nbytes), median, best, ok, rate=True)
        weft.barrier()
        src.free()
        dst.free()

    for nbytes in parse_sizes(args.all_to_all_sizes):
        if log.log.done(op="all_to_all", bytes=nbytes, system=system):
            continue
        m = nbytes // 4
        x, out = weft.empty((ranks * m,), wl.float32), weft.empty((ranks * m,), wl.float32)
        x.copy_from(np.arange(ranks * m) % 1000 + 1000.0 * me)
        with log.watchdog.case(row("all_to_all", nbytes)):
            C.all_to_all(x, out)
            want = np.concatenate([np.arange(me * m, (me + 1) * m) % 1000 + 1000.0 * p
                                   for p in range(ranks)])
            ok = np.array_equal(out.to_numpy(), want)
            median, best = timed(lambda: C.all_to_all(x, out), args.samples,
                                 weft.synchronize)
        _report(log, me, row("all_to_all", nbytes), median, best, ok)
        weft.barrier()
        x.free()
        out.free()


def torch_rows(args, log):
    """torch symmetric memory's NVSHMEM backend: its all_to_all."""
    import torch
    import torch.distributed as dist
    import torch.distributed._symmetric_memory as symm_mem
    me, ranks = int(os.environ["WEFT_RANK"]), int(os.environ["WEFT_WORLD_SIZE"])
    device = torch.device("cuda", int(os.environ.get("WEFT_LOCAL_RANK", me)))
    torch.cuda.set_device(device)
    dist.init_process_group("nccl", init_method=f"tcp://127.0.0.1:{args.port}", rank=me,
                            world_size=ranks, device_id=device)
    symm_mem.set_backend("NVSHMEM")
    group = dist.group.WORLD.group_name
    symm_mem.enable_symm_mem_for_group(group)
    sync = torch.cuda.synchronize
    for nbytes in parse_sizes(args.all_to_all_sizes):
        m = nbytes // 4
        row = _row(log.env, "all_to_all", nbytes, "torch_nvshmem")
        if log.log.done(op="all_to_all", bytes=nbytes, system="torch_nvshmem"):
            continue
        with log.watchdog.case(row):
            x = symm_mem.empty(ranks * m, dtype=torch.float32, device=device)
            out = symm_mem.empty(ranks * m, dtype=torch.float32, device=device)
            x.copy_(torch.arange(ranks * m, device=device) % 1000 + 1000.0 * me)
            symm_mem.rendezvous(x, group=group)
            symm_mem.rendezvous(out, group=group)

            def call():
                torch.ops.symm_mem.nvshmem_all_to_all(x, out, group)
            call()
            sync()
            want = torch.cat([torch.arange(me * m, (me + 1) * m, device=device) % 1000 +
                              1000.0 * p for p in range(ranks)])
            ok = bool(torch.equal(out, want))
            median, best = timed(call, args.samples, sync)
        _report(log, me, row, median, best, ok)
        dist.barrier()
    dist.destroy_process_group()


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
        env = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
               "ranks": os.environ["WEFT_WORLD_SIZE"], "backend": "cuda"}
        log = _Log(args, int(os.environ["WEFT_RANK"]), env)
        torch_rows(args, log)
    else:
        weft.init()
        if weft.num_ranks() % 2:
            raise SystemExit("bench/nodes.py pairs ranks: run an even number of them")
        log = _Log(args, weft.rank(), CB.environment())
        weft_rows(args, log)
        weft.finalize()
    bad = log.log.wrong()
    log.log.close()
    if bad:
        print(f"{len(bad)} wrong results", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
