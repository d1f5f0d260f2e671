"""complex32 storage on the CPU: NumPy has no complex type of two float16s, so its
elements are a structured pair ``(real, imag)`` of float16s (4 bytes, PyTorch's layout).

Nothing computes in complex32: like float16, it converts to complex64 for kernels, and
these two functions are every conversion there is.
"""
import numpy as np

__all__ = ["COMPLEX32", "is_complex32", "to_complex64", "from_values"]

COMPLEX32 = np.dtype([("real", np.float16), ("imag", np.float16)])


def is_complex32(np_dtype):
    """Whether `np_dtype` is complex32's storage type."""
    return np.dtype(np_dtype) == COMPLEX32


def to_complex64(data):
    """complex32 array `data` as a new complex64 array."""
    out = np.empty(data.shape, np.complex64)
    out.real = data["real"]
    out.imag = data["imag"]
    return out


def from_values(src, out):
    """Store `src` (an array broadcastable to `out` of any dtype, or a scalar) into
    complex32 array `out`, rounding each part to float16."""
    src = np.asarray(src)
    if src.dtype == COMPLEX32:
        src = to_complex64(src)
    elif src.dtype.kind != "c":
        src = src.astype(np.float64).astype(np.complex128)  # bool/int/float8 etc. have no direct complex cast
    out["real"] = src.real
    out["imag"] = src.imag
    return out
