"""Choosing a kernel's compile-time parameters on the host, as Triton's
autotune and heuristics do.

    @weft.autotune(configs=[weft.Config({"BLOCK": 128}, num_warps=4), ...],
                   key=["n"])
    @weft.jit
    def kernel(x, out, n, BLOCK: wl.constexpr): ...

The first launch with a new value of the `key` arguments runs every config
(after a warm-up launch, which also compiles it) and keeps the fastest; the
choice is stored in the cache directory (_cache.cache_dir()/autotune), per
kernel source, config list and key, so later processes skip the tuning.
Under several ranks, every rank times every config and they agree on the
config with the best worst-rank time (an all_reduce of the timings), so a
kernel that communicates gets the same config everywhere.
"""
import hashlib
import inspect
import json
import os
import tempfile
import time

import numpy as np

from . import _runtime as rt
from ._cache import cache_dir


class Config:
    """Compile-time arguments (`kwargs`, the kernel's constexprs) and launch
    options to try; `pre_hook(args)` runs before each launch with it."""

    def __init__(self, kwargs, num_warps=4, num_stages=3, pre_hook=None):
        self.kwargs = dict(kwargs)
        self.num_warps = num_warps
        self.num_stages = num_stages
        self.pre_hook = pre_hook

    def launch_kwargs(self):
        return dict(self.kwargs, num_warps=self.num_warps, num_stages=self.num_stages)

    def __repr__(self):
        items = ", ".join(f"{k}={v!r}" for k, v in self.kwargs.items())
        return f"Config({items}, num_warps={self.num_warps}, num_stages={self.num_stages})"


def _bind(fn, args, kwargs):
    """The launch's arguments by parameter name (defaults included)."""
    bound = dict(zip(fn.arg_names, args))
    bound.update(kwargs)
    return bound


def _key_part(value):
    """How a key argument tells launches apart: numbers and strings by
    value, arrays and buffers by dtype (as Triton keys tensors)."""
    if isinstance(value, (bool, int, float, str)) or value is None:
        return value
    dtype = getattr(value, "dtype", None)
    return str(dtype) if dtype is not None else type(value).__name__


class _Saved:
    """The contents of the arguments a tuning run must leave as they were."""

    def __init__(self, values):
        self.copies = [(v, self._copy(v)) for v in values]

    @staticmethod
    def _copy(v):
        if isinstance(v, rt.Buffer):
            return v.to_numpy(raw=True).copy()
        if isinstance(v, np.ndarray):
            return v.copy()
        return v.clone()  # a torch tensor

    def restore(self):
        for v, copy in self.copies:
            if isinstance(v, rt.Buffer):
                v.copy_from(copy, raw=True)
            elif isinstance(v, np.ndarray):
                np.copyto(v, copy)
            else:
                v.copy_(copy)


def _zero(v):
    if isinstance(v, rt.Buffer):
        v.copy_from(np.zeros(v.shape, dtype=v.to_numpy(raw=True).dtype), raw=True)
    elif isinstance(v, np.ndarray):
        v.fill(0)
    else:
        v.zero_()


class Autotuner:
    def __init__(self, fn, configs, key, reset_to_zero=(), restore_value=(), warmup=2,
                 rep=10):
        if not configs:
            raise ValueError("weft.autotune needs at least one Config")
        self.fn = fn
        self.arg_names = fn.arg_names
        self.__name__ = fn.__name__
        self.configs = list(configs)
        unknown = [k for k in list(key) + list(reset_to_zero) + list(restore_value)
                   if k not in self.arg_names]
        if unknown:
            raise ValueError(f"weft.autotune: {unknown} are not parameters of "
                             f"{fn.__name__}{tuple(self.arg_names)}")
        self.key = list(key)
        self.reset_to_zero = list(reset_to_zero)
        self.restore_value = list(restore_value)
        self.warmup, self.rep = warmup, rep
        self.best = {}
        source = inspect.getsource(_source_of(fn))
        digest = hashlib.sha256(json.dumps([source, list(map(repr, self.configs))])
                                .encode()).hexdigest()[:32]
        self.path = os.path.join(cache_dir(), "autotune", f"{fn.__name__}-{digest}.json")

    def __getitem__(self, grid):
        return lambda *args, **kwargs: self.run(grid, args, kwargs)

    def run(self, grid, args, kwargs):
        bound = _bind(self, args, kwargs)
        key = json.dumps([_key_part(bound.get(k)) for k in self.key])
        config = self.best.get(key) or self._stored(key) or self._tune(grid, args, kwargs,
                                                                          key)
        self.best[key] = config
        if config.pre_hook:
            config.pre_hook(bound)
        return self.fn.run(grid, args, dict(kwargs, **config.launch_kwargs()))

    def _stored(self, key):
        try:
            with open(self.path) as f:
                index = json.load(f).get(key)
        except (OSError, ValueError):
            return None
        return self.configs[index] if isinstance(index, int) and \
            0 <= index < len(self.configs) else None

    def _store(self, key, index):
        try:
            os.makedirs(os.path.dirname(self.path), exist_ok=True)
            try:
                with open(self.path) as f:
                    table = json.load(f)
            except (OSError, ValueError):
                table = {}
            table[key] = index
            fd, tmp = tempfile.mkstemp(dir=os.path.dirname(self.path))
            with os.fdopen(fd, "w") as f:
                json.dump(table, f)
            os.replace(tmp, self.path)  # readers see the old table or the new
        except OSError:
            pass  # an unwritable cache costs a tuning next time, nothing else

    def _time(self, grid, args, kwargs, config, bound):
        launch = dict(kwargs, **config.launch_kwargs())

        def once():
            for name in self.reset_to_zero:
                _zero(bound[name])
            if config.pre_hook:
                config.pre_hook(bound)
            self.fn.run(grid, args, launch)
        for _ in range(self.warmup):
            once()
        rt.synchronize()
        start = time.perf_counter()
        for _ in range(self.rep):
            once()
        rt.synchronize()
        return (time.perf_counter() - start) / self.rep

    def _tune(self, grid, args, kwargs, key):
        bound = _bind(self, args, kwargs)
        saved = _Saved([bound[n] for n in self.restore_value])
        times = []
        for config in self.configs:
            times.append(self._time(grid, args, kwargs, config, bound))
            saved.restore()
        if rt.num_ranks() > 1:
            from . import collectives  # the ranks agree on the slowest rank's times
            shared = rt.full((len(times),), 0.0)
            shared.copy_from(np.array(times, dtype=np.float32))
            collectives.all_reduce(shared, op="max")
            times = list(shared.to_numpy())
        index = int(np.argmin(times))
        self._store(key, index)
        return self.configs[index]


class Heuristics:
    """Compile-time arguments computed from the launch's arguments:
    `values` maps a parameter name to a function of the arguments by name."""

    def __init__(self, fn, values):
        self.fn = fn
        self.arg_names = fn.arg_names
        self.__name__ = fn.__name__
        unknown = [k for k in values if k not in self.arg_names]
        if unknown:
            raise ValueError(f"weft.heuristics: {unknown} are not parameters of "
                             f"{fn.__name__}{tuple(self.arg_names)}")
        self.values = dict(values)

    def __getitem__(self, grid):
        return lambda *args, **kwargs: self.run(grid, args, kwargs)

    def run(self, grid, args, kwargs):
        bound = _bind(self, args, kwargs)
        extra = {name: fn(bound) for name, fn in self.values.items()}
        return self.fn.run(grid, args, dict(kwargs, **extra))


def _source_of(fn):
    """The Python function under the decorators."""
    while isinstance(fn, (Autotuner, Heuristics)):
        fn = fn.fn
    return fn.fn


def autotune(configs, key, reset_to_zero=(), restore_value=(), warmup=2, rep=10):
    """Decorates a @weft.jit kernel (or a weft.heuristics of one): see the
    module's documentation."""
    return lambda fn: Autotuner(fn, configs, key, reset_to_zero, restore_value, warmup, rep)


def heuristics(values):
    """Decorates a @weft.jit kernel (or a weft.autotune of one)."""
    return lambda fn: Heuristics(fn, values)
