"""GEMM benchmark: C = A @ B in the DSL (weft.ops.matmul: wl.dot in a K
loop) against torch.matmul (cuBLAS), bf16 in, f32 accumulate, bf16 out
(f32 where Weft splits K: its pieces add in f32), in one process
(bench/README.md).

    build-gpu/bin/weft-run -n 1 --backend cuda -- python3 bench/gemm.py --csv out.csv

Each shape and system: warm-up, then --iters calls each between CUDA
events (host launch overhead included), or, for the _graph systems,
--iters calls captured in a CUDA graph and replayed --reps times (the
kernels alone), one system after the other (--turns: the systems take
turns, graphs' replays and eager calls); median and min per call;
TFLOP/s from the median; results checked against torch in the same run. On the host backend (cache warming) it runs small shapes with the same
specialisations and checks them against numpy, and compiles what a GPU
run launches for WEFT_WARM_TARGET without running it: per shape, the
configuration matmul picks and the --configs variants.

--configs BMxBNxBKxWARPS[xSTAGES[xSPLIT[xCLUSTER[xWS]]]],... adds a graph
system per kernel configuration (weft.ops.matmul's config= and split_k=),
to compare block sizes, warp counts, pipeline depths, split-K counts,
clusters (programs of neighbouring column blocks sharing a's copies;
"2m": of neighbouring row blocks sharing b's) and
producer warps (WS 1: the persistent programs' copies warp-specialised)
by the kernels' own time. --warp-mma adds weft_mma_graph, the configuration
matmul picks for warp-level MMA (mma.sync on sm_90) instead of warpgroup
MMA, and the --configs kernels take it too (names ending _mma_graph).
--eager-configs adds each --configs kernel as an eager system too (the
name without _graph): the fused ops' regime, where the clock stays high.
--per-block adds weft_per_block_graph where matmul's programs are
persistent (more blocks than a wave): the same kernel and blocks launched
a program per block, as before they were (what the persistence and its
prefetch gain; bench/README.md, "GEMM").
--group-m N,... adds eager systems weft_groupN where matmul's programs are
persistent: its plan with GROUP_M = N (the block rows they take together;
bench/README.md, "Block order").
--data pattern takes bench/fused.py's operands (periodic small integers)
instead of random ones (bench/README.md, "Bulk stores": the operands do
not change the times; the eager calls' higher clock does).
--cold times every call with none of its operands in L2: a graph of
--iters calls, each after reading a buffer of four times the L2's size
(read, not written, so that no dirty lines are left to write back), less
a graph of the reads alone, per call (eager systems too).
"""
import argparse
import os
import sys
import time

import numpy as np

# The checkout's package, unless weft is installed.
sys.path.append(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import weft  # noqa: E402
import collectives as CB  # noqa: E402  (bench/collectives.py: the CSV, the watchdog)
from fused import pattern  # noqa: E402
import weft.language as wl  # noqa: E402
from weft.ops._gemm import (_desc_out, blocks_of, compile_matmul, matmul_kernel,  # noqa: E402
                            matmul_plan, matmul_signature, out_blocks)
from weft._jit import compile as compile_kernel  # noqa: E402

SHAPES = [(1024, 1024, 1024), (4096, 4096, 4096), (8192, 8192, 8192),
          (16, 4096, 4096), (64, 4096, 4096), (128, 4096, 4096),
          (16, 8192, 8192), (64, 8192, 8192), (128, 8192, 8192)]


def parse_shapes(text):
    return [tuple(map(int, s.split("x"))) for s in text.split(",")] if text else SHAPES


def parse_list(text):
    return [int(v) for v in text.split(",")] if text else []


def parse_configs(text):
    """--configs' entries as tuples; a cluster of "Nm" is N programs of
    neighbouring row blocks (sharing b's copies), kept as the string."""
    return [tuple(v if v.endswith("m") else int(v) for v in c.split("x"))
            for c in text.split(",")] if text else []


def config_name(config, warp_mma=False, graph=True):
    return ("weft_{}x{}x{}w{}".format(*config) + "".join(
        f"{tag}{value}" for tag, value in zip(("s", "k", "c", "ws"), config[4:])) +
        ("_mma" if warp_mma else "") + ("_graph" if graph else ""))


def config_args(config):
    """(config=, split_k=) of matmul for a --configs entry."""
    kernel = config[:5] + config[6:]
    if len(kernel) > 5 and isinstance(kernel[5], str):  # "2m": (rows, columns)
        kernel = kernel[:5] + ((int(kernel[5][:-1]), 1),) + kernel[6:]
    return kernel, config[5] if len(config) > 5 else None


def per_block(m, n, k, backend):
    """matmul's plan for an m x n x k product launched a program per block:
    (grid, k_steps, constexprs, options) without PERSISTENT, or None where
    the plan is a program per block already."""
    grid, steps, constexprs, options = matmul_plan(m, n, k, backend)
    if not constexprs.get("PERSISTENT"):
        return None
    constexprs = {name: v for name, v in constexprs.items() if name != "PERSISTENT"}
    return grid, steps, constexprs, dict(options, cluster=(1,) + options["cluster"])


def with_group_rows(m, n, k, backend, rows):
    """matmul's plan for an m x n x k product into a bf16 out with GROUP_M
    = rows (the block rows its persistent programs take together):
    (grid, k_steps, constexprs, options), or None where the programs are
    not persistent."""
    grid, steps, constexprs, options = matmul_plan(m, n, k, backend)
    if not constexprs.get("PERSISTENT"):
        return None
    desc_out = _desc_out(constexprs, grid, wl.bfloat16)
    return (grid[0] * grid[1],), steps, dict(constexprs, GROUP_M=rows, DESC_OUT=desc_out), \
        options


def warm(shapes, configs, split_ks, pointers, warp_mma, per_blocks=False, group_rows=()):
    """Compiles the matmul kernels run_gpu launches for the warm target."""
    target = os.environ.get("WEFT_WARM_TARGET")
    if not target:
        return
    backend = target.split(":")[0]
    variants = [(None, None, None, False)] + ([(None, None, None, True)] if warp_mma else []) + \
        [config_args(c) + (None, warp_mma) for c in configs] + \
        [(None, s, None, False) for s in split_ks] + \
        ([(None, None, False, False)] if pointers else [])
    for m, n, k in shapes:
        for config, split_k, descriptors, mma in variants:
            # torch's tensors of these shapes meet tensor_maps_fit; the out
            # is bf16 where the product is one piece of K (run_gpu's rule).
            grid = matmul_plan(m, n, k, backend, split_k, config, descriptors=descriptors,
                               warp_mma=mma)[0]
            compile_matmul(m, n, k, target, "*bf16" if grid[2] == 1 else "*fp32", split_k,
                           config, descriptors, mma)
        plans = [per_blocks and per_block(m, n, k, backend)] + \
            [with_group_rows(m, n, k, backend, rows) for rows in group_rows]
        for plan in filter(None, plans):
            compile_kernel(matmul_kernel, matmul_signature(m, n, k, plan[2], backend, "*bf16"),
                           plan[2], target=target, **plan[3])


def run_host(shapes):
    rng = np.random.default_rng(0)
    for m, n, k in shapes:
        a = weft.empty((m, k), wl.bfloat16)
        b = weft.empty((k, n), wl.bfloat16)
        c = weft.empty((m, n), wl.float32)
        x = rng.integers(-2, 3, (m, k)).astype(np.float32)
        y = rng.integers(-2, 3, (k, n)).astype(np.float32)
        a.copy_from(x)  # to bf16: exact for small integers
        b.copy_from(y)
        t0 = time.perf_counter()
        weft.ops.matmul(a, b, c)
        ms = (time.perf_counter() - t0) * 1e3
        ok = np.array_equal(c.to_numpy(), x @ y)
        print(f"host {m}x{n}x{k}: {ms:.1f} ms {'ok' if ok else 'WRONG'}")
        for buf in (a, b, c):
            buf.free()
        if not ok:
            sys.exit(1)


def capture(torch, fn, calls):
    """A CUDA graph of `calls` calls of fn."""
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g), weft.stream(torch.cuda.current_stream()):
        for _ in range(calls):
            fn()
    return g


def trace_calls(torch, fn, args):
    """The kernels of one replay of --iters graph-captured calls, from
    torch's profiler: per kernel name, its launch shape, the median of its
    durations and the median gap from one kernel's end to the next one's
    start (negative where programmatic dependent launch overlaps them).
    torch 2.11's profiler may abort the process at exit afterwards ("double
    free or corruption": it frees CUPTI buffers CUPTI still holds,
    pytorch/pytorch#195207); what was measured is printed by then."""
    import json
    import tempfile
    from torch.profiler import ProfilerActivity, profile
    g = capture(torch, fn, args.iters)
    g.replay()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        g.replay()
        torch.cuda.synchronize()
    with tempfile.NamedTemporaryFile(suffix=".json") as f:
        prof.export_chrome_trace(f.name)
        trace = json.load(open(f.name))["traceEvents"]
    kernels = sorted((e for e in trace if e.get("cat") == "kernel"), key=lambda e: e["ts"])
    gaps = [b["ts"] - (a["ts"] + a["dur"]) for a, b in zip(kernels, kernels[1:])]
    for name in dict.fromkeys(e["name"] for e in kernels):
        mine = [e for e in kernels if e["name"] == name]
        a = mine[0]["args"]
        print(f"    {name[:90]}\n      grid {a.get('grid')} block {a.get('block')} "
              f"smem {a.get('shared memory')} regs {a.get('registers per thread')}: "
              f"{len(mine)} x {np.median([e['dur'] for e in mine]):.2f} us", flush=True)
    if gaps:
        print(f"    gap between kernels: median {np.median(gaps):.2f} us, "
              f"min {min(gaps):.2f}", flush=True)


def sample_ms(torch, runs, samples, warmup):
    """ms of `samples` runs of each of `runs` (name -> callable), each
    between two events, after `warmup` runs of each; the runs take
    turns."""
    for run in runs.values():
        for _ in range(warmup):
            run()
    events = {name: [] for name in runs}
    for _ in range(samples):
        for name, run in runs.items():
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record()
            run()
            e.record()
            events[name].append((s, e))
    torch.cuda.synchronize()
    return {name: [s.elapsed_time(e) for s, e in pairs] for name, pairs in events.items()}


def time_systems(torch, systems, args, scrub=None):
    """Sorted ms per call of each of `systems` (name -> fn). Eager ones:
    --iters calls, each between two events (the host's launch overhead
    included, as a caller sees it), one system after the other or, with
    --turns, taking turns. Graph ones (names ending _graph): --iters calls
    captured in a CUDA graph per system, replayed --reps times, likewise;
    a sample is a replay's time per call (the kernels alone). With `scrub`
    (--cold), every system as a graph of --iters calls each after reading
    scrub, less the median replay of --iters reads alone, per call."""
    times, graphs, evict = {}, {}, None
    if scrub is None:
        eager = {}
        for name, fn in systems.items():
            if name.endswith("_graph"):
                graphs[name] = capture(torch, fn, args.iters).replay
            else:
                eager[name] = fn
        if args.turns:
            times.update(sample_ms(torch, eager, args.iters, args.warmup))
        for name, fn in eager.items():
            times.setdefault(name, sample_ms(torch, {name: fn}, args.iters, args.warmup)[name])
    else:
        def evict():
            torch.amax(scrub)

        def after_evict(fn):
            def call():
                evict()
                fn()
            return call
        for name, fn in systems.items():
            graphs[name] = capture(torch, after_evict(fn), args.iters).replay
        graphs[evict] = capture(torch, evict, args.iters).replay
    if args.turns:
        samples = sample_ms(torch, graphs, args.reps, args.warmup)
    else:
        samples = {}
        for name, replay in graphs.items():
            samples.update(sample_ms(torch, {name: replay}, args.reps, args.warmup))
    alone = np.median(samples.pop(evict)) if evict else 0.0
    for name, replays in samples.items():
        times[name] = [(t - alone) / args.iters for t in replays]
    return {name: sorted(times[name]) for name in systems}


def run_gpu(args):
    import torch
    device = torch.device("cuda", weft.local_rank())
    torch.cuda.set_device(device)
    log = CB.CsvLog(args.csv, 0, args.resume)
    watchdog = CB.Watchdog(args.case_timeout, log, 0)
    scrub = None
    if args.cold:
        l2 = torch.cuda.get_device_properties(device).L2_cache_size
        scrub = torch.zeros(4 * l2, dtype=torch.uint8, device=device)
    for m, n, k in parse_shapes(args.shapes):
        if log.done(m=m, n=n, k=k):
            continue  # --resume: measured (or timed out) in an earlier run
        # A shape's systems are one case: a hang in any is the shape's row.
        hung = dict(m=m, n=n, k=k, system="(all)", out="", median_ms=float("nan"),
                    min_ms=float("nan"), tflops=float("nan"), correct=False,
                    l2="cold" if args.cold else "warm", turns=args.turns,
                    gpu=torch.cuda.get_device_name(), torch=torch.__version__, error="")
        with watchdog.case(hung):
            measure_shape(torch, device, args, scrub, log, m, n, k)
    log.close()
    if log.wrong():
        sys.exit(1)


def measure_shape(torch, device, args, scrub, log, m, n, k):
    """Every system at one shape; its rows into log."""
    a = weft.empty((m, k), wl.bfloat16)
    b = weft.empty((k, n), wl.bfloat16)
    ta, tb = torch.from_dlpack(a), torch.from_dlpack(b)
    if args.data == "pattern":  # bench/fused.py's operands
        ta.copy_(pattern((m, k), 0, 1, torch).to(torch.bfloat16))
        tb.copy_(pattern((k, n), 0, 2, torch).to(torch.bfloat16))
    else:
        ta.copy_(torch.randint(-2, 3, (m, k), device=device).to(torch.bfloat16))
        tb.copy_(torch.randint(-2, 3, (k, n), device=device).to(torch.bfloat16))
    # bf16 out, as cuBLAS writes, where the product is one piece of K;
    # split-K adds its pieces into f32.
    outs = {1: torch.empty(m, n, dtype=torch.bfloat16, device=device),
            0: torch.empty(m, n, dtype=torch.float32, device=device)}
    td = torch.empty(m, n, dtype=torch.bfloat16, device=device)  # outside the timing

    def weft_system(pieces=None, config=None, descriptors=None, warp_mma=False):
        plan = matmul_plan(m, n, k, "cuda", pieces, config, warp_mma=warp_mma)
        c = outs[plan[0][2] == 1]
        return c, lambda: weft.ops.matmul(a, b, c, split_k=pieces, config=config,
                                          descriptors=descriptors, warp_mma=warp_mma)

    systems = {"weft": weft_system(), "torch": (td, lambda: torch.matmul(ta, tb, out=td))}
    if args.warp_mma:
        systems["weft_mma_graph"] = weft_system(warp_mma=True)
    for config in parse_configs(args.configs):
        kernel, pieces = config_args(config)
        system = weft_system(pieces, kernel, warp_mma=args.warp_mma)
        systems[config_name(config, args.warp_mma)] = system
        if args.eager_configs:
            systems[config_name(config, args.warp_mma, graph=False)] = system
    for pieces in parse_list(args.split_k):
        systems[f"weft_split{pieces}_graph"] = weft_system(pieces)
    if args.pointers:
        systems["weft_pointers_graph"] = weft_system(descriptors=False)
    plan = args.per_block and per_block(m, n, k, "cuda")
    if plan:
        grid, steps, constexprs, options = plan
        da, db = blocks_of(a, b, constexprs)
        systems["weft_per_block_graph"] = (outs[1], lambda: matmul_kernel[grid](
            da, db, outs[1], m, n, k, steps, **options, **constexprs))
    for rows in parse_list(args.group_m):
        plan = with_group_rows(m, n, k, "cuda", rows)
        if plan:
            grid, steps, constexprs, options = plan
            da, db = blocks_of(a, b, constexprs)
            c = out_blocks(outs[1], constexprs) if constexprs["DESC_OUT"] else outs[1]
            systems[f"weft_group{rows}"] = (outs[1], lambda grid=grid, steps=steps, da=da, db=db,
                                            c=c, cx=constexprs, opt=options: matmul_kernel[grid](
                da, db, c, m, n, k, steps, resident=True, **opt, **cx))
    if args.graphs:
        systems["weft_graph"], systems["torch_graph"] = systems["weft"], systems["torch"]
    expect = ta.float() @ tb.float()  # exact: small integers
    correct = {}
    with weft.stream(torch.cuda.current_stream()):
        for name, (tc, fn) in systems.items():
            if not name.startswith("torch"):  # every Weft variant writes its out
                tc.zero_()
                fn()
                torch.cuda.synchronize()
                correct[name] = bool(torch.equal(tc, expect.to(tc.dtype)))
        times = time_systems(torch, {name: fn for name, (_, fn) in systems.items()},
                             args, scrub)
        for name, (tc, fn) in systems.items():
            if args.trace and name.endswith("_graph"):
                trace_calls(torch, fn, args)
            median = float(np.median(times[name]))
            row = dict(m=m, n=n, k=k, system=name, out=str(tc.dtype)[6:],
                       median_ms=round(median, 4),
                       min_ms=round(times[name][0], 4),
                       tflops=round(2 * m * n * k / (median * 1e-3) / 1e12, 2),
                       correct=correct.get(name, True),
                       l2="cold" if args.cold else "warm", turns=args.turns,
                       gpu=torch.cuda.get_device_name(), torch=torch.__version__,
                       error="")
            log.add(row)
            print(f"{m:5d}x{n:5d}x{k:5d} {name:11s} median {median:9.4f} ms "
                  f"{row['tflops']:7.2f} TFLOP/s {'ok' if row['correct'] else 'WRONG'}",
                  flush=True)
    for buf in (a, b):
        buf.free()


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--shapes", default=None, help="MxNxK,... (default: the issue's shapes)")
    p.add_argument("--iters", type=int, default=20)
    p.add_argument("--reps", type=int, default=5, help="replays of a graph of --iters calls")
    p.add_argument("--no-graphs", dest="graphs", action="store_false",
                   help="skip the CUDA-graph systems (weft_graph, torch_graph)")
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--configs", default=None,
                   help="BMxBNxBKxWARPS[xSTAGES[xSPLIT[xCLUSTER[xWS]]]],... weft.ops.matmul "
                        "configs to add (graph systems)")
    p.add_argument("--warp-mma", action="store_true",
                   help="add weft_mma_graph (matmul's configuration for warp-level MMA: "
                        "mma.sync on sm_90, instead of warpgroup MMA), and the --configs "
                        "kernels take it too")
    p.add_argument("--split-k", default=None,
                   help="N,... graph systems with split_k forced to N (same kernels)")
    p.add_argument("--pointers", action="store_true",
                   help="add weft_pointers_graph: a and b as pointers (cp.async copies on "
                        "sm_90) instead of tensor descriptors (bulk tensor copies)")
    p.add_argument("--per-block", action="store_true",
                   help="add weft_per_block_graph where matmul's programs are persistent: "
                        "the same kernel launched a program per block")
    p.add_argument("--group-m", default=None,
                   help="N,... eager systems weft_groupN: matmul's persistent plan with "
                        "GROUP_M = N (the block rows its programs take together)")
    p.add_argument("--trace", action="store_true",
                   help="print the kernels of each graph system (torch's profiler): "
                        "launch shape, duration, gaps between kernels")
    p.add_argument("--cold", action="store_true",
                   help="time each call with its operands out of L2 (a 4x-L2 buffer "
                        "read before it)")
    p.add_argument("--eager-configs", action="store_true",
                   help="each --configs kernel also as an eager system")
    p.add_argument("--turns", action="store_true",
                   help="the systems take turns (round robin: the graphs' replays, the "
                        "eager systems' calls) instead of running one after the other")
    p.add_argument("--data", choices=("random", "pattern"), default="random",
                   help="operands: random integers in -2..2, or bench/fused.py's "
                   "periodic ones (which draw less power: the GPU keeps a higher clock)")
    p.add_argument("--csv", default=None)
    CB.timeout_arguments(p)
    args = p.parse_args()
    weft.init()
    if weft.backend() == "host":
        run_host([(32, 32, 32), (16, 48, 256)])  # the second one splits K
        warm(parse_shapes(args.shapes), parse_configs(args.configs),
             parse_list(args.split_k), args.pointers, args.warp_mma, args.per_block,
             parse_list(args.group_m))
    else:
        run_gpu(args)
    weft.finalize()


if __name__ == "__main__":
    main()
