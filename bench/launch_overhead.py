"""Host time per eager call: of a bare launch of a cached kernel with six
run-time arguments (Weft's `kernel[grid](...)` on weft Buffers and, on a
GPU, on torch tensors, and Triton's launcher for the same kernel and
tensors; also with an argument that changes at every call), of weft.ops.matmul at a decode shape (16 x H @ H x H, bf16; on a
GPU also torch.matmul), of the collectives at small sizes (Weft's
and, on a GPU, NCCL's and torch symmetric memory's), and of the fused
ops (bench/fused.py's Weft system: its cases, the same buffers); on a GPU
also chains of the bare launch's kernel on 1M and 4M elements, timed with
the GPU's work (`chain_*`: what one-launch graphs trade, docs/runtime.md).
Weft's calls are split into the runtime's weft_launch and the rest (the
Python frontend: the op's checks and plan, finding the kernel, packing the
arguments); a kept call that launches as a graph (weft/_plans.py) counts
its weft_graph_launch as the runtime's part and as one launch. Except in
the chains the GPU is not waited for inside a batch, so on a GPU this is
the cost that an eager call adds before its kernels start; on the host
backend weft_launch also runs the kernels.

    build-gpu/bin/weft-run -n 1 --backend cuda -- python3 bench/launch_overhead.py
    build/bin/weft-run -n 1 -- /usr/bin/python3 bench/launch_overhead.py --hidden 256

Each row: --batches batches of --calls calls, between them a device
synchronisation and a barrier; the median batch's time per call (and
the fastest's); weft_launch's share from as many batches again with it
timed (the timing's own cost stays out of the calls' time).
"""
import argparse
import contextlib
import cProfile
import io
import itertools
import pstats
import time

import collectives as CB  # bench/collectives.py: the environment, the CSV
import fused as F         # bench/fused.py: the cases
import weft  # noqa: E402  (on sys.path through collectives)
import weft.language as wl  # noqa: E402
from weft import _runtime as rt  # noqa: E402

SIX = 1024  # elements of the bare launch's vectors
CHAIN = (1 << 20, 1 << 22)  # elements of the chains' vectors


@weft.jit
def axpby(x, y, out, n, alpha, beta, BLOCK: wl.constexpr):
    """The bare launch: six run-time arguments, as Triton's anchor has."""
    offs = wl.program_id(0) * BLOCK + wl.arange(0, BLOCK)
    mask = offs < n
    wl.store(out + offs, alpha * wl.load(x + offs, mask=mask) +
             beta * wl.load(y + offs, mask=mask), mask=mask)


def triton_axpby():
    """The same kernel in Triton (the image has it), or None."""
    try:
        import triton
        import triton.language as tl
    except ImportError:
        return None

    @triton.jit
    def kernel(x, y, out, n, alpha, beta, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        tl.store(out + offs, alpha * tl.load(x + offs, mask=mask) +
                 beta * tl.load(y + offs, mask=mask), mask=mask)
    return kernel


def launch_cases(run):
    """{(op, system): fn} of the bare launches and the small collectives."""
    cases = {}
    bufs = [weft.zeros((SIX,), wl.float32) for _ in range(3)]
    x, y, out = bufs
    cases[("launch", "weft")] = lambda: axpby[(1,)](x, y, out, SIX, 2.0, 3.0, BLOCK=SIX)
    # The same with alpha changing at every call: a launch whose arguments
    # its one-launch graph does not hold yet (docs/runtime.md).
    alpha = itertools.cycle((2.0, 4.0)).__next__
    cases[("launch_new_args", "weft")] = lambda: axpby[(1,)](x, y, out, SIX, alpha(), 3.0,
                                                             BLOCK=SIX)
    # The same launch's weft_launch alone, its arguments packed once: the
    # runtime and the driver, under the Python frontend.
    compiled = axpby[(1,)](x, y, out, SIX, 2.0, 3.0, BLOCK=SIX)
    config = compiled._configs[((1,), rt.state.stream, False)]
    cases[("launch_c", "weft")] = lambda: rt.launch_raw(compiled._handle, config,
                                                        compiled._argv, compiled._count)
    # A local GEMM at a decode shape, out given (a kept call), bf16 out as
    # cuBLAS writes: 16 x H @ H x H, H the first --hidden.
    h = int(str(run.args.hidden).split(",")[0])
    a16, w16, o16 = (weft.zeros(shape, wl.bfloat16) for shape in ((16, h), (h, h), (16, h)))
    bufs += [a16, w16, o16]
    cases[("matmul_16", "weft")] = lambda: weft.ops.matmul(a16, w16, o16)
    # The same call checked and planned every time, as before it was kept.
    from weft.ops import _gemm
    cases[("matmul_16_unkept", "weft")] = lambda: _gemm._matmul(a16, w16, o16, None, None,
                                                                None, False)
    small = weft.zeros((2048,), wl.bfloat16)     # 4 KiB per rank
    gathered = weft.zeros((2048 * run.ranks,), wl.bfloat16)
    bufs += [small, gathered]
    cases[("all_reduce_4K", "weft")] = lambda: weft.collectives.all_reduce(small)
    cases[("all_gather_4K", "weft")] = lambda: weft.collectives.all_gather(small, gathered)
    if run.gpu:
        # Chains of the bare launch's kernel over 1M and 4M elements,
        # timed with the GPU's work (measure's until_done): the first runs
        # faster on the GPU than the host launches it, the second slower.
        for m in CHAIN:
            vecs = [weft.zeros((m,), wl.float32) for _ in range(3)]
            bufs += vecs
            cases[(f"chain_{m >> 20}M", "weft")] = \
                lambda v=vecs, m=m: axpby[(m // SIX,)](*v, m, 2.0, 3.0, BLOCK=SIX)
        torch = run.torch
        tx, ty, tout = (torch.zeros(SIX, device=run.device) for _ in range(3))
        # The bare launch with the same torch tensors as Triton's.
        cases[("launch_torch", "weft")] = lambda: axpby[(1,)](tx, ty, tout, SIX, 2.0, 3.0,
                                                              BLOCK=SIX)
        kernel = triton_axpby()
        if kernel is not None:
            cases[("launch", "triton")] = lambda: kernel[(1,)](tx, ty, tout, SIX, 2.0, 3.0,
                                                              BLOCK=SIX)
        ta16, tw16, to16 = (torch.from_dlpack(b) for b in (a16, w16, o16))
        cases[("matmul_16", "torch")] = lambda: torch.matmul(ta16, tw16, out=to16)
        t = torch.zeros(2048, dtype=torch.bfloat16, device=run.device)
        tg = torch.zeros(2048 * run.ranks, dtype=torch.bfloat16, device=run.device)
        cases[("all_reduce_4K", "nccl")] = lambda: run.dist.all_reduce(t)
        cases[("all_gather_4K", "nccl")] = lambda: run.dist.all_gather_into_tensor(tg, t)
        import torch.distributed._symmetric_memory as symm
        ts = symm.empty(2048, dtype=torch.bfloat16, device=run.device)
        symm.rendezvous(ts, run.dist.group.WORLD.group_name)
        group = run.dist.group.WORLD.group_name
        cases[("all_reduce_4K", "symm_one_shot")] = \
            lambda: torch.ops.symm_mem.one_shot_all_reduce(ts, "sum", group)
    return cases, bufs


class LaunchClock:
    """Times the runtime's launches while installed: weft_launch (the
    launch path's entry, rt.launch_raw) and weft_graph_launch (a kept
    call launched as a graph, rt.Graph.launch); counts their calls and
    their time."""

    def __init__(self):
        rt.lib()
        self.real, self.real_graph = rt.launch_raw, rt.Graph.launch
        self.seconds, self.calls = 0.0, 0

    def _timer(self, real):
        def timed(*args):
            start = time.perf_counter()
            result = real(*args)
            self.seconds += time.perf_counter() - start
            self.calls += 1
            return result
        return timed

    @contextlib.contextmanager
    def installed(self):
        self.seconds, self.calls = 0.0, 0
        rt.launch_raw, rt.Graph.launch = self._timer(self.real), self._timer(self.real_graph)
        try:
            yield
        finally:
            rt.launch_raw, rt.Graph.launch = self.real, self.real_graph


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


def measure(run, clock, fn, args, until_done=False):
    """(us per call, of it in weft_launch, launches per call), the median
    batch's, and the fastest batch's us per call. The calls' time comes
    from batches with nothing wrapped; weft_launch's share from as many
    batches with the clock installed (its wrapper costs 0.3-0.6 us a
    launch of its own, which the calls' time must not include).
    until_done: each batch is timed until the GPU has run it (a chain,
    where the GPU may be the slower), and weft_launch's share is not
    taken (0, one launch a call)."""
    def batch():
        run.sync()
        weft.barrier()
        start = time.perf_counter()
        for _ in range(args.calls):
            fn()
        if until_done:
            run.sync()
        return time.perf_counter() - start

    with run.on_stream():
        for _ in range(args.warmup):
            fn()
        totals, timed = [], []
        for _ in range(args.batches):   # in turns: both see the host's drift
            totals.append(batch())
            if not until_done:
                with clock.installed():
                    batch()
                timed.append((clock.seconds, clock.calls))
        run.sync()
    totals.sort()
    timed.sort()
    launch, calls = timed[len(timed) // 2] if timed else (0.0, args.calls)
    return (totals[len(totals) // 2] / args.calls * 1e6, launch / args.calls * 1e6,
            calls / args.calls, totals[0] / args.calls * 1e6)


def _failed(env, op, tokens, hidden, system):
    """The row of a case that never finished (CB.Watchdog)."""
    nan = float("nan")
    return dict(env, op=op, tokens=tokens, hidden=hidden, system=system, host_us=nan,
                best_us=nan, launch_us=nan, frontend_us=nan, launches=nan, correct=False,
                error="")


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
    CB.timeout_arguments(p)
    args = p.parse_args()
    args.systems = ["weft"]

    weft.init()
    run = F.Bench(args)
    clock = LaunchClock()
    log = CB.watch(run, args)
    env = run.env
    cases, bufs = launch_cases(run)
    for (op, system), fn in cases.items():
        if log.done(op=op, system=system):
            continue  # --resume
        with run.watchdog.case(_failed(env, op, "", "", system)):
            fn()  # compiles and loads; makes the collectives' state
            per_call, launch, launches, best = measure(run, clock, fn, args,
                                                       until_done=op.startswith("chain_"))
        if system != "weft":
            launch = launches = 0.0  # not Weft's launches
        row = dict(op=op, tokens="", hidden="", system=system, host_us=round(per_call, 2),
                   best_us=round(best, 2), launch_us=round(launch, 2),
                   frontend_us=round(per_call - launch, 2), launches=round(launches, 2),
                   correct="", error="")
        log.add(dict(env, **row))
        if run.rank == 0:
            print(f"{op:14s} {system:14s} {per_call:8.2f} us a call (best batch {best:.2f})"
                  + (f": frontend {per_call - launch:6.2f}, weft_launch {launch:6.2f}"
                     if system == "weft" else ""), flush=True)
        if args.profile and system == "weft":
            with run.on_stream():
                report = profile(fn, args.calls, args.profile)
            run.sync()
            if run.rank == 0:
                print(report, flush=True)
    weft.barrier()
    for b in bufs:
        b.free()
    for op in (o for o in args.ops.split(",") if o):
        for tokens, hidden in F.shapes(args, op):
            if op in ("ag_gemm", "gemm_rs") and tokens % run.ranks:
                continue
            if log.done(op=op, tokens=tokens, hidden=hidden):
                continue  # --resume
            with run.watchdog.case(_failed(env, op, tokens, hidden, "weft")):
                systems, checks, bufs = run.case(op, tokens, hidden)
                per_call, launch, launches, best = measure(run, clock, systems["weft"], args)
                ok = checks["weft"]()
            row = dict(op=op, tokens=tokens, hidden=hidden, system="weft",
                       host_us=round(per_call, 2),
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
