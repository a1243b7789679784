"""Float formats numpy lacks (bfloat16, float8e4nv, float8e5) as raw bits,
converted the way the compiler converts them: from float32, rounding to
nearest even; the float8 formats saturate to their largest finite value
(as PTX's cvt.rn.satfinite does) and keep NaN. Buffers of these dtypes
hold the bits (weft.Buffer.copy_from and to_numpy convert), and tests
compute their expected values with the same functions."""
import numpy as np

from . import _types as ty

# Formats numpy has no dtype for: (storage dtype, exponent bits, mantissa
# bits, largest finite value, NaN bits, whether it has infinities).
_FORMATS = {
    "bf16": (np.uint16, 8, 7, None, None, True),
    "fp8e4nv": (np.uint8, 4, 3, 448.0, 0x7F, False),
    "fp8e5": (np.uint8, 5, 2, 57344.0, 0x7F, True),
}


def is_raw(dtype):
    """Whether buffers of `dtype` hold raw bits for numpy (it has no such
    dtype)."""
    return dtype.name in _FORMATS


def storage(dtype):
    """The numpy dtype of `dtype`'s raw bits (uint16 for bfloat16, uint8
    for the float8 formats)."""
    return np.dtype(_FORMATS[dtype.name][0])


def to_bits(values, dtype):
    """Float values (anything numpy converts) as the bits of `dtype`."""
    shape = np.shape(values)
    # At least 1-D: numpy turns 0-d results into scalars, whose shifts by a
    # Python int promote uint64 to float64.
    with np.errstate(over="ignore"):  # past float32's range: inf, then saturated
        f32 = np.atleast_1d(np.asarray(values, dtype=np.float64)).astype(np.float32)
    return _encode(f32, dtype).reshape(shape)


def _encode(f32, dtype):
    u = f32.view(np.uint32).astype(np.uint64)
    if dtype is ty.bfloat16:
        nan = np.isnan(f32)
        bits = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
        return np.where(nan, np.uint16(0x7FC0) | ((u >> 16) & 0x8000).astype(np.uint16), bits)
    _, ebits, mbits, largest, nan_bits, _ = _FORMATS[dtype.name]
    sign = ((u >> 31) << 7).astype(np.uint8)
    # Anything at or past the largest finite value saturates to it (nan is
    # set apart below).
    mag = np.minimum(np.abs(np.nan_to_num(f32.astype(np.float64))), 2 * largest)
    bias = (1 << (ebits - 1)) - 1
    # Round |x| to a multiple of its binade's spacing (subnormals: of the
    # smallest one), ties to even, which np.rint does.
    exponent = np.floor(np.log2(np.where(mag > 0, mag, 1.0)))
    exponent = np.maximum(exponent, 1 - bias)
    spacing = np.exp2(exponent - mbits)
    rounded = np.rint(mag / spacing) * spacing
    rounded = np.minimum(rounded, largest)  # satfinite (infinities too)
    # Encode the rounded magnitude.
    e = np.floor(np.log2(np.where(rounded > 0, rounded, 1.0)))
    normal = (rounded >= 2.0 ** (1 - bias))
    field = np.where(normal, e + bias, 0)
    mant = np.where(normal, rounded / np.exp2(e) - 1.0, rounded / 2.0 ** (1 - bias))
    code = (field.astype(np.int64) << mbits) | np.rint(mant * (1 << mbits)).astype(np.int64)
    code = np.where(rounded == 0, 0, code).astype(np.uint8) | sign
    return np.where(np.isnan(f32), np.uint8(nan_bits) | sign, code).astype(np.uint8)


def from_bits(bits, dtype):
    """The float32 values of `dtype`'s bits (exact)."""
    shape = np.shape(bits)
    return _decode(np.atleast_1d(np.asarray(bits)), dtype).reshape(shape)


def _decode(bits, dtype):
    if dtype is ty.bfloat16:
        return (bits.astype(np.uint32) << 16).view(np.float32)
    _, ebits, mbits, _, nan_bits, has_inf = _FORMATS[dtype.name]
    b = bits.astype(np.int64)
    sign = np.where(b & 0x80, -1.0, 1.0)
    field = (b >> mbits) & ((1 << ebits) - 1)
    mant = b & ((1 << mbits) - 1)
    bias = (1 << (ebits - 1)) - 1
    value = np.where(field == 0, mant / (1 << mbits) * 2.0 ** (1 - bias),
                     (1 + mant / (1 << mbits)) * np.exp2(field - bias))
    top = field == (1 << ebits) - 1
    if has_inf:  # e5m2: IEEE-like, all-ones exponent is inf or NaN
        value = np.where(top, np.where(mant == 0, np.inf, np.nan), value)
    else:  # e4m3fn: only the all-ones pattern is NaN
        value = np.where((b & 0x7F) == nan_bits, np.nan, value)
    return (sign * value).astype(np.float32)
