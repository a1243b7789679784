"""The launch fast path: per kernel, a function generated from its own
signature that does what JITFunction.run does for a launch that repeats
one already made (the same backend, specialisations, constexprs and
options), without run's generic work: Python binds the arguments and the
launch options by the kernel's parameters, each argument is described
inline, and the kernel is found with one dictionary lookup. Anything else
(a first launch, an argument run would reject, an unknown keyword) goes
to run, which has the one definition of what a launch means and of its
errors; the fast path only finds what run stored (bench/launch_overhead.py
measures both)."""
import keyword

from . import _runtime as rt

# The launch options (JITFunction.run's), which the generated function
# takes as keywords with run's defaults.
_OPTIONS = {"num_warps": 4, "num_stages": 3, "cluster": None, "warp_mma": False,
            "stream": None, "resident": False, "debug": None}
_PREFIX = "_w_"


def make_launcher(fn, jit_module):
    """fn's fast launch function `(grid, *args, **kwargs)`, or None where
    its parameter names cannot be a generated function's."""
    names = fn.arg_names
    if any(n.startswith(_PREFIX) or n in _OPTIONS or keyword.iskeyword(n) for n in names):
        return None
    params = [f"{n}=_w_defaults[{n!r}]" if n in fn.defaults else n for n in names]
    runtime = [names[i] for i in fn.runtime_index]
    constexprs = [names[i] for i in fn.constexpr_index]

    def tuple_of(items):
        return "(" + "".join(f"{item}, " for item in items) + ")"

    options = "".join(f"{k}={v!r}, " for k, v in _OPTIONS.items())
    slow = (f"return _w_fn.run(_w_grid, {tuple_of(names)}, _w_dict(_w_options, " +
            ", ".join(f"{k}={k}" for k in _OPTIONS) + "))")
    # Named after the kernel: Python's own binding errors name it.
    name = fn.__name__ if fn.__name__.isidentifier() and not keyword.iskeyword(fn.__name__) \
        and not fn.__name__.startswith(_PREFIX) else "_w_launch"
    lines = [f"def {name}(_w_grid, {''.join(p + ', ' for p in params)}*, "
             f"{options}**_w_options):",
             "    _w_backend = _w_state.backend",
             "    if _w_options or _w_state.ctx is None:",
             f"        {slow}",
             # run's reading of the options, for the ones given.
             "    _w_cluster = (1, 1, 1) if cluster is None else _w_jit._cluster_shape(cluster)",
             "    _w_stream = None if stream is None else _w_rt.stream_handle(stream)",
             "    _w_debug = _w_jit.DEBUG if debug is None else _w_bool(debug)"]
    if runtime:  # a kernel of constexprs alone has nothing to describe
        lines.append("    try:")
    for j, n in enumerate(runtime):
        # Buffers, 32-bit ints and floats, the common arguments, inline:
        # what _describe would return for them.
        lines += [f"        _w_t = _w_type({n})",
                  f"        if _w_t is _w_Buffer and {n}.spec is not None:",
                  f"            _w_s{j}, _w_v{j} = {n}.spec, {n}.ptr",
                  f"        elif _w_t is _w_int and -0x80000000 <= {n} <= 0x7fffffff:",
                  f"            _w_s{j}, _w_v{j} = _w_i32[{n} & 15 == 0], {n}",
                  "        elif _w_t is _w_float:",
                  f"            _w_s{j}, _w_v{j} = _w_fp32, {n}",
                  "        else:",
                  f"            _w_s{j}, _w_m, _w_v{j} = "
                  f"(_w_handlers.get(_w_t) or _w_describe)({n}, False)",
                  # Memory the backend cannot reach: run says so.
                  "            if _w_m is not None and _w_m != _w_memories[_w_backend]:",
                  "                raise TypeError"]
    if runtime:
        lines += ["    except TypeError:", f"        {slow}"]
    for j in fn.unspecialized:
        lines.append(f"    _w_s{j} = _w_s{j}[:2] + (0,)")
    specs = tuple_of(f"_w_s{j}" for j in range(len(runtime)))
    types = tuple_of(f"_w_type({n})" for n in constexprs)
    lines += [f"    _w_found = _w_launches.get((_w_backend, _w_state.multinode, {specs}, "
              f"{tuple_of(constexprs)}, "
              f"{types}, num_warps, num_stages, _w_cluster, _w_bool(warp_mma), _w_debug))",
              "    if _w_found is None:",
              f"        {slow}",
              "    _w_kernel, _w_resolved = _w_found",
              "    if _w_callable(_w_grid):",
              "        _w_grid = _w_grid(_w_dict(_w_resolved, num_warps=num_warps))",
              "    if _w_type(_w_grid) is not _w_tuple or _w_len(_w_grid) != 1 or "
              "_w_type(_w_grid[0]) is not _w_int or _w_grid[0] < 0:",
              "        _w_grid = _w_jit._grid(_w_grid, _w_fn.__name__)",
              f"    _w_kernel._launch(_w_grid, {tuple_of(f'_w_v{j}' for j in range(len(runtime)))}, "
              "_w_stream, _w_bool(resident))",
              "    return _w_kernel"]
    namespace = {"_w_fn": fn, "_w_defaults": fn.defaults, "_w_state": rt.state,
                 "_w_handlers": jit_module._DESCRIBE, "_w_describe": jit_module._describe,
                 "_w_memories": jit_module._MEMORY, "_w_launches": fn._launches,
                 "_w_jit": jit_module, "_w_Buffer": rt.Buffer, "_w_rt": rt,
                 "_w_i32": (jit_module._INT_SPECS["i32", False],
                            jit_module._INT_SPECS["i32", True]),
                 "_w_fp32": jit_module._FLOAT_SPEC}
    # Builtins by names no parameter can take (a kernel may call one `len`).
    namespace.update({f"_w_{f.__name__}": f for f in (type, callable, len, bool, dict, int,
                                                      float, tuple)})
    exec(compile("\n".join(lines), f"<weft launcher of {fn.__name__}>", "exec"), namespace)
    return namespace[name]
