"""Counter-based random numbers: Philox 4x32 (Salmon et al., "Parallel
random numbers: as easy as 1, 2, 3", SC'11), the generator Triton's
tl.rand uses, with its constants and rounds, so a seed and offsets give
the same streams. Written in Weft itself: the builtins inline these
functions."""
from .. import _types as ty
from .. import language as wl
from .._function import KernelFunction
from . import builtin

# The Weyl sequence's increments of the key, and the round multipliers.
PHILOX_KEY_A = 0x9E3779B9
PHILOX_KEY_B = 0xBB67AE85
PHILOX_ROUND_A = 0xD2511F53
PHILOX_ROUND_B = 0xCD9E8D57
N_ROUNDS_DEFAULT = 10
# 2 ** -31: a non-negative int32 to [0, 1).
INT32_TO_UNIFORM = 4.6566127342e-10


def _philox(seed, c0, c1, c2, c3, n_rounds: ty.constexpr):
    seed = seed.to(wl.uint64)
    k0 = (seed & 0xFFFFFFFF).to(wl.uint32)
    k1 = ((seed >> 32) & 0xFFFFFFFF).to(wl.uint32)
    c0 = c0.to(wl.uint32, bitcast=True)
    c1 = c1.to(wl.uint32, bitcast=True)
    c2 = c2.to(wl.uint32, bitcast=True)
    c3 = c3.to(wl.uint32, bitcast=True)
    for _ in wl.static_range(n_rounds):
        a0 = c0
        a2 = c2
        c0 = wl.umulhi(c2, wl.full_like(c2, PHILOX_ROUND_B)) ^ c1 ^ k0
        c2 = wl.umulhi(a0, wl.full_like(a0, PHILOX_ROUND_A)) ^ c3 ^ k1
        c1 = a2 * PHILOX_ROUND_B
        c3 = a0 * PHILOX_ROUND_A
        k0 = k0 + PHILOX_KEY_A
        k1 = k1 + PHILOX_KEY_B
    return c0, c1, c2, c3


def _randint4x(seed, offset, n_rounds: ty.constexpr):
    offset = offset.to(wl.uint32, bitcast=True)
    zero = offset * 0
    return _philox_fn(seed, offset, zero, zero, zero, n_rounds)


def _to_uniform(x):
    x = x.to(wl.int32, bitcast=True)
    x = wl.where(x < 0, -x - 1, x)
    return x.to(wl.float32) * INT32_TO_UNIFORM


def _rand(seed, offset, n_rounds: ty.constexpr):
    r0, r1, r2, r3 = _randint4x_fn(seed, offset, n_rounds)
    return _to_uniform_fn(r0)


def _randn(seed, offset, n_rounds: ty.constexpr):
    r0, r1, r2, r3 = _randint4x_fn(seed, offset, n_rounds)
    u1 = wl.maximum(_to_uniform_fn(r0), 1.0e-7)
    u2 = _to_uniform_fn(r1)
    return wl.sqrt(-2.0 * wl.log(u1)) * wl.cos(6.283185307179586 * u2)


_philox_fn = KernelFunction(_philox)
_randint4x_fn = KernelFunction(_randint4x)
_to_uniform_fn = KernelFunction(_to_uniform)
_rand_fn = KernelFunction(_rand)
_randn_fn = KernelFunction(_randn)


def _offsets(sem, seed, offset, op):
    if isinstance(offset, bool) or not (isinstance(offset, int) or (
            hasattr(offset, "dtype") and offset.dtype in (ty.int32, ty.uint32))):
        raise sem.error(f"wl.{op}: offsets are int32 or uint32, not {offset!r}")
    if not isinstance(offset, int):
        return seed, offset
    return seed, sem.constant(offset, ty.int32)


def _seed(sem, seed, op):
    if isinstance(seed, bool) or not (isinstance(seed, int) or (
            hasattr(seed, "dtype") and seed.dtype.is_int and not seed.shape)):
        raise sem.error(f"wl.{op}: the seed is a scalar integer, not {seed!r}")
    return sem.constant(seed, ty.int64) if isinstance(seed, int) else seed


def _call(sem, fn, seed, offset, n_rounds, op):
    seed, offset = _offsets(sem, _seed(sem, seed, op), offset, op)
    return sem.inline(fn, [seed, offset, n_rounds], {})


@builtin(dtypes="uint32")
def randint4x(sem, seed, offset, n_rounds=N_ROUNDS_DEFAULT):
    """Four uint32 random numbers per element of `offset` (int32 counters)
    from Philox with `seed`."""
    return _call(sem, _randint4x_fn, seed, offset, n_rounds, "randint4x")


@builtin(dtypes="uint32")
def randint(sem, seed, offset, n_rounds=N_ROUNDS_DEFAULT):
    """One uint32 random number per element of `offset` (wl.randint4x's
    first)."""
    return _call(sem, _randint4x_fn, seed, offset, n_rounds, "randint")[0]


@builtin(dtypes="float32")
def rand(sem, seed, offset, n_rounds=N_ROUNDS_DEFAULT):
    """A float32 uniform in [0, 1) per element of `offset`."""
    return _call(sem, _rand_fn, seed, offset, n_rounds, "rand")


@builtin(dtypes="float32")
def randn(sem, seed, offset, n_rounds=N_ROUNDS_DEFAULT):
    """A float32 from the standard normal distribution per element of
    `offset` (Box-Muller of two uniforms)."""
    return _call(sem, _randn_fn, seed, offset, n_rounds, "randn")
