"""float32 -> bfloat16 and float32 <-> float16 conversions as Numba loops over the bits.

ml_dtypes' cast (what NumPy's ``astype``/``copyto`` call for bfloat16) runs at ~2 GB/s;
autocast casts every weight and every matmul result, so on the CPU that cast was a
quarter of a bfloat16 training step. The loop below is the same rounding (to nearest,
ties to even; NaN to the canonical quiet NaN with its sign, as ml_dtypes gives) at
memory speed. bfloat16 -> float32 needs no loop: NumPy's cast is already a shift at
memory speed.

NumPy's float16 casts are its scalar C routines (npy_floatbits_to_halfbits and back),
about half the speed of the loops here, which follow the same rules bit for bit: to
nearest, ties to even, subnormal halves, overflow to inf, -0 kept, and NaN payloads as
NumPy keeps them (the float32 payload's top 10 bits, 0x7c01 when those are all zero; a
half NaN's payload shifted back unquieted).

Arrays arrive as 1-d contiguous bit views: uint32 for float32, uint16 for bfloat16 and
float16. The bodies inline no function of another file, so Numba's on-disk cache (keyed
on this file) can never serve a stale kernel.
"""
import numba
import numpy as np
from numba import prange

from .twins import serial_and_parallel

__all__ = ["float32_to_bfloat16", "float32_to_float16", "float16_to_float32", "PARALLEL_THRESHOLD"]

PARALLEL_THRESHOLD = 1 << 20


def _float32_to_bfloat16_body(src, dst):
    for i in prange(src.shape[0]):
        u = src[i]
        if (u & 0x7FFFFFFF) > 0x7F800000:  # NaN
            dst[i] = numba.uint16(((u >> 16) & 0x8000) | 0x7FC0)
        else:  # round to nearest, ties to even; an overflow carries into the exponent (inf)
            dst[i] = numba.uint16((u + 0x7FFF + ((u >> 16) & 1)) >> 16)


def _float32_to_float16_body(src, dst):
    # Every case is computed and one selected, without branches, so that LLVM vectorises
    # the loop (~1.3x the branchy form here); int64 arithmetic throughout, as Numba types
    # uint32 mixed with int literals as float64.
    for i in prange(src.shape[0]):
        f = numba.int64(src[i])
        sign = (f >> 16) & 0x8000
        exp = f & 0x7F800000
        sig = f & 0x007FFFFF
        # A normal half: rebias the exponent, round half up unless a tie on an even last
        # bit; a carry into the exponent is correct (and reaches inf at the top).
        normal = ((exp - 0x38000000) >> 13) + ((sig + (0 if (sig & 0x3FFF) == 0x1000 else 0x1000)) >> 13)
        # A subnormal half: the implicit bit joins the significand, shifted 1-11 places more
        # than a normal's 13 (the shift is clamped to stay defined where not selected); ties
        # to even must also see the bits that shift dropped. Below 2**-25: a signed zero.
        full = (0x00800000 + sig) >> min(max(113 - (exp >> 23), 0), 31)
        full = full + (0 if ((full & 0x3FFF) == 0x1000 and (f & 0x7FF) == 0) else 0x1000)
        subnormal = (full >> 13) if exp >= 0x33000000 else 0
        # NaN keeps its payload's top bits (0x7c01 when they are all zero); too large: inf.
        nan = 0x7C00 + (sig >> 13)
        nan = nan + (1 if nan == 0x7C00 else 0)
        large = nan if (exp == 0x7F800000 and sig != 0) else 0x7C00
        h = large if exp >= 0x47800000 else (subnormal if exp <= 0x38000000 else normal)
        dst[i] = numba.uint16(sign | h)


def _float16_to_float32_body(src, dst):
    for i in prange(src.shape[0]):
        h = numba.int64(src[i])
        sign = (h & 0x8000) << 16
        exp = h & 0x7C00
        mant = h & 0x3FF
        if exp == 0x7C00:  # inf or NaN: the payload shifted up, not quieted
            f = 0x7F800000 | (mant << 13)
        elif exp == 0:  # zero or subnormal: mant * 2**-24 is exact in float32
            f = numba.int64(np.float32(np.float32(mant) * np.float32(5.9604644775390625e-08)).view(np.uint32))
        else:
            f = ((h & 0x7FFF) + 0x1C000) << 13  # rebias the exponent (15 -> 127)
        dst[i] = numba.uint32(sign | f)


_OPTIONS = dict(cache=True, nogil=True, error_model="numpy")
_KERNELS = {name: serial_and_parallel(body, **_OPTIONS)
            for name, body in (("bfloat16", _float32_to_bfloat16_body), ("to_float16", _float32_to_float16_body),
                               ("from_float16", _float16_to_float32_body))}


def _run(name, src_bits, dst_bits):
    serial, parallel = _KERNELS[name]
    (parallel if src_bits.shape[0] >= PARALLEL_THRESHOLD else serial)(src_bits, dst_bits)


def float32_to_bfloat16(src_bits, dst_bits):
    """Round the float32 values whose bits are `src_bits` (1-d uint32) into `dst_bits` (1-d uint16)."""
    _run("bfloat16", src_bits, dst_bits)


def float32_to_float16(src_bits, dst_bits):
    """Round the float32 values whose bits are `src_bits` (1-d uint32) into float16 bits `dst_bits`
    (1-d uint16), as NumPy's ``astype(float16)``."""
    _run("to_float16", src_bits, dst_bits)


def float16_to_float32(src_bits, dst_bits):
    """Widen the float16 values whose bits are `src_bits` (1-d uint16) into float32 bits `dst_bits`
    (1-d uint32), as NumPy's ``astype(float32)``."""
    _run("from_float16", src_bits, dst_bits)
