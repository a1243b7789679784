"""Memory-model litmus tests in the Weft DSL (docs/memory-model.md,
"Litmus tests").

    PYTHONPATH=python WEFT_LIB_DIR=build/lib \\
      build/bin/weft-run -n 2 -- /usr/bin/python3 test/litmus/litmus.py --iterations 10000

Shapes MP, MP+signal, SB, LB and IRIW race two or four participants, each
in a "correct" variant (the orders and fences that forbid the weak outcome:
any forbidden outcome fails the run) and a "relaxed" one (reported only);
SB also runs "acq_rel" (release stores, acquire loads, no fence: reported
only, it does not forbid SB). A participant is one program (one CTA on a
GPU). At scope "sys" the participants are spread over the ranks and reach
each other's memory with peer=; at scope "gpu" they are programs of one
rank on that rank's memory.

One launch runs a batch of iterations. Iteration i uses its own locations
(loc[j*n + i], zeroed before the launch) and records what each participant
saw in res[(group*4 + k)*n + i] on rank 0; the host counts outcomes with
numpy. Before each iteration the participants publish their step and wait
for each other, so that the racing accesses overlap in time.
"""
import argparse
import json
import os
import sys
import time

import numpy as np

import weft
import weft.language as wl

MAX_PARTICIPANTS = 4  # rows of res per group
# Polls of a step counter by every thread before the wl.wait: leaving the
# handshake within a poll of each other (a host wait yields between polls)
# is what makes the racing accesses overlap.
SPIN = 1000
# Loads of the MP flag before its reader records that it did not see it: a
# writer whose release fences first (a GPU) comes microseconds late.
FLAG_POLLS = 100000


@weft.jit
def _rank_of(j, G):
    """The rank of participant j: a group is G consecutive ranks."""
    return (wl.rank() // G) * G + j % G


@weft.jit
def _me(G):
    """This program's participant number: rank in the group, then program."""
    return wl.rank() % G + G * wl.program_id(0)


@weft.jit
def _at(ptr, owner, SCOPE):
    """ptr in participant owner's memory (sys); local at gpu scope, where a
    translated pointer may not be used (docs/memory-model.md)."""
    if SCOPE == "sys":
        ptr = wl.translate(ptr, owner)
    return ptr


@weft.jit
def _step(ctr, t, k, P, G, SCOPE):
    """Participant k publishes that it reached step t, then waits until all
    P have. Relaxed: it keeps them in step without ordering the racing
    accesses (every rank of the group holds a copy of the counters)."""
    if SCOPE == "sys":
        for j in range(G):
            wl.signal(ctr + k, t, peer=_rank_of(j, G), order="relaxed", scope="sys")
    else:
        wl.signal(ctr + k, t, order="relaxed", scope="gpu")
    for j in range(P):
        spins = 0
        while (wl.load(ctr + j, order="relaxed", scope=SCOPE) < t) and (spins < SPIN):
            spins += 1
        wl.wait(ctr + j, t, cmp="ge", order="relaxed", scope=SCOPE)


@weft.jit
def _record(res, k, n, i, G, code):
    """What participant k saw in iteration i, into rank 0's res."""
    wl.store(res + ((wl.rank() // G) * MAX_PARTICIPANTS + k) * n + i, code, peer=0)


@weft.jit(do_not_specialize=("n", "base"))
def mp(loc, res, ctr, n, base, G: wl.constexpr, SCOPE: wl.constexpr,
       VARIANT: wl.constexpr, SIGNAL: wl.constexpr):
    """0 writes data (weak) then the flag; 1 reads the flag, then the data.
    Both live with the reader (a put). With SIGNAL the flag ops are
    wl.signal and wl.wait (on a GPU, thread 0 polls and every thread reads)
    and 1 records the data; else a store and up to FLAG_POLLS loads, and 1
    records flag * 2 + data (data only read if it saw the flag)."""
    k = _me(G)
    reader = _rank_of(1, G)
    data = _at(loc, reader, SCOPE)
    flag = _at(loc + n, reader, SCOPE)
    publish = "release" if VARIANT == "correct" else "relaxed"
    observe = "acquire" if VARIANT == "correct" else "relaxed"
    for i in range(n):
        _step(ctr, base + i + 1, k, 2, G, SCOPE)
        if k == 0:
            wl.store(data + i, 1)
            if SIGNAL:
                wl.signal(flag + i, 1, order=publish, scope=SCOPE)
            else:
                wl.store(flag + i, 1, order=publish, scope=SCOPE)
        elif SIGNAL:
            wl.wait(loc + n + i, 1, cmp="eq", order=observe, scope=SCOPE)
            _record(res, k, n, i, G, wl.load(loc + i))
        else:
            f = wl.load(flag + i, order=observe, scope=SCOPE)
            polls = 0
            while (f == 0) and (polls < FLAG_POLLS):
                f = wl.load(flag + i, order=observe, scope=SCOPE)
                polls += 1
            d = 0
            if f != 0:
                d = wl.load(data + i)
            _record(res, k, n, i, G, f * 2 + d)


@weft.jit(do_not_specialize=("n", "base"))
def sb(loc, res, ctr, n, base, G: wl.constexpr, SCOPE: wl.constexpr,
       VARIANT: wl.constexpr):
    """k stores 1 to its location (kept by the other participant: a remote
    store), then loads the other's (local)."""
    k = _me(G)
    mine = _at(loc + k * n, _rank_of(1 - k, G), SCOPE)
    theirs = _at(loc + (1 - k) * n, _rank_of(k, G), SCOPE)
    publish = "release" if VARIANT == "acq_rel" else "relaxed"
    observe = "acquire" if VARIANT == "acq_rel" else "relaxed"
    for i in range(n):
        _step(ctr, base + i + 1, k, 2, G, SCOPE)
        wl.store(mine + i, 1, order=publish, scope=SCOPE)
        if VARIANT == "correct":
            wl.fence(order="seq_cst", scope=SCOPE)
        _record(res, k, n, i, G, wl.load(theirs + i, order=observe, scope=SCOPE))


@weft.jit(do_not_specialize=("n", "base"))
def lb(loc, res, ctr, n, base, G: wl.constexpr, SCOPE: wl.constexpr,
       VARIANT: wl.constexpr):
    """k loads the other's location (local), then stores 1 to its own (kept
    by the other participant)."""
    k = _me(G)
    mine = _at(loc + k * n, _rank_of(1 - k, G), SCOPE)
    theirs = _at(loc + (1 - k) * n, _rank_of(k, G), SCOPE)
    publish = "release" if VARIANT == "correct" else "relaxed"
    observe = "acquire" if VARIANT == "correct" else "relaxed"
    for i in range(n):
        _step(ctr, base + i + 1, k, 2, G, SCOPE)
        r = wl.load(theirs + i, order=observe, scope=SCOPE)
        wl.store(mine + i, 1, order=publish, scope=SCOPE)
        _record(res, k, n, i, G, r)


@weft.jit(do_not_specialize=("n", "base"))
def iriw(loc, res, ctr, n, base, G: wl.constexpr, SCOPE: wl.constexpr,
         VARIANT: wl.constexpr):
    """0 writes x, 1 writes y (location j kept by writer j); 2 reads x then
    y, 3 reads y then x."""
    k = _me(G)
    if k < 2:
        mine = _at(loc + k * n, _rank_of(k, G), SCOPE)
        for i in range(n):
            _step(ctr, base + i + 1, k, 4, G, SCOPE)
            wl.store(mine + i, 1, order="relaxed", scope=SCOPE)
    else:
        first = _at(loc + (k - 2) * n, _rank_of(k - 2, G), SCOPE)
        second = _at(loc + (3 - k) * n, _rank_of(3 - k, G), SCOPE)
        for i in range(n):
            _step(ctr, base + i + 1, k, 4, G, SCOPE)
            a = wl.load(first + i, order="relaxed", scope=SCOPE)
            if VARIANT == "correct":
                wl.fence(order="seq_cst", scope=SCOPE)
            b = wl.load(second + i, order="relaxed", scope=SCOPE)
            _record(res, k, n, i, G, a * 2 + b)


class Shape:
    """A litmus shape: its kernel, participants, the participants whose
    records make an outcome, how an outcome reads, which one is forbidden."""

    def __init__(self, name, kernel, participants, rows, variants, label, forbidden,
                 **constexprs):
        self.name, self.kernel, self.participants = name, kernel, participants
        self.rows, self.variants = rows, variants
        self.label, self.forbidden = label, forbidden
        self.constexprs = constexprs  # more of the kernel's compile-time arguments


def _bits(code):
    return code >> 1, code & 1


SHAPES = [
    Shape("MP", mp, 2, (1,), ("correct", "relaxed"),
          lambda c: "flag=0" if c[0] < 2 else f"flag=1 data={c[0] & 1}",
          lambda c: c[0] == 2, SIGNAL=False),
    Shape("MP+signal", mp, 2, (1,), ("correct", "relaxed"),
          lambda c: f"data={c[0]}", lambda c: c[0] == 0, SIGNAL=True),
    Shape("SB", sb, 2, (0, 1), ("correct", "acq_rel", "relaxed"),
          lambda c: f"r0={c[0]} r1={c[1]}", lambda c: (c[0] == 0) & (c[1] == 0)),
    Shape("LB", lb, 2, (0, 1), ("correct", "relaxed"),
          lambda c: f"r0={c[0]} r1={c[1]}", lambda c: (c[0] == 1) & (c[1] == 1)),
    Shape("IRIW", iriw, 4, (2, 3), ("correct", "relaxed"),
          lambda c: "x,y={}{} y,x={}{}".format(*_bits(c[0]), *_bits(c[1])),
          lambda c: (c[0] == 2) & (c[1] == 2)),
]
SCOPES = ("sys", "gpu")


def group_size(participants, scope, ranks):
    """Ranks per group: at sys scope the participants are spread over as
    many ranks as divide them evenly; at gpu scope they share one rank."""
    if scope == "gpu":
        return 1
    return max(g for g in (1, 2, 4) if g <= ranks and participants % g == 0)


def run_case(shape, variant, scope, args, bufs, state):
    """Runs args.iterations iterations on every group, in launches of
    args.batch; returns rank 0's table row (None on the other ranks)."""
    loc, res, ctr = bufs
    rank, ranks = weft.rank(), weft.num_ranks()
    P = shape.participants
    G = group_size(P, scope, ranks)
    groups = ranks // G
    codes = []
    start = time.monotonic()
    done = 0
    while done < args.iterations:
        n = min(args.batch, args.iterations - done)
        loc.copy_from(0)
        weft.barrier()  # every location is zero before anyone stores to it
        if rank < groups * G:
            shape.kernel[(P // G,)](loc, res, ctr, n, state["base"], G=G, SCOPE=scope,
                                    VARIANT=variant, num_warps=args.num_warps,
                                    **shape.constexprs)
        state["base"] += n  # the step counters only grow
        weft.barrier()  # every record is in rank 0's res
        if rank == 0:
            got = res.to_numpy()[:groups * MAX_PARTICIPANTS * n]
            got = got.reshape(groups, MAX_PARTICIPANTS, n)[:, list(shape.rows), :]
            codes.append(got.transpose(1, 0, 2).reshape(len(shape.rows), -1))
        done += n
    if rank != 0:
        return None
    codes = np.concatenate(codes, axis=1)
    outcomes, counts = np.unique(codes, axis=1, return_counts=True)
    histogram = {shape.label(tuple(int(v) for v in outcomes[:, j])): int(counts[j])
                 for j in range(outcomes.shape[1])}
    return {"shape": shape.name, "variant": variant, "scope": scope,
            "iterations": args.iterations, "instances": groups,
            "participants_per_rank": P // G,
            "forbidden": int(np.count_nonzero(shape.forbidden(codes))),
            "checked": variant == "correct", "histogram": histogram,
            "seconds": round(time.monotonic() - start, 3)}


HEADER = (f"{'shape':<10} {'variant':<8} {'scope':<5} {'iterations':>10} {'x inst':<6} "
          f"{'forbidden':<16} outcomes")


def format_row(row):
    hist = ", ".join(f"{k}: {v}" for k, v in sorted(row["histogram"].items()))
    verdict = "" if not row["checked"] else " FAIL" if row["forbidden"] else " ok"
    forbidden = f"{row['forbidden']}{verdict}"
    return (f"{row['shape']:<10} {row['variant']:<8} {row['scope']:<5} "
            f"{row['iterations']:>10} x{row['instances']:<5} {forbidden:<16} {hist}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--iterations", type=int,
                        default=int(os.environ.get("WEFT_LITMUS_ITERATIONS", 10000)),
                        help="iterations per instance (default $WEFT_LITMUS_ITERATIONS "
                             "or 10000; 10^6 on GPUs)")
    parser.add_argument("--batch", type=int, default=1 << 16,
                        help="iterations per launch (bounds the buffers)")
    parser.add_argument("--shapes", default=",".join(s.name for s in SHAPES))
    parser.add_argument("--scopes", default=",".join(SCOPES))
    parser.add_argument("--num-warps", type=int, default=4)
    parser.add_argument("--json", help="write the results here (rank 0)")
    args = parser.parse_args()
    shapes = [s for s in SHAPES if s.name in args.shapes.split(",")]
    scopes = [s for s in SCOPES if s in args.scopes.split(",")]
    unknown = set(args.shapes.split(",")) - {s.name for s in SHAPES} | \
        set(args.scopes.split(",")) - set(SCOPES)
    if unknown or args.iterations < 1 or args.batch < 1:
        parser.error(f"unknown shapes or scopes {sorted(unknown)}, or a count below 1")
    args.batch = min(args.batch, args.iterations)

    weft.init()
    rank, ranks = weft.rank(), weft.num_ranks()
    batch = args.batch
    bufs = (weft.zeros((2 * batch,), wl.int32),  # the locations of a batch
            weft.zeros((ranks * MAX_PARTICIPANTS * batch,), wl.int32),  # records
            weft.zeros((MAX_PARTICIPANTS,), wl.int64))  # step counters
    state = {"base": 0}
    rows = []
    if rank == 0:
        print(f"litmus: {ranks} ranks, backend {weft.backend()}, "
              f"{args.iterations} iterations per instance, batches of {batch}", flush=True)
        print(HEADER, flush=True)
    for shape in shapes:
        for scope in scopes:
            for variant in shape.variants:
                row = run_case(shape, variant, scope, args, bufs, state)
                if row is not None:
                    rows.append(row)
                    print(format_row(row), flush=True)
    failed = [r for r in rows if r["checked"] and r["forbidden"]]
    if rank == 0 and args.json:
        with open(args.json, "w") as f:
            json.dump({"ranks": ranks, "backend": weft.backend(),
                       "iterations": args.iterations, "batch": batch,
                       "num_warps": args.num_warps, "results": rows}, f, indent=1)
    weft.barrier()
    weft.finalize()
    if failed:
        print(f"litmus: forbidden outcomes in {len(failed)} correct variant(s)",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
