"""CPU storage: NumPy arrays, their views, copies and conversions.

A tensor's storage on the CPU is a 1-d NumPy buffer; its data is a strided view of it.
"""
import ml_dtypes
import numpy as np

from ..lazy import lazy
from . import complex32

half_kernels = lazy("cpu.kernels.half")  # Numba loads on first use

__all__ = ["empty", "zeros", "as_strided", "offset_of", "is_contiguous", "data_ptr", "to_numpy", "from_numpy", "copy_",
           "fill_", "astype", "broadcast_to", "flat", "contiguous", "adopt", "reinterpret_buffer"]


def empty(shape, np_dtype):
    """Uninitialised contiguous storage for `shape`."""
    return np.empty(shape, np_dtype)


def zeros(shape, np_dtype):
    """A new C-contiguous array of `shape` and `np_dtype` filled with zeros."""
    return np.zeros(shape, np_dtype)


def as_strided(buf, shape, strides, offset):
    """A view of 1-d contiguous buffer `buf` with element `strides` and `offset`."""
    itemsize = buf.itemsize
    if 0 in shape:  # reads nothing; NumPy refuses any offset into an empty buffer
        offset = 0
    return np.ndarray(shape, buf.dtype, buffer=buf, offset=offset * itemsize,
                      strides=tuple(s * itemsize for s in strides))


def offset_of(data, buf):
    """Element offset of view `data` inside storage buffer `buf`."""
    return (data.__array_interface__["data"][0] - buf.__array_interface__["data"][0]) // buf.itemsize


def is_contiguous(data):
    """Whether the view is C-contiguous (PyTorch ignores strides of size-1 dims, NumPy too)."""
    return data.flags.c_contiguous


def data_ptr(data):
    """Address of the first element."""
    return data.__array_interface__["data"][0]


def to_numpy(data):
    """The host NumPy array for `data` (the same array on the CPU)."""
    return data


def from_numpy(arr, device=None, non_blocking=False):
    """Backend storage holding a copy of host array `arr` (contiguous); `non_blocking`
    means nothing on the CPU, where the copy is done when this returns."""
    return np.array(arr, order="C", copy=True)


def copy_(dst, src):
    """Copy `src` (array broadcastable to dst, any dtype, or a host scalar) into `dst`."""
    if dst.dtype == complex32.COMPLEX32:
        complex32.from_values(src, dst)
    elif isinstance(src, np.ndarray) and src.dtype == complex32.COMPLEX32:
        np.copyto(dst, complex32.to_complex64(src), casting="unsafe")
    elif not _converted_by_loop(dst, src):
        np.copyto(dst, _real_part_for(dst.dtype, src), casting="unsafe")
    return dst


def fill_(dst, value):
    """Set every element of `dst` to `value`."""
    if dst.dtype == complex32.COMPLEX32:
        return complex32.from_values(value, dst)
    dst.fill(value)
    return dst


def astype(data, np_dtype):
    """A copy of `data` converted to `np_dtype`."""
    if np.dtype(np_dtype) == complex32.COMPLEX32:
        return complex32.from_values(data, np.empty(data.shape, complex32.COMPLEX32))
    if data.dtype == complex32.COMPLEX32:
        data = complex32.to_complex64(data)
    data = _real_part_for(np_dtype, data)
    np_dtype = np.dtype(np_dtype)
    if (data.dtype, np_dtype) in _LOOPS and data.size >= _LOOP_MIN:
        out = np.empty(data.shape, np_dtype)
        if _converted_by_loop(out, data):
            return out
    return data.astype(np_dtype)


# float32 -> bfloat16 and float32 <-> float16 through ember's loops (kernels/half.py)
# rather than ml_dtypes' and NumPy's casts: 2-3x faster, bit for bit the same; below this
# size the call costs more than it saves.
_FLOAT32, _BFLOAT16, _FLOAT16 = np.dtype(np.float32), np.dtype(ml_dtypes.bfloat16), np.dtype(np.float16)
_LOOP_MIN = 16384
# (source dtype, destination dtype) -> (kernel name, source bits, destination bits)
_LOOPS = {(_FLOAT32, _BFLOAT16): ("float32_to_bfloat16", np.uint32, np.uint16),
          (_FLOAT32, _FLOAT16): ("float32_to_float16", np.uint32, np.uint16),
          (_FLOAT16, _FLOAT32): ("float16_to_float32", np.uint16, np.uint32)}


def _converted_by_loop(dst, src):
    """Convert `src` into `dst` with ember's loop when their dtypes have one and both are
    C-contiguous arrays of one shape, large enough; False (nothing done) otherwise."""
    if not isinstance(src, np.ndarray):
        return False
    loop = _LOOPS.get((src.dtype, dst.dtype))
    if (loop is None or src.size < _LOOP_MIN or src.shape != dst.shape
            or not (src.flags.c_contiguous and dst.flags.c_contiguous)):
        return False
    name, src_bits, dst_bits = loop
    getattr(half_kernels, name)(src.reshape(-1).view(src_bits), dst.reshape(-1).view(dst_bits))
    return True


def _real_part_for(np_dtype, src):
    """`src`'s real part when complex `src` goes into a real `np_dtype` (the op layer
    warns as PyTorch does; NumPy's own ComplexWarning would be a second, different one)."""
    if np.dtype(np_dtype).kind != "c" and getattr(src, "dtype", None) is not None and src.dtype.kind == "c":
        return src.real
    return src


def broadcast_to(data, shape):
    """A writeable-typed stride-0 view of `data` expanded to `shape` (no copy)."""
    ndim = len(shape)
    strides = [0] * (ndim - data.ndim) + [
        s if n == m else 0 for s, n, m in zip(data.strides, data.shape, shape[ndim - data.ndim:])]
    if data.flags.c_contiguous:
        # NumPy's constructor over the array's own memory: 2.4 us, against 9 us for
        # `as_strided` (which builds an __array_interface__ object), paid by every
        # broadcast operand of every op. (A strided array exports no buffer.)
        return np.ndarray(shape, data.dtype, buffer=data, strides=tuple(strides))
    return np.lib.stride_tricks.as_strided(data, shape, strides)


def flat(arr):
    """The 1-d view of a C-contiguous array."""
    return arr.reshape(-1)


def contiguous(data):
    """`data` if C-contiguous, else a C-contiguous copy."""
    return data if data.flags.c_contiguous else np.ascontiguousarray(data)


def adopt(host, non_blocking=False):
    """Storage holding host array `host`: the array itself (CPU storage is host memory)."""
    return host


def reinterpret_buffer(buf, np_dtype):
    """Storage buffer `buf` (1-d) read as `np_dtype` elements: complex64 as pairs of
    float32 and back (view_as_real, .real, view_as_complex). A trailing part too short
    for one element is left out."""
    np_dtype = np.dtype(np_dtype)
    usable = buf.size * buf.itemsize // np_dtype.itemsize * np_dtype.itemsize // buf.itemsize
    return buf.reshape(-1)[:usable].view(np_dtype)  # (a 0-d tensor's buffer may be 0-d)
