"""Random programs: small expression trees of masked loads, arithmetic,
selection, reductions broadcast back and scans, at random shapes (odd
extents in power-of-two tiles) and dtypes, written out as @weft.jit
kernels and checked against the same trees evaluated by numpy on the
padded tiles. CI runs a fixed seed; WEFT_RANDOM_PROGRAMS=N and
WEFT_RANDOM_SEED=S run more on demand."""
import importlib.util
import os

import numpy as np
import pytest

import weft
from devices import host, local
from matrix import check, extents
import weft.language as wl

COUNT = int(os.environ.get("WEFT_RANDOM_PROGRAMS", "24"))
SEED = int(os.environ.get("WEFT_RANDOM_SEED", "2026"))
INPUTS = 3


class Program:
    """One random tree as kernel source and as a numpy expression."""

    def __init__(self, rng, dtype, rank):
        self.rng, self.dtype, self.rank = rng, dtype, rank
        self.kernel, self.numpy = self.node(4)

    def node(self, depth):
        rng, is_float = self.rng, self.dtype is wl.float32
        if depth == 0 or rng.random() < 0.2:
            if rng.random() < 0.8:
                i = int(rng.integers(INPUTS))
                return f"a{i}", f"a{i}"
            c = round(float(rng.uniform(-2, 2)), 2) if is_float else int(rng.integers(-3, 4))
            return repr(c), f"np.{'float32' if is_float else 'int32'}({c!r})"
        kinds = ["binary"] * 4 + ["unary", "where", "reduce", "scan"]
        kind = kinds[int(rng.integers(len(kinds)))]
        a_k, a_n = self.node(depth - 1)
        if kind == "unary":
            ops = [("-({})", "-({})"), ("wl.abs({})", "np.abs({})")]
            if is_float:
                ops.append(("wl.sin({})", "np.sin({})"))
            k, n = ops[int(rng.integers(len(ops)))]
            return k.format(a_k), n.format(a_n)
        b_k, b_n = self.node(depth - 1)
        if kind == "binary":
            ops = [("+", "+"), ("-", "-"), ("*", "*"), ("max", "max"), ("min", "min")]
            if not is_float:
                ops += [("&", "&"), ("|", "|"), ("^", "^")]
            op, _ = ops[int(rng.integers(len(ops)))]
            if op in ("max", "min"):
                return (f"wl.{op}imum({a_k}, {b_k})", f"np.{op}imum({a_n}, {b_n})")
            return f"({a_k} {op} {b_k})", f"({a_n} {op} {b_n})"
        if kind == "where":
            c_k, c_n = self.node(depth - 1)
            return (f"wl.where({a_k} > {b_k}, {c_k}, {a_k})",
                    f"np.where({a_n} > {b_n}, {c_n}, {a_n})")
        axis = int(rng.integers(self.rank))
        # a tile first (a constant leaf has no axis)
        a_k, a_n = f"({a_k} + a0 * 0)", f"({a_n} + a0 * 0)"
        if kind == "reduce":
            op = ["sum", "max", "min"][int(rng.integers(3))]
            return (f"wl.{op}({a_k}, {axis}, keep_dims=True)",
                    f"np.{op}({a_n}, {axis}, keepdims=True)")
        return f"wl.cumsum({a_k}, {axis})", f"np.cumsum({a_n}, {axis}, dtype={a_n}.dtype)"


def _shape(rng, rank):
    tile = tuple(int(2 ** rng.integers(0, 6 if rank == 2 else 9)) for _ in range(rank))
    data = tuple(int(rng.integers(max(1, t // 2), t + 1)) for t in tile)
    return data, tile


def _programs():
    rng = np.random.default_rng(SEED)
    for i in range(COUNT):
        dtype = [wl.float32, wl.int32][int(rng.integers(2))]
        rank = int(rng.integers(1, 3))
        yield i, Program(rng, dtype, rank), _shape(rng, rank)


def _module(tmp_path_factory, programs):
    """The programs' kernels as one module written to disk (@weft.jit reads
    a kernel's source from its file)."""
    lines = ["import weft", "import weft.language as wl", "from matrix import tile_offsets", ""]
    for i, program, _ in programs:
        loads = "\n".join(f"    a{j} = wl.load(x{j} + offs, mask=mask, other=0)"
                          for j in range(INPUTS))
        lines += ["", "@weft.jit",
                  f"def program_{i}(x0, x1, x2, out, M, N, BM: wl.constexpr, BN: wl.constexpr):",
                  "    offs, mask = tile_offsets(M, N, BM, BN)", loads,
                  f"    wl.store(out + offs, {program.kernel}, mask=mask)", ""]
    path = tmp_path_factory.mktemp("programs") / "random_programs.py"
    path.write_text("\n".join(lines))
    spec = importlib.util.spec_from_file_location("random_programs", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


PROGRAMS = list(_programs())


@pytest.fixture(scope="module")
def kernels(tmp_path_factory):
    return _module(tmp_path_factory, PROGRAMS)


@pytest.mark.parametrize("index", range(COUNT))
def test_random_program(kernels, index):
    i, program, case = PROGRAMS[index]
    data, tile = case
    rng = np.random.default_rng(SEED + 1 + i)
    np_dtype = np.float32 if program.dtype is wl.float32 else np.int32
    inputs = [(rng.uniform(-2, 2, data) if np_dtype is np.float32 else
               rng.integers(-5, 6, data)).astype(np_dtype) for _ in range(INPUTS)]
    m, n, bm, bn = extents(case)
    out = local(np.zeros(m * n, np_dtype))
    getattr(kernels, f"program_{i}")[(1,)](*[local(x) for x in inputs], out, m, n,
                                           BM=bm, BN=bn)
    weft.synchronize()
    # numpy on the padded tiles, as the kernel sees them (masked lanes 0)
    padded = {}
    for j, x in enumerate(inputs):
        p = np.zeros(tile, np_dtype)
        p[tuple(slice(0, d) for d in data)] = x
        padded[f"a{j}"] = p
    with np.errstate(all="ignore"):
        expected = eval(program.numpy, {"np": np}, padded) * np.ones(tile, np_dtype)
    expected = expected.astype(np_dtype)[tuple(slice(0, d) for d in data)]
    got = host(out).reshape(data)
    scale = max(1.0, float(np.max(np.abs(expected)))) if np_dtype is np.float32 else 0
    check(f"program {i}: {program.kernel}", program.dtype, case, got, expected,
          rtol=1e-4, atol=1e-4 * scale)
