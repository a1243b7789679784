"""Random programs: expression trees over the language's ops (arithmetic,
bitwise ops and shifts, C division, comparisons and selection, math
functions, casts there and back, reductions and arg-reductions broadcast
back, scans, flips, fma, umulhi), rearrangements (reshapes to shapes of
one to three dimensions, permutations, broadcasts, expand_dims, join, split,
interleave) and control flow (loops carrying a tile for a number of steps
known at run time, branches on run-time values, each a @weft.jit function
of its own), of every integer and float dtype, at random shapes (odd
extents in power-of-two tiles, sizes of 1), written out as @weft.jit
kernels and checked against the same trees evaluated on the padded tiles by
numpy.

Integer trees are exact: Python integers wrapped to the dtype after every
op. Float trees are rounded to the dtype after every op, and each value
carries a bound on how far the kernel's may be from it: the rounding
errors of both sides (the kernel may fuse, widen or accumulate in another
order), propagated through the ops that follow; where a comparison, a floor
or an arg-reduction is too close to call, the bound covers either outcome.
Elements whose bound is not finite (an overflow on the way) are not
checked. CI runs a fixed seed; WEFT_RANDOM_PROGRAMS=N and WEFT_RANDOM_SEED=S
run more on demand."""
import collections
import importlib.util
import math
import os

import numpy as np
import pytest

import weft.language as wl
from matrix import (FLOATS, INTS, CASES, c_floordiv, decode, erf, extents, rounded, run, sample,
                    shape_id, wrap)
from devices import BACKEND

COUNT = int(os.environ.get("WEFT_RANDOM_PROGRAMS", "160"))
SEED = int(os.environ.get("WEFT_RANDOM_SEED", "2026"))
INPUTS = 3
DTYPES = INTS + FLOATS
WL_NAME = {v: k for k, v in vars(wl).items() if isinstance(v, wl.dtype)}
# Unit roundoff, and the smallest normal (what a flush of subnormals loses).
UNIT = {"fp16": 2.0 ** -11, "bf16": 2.0 ** -8, "fp32": 2.0 ** -24, "fp64": 2.0 ** -53}
TINY = {"fp16": 2.0 ** -14, "bf16": 2.0 ** -126, "fp32": 2.0 ** -126, "fp64": 2.0 ** -1022}
# The math functions' error bounds run to a few units in the last place
# of the precision they compute in (float32 at least).
LIBRARY_ULPS = 8

# A value of a program on numpy's side: x (float64 values of the dtype, or
# Python integers) and, for floats, e: how far the kernel's may be from x.
Val = collections.namedtuple("Val", "x e")


def both(fn, *vals):
    """`fn` of the values' x, and of their e (where floats carry one): how a
    rearrangement moves values and their bounds alike."""
    return Val(fn(*(v.x for v in vals)), None if vals[0].e is None else fn(*(v.e for v in vals)))


class Program:
    """One random tree of `dtype` at `tile`: .kernel (source) and .reference
    (a function of the inputs' Vals)."""

    def __init__(self, rng, dtype, tile, name):
        self.rng, self.dtype, self.tile, self.name = rng, dtype, tile, name
        # @weft.jit functions of the loops and branches (their source), and
        # the loop value in scope: (its key in the environment, shape).
        self.helpers, self.scope = [], None
        self.is_float = dtype.is_float
        self.bits = 0 if self.is_float else np.dtype(dtype.numpy).itemsize * 8
        self.signed = self.is_float or dtype.kind == "i"
        if self.is_float:
            # half floats accumulate and call math functions in float32
            self.acc = min(UNIT[dtype.name], UNIT["fp32"])
            self.lib = LIBRARY_ULPS * self.acc
        self.kernel, self.reference = self.tile_node(4)

    # --- numpy's side ------------------------------------------------------

    def made(self, x, e, dtype=None):
        """An op's exact (or float64) result as `dtype` (the program's by
        default) has it: floats rounded, e (the inputs' error carried in)
        grown by the rounding; integers wrapped."""
        dtype = dtype or self.dtype
        if not dtype.is_float:
            return Val(wrap(x, dtype).astype(object), None)
        with np.errstate(all="ignore"):
            r = rounded(np.asarray(x, np.float64), dtype)
            e = e + UNIT[dtype.name] * np.abs(r) + TINY[dtype.name]
        return Val(r, np.where(np.isfinite(r) & np.isfinite(e), e, np.inf))

    # --- the generator -----------------------------------------------------

    def pick(self, options):
        return options[int(self.rng.integers(len(options)))]

    def tile_node(self, depth, shape=None):
        """(kernel source, reference) of a tile of the dtype, of `shape` (the
        program's by default) or one it broadcasts to."""
        shape = shape or self.tile
        if depth == 0 or self.rng.random() < 0.15:
            return self.leaf(shape)
        kinds = ["binary"] * 6 + ["unary"] * 2 + ["where"] * 2 + ["reduce", "scan", "arg",
                                                                    "flip", "cast", "clamp"]
        kinds += ["reshape", "broadcast"]
        if len(shape) >= 2:
            kinds += ["permute"]
        if len(shape) >= 2 and shape[-1] == 2:
            kinds += ["join"]
        if shape[-1] % 2 == 0:
            kinds += ["interleave"]
        if len(shape) <= 2 and 2 * size(shape) <= size(self.tile):
            kinds += ["split"]
        if self.is_float:
            kinds += ["math"] * 3 + ["fma"]
        elif self.bits >= 32:
            kinds += ["umulhi"]
        if depth >= 2:
            kinds += ["loop", "branch"]
        return getattr(self, "_" + self.pick(kinds))(depth - 1, shape)

    def leaf(self, shape):
        """The loop value in scope where it has `shape`, now and then; else
        an input, rearranged to `shape`: reshaped, or the maximum of each
        run of its elements where `shape` holds fewer."""
        if self.scope and self.scope[1] == shape and self.rng.random() < 0.5:
            key = self.scope[0]
            return "acc", lambda env: env[key]
        name = f"a{int(self.rng.integers(INPUTS))}"
        if shape == self.tile:
            return name, lambda env: env[name]
        runs = size(self.tile) // size(shape)
        if runs == 1:
            source = f"wl.reshape({name}, {shape})"
        else:
            source = f"wl.reshape(wl.max(wl.reshape({name}, ({size(shape)}, {runs})), 1), {shape})"

        def reference(env):
            return both(lambda v: v.reshape(-1, runs).max(1).reshape(shape), env[name])
        return source, reference

    def exact(self, depth, shape):
        """A tile of exactly `shape` (a reduction's keeps its axis as 1)."""
        a_k, a_r = self.tile_node(depth, shape)

        def reference(env):
            return both(lambda v: np.broadcast_to(v, shape), a_r(env))
        return f"wl.broadcast_to({a_k}, {shape})", reference

    def operand(self, depth, shape):
        """A tile, or now and then a Python constant."""
        if self.rng.random() < 0.25:
            source, value = self.constant()
            return source, lambda env: value
        return self.tile_node(depth, shape)

    def constant(self):
        """(source, value) of a Python constant the dtype holds exactly."""
        if self.is_float:
            c = float(self.rng.integers(-12, 13)) / 4
        else:
            c = int(self.rng.integers(-4 if self.signed else 0, 5))
        return repr(c), self.made(np.asarray(c, np.float64 if self.is_float else object), 0.0)

    def axis(self, shape):
        return int(self.rng.integers(len(shape)))

    def other_shape(self, elements):
        """A random shape of 1 to 3 dimensions holding `elements` (a power of
        two)."""
        dims = [1] * int(self.rng.integers(1, 4))
        for _ in range(elements.bit_length() - 1):
            dims[int(self.rng.integers(len(dims)))] *= 2
        return tuple(dims)

    def cast_back(self, source):
        """A result of another dtype (int32 indices, widened sums) as the
        program's."""
        return f"({source}).to(wl.{WL_NAME[self.dtype]})"

    def _binary(self, depth, shape):
        ops = ["+", "-", "*", "max", "min"]
        ops += ["/"] if self.is_float else ["&", "|", "^", "//", "%", "<<", ">>"]
        op = self.pick(ops)
        a_k, a_r = self.tile_node(depth, shape)
        if op in ("//", "%", "<<", ">>", "/"):
            return self.divide_or_shift(op, a_k, a_r, *self.tile_node(depth, shape))
        b_k, b_r = self.operand(depth, shape)
        if self.rng.random() < 0.5:
            a_k, a_r, b_k, b_r = b_k, b_r, a_k, a_r  # constants on either side
        if op in ("max", "min"):
            source = f"wl.{op}imum({a_k}, {b_k})"
        else:
            source = f"({a_k} {op} {b_k})"

        def reference(env):
            a, b = a_r(env), b_r(env)
            if op in ("max", "min"):
                x = (np.maximum if op == "max" else np.minimum)(a.x, b.x)
                return Val(x, None if a.e is None else np.maximum(a.e, b.e))
            if not self.is_float:
                return self.made({"+": a.x + b.x, "-": a.x - b.x, "*": a.x * b.x, "&": a.x & b.x,
                                  "|": a.x | b.x, "^": a.x ^ b.x}[op], None)
            with np.errstate(all="ignore"):
                if op == "*":
                    return self.made(a.x * b.x, np.abs(a.x) * b.e + np.abs(b.x) * a.e + a.e * b.e)
                return self.made(a.x + b.x if op == "+" else a.x - b.x, a.e + b.e)
        return source, reference

    def divide_or_shift(self, op, a_k, a_r, b_k, b_r):
        """Divisors kept from 0 (and from -1, whose quotient of the most
        negative value overflows), shift counts below the width."""
        if op == "/":
            source = f"({a_k} / (wl.abs({b_k}) + 1))"
        elif op in ("<<", ">>"):
            source = f"({a_k} {op} ({b_k} & {self.bits - 1}))"
        elif self.signed and self.rng.random() < 0.5:
            source, negative = f"({a_k} {op} (-2 - ({b_k} & 3)))", True
        else:
            source, negative = f"({a_k} {op} (({b_k} & 7) + 1))", False

        def reference(env):
            a, b = a_r(env), b_r(env)
            if op == "/":
                d = self.made(np.abs(b.x) + 1, b.e)
                with np.errstate(all="ignore"):
                    room = d.x - d.e
                    e = np.where(room > 0, (a.e + np.abs(a.x / d.x) * d.e) / room, np.inf)
                    return self.made(a.x / d.x, e)
            if op == "<<":
                return self.made(a.x << (b.x & (self.bits - 1)), None)
            if op == ">>":
                return self.made(a.x >> (b.x & (self.bits - 1)), None)
            d = -2 - (b.x & 3) if negative else (b.x & 7) + 1
            q = c_floordiv(a.x, d)
            return self.made(q if op == "//" else a.x - q * d, None)
        return source, reference

    def _unary(self, depth, shape):
        ops = ["neg", "abs"] + ([] if self.is_float else ["invert"])
        op = self.pick(ops)
        a_k, a_r = self.tile_node(depth, shape)
        source = {"neg": f"-({a_k})", "abs": f"wl.abs({a_k})", "invert": f"~({a_k})"}[op]

        def reference(env):
            a = a_r(env)
            if self.is_float:
                return Val(-a.x if op == "neg" else np.abs(a.x), a.e)
            return self.made({"neg": -a.x, "abs": np.abs(a.x), "invert": ~a.x}[op], None)
        return source, reference

    def _math(self, depth, shape):
        """Float functions, their arguments brought into their domains; each
        reference is (the function, a bound on how far an input error e
        moves its result near x)."""
        op = self.pick(["sin", "cos", "exp", "exp2", "log", "log2", "sqrt", "rsqrt", "sigmoid",
                        "erf", "floor", "ceil"])
        a_k, a_r = self.tile_node(depth, shape)
        arg = {"exp": f"wl.minimum({a_k}, 3.0)", "exp2": f"wl.minimum({a_k}, 4.0)",
               "log": f"wl.abs({a_k}) + 1", "log2": f"wl.abs({a_k}) + 1",
               "sqrt": f"wl.abs({a_k})", "rsqrt": f"wl.abs({a_k}) + 1"}.get(op, a_k)
        source = f"wl.{op}({arg})"
        table = {
            "sin": (np.sin, lambda x, e: e), "cos": (np.cos, lambda x, e: e),
            "exp": (np.exp, lambda x, e: np.exp(x + e) - np.exp(x)),
            "exp2": (np.exp2, lambda x, e: np.exp2(x + e) - np.exp2(x)),
            "log": (np.log, lambda x, e: np.where(x > e, np.log(x) - np.log(x - e), np.inf)),
            "log2": (np.log2, lambda x, e: np.where(x > e, np.log2(x) - np.log2(x - e), np.inf)),
            "sqrt": (np.sqrt, lambda x, e: np.fmin(np.sqrt(e), e / np.sqrt(x))),
            "rsqrt": (lambda x: 1 / np.sqrt(x),
                      lambda x, e: np.where(x > e, 1 / np.sqrt(x - e) - 1 / np.sqrt(x), np.inf)),
            "sigmoid": (lambda x: 1 / (1 + np.exp(-x)), lambda x, e: e / 4),
            "erf": (erf, lambda x, e: e * 2 / math.sqrt(math.pi)),
            "floor": (np.floor, lambda x, e: np.maximum(np.floor(x + e) - np.floor(x),
                                                        np.floor(x) - np.floor(x - e))),
            "ceil": (np.ceil, lambda x, e: np.maximum(np.ceil(x + e) - np.ceil(x),
                                                      np.ceil(x) - np.ceil(x - e))),
        }
        fn, moved = table[op]

        def reference(env):
            a = a_r(env)
            if op in ("exp", "exp2"):
                a = Val(np.minimum(a.x, 3.0 if op == "exp" else 4.0), a.e)
            elif op in ("log", "log2", "rsqrt"):
                a = self.made(np.abs(a.x) + 1, a.e)
            elif op == "sqrt":
                a = Val(np.abs(a.x), a.e)
            with np.errstate(all="ignore"):
                y = fn(a.x)
                library = 0.0 if op in ("floor", "ceil", "sqrt") else self.lib * np.abs(y)
                return self.made(y, moved(a.x, a.e) + library)
        return source, reference

    def _fma(self, depth, shape):
        (a_k, a_r), (b_k, b_r), (c_k, c_r) = (self.tile_node(depth, shape) for _ in range(3))

        def reference(env):
            a, b, c = a_r(env), b_r(env), c_r(env)
            with np.errstate(all="ignore"):
                product = a.x * b.x  # float64: exact below float64, one rounding there
                e = np.abs(a.x) * b.e + np.abs(b.x) * a.e + a.e * b.e + c.e
                return self.made(product + c.x, e + UNIT["fp64"] * np.abs(product))
        return f"wl.fma({a_k}, {b_k}, {c_k})", reference

    def _where(self, depth, shape):
        cmp = self.pick(["<", "<=", ">", ">=", "==", "!="])
        a_k, a_r = self.tile_node(depth, shape)
        b_k, b_r = self.operand(depth, shape)
        c_k, c_r = self.operand(depth, shape)
        compare = {"<": np.less, "<=": np.less_equal, ">": np.greater, ">=": np.greater_equal,
                   "==": np.equal, "!=": np.not_equal}[cmp]

        def reference(env):
            a, b, c = a_r(env), b_r(env), c_r(env)
            cond = compare(a.x, b.x).astype(bool)
            x = np.where(cond, c.x, a.x)
            if a.e is None:
                return Val(x, None)
            # too close to call: either side
            unsure = (np.abs(a.x - b.x) <= a.e + b.e) & (a.e + b.e > 0)
            with np.errstate(all="ignore"):
                either = np.maximum(a.e, c.e) + np.abs(c.x - a.x)
            return Val(x, np.where(unsure, either, np.where(cond, c.e, a.e)))
        return f"wl.where({a_k} {cmp} {b_k}, {c_k}, {a_k})", reference

    def _clamp(self, depth, shape):
        (lo, lo_v), (hi, hi_v) = sorted((self.constant() for _ in range(2)),
                                        key=lambda c: float(c[0]))
        a_k, a_r = self.tile_node(depth, shape)

        def reference(env):
            a = a_r(env)
            return Val(np.minimum(np.maximum(a.x, lo_v.x), hi_v.x), a.e)
        return f"wl.clamp({a_k}, {lo}, {hi})", reference

    def _reduce(self, depth, shape):
        ops = ["sum", "max", "min"] + ([] if self.is_float else ["xor_sum"])
        op, axis = self.pick(ops), self.axis(shape)
        a_k, a_r = self.tile_node(depth, shape)
        source = self.cast_back(f"wl.{op}({a_k}, {axis}, keep_dims=True)")

        def reference(env):
            a = a_r(env)
            if op in ("max", "min"):
                fn = np.max if op == "max" else np.min
                return Val(fn(a.x, axis, keepdims=True),
                                  None if a.e is None else np.max(a.e, axis, keepdims=True))
            if op == "xor_sum":
                return self.made(np.bitwise_xor.reduce(a.x, axis, keepdims=True), None)
            x = np.sum(a.x, axis, keepdims=True)
            if a.e is None:
                return self.made(x, None)
            n = a.x.shape[axis]
            with np.errstate(all="ignore"):
                rounding = 2 * n * self.acc * np.sum(np.abs(a.x), axis, keepdims=True)
                return self.made(x, np.sum(a.e, axis, keepdims=True) + rounding)
        return source, reference

    def _scan(self, depth, shape):
        op, axis = self.pick(["cumsum", "cumprod"]), self.axis(shape)
        reverse = bool(self.rng.random() < 0.3)
        a_k, a_r = self.tile_node(depth, shape)
        source = self.cast_back(f"wl.{op}({a_k}, {axis}, reverse={reverse})")

        def scan(fn, x):
            x = np.flip(x, axis) if reverse else x
            y = fn(x, axis)
            return np.flip(y, axis) if reverse else y

        def reference(env):
            a = a_r(env)
            fn = np.cumsum if op == "cumsum" else np.cumprod
            with np.errstate(over="ignore"):  # a product past the range: not checked
                x = scan(fn, a.x)
            if a.e is None:
                return self.made(x, None)
            n = a.x.shape[axis]
            with np.errstate(all="ignore"):
                if op == "cumsum":
                    e = scan(np.cumsum, a.e) + 2 * n * self.acc * scan(np.cumsum, np.abs(a.x))
                else:
                    grown = scan(np.cumprod, np.abs(a.x) + a.e)
                    e = grown * (1 + 2 * n * self.acc) - np.abs(x)
                return self.made(x, e)
        return source, reference

    def _arg(self, depth, shape):
        op, axis = self.pick(["argmax", "argmin"]), self.axis(shape)
        a_k, a_r = self.tile_node(depth, shape)
        source = self.cast_back(f"wl.{op}({a_k}, {axis}, keep_dims=True)")

        def reference(env):
            a = a_r(env)
            sign = 1 if op == "argmax" else -1
            index = np.argmax(sign * a.x, axis)
            indices = np.expand_dims(index, axis)
            if a.e is None:
                return self.made(indices, None)
            # the candidates: any element that may be the largest
            best = np.take_along_axis(sign * a.x, indices, axis)
            best_e = np.take_along_axis(a.e, indices, axis)
            candidate = sign * a.x + a.e >= best - best_e
            position = np.arange(a.x.shape[axis]).reshape(
                [-1 if d == axis else 1 for d in range(a.x.ndim)])
            spread = np.max(np.where(candidate, np.abs(position - indices), 0), axis,
                            keepdims=True).astype(np.float64)
            # an unknown element may be any of them
            spread[~np.all(np.isfinite(a.e), axis, keepdims=True)] = np.inf
            return self.made(indices.astype(np.float64), spread)
        return source, reference

    def _flip(self, depth, shape):
        axis = self.axis(shape)
        a_k, a_r = self.tile_node(depth, shape)

        def reference(env):
            return both(lambda v: np.flip(v, axis), a_r(env))
        return f"wl.flip({a_k}, {axis})", reference

    def helper(self, lines, first):
        """A @weft.jit function of (acc, the inputs, M, N) with `lines` for
        its body; its call with `first` for acc."""
        name = f"{self.name}_{len(self.helpers)}"
        inputs = ", ".join(f"a{j}" for j in range(INPUTS))
        self.helpers.append("\n".join(["@weft.jit", f"def {name}(acc, {inputs}, M, N):"] +
                                      [f"    {line}" for line in lines]))
        return f"{name}({first}, {inputs}, M, N)"

    def _loop(self, depth, shape):
        """A tile carried through a loop of M % 3 + 1 steps (M at run time),
        each a tree that may use it."""
        init_k, init_r = self.exact(depth, shape)
        outer, key = self.scope, f"{self.name}_{len(self.helpers)}_acc"
        self.scope = (key, shape)
        body_k, body_r = self.exact(depth, shape)
        self.scope = outer
        if "acc" not in body_k:  # a step that does not use the loop's value
            body_k, step = f"wl.maximum(acc, {body_k})", body_r

            def body_r(env):
                return both(np.maximum, env[key], step(env))
        call = self.helper(["for _ in range(M % 3 + 1):", f"    acc = {body_k}", "return acc"],
                           init_k)

        def reference(env):
            acc = init_r(env)
            for _ in range(env["M"] % 3 + 1):
                acc = body_r(dict(env, **{key: acc}))
            return acc
        return call, reference

    def _branch(self, depth, shape):
        """One of two trees, by a condition on M and N at run time."""
        modulus = int(self.rng.integers(2, 4))
        (a_k, a_r), (b_k, b_r) = (self.exact(depth, shape) for _ in range(2))
        call = self.helper([f"if (M + N) % {modulus} == 0:", f"    r = {a_k}", "else:",
                            f"    r = {b_k}", "return r"], "acc" if self.scope else "a0")

        def reference(env):
            return (a_r if (env["M"] + env["N"]) % modulus == 0 else b_r)(env)
        return call, reference

    def _reshape(self, depth, shape):
        other = self.other_shape(size(shape))
        a_k, a_r = self.exact(depth, other)
        source = f"wl.ravel({a_k})" if len(shape) == 1 and self.rng.random() < 0.3 else \
            f"wl.reshape({a_k}, {shape})"

        def reference(env):
            return both(lambda v: v.reshape(shape), a_r(env))
        return source, reference

    def _permute(self, depth, shape):
        order = tuple(int(d) for d in self.rng.permutation(len(shape)))
        before = [0] * len(shape)
        for i, d in enumerate(order):
            before[d] = shape[i]
        a_k, a_r = self.exact(depth, tuple(before))
        source = f"wl.trans({a_k})" if order == (1, 0) else f"wl.permute({a_k}, {order})"

        def reference(env):
            return both(lambda v: np.transpose(v, order), a_r(env))
        return source, reference

    def _broadcast(self, depth, shape):
        """A tile of ones along some dimension, or of one dimension fewer
        (expand_dims), broadcast to `shape`."""
        axis = self.axis(shape)
        fewer = len(shape) >= 2 and self.rng.random() < 0.5
        if fewer:
            a_k, a_r = self.exact(depth, shape[:axis] + shape[axis + 1:])
            a_k = f"wl.expand_dims({a_k}, {axis})"
        else:
            a_k, a_r = self.exact(depth, shape[:axis] + (1,) + shape[axis + 1:])

        def reference(env):
            return both(lambda v: np.broadcast_to(np.expand_dims(v, axis) if fewer else v, shape),
                        a_r(env))
        return f"wl.broadcast_to({a_k}, {shape})", reference

    def _join(self, depth, shape):
        (a_k, a_r), (b_k, b_r) = (self.exact(depth, shape[:-1]) for _ in range(2))

        def reference(env):
            return both(lambda u, v: np.stack([u, v], -1), a_r(env), b_r(env))
        return f"wl.join({a_k}, {b_k})", reference

    def _interleave(self, depth, shape):
        half = shape[:-1] + (shape[-1] // 2,)
        (a_k, a_r), (b_k, b_r) = (self.exact(depth, half) for _ in range(2))

        def reference(env):
            return both(lambda u, v: np.stack([u, v], -1).reshape(shape), a_r(env), b_r(env))
        return f"wl.interleave({a_k}, {b_k})", reference

    def _split(self, depth, shape):
        half = int(self.rng.integers(2))
        a_k, a_r = self.exact(depth, shape + (2,))

        def reference(env):
            return both(lambda v: v[..., half], a_r(env))
        return f"wl.split({a_k})[{half}]", reference

    def _cast(self, depth, shape):
        """There and back through another dtype of the same kind."""
        others = [d for d in (FLOATS if self.is_float else INTS) if d is not self.dtype]
        other = self.pick(others)
        a_k, a_r = self.tile_node(depth, shape)
        source = self.cast_back(f"({a_k}).to(wl.{WL_NAME[other]})")

        def reference(env):
            a = a_r(env)
            middle = self.made(a.x, a.e, other)
            return self.made(middle.x, middle.e)
        return source, reference

    def _umulhi(self, depth, shape):
        (a_k, a_r), (b_k, b_r) = self.tile_node(depth, shape), self.tile_node(depth, shape)

        def reference(env):
            return self.made((a_r(env).x * b_r(env).x) >> self.bits, None)
        return f"wl.umulhi({a_k}, {b_k})", reference


def size(shape):
    return math.prod(shape)


def _shape(rng):
    """(data, tile): tiles of up to 256 elements on the host, whose program
    is one thread holding the whole tile (LLVM's x86 code generation takes
    half a minute over 1024 of them), 1024 on GPUs."""
    rank = int(rng.integers(1, 3))
    largest = 8 if BACKEND == "host" else 10  # log2 of the elements
    tile = tuple(int(2 ** rng.integers(0, largest // rank + 1)) for _ in range(rank))
    data = tuple(int(rng.integers(max(1, t // 2), t + 1)) for t in tile)
    return data, tile


def _programs():
    rng = np.random.default_rng(SEED)
    for i in range(COUNT):
        dtype = DTYPES[int(rng.integers(len(DTYPES)))]
        case = _shape(rng)
        yield i, Program(rng, dtype, case[1], f"p{i}"), case


def _module(tmp_path_factory, programs):
    """The programs' kernels as one module written to disk (@weft.jit reads
    a kernel's source from its file)."""
    lines = ["import weft", "import weft.language as wl", "from matrix import tile_offsets", ""]
    for i, program, _ in programs:
        loads = "\n".join(f"    a{j} = wl.load(x{j} + offs, mask=mask, other=0)"
                          for j in range(INPUTS))
        lines += ["", *(f"\n{h}\n" for h in program.helpers), "@weft.jit",
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
    dtype, (data, tile) = program.dtype, case
    rng = np.random.default_rng(SEED + 1 + i)
    inputs = [sample(rng, dtype, data, -2 if dtype.is_float else -5, 2 if dtype.is_float else 5)
              for _ in range(INPUTS)]
    (raw,) = run(getattr(kernels, f"program_{i}"), case, [(x, dtype) for x in inputs], dtype, 1)
    got = decode(raw, dtype)
    # numpy on the padded tiles, as the kernel sees them (masked lanes 0)
    m, n, _, _ = extents(case)
    env = {"M": m, "N": n}
    for j, x in enumerate(inputs):
        padded = np.zeros(tile, np.float64 if dtype.is_float else object)
        padded[tuple(slice(0, d) for d in data)] = x if dtype.is_float else x.astype(object)
        env[f"a{j}"] = Val(padded, np.zeros(tile) if dtype.is_float else None)
    result = program.reference(env)
    inside = tuple(slice(0, d) for d in data)
    expected = np.broadcast_to(result.x, tile)[inside]
    name = f"program {i} of {dtype!r} at {shape_id(case)}: {program.kernel}"
    if not dtype.is_float:
        np.testing.assert_array_equal(got, expected.astype(dtype.numpy), err_msg=name)
    else:
        bound = np.broadcast_to(result.e, tile)[inside]
        checked = np.isfinite(bound)
        with np.errstate(invalid="ignore"):  # inf - inf where nothing is checked
            wrong = checked & ~(np.abs(got - expected) <= 2 * bound)
        assert not wrong.any(), (
            f"{name}\n{int(wrong.sum())} of {int(checked.sum())} checked elements wrong, "
            f"first at {np.argwhere(wrong)[0].tolist()}: got {got[wrong][:4]}, expected "
            f"{expected[wrong][:4]} within {2 * bound[wrong][:4]}")
    CASES[BACKEND] += 1
