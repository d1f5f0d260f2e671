"""CUDA storage: device arrays (Numba's DeviceNDArray), their views, copies between
devices and the host, conversions between dtypes, pinned host memory.

The same functions as `_backends.cpu.storage`. A view is a new DeviceNDArray on the root
buffer's device memory (`gpu_data`) at a byte offset, with any non-negative strides (0
for broadcast dims); `arrays` holds that layer, the one that differs under the simulator.

dtypes: float16 is stored as float16 and computed in float32 (the op layer casts);
bfloat16 is stored in device arrays typed `ml_dtypes.bfloat16` (2-byte elements that
Numba kernels cannot type), so every kernel sees them as uint16 bit patterns: copies
convert through float32 with round-to-nearest-even on the bits (`kernels.loops`).
"""
import weakref

import numpy as np
from numba import cuda

from . import runtime
from .arrays import (
    BF16, UINT, broadcast_to, download, empty, flat, is_array, is_c, ptr, reinterpret, restride, track, upload,
)
from .elementwise import unary
from .kernels.loops import SIMULATOR, loops
from .launch import grid_stride, run_strided

__all__ = ["empty", "zeros", "as_strided", "broadcast_to", "offset_of", "is_contiguous", "data_ptr", "cuda_array_interface",
           "to_numpy", "from_numpy", "pinned_empty", "is_pinned", "fill_", "copy_", "astype", "flat", "contiguous", "adopt", "reinterpret_buffer"]

_F16, _F32, _BOOL = np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.bool_)


def as_strided(buf, shape, strides, offset):
    """A view of root buffer `buf` with element `strides` and element `offset`."""
    itemsize = buf.dtype.itemsize
    return restride(buf, shape, [s * itemsize for s in strides], offset * itemsize)


def offset_of(data, buf):
    """Element offset of view `data` inside storage buffer `buf`."""
    if data.size == 0:
        return 0
    return (ptr(data) - ptr(buf)) // buf.dtype.itemsize


def is_contiguous(data):
    """Whether the view is C-contiguous (strides of size-1 dims ignored, as in PyTorch)."""
    return is_c(data)


def data_ptr(data):
    """Device address of the first element."""
    return ptr(data)


def cuda_array_interface(data):
    """The CUDA Array Interface (version 2) dict describing device array `data`."""
    if data.dtype == BF16:
        raise TypeError("__cuda_array_interface__ has no type for bfloat16: convert it first")
    return {
        "shape": tuple(data.shape),
        "strides": None if is_c(data) else tuple(data.strides),
        "typestr": data.dtype.str,
        "data": (ptr(data) if data.size else 0, False),
        "version": 2,
    }


def to_numpy(data):
    """A host NumPy copy of `data` (waits for the work queued before it)."""
    if data.size == 0:
        return np.empty(data.shape, data.dtype)
    if not is_c(data):
        data = astype(data, data.dtype)
    return download(data)


def from_numpy(arr, device=None, non_blocking=False):
    """Device storage holding a copy of host array `arr` (contiguous).

    With non_blocking=True and `arr` in pinned memory (and C-contiguous) the copy is
    queued on the current stream and this returns at once, as in PyTorch; otherwise
    it returns when the copy is done.
    """
    if non_blocking and is_pinned(arr) and arr.flags.c_contiguous:
        return track(upload(arr, runtime.current_numba_stream()))
    return track(upload(np.array(arr, order="C", copy=True)))


# --- pinned host memory -------------------------------------------------------------------

_pinned = {}  # start address of a pinned host buffer -> (end address, weakref to it)


def pinned_empty(shape, dtype):
    """A page-locked host NumPy array (a plain one under the simulator, marked pinned)."""
    if SIMULATOR:
        arr = np.empty(shape, dtype)
    elif np.dtype(dtype) == BF16:  # Numba cannot type bfloat16: pin the bits
        arr = cuda.pinned_array(shape, np.uint16).view(BF16)
    else:
        arr = cuda.pinned_array(shape, dtype)
    start = arr.__array_interface__["data"][0]
    if arr.nbytes:
        _pinned[start] = (start + arr.nbytes,
                          weakref.ref(arr, lambda _, start=start: _pinned.pop(start, None)))
    return arr


def is_pinned(arr):
    """Whether host array `arr` lies in memory made by `pinned_empty` (views included)."""
    if not isinstance(arr, np.ndarray) or not arr.size or not _pinned:
        return False
    ptr = arr.__array_interface__["data"][0]
    return any(start <= ptr < end for start, (end, _) in list(_pinned.items()))


# --- copies and conversions -----------------------------------------------------------------


def zeros(shape, np_dtype):
    """A new C-contiguous array of `shape` and `np_dtype` filled with zeros."""
    return fill_(empty(shape, np_dtype), 0)


def fill_(dst, value):
    """Set every element of `dst` to `value`, converted as NumPy converts it."""
    if dst.size == 0:
        return dst
    host = np.empty((), dst.dtype)
    host.fill(value)
    uint = UINT.get(dst.dtype.itemsize)
    if uint is None:  # complex128: 16 bytes, no integer that wide: copy from a broadcast element
        unary("copy", broadcast_to(upload(host.reshape(1)), dst.shape), dst)
        return dst
    bits = host.view(uint)[()]
    mod = loops("fill", "copy")
    target = reinterpret(dst, uint)
    if is_c(target):
        grid_stride(mod.c, dst.size, bits, flat(target))
    else:
        run_strided(mod.s, (bits,), target)
    return dst


def _overlaps(a, b):
    """Whether the memory spans of views a and b intersect (and they are not the same view)."""
    if a.size == 0 or b.size == 0:
        return False
    pa, pb = ptr(a), ptr(b)
    if pa == pb and a.shape == b.shape and a.strides == b.strides:
        return False
    span_a = sum((n - 1) * s for n, s in zip(a.shape, a.strides)) + a.dtype.itemsize
    span_b = sum((n - 1) * s for n, s in zip(b.shape, b.strides)) + b.dtype.itemsize
    return pa < pb + span_b and pb < pa + span_a


def copy_(dst, src):
    """Copy `src` (device array broadcastable to dst, any dtype; host array; or a scalar) into dst."""
    if not is_array(src):
        if isinstance(src, np.ndarray) and src.ndim:
            src = from_numpy(src)
        else:
            return fill_(dst, src)
    if dst.size == 0:
        return dst
    if src.shape != dst.shape:
        src = broadcast_to(src, dst.shape)
    if _overlaps(dst, src):
        src = astype(src, src.dtype)  # a private copy: kernels read and write in any order
    _convert_into(dst, src)
    return dst


def _convert_into(dst, src):
    sd, dd = src.dtype, dst.dtype
    if sd.kind == "c" and dd.kind != "c":
        # Complex into real keeps the real part (the op layer warns): the real parts are
        # the complex elements' first halves, the same addresses read as the part's type.
        src = restride(src, src.shape, src.strides, dtype=np.dtype(sd.char.lower()))
        sd = src.dtype
    if sd == dd:
        uint = UINT.get(sd.itemsize)  # a copy moves bits: one kernel per item size
        if uint is None:  # complex128: 16 bytes, no integer that wide
            unary("copy", src, dst)
        else:
            unary("copy", reinterpret(src, uint), reinterpret(dst, uint))
    elif sd == BF16:
        wide = empty(src.shape, _F32)
        unary("bf16_bits_to_f32_bits", reinterpret(src, np.uint16), reinterpret(wide, np.uint32))
        _convert_into(dst, wide)
    elif dd == BF16:
        if sd != _F32:
            wide = empty(dst.shape, _F32)
            _convert_into(wide, src)
            src = wide
        unary("f32_bits_to_bf16_bits", reinterpret(src, np.uint32), reinterpret(dst, np.uint16))
    elif sd == _F16 and dd.kind in "biu":
        # NVVM rejects a direct half -> bool conversion, and Numba converts half to integers
        # rounding to nearest (cvt.rni, seen on an H100) where C and the CPU truncate: widen
        # to float32 first (exact), whose conversions truncate.
        wide = empty(src.shape, _F32)
        unary("copy", src, wide)
        _convert_into(dst, wide)
    elif sd.kind == "f" and dd.kind == "u" and dd.itemsize < 8:
        # PTX's float -> unsigned conversion saturates (-2.0 -> 0); PyTorch, NumPy and the
        # CPU wrap through a signed integer (-2.0 -> 254 in uint8): convert through int64.
        wide = empty(src.shape, np.dtype(np.int64))
        unary("copy", src, wide)
        unary("copy", wide, dst)
    else:
        unary("copy", src, dst)


def astype(data, np_dtype):
    """A contiguous copy of `data` converted to `np_dtype`."""
    out = empty(data.shape, np_dtype)
    if out.size:
        _convert_into(out, data)
    return out


def contiguous(data):
    """`data` if C-contiguous, else a C-contiguous copy."""
    return data if is_c(data) else astype(data, data.dtype)


def adopt(host, non_blocking=False):
    """Storage holding host array `host`: a device copy (queued on the current stream with
    `non_blocking` when `host` is pinned, as `from_numpy` does)."""
    return from_numpy(host, non_blocking=non_blocking)


def reinterpret_buffer(buf, np_dtype):
    """Storage buffer `buf` (1-d) read as `np_dtype` elements: complex64 as pairs of
    float32 and back (view_as_real, .real, view_as_complex). A trailing part too short
    for one element is left out."""
    np_dtype = np.dtype(np_dtype)
    n = buf.size * buf.dtype.itemsize // np_dtype.itemsize
    return restride(buf, (n,), (np_dtype.itemsize,), dtype=np_dtype)
