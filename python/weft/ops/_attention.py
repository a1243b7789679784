"""Flash-decode's split-KV combine across ranks: weft.ops.flash_decode_combine.

With the KV cache of a sequence split over ranks, each rank's attention
kernel yields a partial output o_r (normalised over its own keys) and its
log-sum-exp lse_r per (query) row. The exact attention output is their
log-sum-exp combine: with L = max_r lse_r and w_r = exp(lse_r - L),
out = sum_r w_r o_r / sum_r w_r and lse = L + log(sum_r w_r).
"""
from .. import _runtime as rt
from .. import language as wl
from .._jit import PerBackend, jit
from ..collectives._kernels import _begin, _end, _sync
from ..collectives import _dtype_of, _is_symmetric, _kept, _node_comm, _size
from ._gemm import _output, _programs

NEG_INF = float("-inf")
# Rows x head_dim columns per block (GPUs: 2048 elements over 4 warps).
BR = PerBackend(host=8, default=16)
BD = PerBackend(host=16, default=128)
_FLOATS = (wl.float32, wl.float16, wl.bfloat16)


@jit
def _weights(lse, r, rmask, m, p):
    """exp(lse_p - m) for rows r of rank p's lse (0 where lse_p is -inf)."""
    return wl.exp(wl.load(lse + r, mask=rmask, other=NEG_INF, peer=p) - m)


@jit
def flash_decode_combine_kernel(o, lse, out, lse_out, flags, epochs, rows, D,
                                WRITE_LSE: wl.constexpr, BR: wl.constexpr,
                                BD: wl.constexpr):
    """out[r, :] = sum_p w_p o_p[r, :] / sum_p w_p, w_p = exp(lse_p[r] - max_p
    lse_p[r]), reading every rank's o and lse (rows x D, rows) remotely;
    ranks in order 0..R-1, so every rank computes the same bits. Rows whose
    lse is -inf on every rank (no keys anywhere) give 0 and lse -inf."""
    ranks = wl.num_ranks()
    epoch = _begin(epochs)
    _sync(flags, 0, epoch)                    # every rank's o and lse are ready
    for start in range(wl.program_id(0) * BR, rows, wl.num_programs(0) * BR):
        r = start + wl.arange(0, BR)
        rmask = r < rows
        m = wl.load(lse + r, mask=rmask, other=NEG_INF, peer=0)
        for p in range(1, ranks):
            m = wl.maximum(m, wl.load(lse + r, mask=rmask, other=NEG_INF, peer=p))
        m = wl.where(m == NEG_INF, 0.0, m)    # all -inf: every weight exp(-inf) = 0
        total = wl.zeros((BR,), wl.float32)
        for p in range(ranks):
            total += _weights(lse, r, rmask, m, p)
        scale = wl.where(total > 0.0, 1.0 / total, 0.0)
        for d0 in range(0, D, BD):
            cols = d0 + wl.arange(0, BD)
            mask = rmask[:, None] & (cols[None, :] < D)
            offs = r[:, None] * D + cols[None, :]
            acc = wl.zeros((BR, BD), wl.float32)
            for p in range(ranks):            # the weights again: tiles cannot be listed
                w = _weights(lse, r, rmask, m, p)
                acc += w[:, None] * wl.load(o + offs, mask=mask, other=0.0, peer=p).to(wl.float32)
            wl.store(out + offs, acc * scale[:, None], mask=mask)
        if WRITE_LSE:
            wl.store(lse_out + r, m + wl.log(total), mask=rmask)
    _sync(flags, 1, epoch)                    # nobody reads my o and lse any more
    _end(epochs, epoch)


def flash_decode_combine(o, lse, out=None, lse_out=None, num_programs=None):
    """The log-sum-exp combine of every rank's partial attention output.
    o: this rank's partial outputs, shape (..., head_dim) (e.g. heads x
    head_dim or batch x heads x head_dim: rows = o.size / head_dim), fp32,
    fp16 or bf16; lse: its log-sum-exps, one fp32 per row (-inf for a row
    with no keys on this rank). Both symmetric weft.Buffers (peers read
    them). out (o's shape; fp32, fp16 or bf16; local or symmetric;
    allocated as fp32 when None) = sum_r exp(lse_r - L) o_r / sum_r exp(lse_r
    - L), L = max_r lse_r, on every rank (bit-identical); lse_out (rows fp32,
    optional) = L + log(sum_r exp(lse_r - L)). Returns out."""
    if out is None:  # every call allocates its out: not kept (weft/_plans.py)
        return _flash_decode_combine(o, lse, out, lse_out, num_programs)
    _kept("flash_decode_combine", (o, lse, out, lse_out), (num_programs,),
          _flash_decode_combine, o, lse, out, lse_out, num_programs)
    return out


def _flash_decode_combine(o, lse, out, lse_out, num_programs):
    op = "flash_decode_combine"
    for name, x in (("o", o), ("lse", lse)):
        if not _is_symmetric(x):
            raise ValueError(f"{op}: {name} must be a symmetric weft.Buffer (peers read it)")
    if _dtype_of(o, "o") not in _FLOATS:
        raise ValueError(f"{op}: o has dtype {o.dtype.name}; it takes fp32, fp16 or bf16")
    if len(o.shape) < 2:
        raise ValueError(f"{op}: o has shape {o.shape}; it needs (..., head_dim)")
    d = o.shape[-1]
    rows = o.size // d if d else 0
    if lse.dtype is not wl.float32 or lse.size != rows:
        raise ValueError(f"{op}: lse must hold {rows} fp32 elements (one per row of o), "
                         f"not {lse.size} {lse.dtype.name}")
    if out is None:
        out = rt.empty(o.shape, wl.float32)
    else:
        _output(op, out, rows, d, _FLOATS)
    if lse_out is not None and (_dtype_of(lse_out, "lse_out") is not wl.float32
                                or _size(lse_out) != rows):
        raise ValueError(f"{op}: lse_out must hold {rows} fp32 elements")
    if out is o or lse_out is lse:
        raise ValueError(f"{op}: out and lse_out must not be o and lse (peers read them)")
    grid = _programs(num_programs, -(-rows // BR[rt.backend()]))
    if rows * d == 0:
        return out
    comm = _node_comm(op)
    flash_decode_combine_kernel[grid](
        o, lse, out, out if lse_out is None else lse_out, comm.flags, comm.epochs, rows, d,
        WRITE_LSE=lse_out is not None, BR=BR, BD=BD)
    return out
