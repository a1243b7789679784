"""Compile time of the collectives' kernels (bench/README.md): for each
kernel and target, a cold compile (empty cache: frontend + MLIR + LLVM +
ptxas), a warm disk-cache hit (a new process's view: frontend and cache
lookup) and an in-memory hit (a later launch's lookup). Needs the compiler,
no GPU.

    /usr/bin/python3 bench/compile_time.py [--targets cuda:90,host] [--repeat 3]
"""
import argparse
import os
import sys
import tempfile
import time

# The checkout's package, unless weft is installed.
sys.path.append(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import weft  # noqa: E402
from weft import collectives as C  # noqa: E402
from weft.collectives import _kernels as K  # noqa: E402

P = "*bf16"
KERNELS = [  # (kernel, signature, constexprs): bf16 sums, as the benchmark runs them
    (K.one_shot_all_reduce, dict(x=P, out=P, tmp=P, flags="*i64", n="i32:16", epochs="*i64"),
     dict(OP=0, INPLACE=False)),
    (K.two_shot_all_reduce, dict(x=P, out=P, flags="*i64", n="i32:16", chunk="i32:16",
                                 epochs="*i64"), dict(OP=0)),
    (K.reduce_scatter_kernel, dict(x=P, out=P, flags="*i64", n="i32:16", chunk="i32:16",
                                   epochs="*i64"), dict(OP=0)),
    (K.all_gather_kernel, dict(x=P, out=P, flags="*i64", n="i32:16", epochs="*i64"), {}),
    (K.all_to_all_kernel, dict(x=P, out=P, flags="*i64", m="i32:16", epochs="*i64"), {}),
    (K.broadcast_kernel, dict(x=P, root="i32", flags="*i64", n="i32:16", epochs="*i64"), {}),
]


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--targets", default="cuda:90,host")
    p.add_argument("--repeat", type=int, default=3)
    args = p.parse_args()
    print(f"{weft._capi.version()}")
    print(f"{'kernel':24s} {'target':8s} {'cold ms':>9s} {'disk hit ms':>12s} {'memory hit us':>14s}")
    for target in args.targets.split(","):
        block = C.BLOCK[target.split(":")[0]]  # the small-message grid's
        for kernel, sig, consts in KERNELS:
            consts = dict(consts, BLOCK=block)
            cold, disk, memory = [], [], []
            for _ in range(args.repeat):
                with tempfile.TemporaryDirectory() as cache:
                    os.environ["WEFT_CACHE_DIR"] = cache
                    fresh = weft.jit(kernel.fn)  # no in-memory table
                    t0 = time.perf_counter()
                    weft.compile(fresh, sig, consts, target=target)
                    cold.append(time.perf_counter() - t0)
                    again = weft.jit(kernel.fn)
                    t0 = time.perf_counter()
                    weft.compile(again, sig, consts, target=target)
                    disk.append(time.perf_counter() - t0)
                    t0 = time.perf_counter()
                    weft.compile(again, sig, consts, target=target)
                    memory.append(time.perf_counter() - t0)
            print(f"{kernel.__name__:24s} {target:8s} {1e3 * min(cold):9.1f} "
                  f"{1e3 * min(disk):12.2f} {1e6 * min(memory):14.1f}")


if __name__ == "__main__":
    main()
