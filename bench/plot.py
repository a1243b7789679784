"""Plots of bench/collectives.py results: for each (op, dtype) of a CSV,
latency vs size and bus bandwidth vs size, one line per system, as PNGs
next to the CSV (or in --out). Runs where matplotlib is (Debian's
python3-matplotlib here), not on the GPU machines.

    /usr/bin/python3 bench/plot.py bench/results/collectives-DATE-2gpu.csv
"""
import argparse
import csv
import os
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")  # files only
import matplotlib.pyplot as plt  # noqa: E402


def size_label(n):
    for unit, shift in (("G", 30), ("M", 20), ("K", 10)):
        if n >= 1 << shift:
            return f"{n >> shift}{unit}"
    return str(n)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("csv")
    p.add_argument("--out", default=None)
    args = p.parse_args()
    out = args.out or os.path.dirname(os.path.abspath(args.csv))
    stem = os.path.splitext(os.path.basename(args.csv))[0]
    series = defaultdict(lambda: defaultdict(list))  # (op, dtype) -> system -> rows
    meta = None
    with open(args.csv) as f:
        for row in csv.DictReader(f):
            meta = meta or row
            if row["correct"] != "True":
                continue
            series[(row["op"], row["dtype"])][row["system"]].append(
                (int(row["bytes"]), float(row["median_us"]), float(row["busbw_GBps"])))
    title = f"{meta['ranks']}x {meta.get('gpu', meta['backend'])}, {meta['date']}" if meta else ""
    for (op, dtype), systems in sorted(series.items()):
        fig, (lat, bw) = plt.subplots(1, 2, figsize=(13, 4.8))
        for system, rows in sorted(systems.items()):
            rows.sort()
            sizes = [r[0] for r in rows]
            style = "-" if system.startswith(("weft", "cuda")) else "--"
            lat.plot(sizes, [r[1] for r in rows], style, marker="o", ms=3, label=system)
            bw.plot(sizes, [r[2] for r in rows], style, marker="o", ms=3, label=system)
        for ax, what in ((lat, "latency (us, median)"), (bw, "bus bandwidth (GB/s)")):
            ax.set_xscale("log", base=2)
            ax.set_xlabel("bytes per rank")
            ax.set_ylabel(what)
            ax.grid(True, which="both", alpha=0.3)
            ticks = sorted({s for rows in systems.values() for s, _, _ in rows})
            ax.set_xticks(ticks, [size_label(t) for t in ticks], rotation=45)
        lat.set_yscale("log")
        bw.legend(fontsize=8)
        fig.suptitle(f"{op} {dtype}: {title}")
        fig.tight_layout()
        path = os.path.join(out, f"{stem}-{op}-{dtype}.png")
        fig.savefig(path, dpi=110)
        plt.close(fig)
        print(path)


if __name__ == "__main__":
    main()
