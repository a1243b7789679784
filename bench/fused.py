"""Fused compute + communication benchmark: weft.ops' fused kernels against
the unfused baseline (torch.matmul + an NCCL collective through
torch.distributed) and torch's symmetric-memory fused ops, in one process
per rank and one run (docs/python.md, "Fused kernels").

    build-gpu/bin/weft-run -n 2 --backend cuda -- python3 bench/fused.py \
        --csv bench/results/fused.csv
    /usr/bin/python3 bench/fused.py --plot bench/results/fused.csv   # PNGs, here

Ops and shapes (M = tokens over all ranks, H = hidden, R = ranks, bf16):

| op | Weft | torch (NCCL) | symm |
|---|---|---|---|
| ag_gemm | all_gather_matmul: x (M/R x H) @ W (H x H/R) (`weft_bf16`: a bf16 out, as torch's) | all_gather_into_tensor + matmul | fused_all_gather_matmul |
| gemm_rs | matmul_reduce_scatter: x (M x H/R) @ W (H/R x H) (`weft_bf16`: partials="bf16" and a bf16 out) | matmul + reduce_scatter_tensor | fused_matmul_reduce_scatter |
| gemm_ar | matmul_all_reduce (`weft_bf16` as above) | matmul + all_reduce | matmul into symmetric memory + one_shot_all_reduce |
| fd_combine | flash_decode_combine: M sequences x H/128 heads x 128, f32 | one packed all_gather_into_tensor + the combine in torch | - |
| moe | moe_dispatch + moe_combine: M tokens per rank, --experts, top --topk, identity experts | argsort + all_to_all_single of the counts and of the rows, and back, + index_add_ | - |

The GEMM ops' overlap limit, max(GEMM alone, collective alone), comes from
more systems of the same case: `gemm_alone` (torch.matmul of the
rank's product: the gathered rows for ag_gemm, the whole M x H partial for
the second layer), `weft_gemm_alone` (weft.ops.matmul of the same, f32 out:
what the fusion costs against Weft's own GEMM; `weft_bf16_gemm_alone` with
a bf16 out, the one to hold `weft_bf16` against) and `comm_alone` (the NCCL
collective alone on the bf16 bytes torch moves). `--limits CSV` prints each
GEMM op's systems against that limit.

Each measurement: --warmup calls, then --iters calls each between two CUDA
events on the current stream (host launch overhead included, as a caller
sees it); median and min. Every system's result is checked in the same
run: inputs are small integers (weights multiples of 1/4), so Weft's f32
results are compared exactly with an f32 reference; torch's bf16 outputs
within bf16 rounding. `speedup` is torch's (NCCL) median over the system's.
On the host backend (cache warming, scripts/gpu/warm_cache.sh) only Weft
runs, at the --tokens given and a small --hidden with the GPU shapes'
divisibilities, checked against numpy.
"""
import argparse
import csv
import math
import os
import sys
import time

import numpy as np

import collectives as CB  # bench/collectives.py: the timing loop, the environment
import weft  # noqa: E402  (on sys.path through collectives)
import weft.language as wl  # noqa: E402
from weft import ops  # noqa: E402

OPS = ("ag_gemm", "gemm_rs", "gemm_ar", "fd_combine", "moe")
TOKENS = (16, 64, 256, 1024, 4096, 8192)  # the sweep's defaults
HIDDEN = (4096, 8192)
HEAD_DIM = 128


def pattern(shape, rank, salt, xp=np):
    """Rank `rank`'s operand: integers in -2..2 (exact in bf16, and their
    products' sums exact in f32 for K < 2^20), a function of the index."""
    n = math.prod(shape)
    if xp is np:
        i = np.arange(n, dtype=np.int64)
    else:
        i = xp.arange(n, dtype=xp.int64, device="cuda")
    return (((i * 7 + (i // 13) * 3 + 5 * rank + salt) % 5) - 2).reshape(shape)


def moe_routing(tokens, experts, topk, rank, xp=np):
    """Distinct experts per token (a rotation by the token's hash), weights
    (1 + (t + j) % 4) / 4: the same function everywhere."""
    t = np.arange(tokens)[:, None]
    j = np.arange(topk)[None, :]
    ids = ((t * 5 + rank * 3) % experts + j * (experts // topk)) % experts
    weights = (1 + (t + j) % 4) / 4
    return ids.astype(np.int32), weights.astype(np.float32)


class Bench(CB.Run):
    """One rank's view; timing and process group from bench/collectives.py."""

    # -- data -------------------------------------------------------------
    def buffer(self, values, dtype):
        """A weft.Buffer (symmetric) holding values (a numpy array)."""
        buf = weft.empty(values.shape, dtype)
        buf.copy_from(values)  # converted to dtype (bf16: to nearest even)
        return buf

    def tensor(self, buf):
        return self.torch.from_dlpack(buf)

    def check(self, got, want, exact=True):
        """got (a buffer, tensor or array) against want (numpy or tensor)."""
        if isinstance(got, weft.Buffer):
            got = got.to_numpy()
        if hasattr(got, "cpu"):
            got = got.float().cpu().numpy()
        if hasattr(want, "cpu"):
            want = want.float().cpu().numpy()
        got, want = np.asarray(got, np.float64), np.asarray(want, np.float64).reshape(got.shape)
        if exact:
            return bool(np.array_equal(got, want))
        return bool(np.allclose(got, want, rtol=1e-2, atol=1e-2))

    # -- cases: {system: (fn, correct)} -------------------------------------
    def ag_gemm(self, m, h):
        r, R = self.rank, self.ranks
        bf = wl.bfloat16
        x = self.buffer(pattern((m // R, h), r, 1), bf)
        w = self.buffer(pattern((h, h // R), r, 2), bf)
        out = weft.empty((m, h // R), wl.float32)
        out16 = weft.empty((m, h // R), bf)
        bufs = [x, w, out, out16]
        systems = {"weft": lambda: ops.all_gather_matmul(x, w, out),
                   "weft_bf16": lambda: ops.all_gather_matmul(x, w, out16),
                   **{f"weft_{algorithm}": lambda algorithm=algorithm: ops.all_gather_matmul(
                       x, w, out, algorithm=algorithm) for algorithm in ("gather", "overlap")}}
        if not self.gpu:
            want = np.concatenate([pattern((m // R, h), p, 1) for p in range(R)]) @ \
                pattern((h, h // R), r, 2)
            checks = {s: lambda: self.check(out, want) for s in systems}
            checks["weft_bf16"] = lambda: self.check(out16, want, exact=False)
            return systems, checks, bufs
        torch, dist = self.torch, self.dist
        tx, tw = self.tensor(x), self.tensor(w)
        full = torch.empty(m, h, dtype=torch.bfloat16, device=self.device)
        tout = torch.empty(m, h // R, dtype=torch.bfloat16, device=self.device)
        want = torch.cat([pattern((m // R, h), p, 1, torch) for p in range(R)]).float() @ \
            tw.float()

        def nccl():
            dist.all_gather_into_tensor(full, tx)
            torch.matmul(full, tw, out=tout)
        systems["torch"] = nccl
        checks = {s: lambda: self.check(out, want) for s in systems}
        checks["weft_bf16"] = lambda: self.check(out16, want, exact=False)
        checks["torch"] = lambda: self.check(tout, want, exact=False)
        # The overlap limit's rows: the GEMM alone (cuBLAS on the gathered
        # rows, and Weft's), the collective alone (NCCL).
        gathered = torch.cat([pattern((m // R, h), p, 1, torch) for p in range(R)])
        full.copy_(gathered)
        xg = self.buffer(gathered.cpu().numpy(), bf)
        bufs.append(xg)
        systems.update(gemm_alone=lambda: torch.matmul(full, tw, out=tout),
                       comm_alone=lambda: dist.all_gather_into_tensor(full, tx),
                       weft_gemm_alone=lambda: ops.matmul(xg, w, out),
                       weft_bf16_gemm_alone=lambda: ops.matmul(xg, w, out16))
        checks.update(gemm_alone=lambda: self.check(tout, want, exact=False),
                      comm_alone=lambda: self.check(full, gathered),
                      weft_gemm_alone=lambda: self.check(out, want),
                      weft_bf16_gemm_alone=lambda: self.check(out16, want, exact=False))
        symm = self.symm_ops()
        if symm:
            res = {}
            systems["symm"] = lambda: res.__setitem__("out", symm.fused_all_gather_matmul(
                tx, [tw], 0, self.group, return_A=False)[1][0])
            checks["symm"] = lambda: self.check(res["out"], want, exact=False)
        return systems, checks, bufs

    def gemm_reduce(self, m, h, scatter):
        r, R = self.rank, self.ranks
        bf = wl.bfloat16
        x = self.buffer(pattern((m, h // R), r, 3), bf)
        w = self.buffer(pattern((h // R, h), r, 4), bf)
        rows = m // R if scatter else m
        out = weft.empty((rows, h), wl.float32)
        out16 = weft.empty((rows, h), bf)
        bufs = [x, w, out, out16]
        fused = ops.matmul_reduce_scatter if scatter else ops.matmul_all_reduce
        systems = {"weft": lambda: fused(x, w, out),
                   "weft_bf16": lambda: fused(x, w, out16, partials="bf16")}
        lo = r * rows if scatter else 0
        if not self.gpu:
            want = sum(pattern((m, h // R), p, 3) @ pattern((h // R, h), p, 4)
                       for p in range(R))[lo:lo + rows]
            return systems, {"weft": lambda: self.check(out, want),
                             "weft_bf16": lambda: self.check(out16, want, exact=False)}, bufs
        torch, dist = self.torch, self.dist
        tx, tw = self.tensor(x), self.tensor(w)
        want = sum(pattern((m, h // R), p, 3, torch).float() @
                   pattern((h // R, h), p, 4, torch).float() for p in range(R))[lo:lo + rows]
        part = torch.empty(m, h, dtype=torch.bfloat16, device=self.device)
        tout = torch.empty(rows, h, dtype=torch.bfloat16, device=self.device)

        def nccl():
            torch.matmul(tx, tw, out=part)
            if scatter:
                dist.reduce_scatter_tensor(tout, part)
            else:
                dist.all_reduce(part)
        systems["torch"] = nccl
        checks = {"weft": lambda: self.check(out, want),
                  "weft_bf16": lambda: self.check(out16, want, exact=False),
                  "torch": lambda: self.check(tout if scatter else part, want, exact=False)}
        # The overlap limit's rows: the GEMM alone (cuBLAS, and Weft's: the
        # whole M x H partial), the collective alone (NCCL) on its bf16.
        mine = tx.float() @ tw.float()
        cpart, cout = mine.to(torch.bfloat16), torch.empty_like(tout)
        wfull, wfull16 = weft.empty((m, h), wl.float32), weft.empty((m, h), bf)
        bufs += [wfull, wfull16]

        def comm():
            if scatter:
                dist.reduce_scatter_tensor(cout, cpart)
            else:
                dist.all_reduce(cpart)  # in place: right after the first call, as checked
        systems.update(gemm_alone=lambda: torch.matmul(tx, tw, out=part), comm_alone=comm,
                       weft_gemm_alone=lambda: ops.matmul(x, w, wfull),
                       weft_bf16_gemm_alone=lambda: ops.matmul(x, w, wfull16))
        checks.update(gemm_alone=lambda: self.check(part, mine, exact=False),
                      comm_alone=lambda: self.check(cout if scatter else cpart, want,
                                                    exact=False),
                      weft_gemm_alone=lambda: self.check(wfull, mine),
                      weft_bf16_gemm_alone=lambda: self.check(wfull16, mine, exact=False))
        symm = self.symm_ops()
        if symm:
            res = {}
            if scatter:
                systems["symm"] = lambda: res.__setitem__("out", symm.fused_matmul_reduce_scatter(
                    tx, tw, "sum", 0, self.group))
            else:
                import torch.distributed._symmetric_memory as sm
                spart = sm.empty(m, h, dtype=torch.bfloat16, device=self.device)
                sm.rendezvous(spart, self.group)

                def one_shot():
                    torch.matmul(tx, tw, out=spart)
                    res["out"] = symm.one_shot_all_reduce(spart, "sum", self.group)
                systems["symm"] = one_shot
            checks["symm"] = lambda: self.check(res["out"], want, exact=False)
        return systems, checks, bufs

    def fd_combine(self, batch, h):
        r, R = self.rank, self.ranks
        heads = max(1, h // HEAD_DIM)
        rows = batch * heads
        # partial outputs and log-sum-exps: f32, as attention kernels leave them
        o_np = [pattern((rows, HEAD_DIM), p, 5).astype(np.float32) for p in range(R)]
        l_np = [pattern((rows,), p, 6).astype(np.float32) for p in range(R)]
        o, lse = self.buffer(o_np[r], wl.float32), self.buffer(l_np[r], wl.float32)
        out = weft.empty((rows, HEAD_DIM), wl.float32)
        bufs = [o, lse, out]
        systems = {"weft": lambda: ops.flash_decode_combine(o, lse, out)}
        top = np.max(l_np, axis=0)
        wts = np.exp(np.stack(l_np) - top)
        want = sum(wts[p][:, None] * o_np[p] for p in range(R)) / wts.sum(0)[:, None]
        checks = {"weft": lambda: bool(np.allclose(out.to_numpy(), want, rtol=1e-5,
                                                   atol=1e-5))}
        if not self.gpu:
            return systems, checks, bufs
        torch, dist = self.torch, self.dist
        packed = torch.empty(rows * (HEAD_DIM + 1), device=self.device)
        packed[:rows * HEAD_DIM].copy_(self.tensor(o).view(-1))
        packed[rows * HEAD_DIM:].copy_(self.tensor(lse))
        gathered = torch.empty(R, rows * (HEAD_DIM + 1), device=self.device)
        res = {}

        def nccl():
            dist.all_gather_into_tensor(gathered, packed)
            os_ = gathered[:, :rows * HEAD_DIM].view(R, rows, HEAD_DIM)
            ls = gathered[:, rows * HEAD_DIM:]
            w = torch.exp(ls - ls.max(0).values)
            res["out"] = (w[..., None] * os_).sum(0) / w.sum(0)[:, None]
        systems["torch"] = nccl
        checks["torch"] = lambda: bool(np.allclose(res["out"].cpu().numpy(), want,
                                                   rtol=1e-5, atol=1e-5))
        return systems, checks, bufs

    def moe(self, tokens, h):
        r, R, a = self.rank, self.ranks, self.args
        experts, topk = a.experts, a.topk
        # capacity per (local expert, source): --capacity-factor x the mean,
        # a multiple of 16 (the specialisation a GPU run asks for)
        capacity = 16 * math.ceil(a.capacity_factor * tokens * topk / experts / 16)
        bf = wl.bfloat16
        x = self.buffer(pattern((tokens, h), r, 7), bf)
        ids_np, w_np = moe_routing(tokens, experts, topk, r)
        ids, wts = self.buffer(ids_np, wl.int32), self.buffer(w_np, wl.float32)
        out = weft.empty((tokens, h), wl.float32)
        handle = ops.moe_dispatch(x, ids, experts, capacity)
        ops.moe_combine(handle.recv, handle, wts, out)
        if handle.dropped():
            raise RuntimeError(f"moe: {handle.dropped()} pairs over capacity {capacity}")
        bufs = [x, ids, wts, out, handle]

        def fused():  # identity experts: the combine sends recv itself back
            ops.moe_dispatch(x, ids, experts, capacity, handle=handle)
            ops.moe_combine(handle.recv, handle, wts, out)
        systems = {"weft": fused}
        want = (w_np.sum(1)[:, None] * pattern((tokens, h), r, 7)).astype(np.float64)
        checks = {"weft": lambda: self.check(out, want)}
        if not self.gpu:
            return systems, checks, bufs
        torch, dist = self.torch, self.dist
        tx = self.tensor(x)
        flat = torch.from_numpy(ids_np.reshape(-1)).to(self.device)
        tw = torch.from_numpy(w_np.reshape(-1)).to(self.device)
        res = {}

        def nccl():
            order = torch.argsort(flat, stable=True)
            token = order // topk
            send = torch.bincount(flat // (experts // R), minlength=R)
            recv = torch.empty_like(send)
            dist.all_to_all_single(recv, send)
            send_l, recv_l = send.tolist(), recv.tolist()       # host sync: the splits
            rows = torch.empty(sum(recv_l), h, dtype=tx.dtype, device=self.device)
            dist.all_to_all_single(rows, tx[token], recv_l, send_l)
            back = torch.empty(len(order), h, dtype=tx.dtype, device=self.device)
            dist.all_to_all_single(back, rows, send_l, recv_l)  # identity experts
            o = torch.zeros(tokens, h, device=self.device)
            o.index_add_(0, token, back.float() * tw[order, None])
            res["out"] = o
        systems["torch"] = nccl
        checks["torch"] = lambda: self.check(res["out"], want)
        return systems, checks, bufs

    def symm_ops(self):
        """torch.ops.symm_mem where this torch has it, its group enabled
        (older torch needs that; multicast stays off: common.sh)."""
        if "symm" not in self.args.systems:
            return None
        try:
            import torch.distributed._symmetric_memory as sm
            if hasattr(sm, "enable_symm_mem_for_group"):
                sm.enable_symm_mem_for_group(self.group)
            return self.torch.ops.symm_mem
        except Exception:  # noqa: BLE001 - no symmetric memory: the system is skipped
            return None

    # -- one (op, tokens, hidden) -------------------------------------------
    def case(self, op, tokens, hidden):
        """(systems: name -> call, checks: name -> correct?, buffers to
        free) of one op at one shape."""
        if self.gpu:
            self.group = self.dist.group.WORLD.group_name
        maker = {"ag_gemm": self.ag_gemm, "fd_combine": self.fd_combine, "moe": self.moe,
                 "gemm_rs": lambda m, h: self.gemm_reduce(m, h, True),
                 "gemm_ar": lambda m, h: self.gemm_reduce(m, h, False)}[op]
        return maker(tokens, hidden)

    def measure(self, op, tokens, hidden):
        systems, checks, bufs = self.case(op, tokens, hidden)
        flops = {"ag_gemm": 2 * tokens * hidden * hidden // self.ranks,
                 "gemm_rs": 2 * tokens * hidden * hidden // self.ranks,
                 "gemm_ar": 2 * tokens * hidden * hidden // self.ranks}.get(op)
        rows = []
        for system, fn in systems.items():
            if system not in self.args.systems:
                continue
            for graph in (False, True) if system.startswith("weft") and \
                    system + "_graph" in self.args.systems and self.gpu else (False,):
                name = system + ("_graph" if graph else "")
                if self.log.done(op=op, tokens=tokens, hidden=hidden, system=name):
                    continue  # --resume: measured (or timed out) in an earlier run
                row = dict(self.env, op=op, dtype="bf16", tokens=tokens, hidden=hidden,
                           system=name, median_us=float("nan"), min_us=float("nan"),
                           tflops="", correct=False, error="", speedup="")
                with self.watchdog.case(row):
                    try:
                        with self.on_stream():
                            fn()
                        self.sync()
                        ok = checks[system]()
                        median, best = self.time(fn, graph)
                        error = ""
                    except Exception as e:  # noqa: BLE001 - in the CSV; Weft's own failures stop
                        if system.startswith("weft"):
                            raise
                        median = best = float("nan")
                        ok, error = False, f"{type(e).__name__}: {str(e).splitlines()[0][:200]}"
                rows.append(dict(row, median_us=round(median, 3), min_us=round(best, 3),
                                 tflops=round(flops / (median * 1e-6) / 1e12, 2)
                                 if flops and median == median else "",
                                 correct=ok, error=error))
        base = {r["system"]: r["median_us"] for r in rows}.get("torch")
        for r in rows:
            r["speedup"] = round(base / r["median_us"], 3) if base and r["median_us"] else ""
        weft.barrier()
        for b in bufs:
            b.free()
        return rows

    def on_stream(self):
        return weft.stream(self.torch.cuda.current_stream()) if self.gpu else weft.stream(None)

    def sync(self):
        if self.gpu:
            self.torch.cuda.synchronize()


def case_arguments(p, tokens, hidden):
    """The options of the ops and shapes (Bench.case, shapes) on parser p,
    with these default tokens and hidden sizes."""
    p.add_argument("--ops", default=",".join(OPS))
    p.add_argument("--tokens", default=tokens,
                   help="M: tokens over all ranks (GEMMs), sequences (fd_combine), "
                        "tokens per rank (moe)")
    p.add_argument("--hidden", default=hidden)
    p.add_argument("--max-fd-tokens", type=int, default=256)
    p.add_argument("--experts", type=int, default=8)
    p.add_argument("--topk", type=int, default=2)
    p.add_argument("--capacity-factor", type=float, default=2.0)


def shapes(args, op):
    tokens = [int(t) for t in args.tokens.split(",")]
    if op == "fd_combine":
        tokens = [t for t in tokens if t <= args.max_fd_tokens]
    return [(t, h) for h in map(int, args.hidden.split(",")) for t in tokens]


def plot(path, out=None):
    """PNGs of a CSV this script wrote, next to it (or in out): per op, the
    median latency and the speedup over torch (NCCL) against M, a panel per
    hidden size, a line per system. Needs matplotlib (Debian's here)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from collections import defaultdict
    out = out or os.path.dirname(os.path.abspath(path))
    stem = os.path.splitext(os.path.basename(path))[0]
    series = defaultdict(lambda: defaultdict(lambda: defaultdict(list)))
    meta = None
    with open(path) as f:
        for row in csv.DictReader(f):
            meta = meta or row
            if row["correct"] == "True":
                series[row["op"]][int(row["hidden"])][row["system"]].append(
                    (int(row["tokens"]), float(row["median_us"]),
                     float(row["speedup"]) if row["speedup"] else None))
    title = f"{meta['ranks']}x {meta.get('gpu', meta['backend'])}, {meta['date']}" if meta else ""
    written, colors = [], {}            # one color per system in every figure
    for op, by_hidden in sorted(series.items()):
        hiddens = sorted(by_hidden)
        fig, axes = plt.subplots(2, len(hiddens), figsize=(6.5 * len(hiddens), 8), squeeze=False)
        for col, h in enumerate(hiddens):
            lat, speed = axes[0][col], axes[1][col]
            for system, pts in sorted(by_hidden[h].items()):
                pts.sort()
                style = dict(ls="-" if system.startswith("weft") else "--", marker="o", ms=3,
                             color=colors.setdefault(system, f"C{len(colors)}"), label=system)
                lat.plot([p[0] for p in pts], [p[1] for p in pts], **style)
                gains = [(p[0], p[2]) for p in pts if p[2]]
                if system != "torch" and gains:
                    speed.plot(*zip(*gains), **style)
            panels = [(lat, "median latency (us)")]
            if speed.lines:               # no baseline (a host run): no speedup panel
                speed.axhline(1.0, color="gray", lw=0.8)
                panels.append((speed, "speedup over torch (NCCL)"))
            else:
                speed.set_visible(False)
            for ax, what in panels:
                ax.set_xscale("log", base=2)
                ax.set_xlabel("M (tokens)")
                ax.set_ylabel(what)
                ax.set_title(f"{op}, hidden {h}")
                ax.grid(True, which="both", alpha=0.3)
            lat.set_yscale("log")
            lat.legend(fontsize=8)
        fig.suptitle(f"{op}: {title}")
        fig.tight_layout()
        name = os.path.join(out, f"{stem}-{op}.png")
        fig.savefig(name, dpi=110)
        plt.close(fig)
        written.append(name)
    print("\n".join(written))


def limits(path):
    """Each GEMM op's shape against its overlap limit, max(gemm_alone,
    comm_alone) of the same run: per system its median, the limit over it
    (1.0: at the limit) and torch's and symm's medians over it."""
    from collections import defaultdict
    cases = defaultdict(dict)
    with open(path) as f:
        for r in csv.DictReader(f):
            if r["correct"] == "True":
                cases[(r["op"], int(r["hidden"]), int(r["tokens"]))][r["system"]] = \
                    float(r["median_us"])
    print("| op, tokens x hidden | system | us | limit / it | torch / it | symm / it |")
    print("|---|---|---|---|---|---|")
    for (op, h, t), us in sorted(cases.items()):
        if "gemm_alone" not in us or "comm_alone" not in us:
            continue
        limit = max(us["gemm_alone"], us["comm_alone"])
        print(f"| {op} {t} x {h} | limit | {limit:.1f} | | | |")
        for system, v in sorted(us.items()):
            ratio = lambda base: f"{us[base] / v:.2f}" if base in us else "-"  # noqa: E731
            print(f"| | {system} | {v:.1f} | {limit / v:.2f} | {ratio('torch')} | "
                  f"{ratio('symm')} |")


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--limits":
        limits(sys.argv[2])  # python3 bench/fused.py --limits CSV
        return
    if len(sys.argv) > 1 and sys.argv[1] == "--plot":
        # here, after a GPU run: python3 bench/fused.py --plot CSV [OUTDIR]
        plot(*sys.argv[2:4])
        return
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    case_arguments(p, ",".join(map(str, TOKENS)), ",".join(map(str, HIDDEN)))
    p.add_argument("--iters", type=int, default=20)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--reps", type=int, default=5, help="replays of a graph of --iters calls")
    p.add_argument("--systems", default="weft,weft_graph,weft_gather,weft_gather_graph,torch,symm")
    p.add_argument("--port", type=int, default=29519)
    p.add_argument("--csv", default=None)
    CB.timeout_arguments(p)
    args = p.parse_args()
    args.systems = args.systems.split(",")

    weft.init()
    run = Bench(args)
    log = CB.watch(run, args)
    for op in args.ops.split(","):
        for tokens, hidden in shapes(args, op):
            if op in ("ag_gemm", "gemm_rs") and tokens % run.ranks:
                continue
            t0 = time.perf_counter()
            for r in run.measure(op, tokens, hidden):
                log.add(r)
                if run.rank == 0:
                    print(f"{op:10s} M={tokens:5d} H={hidden:5d} {r['system']:11s} "
                          f"median {r['median_us']:11.2f} us  min {r['min_us']:11.2f} us  "
                          f"speedup {r['speedup'] or '-':>6}  "
                          f"{'ok' if r['correct'] else 'WRONG ' + r['error']}", flush=True)
            if run.rank == 0 and not run.gpu:
                print(f"  ({time.perf_counter() - t0:.1f} s)", flush=True)
    CB.finish(run, log)


if __name__ == "__main__":
    main()
