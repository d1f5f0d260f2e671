"""float32 -> bfloat16 rounding as a Numba loop over the bits.

ml_dtypes' cast (what NumPy's ``astype``/``copyto`` call for bfloat16) runs at ~2 GB/s;
autocast casts every weight and every matmul result, so on the CPU that cast was a
quarter of a bfloat16 training step. The loop below is the same rounding (to nearest,
ties to even; NaN to the canonical quiet NaN with its sign, as ml_dtypes gives) at
memory speed. The other direction needs no loop: NumPy's bfloat16 -> float32 cast is
already a shift at memory speed.

Arrays arrive as 1-d contiguous bit views: uint32 (the float32 source) and uint16 (the
bfloat16 destination). The bodies inline no function of another file, so Numba's on-disk
cache (keyed on this file) can never serve a stale kernel.
"""
import numba
from numba import njit, prange

__all__ = ["float32_to_bfloat16", "PARALLEL_THRESHOLD"]

PARALLEL_THRESHOLD = 1 << 20


def _float32_to_bfloat16_body(src, dst):
    for i in prange(src.shape[0]):
        u = src[i]
        if (u & 0x7FFFFFFF) > 0x7F800000:  # NaN
            dst[i] = numba.uint16(((u >> 16) & 0x8000) | 0x7FC0)
        else:  # round to nearest, ties to even; an overflow carries into the exponent (inf)
            dst[i] = numba.uint16((u + 0x7FFF + ((u >> 16) & 1)) >> 16)


_OPTIONS = dict(cache=True, nogil=True, error_model="numpy")
_serial = njit(**_OPTIONS)(_float32_to_bfloat16_body)
_parallel = njit(parallel=True, **_OPTIONS)(_float32_to_bfloat16_body)


def float32_to_bfloat16(src_bits, dst_bits):
    """Round the float32 values whose bits are `src_bits` (1-d uint32) into `dst_bits` (1-d uint16)."""
    (_parallel if src_bits.shape[0] >= PARALLEL_THRESHOLD else _serial)(src_bits, dst_bits)
