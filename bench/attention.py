"""Attention benchmark: weft.ops.flash_attention against torch's
scaled_dot_product_attention (flash backend) on one GPU, and
weft.ops.ring_attention / ulysses_attention against the unfused torch
baselines on every rank, in one process per rank and one run.

    build-gpu/bin/weft-run -n 2 --backend cuda -- python3 bench/attention.py \
        --csv bench/results/attention.csv
    /usr/bin/python3 bench/attention.py --plot CSV   # PNGs next to it, here

Cases (bf16, [batch, heads, seq, head_dim], causal and not):

| op | Weft | torch | limit rows |
|---|---|---|---|
| flash | flash_attention, seq --seqs | sdpa (flash backend) | - |
| flash_bwd | flash_attention_backward (dq, dk, dv) | sdpa's backward (autograd) | - |
| ring_bwd | ring_attention_backward (this rank's dq, dk, dv) | sdpa's backward over the k and v the forward gathered (kept) + reduce_scatter_tensor of dk and dv (NCCL) | local: sdpa's backward of the balanced share; comm: the reduce-scatters |
| ring | ring_attention, global seq --seqs, seq/R per rank | all_gather_into_tensor of k and v (NCCL) + sdpa | local: sdpa of the same work on gathered k, v; comm: the all-gathers |
| ulysses | ulysses_attention | all_to_all_single of q, k, v + sdpa + all_to_all_single of out | local: sdpa of heads/R heads over the whole seq; comm: the four all-to-alls |

Causal baselines mask by global position: torch's lower-right causal bias
(queries at the end of the keys), the keys cut after this rank's last
query. Each measurement: --warmup calls, then --iters calls each between
two CUDA events (bench/collectives.py's timing). ring_bwd also runs on
one GPU (against sdpa's backward: what the fused launch costs there). Every system's output
is compared with torch's sdpa in float32 on the same inputs (bf16
tolerance 2e-2); `speedup` is the torch baseline's median over the
system's, `of_limit` the limit's (max(local, comm)) over it. TFLOP/s
count 4 * seq_q * seq_k * head_dim per head (halved when causal; the
backward 2.5 times that).
"""
import argparse
import sys

import collectives as CB  # bench/collectives.py: timing, environment, CSV, watchdog
import weft  # noqa: E402  (on sys.path through collectives)
from weft import ops  # noqa: E402

OPS = ("flash", "flash_bwd", "ring", "ulysses", "ring_bwd")


class Bench(CB.Run):
    def inputs(self, b, h, s, d, seed):
        torch = self.torch
        gen = torch.Generator(device="cpu").manual_seed(seed)
        return [torch.randn((b, h, s, d), generator=gen).to(self.device, torch.bfloat16)
                for _ in range(3)]

    def sdpa(self, q, k, v, causal):
        """torch's SDPA; causal by global position: the queries are the last
        of the keys (lower-right), the flash backend where it applies."""
        import torch.nn.functional as F
        from torch.nn.attention import SDPBackend, sdpa_kernel
        from torch.nn.attention.bias import causal_lower_right
        if not causal:
            with sdpa_kernel([SDPBackend.FLASH_ATTENTION]):
                return F.scaled_dot_product_attention(q, k, v)
        if q.shape[2] == k.shape[2]:
            with sdpa_kernel([SDPBackend.FLASH_ATTENTION]):
                return F.scaled_dot_product_attention(q, k, v, is_causal=True)
        bias = causal_lower_right(q.shape[2], k.shape[2])
        return F.scaled_dot_product_attention(q, k, v, attn_mask=bias)

    def case(self, op, seq, causal):
        """{system: fn}, the reference output, the flops of one call."""
        torch, dist, R, r = self.torch, self.dist, self.ranks, self.rank
        a = self.args
        b, h, d = a.batch, a.heads, a.head_dim
        if op == "flash":
            q, k, v = self.inputs(b, h, seq, d, 1)
            out = torch.empty_like(q)
            want = self.sdpa(q, k, v, causal)
            return ({"weft": lambda: ops.flash_attention(q, k, v, causal=causal, out=out),
                     "torch": lambda: self.sdpa(q, k, v, causal)},
                    {"weft": out}, want, 4 * b * h * seq * seq * d / (2 if causal else 1))
        if op == "flash_bwd":
            return self.backward_case(seq, causal)
        if op == "ring_bwd":
            return self.ring_backward_case(seq, causal)
        s = seq // R
        q, k, v = self.inputs(b, h, s, d, 2 + r)
        keys, ak, av, gk, gv, local = self.shares(seq, causal)
        want = self.sdpa(q, gk, gv, causal)
        out = torch.empty_like(q)
        full_k = torch.empty((R, b, h, s, d), dtype=q.dtype, device=self.device)
        full_v = torch.empty_like(full_k)
        flops = 4 * b * h * s * seq * d / (2 if causal else 1)
        if op == "ring":
            def nccl():
                dist.all_gather_into_tensor(full_k, k)
                dist.all_gather_into_tensor(full_v, v)
                fk = full_k.permute(1, 2, 0, 3, 4).reshape(b, h, seq, d)[:, :, :keys]
                fv = full_v.permute(1, 2, 0, 3, 4).reshape(b, h, seq, d)[:, :, :keys]
                return self.sdpa(q, fk, fv, causal)

            def comm():
                dist.all_gather_into_tensor(full_k, k)
                dist.all_gather_into_tensor(full_v, v)
            return ({"weft": lambda: ops.ring_attention(q, k, v, causal=causal, out=out),
                     "torch": nccl, "limit_local": lambda: [self.sdpa(*x, causal) for x in local],
                     "limit_comm": comm}, {"weft": out}, want, flops)
        hg = h // R
        bufs = [torch.empty((R, b, hg, s, d), dtype=q.dtype, device=self.device)
                for _ in range(4)]
        local = [torch.randn((b, hg, seq, d), device=self.device).to(q.dtype) for _ in range(3)]

        def to_heads(x, buf):       # [b, h, s, d] by sequence -> [b, h/R, seq, d] by heads
            dist.all_to_all_single(buf, x.view(b, R, hg, s, d).transpose(0, 1).contiguous())
            return buf.permute(1, 2, 0, 3, 4).reshape(b, hg, seq, d)

        def baseline():
            o = self.sdpa(*(to_heads(x, t) for x, t in zip((q, k, v), bufs)), causal)
            dist.all_to_all_single(bufs[3], o.view(b, hg, R, s, d).permute(2, 0, 1, 3, 4)
                                   .contiguous())
            return bufs[3].transpose(0, 1).reshape(b, h, s, d)

        tmp = torch.empty_like(bufs[0])

        def comm():
            for t in bufs:
                dist.all_to_all_single(tmp, t)
        return ({"weft": lambda: ops.ulysses_attention(q, k, v, causal=causal, out=out),
                 "torch": baseline, "limit_local": lambda: self.sdpa(*local, causal),
                 "limit_comm": comm}, {"weft": out}, want, flops)

    def shares(self, seq, causal):
        """(keys, k and v of every rank, the keys this rank's queries see,
        and its balanced share of the work: [(q, k, v)]). Rank r's shard is
        inputs(..., seed 2 + r). Causal ring attention balances the work
        (query halves r and 2R - 1 - r, each over the keys before it), as
        the balanced share of any design would: its own rows alone are
        the lightest share on rank 0."""
        torch, R, r, a = self.torch, self.ranks, self.rank, self.args
        b, h, d, s = a.batch, a.heads, a.head_dim, seq // R
        shards = [self.inputs(b, h, s, d, 2 + p) for p in range(R)]
        q = shards[r][0]
        keys = (r + 1) * s if causal else seq
        ak = torch.cat([x[1] for x in shards], dim=2)
        av = torch.cat([x[2] for x in shards], dim=2)
        gk, gv = ak[:, :, :keys].contiguous(), av[:, :, :keys].contiguous()
        local = [(q, gk, gv)]
        if causal and s % 2 == 0:
            half = s // 2
            local = [(q[:, :, :half], ak[:, :, :(c + 1) * half].contiguous(),
                      av[:, :, :(c + 1) * half].contiguous()) for c in (r, 2 * R - 1 - r)]
        return keys, ak, av, gk, gv, local

    def ring_backward_case(self, seq, causal):
        """ring_attention_backward of this rank's shard against the unfused
        torch: sdpa's backward over the k and v its forward gathered (kept,
        the forward outside the timing), then reduce_scatter_tensor of the
        keys' gradients to their owners. The reference: autograd of sdpa
        over the whole sequence, this rank's rows of its gradients."""
        torch, dist, R, r, a = self.torch, self.dist, self.ranks, self.rank, self.args
        b, h, d, s = a.batch, a.heads, a.head_dim, seq // R
        shards = [self.inputs(b, h, s, d, 2 + p) for p in range(R)]
        douts = [self.inputs(b, h, s, d, 40 + p)[0] for p in range(R)]
        whole = [torch.cat([x[i] for x in shards], dim=2).requires_grad_() for i in range(3)]
        mine = slice(r * s, (r + 1) * s)
        want = torch.cat([g[:, :, mine].flatten() for g in torch.autograd.grad(
            self.sdpa(*whole, causal), whole, torch.cat(douts, dim=2))])
        del whole
        q, k, v = shards[r]
        dout = douts[r]
        out, lse = ops.ring_attention(q, k, v, causal=causal, return_lse=True)
        grads = torch.empty_like(want)
        dq, dk, dv = (g.view(q.shape) for g in grads.chunk(3))
        keys, _, _, gk, gv, local = self.shares(seq, causal)

        def graph(q, k, v):
            """(leaves, output) of sdpa on detached leaves."""
            leaves = [x.detach().requires_grad_() for x in (q, k, v)]
            return leaves, self.sdpa(*leaves, causal)
        leaves, o = graph(q, gk, gv)
        parts = [torch.zeros((R, b, h, s, d), dtype=q.dtype, device=self.device)
                 for _ in range(2)]
        got = [torch.empty_like(q) for _ in range(2)]

        def nccl():
            gq, *gkv = torch.autograd.grad(o, leaves, dout, retain_graph=True)
            for g, part, mine in zip(gkv, parts, got):    # part[p]: rank p's keys
                part[:keys // s] = g.view(b, h, keys // s, s, d).permute(2, 0, 1, 3, 4)
                dist.reduce_scatter_tensor(mine, part)
            return gq, *got

        shares = [graph(*x) for x in local]
        tmp = torch.empty_like(q)

        def comm():
            for part in parts:
                dist.reduce_scatter_tensor(tmp, part)
        flops = 10 * b * h * s * seq * d / (2 if causal else 1)
        return ({"weft": lambda: ops.ring_attention_backward(q, k, v, out, lse, dout,
                                                             causal=causal, dq=dq, dk=dk,
                                                             dv=dv),
                 "torch": nccl,
                 "limit_local": lambda: [torch.autograd.grad(y, x, dout[:, :, :x[0].shape[2]],
                                                             retain_graph=True)
                                         for x, y in shares],
                 "limit_comm": comm}, {"weft": grads}, want, flops)

    def backward_case(self, seq, causal):
        """flash_attention_backward against SDPA's backward (autograd of
        its flash backend, the forward outside the timing); the gradients
        checked as one vector (dq, dk, dv). FLOPs: 2.5x the forward's."""
        torch, a = self.torch, self.args
        b, h, d = a.batch, a.heads, a.head_dim
        q, k, v = (x.requires_grad_() for x in self.inputs(b, h, seq, d, 1))
        dout = self.inputs(b, h, seq, d, 9)[0]
        want_out = self.sdpa(q, k, v, causal)
        want = torch.cat([g.flatten() for g in torch.autograd.grad(want_out, (q, k, v), dout,
                                                                    retain_graph=True)])
        x = [t.detach() for t in (q, k, v)]
        out, lse = ops.flash_attention(*x, causal=causal, return_lse=True)
        grads = torch.empty_like(want)
        dq, dk, dv = (g.view(q.shape) for g in grads.chunk(3))
        return ({"weft": lambda: ops.flash_attention_backward(*x, out, lse, dout, causal=causal,
                                                              dq=dq, dk=dk, dv=dv),
                 "torch": lambda: torch.autograd.grad(want_out, (q, k, v), dout,
                                                      retain_graph=True)},
                {"weft": grads}, want, 10 * b * h * seq * seq * d / (2 if causal else 1))

    def measure(self, op, seq, causal):
        systems, outs, want, flops = self.case(op, seq, causal)
        rows, torch = [], self.torch
        for name, fn in systems.items():
            row = dict(self.env, op=op, seq=seq, causal=causal, batch=self.args.batch,
                       heads=self.args.heads, head_dim=self.args.head_dim, system=name,
                       median_us=float("nan"), min_us=float("nan"), tflops="",
                       correct="", error="", speedup="", of_limit="")
            if self.log.done(op=op, seq=seq, causal=causal, system=name):
                continue
            with self.watchdog.case(row):
                with weft.stream(torch.cuda.current_stream()):
                    got = fn()
                    torch.cuda.synchronize()
                    if not name.startswith("limit"):
                        got = outs.get(name, got)
                        if isinstance(got, tuple):      # gradients: one vector
                            got = torch.cat([g.flatten() for g in got])
                        row["correct"] = bool(torch.allclose(got.float(), want.float(),
                                                             atol=2e-2, rtol=2e-2))
                    median, best = self.time(fn, False)
            rows.append(dict(row, median_us=round(median, 1), min_us=round(best, 1),
                             tflops=round(flops / median / 1e6, 1)
                             if not name.startswith("limit") else ""))
        by = {r["system"]: r["median_us"] for r in rows}
        limit = max(by.get("limit_local", 0), by.get("limit_comm", 0))
        for r in rows:
            r["speedup"] = round(by["torch"] / r["median_us"], 3) if "torch" in by else ""
            r["of_limit"] = round(limit / r["median_us"], 3) if limit else ""
        return rows


def plot(path):
    """TFLOP/s against sequence length, a PNG per op next to the CSV: a
    line per system, dashed where causal."""
    import csv
    import os
    import matplotlib
    matplotlib.use("Agg")  # files only
    import matplotlib.pyplot as plt
    with open(path) as f:
        rows = [r for r in csv.DictReader(f) if r["tflops"] and r["correct"] == "True"]
    for op in sorted({r["op"] for r in rows}):
        fig, ax = plt.subplots(figsize=(6, 4))
        for system in ("weft", "torch"):
            for causal in ("False", "True"):
                pts = sorted((int(r["seq"]), float(r["tflops"])) for r in rows
                             if r["op"] == op and r["system"] == system and r["causal"] == causal)
                if pts:
                    ax.plot(*zip(*pts), "--" if causal == "True" else "-", marker="o",
                            label=f"{system}{' causal' if causal == 'True' else ''}")
        ax.set_xscale("log", base=2)
        ax.set_xlabel("sequence length (global)")
        ax.set_ylabel("TFLOP/s per GPU")
        ax.set_title(f"{op}, {rows[0]['gpu']} x {rows[0]['ranks']}, {rows[0]['date'][:10]}")
        ax.legend()
        fig.tight_layout()
        fig.savefig(os.path.join(os.path.dirname(os.path.abspath(path)),
                                 f"{os.path.splitext(os.path.basename(path))[0]}-{op}.png"))
        plt.close(fig)


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--plot":
        plot(sys.argv[2])
        return
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--ops", default=",".join(OPS))
    p.add_argument("--seqs", default="1024,4096,16384",
                   help="sequence lengths (ring, ulysses: global, over all ranks)")
    p.add_argument("--causal", default="0,1")
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--heads", type=int, default=16)
    p.add_argument("--head-dim", type=int, default=128)
    p.add_argument("--iters", type=int, default=5)
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--reps", type=int, default=1)
    p.add_argument("--systems", default="")
    p.add_argument("--port", type=int, default=29521)
    p.add_argument("--csv", default=None)
    CB.timeout_arguments(p)
    args = p.parse_args()
    args.systems = []

    weft.init()
    if weft.backend() == "host":
        sys.exit("bench/attention.py runs on GPUs (torch's SDPA is its baseline)")
    run = Bench(args)
    log = CB.watch(run, args)
    for op in args.ops.split(","):
        if op in ("ring", "ulysses") and run.ranks == 1:
            continue
        for seq in map(int, args.seqs.split(",")):
            for causal in (c == "1" for c in args.causal.split(",")):
                for r in run.measure(op, seq, causal):
                    log.add(r)
                    if run.rank == 0:
                        print(f"{op:8s} seq={seq:6d} causal={causal:d} {r['system']:12s} "
                              f"median {r['median_us']:10.1f} us  {r['tflops'] or '':>7} "
                              f"TFLOP/s  speedup {r['speedup'] or '-':>6}  "
                              f"of_limit {r['of_limit'] or '-':>6}  "
                              f"{'' if r['correct'] == '' else 'ok' if r['correct'] else 'WRONG'}",
                              flush=True)
    CB.finish(run, log)


if __name__ == "__main__":
    main()
