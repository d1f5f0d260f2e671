"""The CUDA backend: storage is a Numba CUDA device array, kernels are `numba.cuda.jit`.

The same interface as `_backends.cpu.storage` (see there), over `DeviceNDArray`s: a view is a new
DeviceNDArray on the root buffer's device memory (`gpu_data`) at a byte offset, with
any non-negative strides (0 for broadcast dims). Elementwise ops run like the CPU's:
same-shape contiguous operands take a flat 1-d kernel (a NumPy scalar operand is passed
by value), anything else has its dims merged where memory allows and runs one 4-d
strided kernel; more than 4 unmergeable dims loop over the leading ones on the host.

dtypes: float16 is stored as float16 and computed in float32 (the op layer casts);
bfloat16 is stored in device arrays typed `ml_dtypes.bfloat16` (2-byte elements that
Numba kernels cannot type), so every kernel sees them as uint16 bit patterns: copies
convert through float32 with round-to-nearest-even on the bits (`_backends.cuda.kernels.loops`).

Under Numba's simulator (NUMBA_ENABLE_CUDASIM=1) device arrays are NumPy arrays in a
wrapper (`_backends.cuda.arrays`), and kernels launch as one small block so that tests stay fast.
"""
import os
import sys
import weakref

import ml_dtypes
import numpy as np

from . import allocator as _cuda_alloc
from . import runtime

runtime.lazy_init()  # raises ember's "no CUDA" error before anything touches numba.cuda

from numba import cuda  # noqa: E402

from .kernels.loops import SIMULATOR, loops  # noqa: E402

__all__ = ["empty", "as_strided", "unary", "binary", "ternary", "copy_", "fill_", "astype",
           "broadcast_to", "matmul", "to_numpy", "from_numpy", "on_device"]

_MAX_DIMS = 4
_BLOCK = 256
_UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
_BF16 = np.dtype(ml_dtypes.bfloat16)
_F16, _F32, _BOOL = np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.bool_)

# --- device arrays and views: `_backends.cuda.arrays` (the one place that differs under the simulator)

from .arrays import _ARRAY, _alloc, _memory_of, _ptr, _restride, _upload  # noqa: E402

if SIMULATOR:
    from .arrays import _SimArray  # noqa: E402,F401 - tests wrap simulator arrays with it


def _is_array(x):
    return isinstance(x, _ARRAY)


def _is_c(arr):
    """C-contiguous with PyTorch's rule: strides of size-1 dims do not matter."""
    if arr.size == 0:
        return True
    expected = arr.dtype.itemsize
    for n, s in zip(reversed(arr.shape), reversed(arr.strides)):
        if n != 1:
            if s != expected:
                return False
            expected *= n
    return True


def _flat(arr):
    """The 1-d view of a C-contiguous array."""
    if arr.ndim == 1 and arr.strides[0] == arr.dtype.itemsize:
        return arr
    return _restride(arr, (arr.size,), (arr.dtype.itemsize,))


def _reinterpret(arr, dtype):
    """The same elements read as `dtype` (same itemsize), keeping shape and strides."""
    return _restride(arr, arr.shape, arr.strides, dtype=dtype)


# --- memory -----------------------------------------------------------------------------

# Device memory comes from ember's caching allocator (`_backends.cuda.allocator`): on a GPU through
# the Numba EMM plugin that ember_tensor.cuda installs, under the simulator directly.
# Without the plugin (EMBER_CUDA_ALLOCATOR=numba, or numba.cuda used before ember) the
# pool only counts ember's allocations: allocated == reserved, nothing is cached.

def _track(arr):
    nbytes = arr.size * arr.dtype.itemsize
    if nbytes and not SIMULATOR and not runtime.caching_allocator_installed():
        size = _cuda_alloc.round_size(nbytes)
        p = _cuda_alloc.pool(runtime.current_index())
        with p.lock:
            p.num_alloc += 1
            p.allocated += size
            p.reserved += size
            p.peak_allocated = max(p.peak_allocated, p.allocated)
            p.peak_reserved = max(p.peak_reserved, p.reserved)
        weakref.finalize(_memory_of(arr), _untrack, p, size)
    return arr


def _untrack(p, size):
    with p.lock:
        p.allocated -= size
        p.reserved -= size
        p.num_free += 1


def empty(shape, np_dtype):
    """Uninitialised contiguous device storage for `shape` on the current device."""
    return _track(_alloc(tuple(shape), np.dtype(np_dtype)))


def as_strided(buf, shape, strides, offset):
    """A view of root buffer `buf` with element `strides` and element `offset`."""
    itemsize = buf.dtype.itemsize
    return _restride(buf, shape, [s * itemsize for s in strides], offset * itemsize)


def broadcast_to(data, shape):
    """A stride-0 view of `data` expanded to `shape` (no copy)."""
    shape = tuple(shape)
    lead = len(shape) - data.ndim
    strides = [0] * lead + [s if n == m else 0
                            for s, n, m in zip(data.strides, data.shape, shape[lead:])]
    return _restride(data, shape, strides)


def offset_of(data, buf):
    """Element offset of view `data` inside storage buffer `buf`."""
    if data.size == 0:
        return 0
    return (_ptr(data) - _ptr(buf)) // buf.dtype.itemsize


def is_contiguous(data):
    """Whether the view is C-contiguous (strides of size-1 dims ignored, as in PyTorch)."""
    return _is_c(data)


def data_ptr(data):
    """Device address of the first element."""
    return _ptr(data)


def cuda_array_interface(data):
    """The CUDA Array Interface (version 2) dict describing device array `data`."""
    if data.dtype == _BF16:
        raise TypeError("__cuda_array_interface__ has no type for bfloat16: convert it first")
    return {
        "shape": tuple(data.shape),
        "strides": None if _is_c(data) else tuple(data.strides),
        "typestr": data.dtype.str,
        "data": (_ptr(data) if data.size else 0, False),
        "version": 2,
    }


def to_numpy(data):
    """A host NumPy copy of `data` (waits for the work queued before it)."""
    if data.size == 0:
        return np.empty(data.shape, data.dtype)
    if not _is_c(data):
        data = astype(data, data.dtype)
    return data.copy_to_host()


def from_numpy(arr, device=None, non_blocking=False):
    """Device storage holding a copy of host array `arr` (contiguous).

    With non_blocking=True and `arr` in pinned memory (and C-contiguous) the copy is
    queued on the current stream and this returns at once, as in PyTorch; otherwise
    it returns when the copy is done.
    """
    if non_blocking and is_pinned(arr) and arr.flags.c_contiguous:
        return _track(_upload(arr, runtime.current_numba_stream()))
    return _track(_upload(np.array(arr, order="C", copy=True)))


# --- pinned host memory -------------------------------------------------------------------

_pinned = {}  # start address of a pinned host buffer -> (end address, weakref to it)


def pinned_empty(shape, dtype):
    """A page-locked host NumPy array (a plain one under the simulator, marked pinned)."""
    if SIMULATOR:
        arr = np.empty(shape, dtype)
    elif np.dtype(dtype) == _BF16:  # Numba cannot type bfloat16: pin the bits
        arr = cuda.pinned_array(shape, np.uint16).view(_BF16)
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


# --- launching --------------------------------------------------------------------------

_max_blocks = None


def _launch(kernel, n, *args):
    """Run grid-stride `kernel` over n elements on the current stream."""
    if SIMULATOR:
        # The simulator runs a Python thread per CUDA thread: one small block is fastest,
        # and with fewer threads than elements the grid-stride loop is still exercised.
        configured(kernel, 1, min(n, 4), 0)(*args)
        return
    launch_grid(kernel, min((n + _BLOCK - 1) // _BLOCK, max_blocks()), _BLOCK, *args)


def max_blocks():
    """Blocks worth launching for a grid-stride kernel: 32 per multiprocessor (a GPU)."""
    global _max_blocks
    if _max_blocks is None:
        _max_blocks = 32 * cuda.get_current_device().MULTIPROCESSOR_COUNT
    return _max_blocks


def launch_grid(kernel, grid, block, *args, shared=0):
    """Run `kernel[grid, block]` with `shared` bytes of dynamic shared memory per block
    on the current stream (a GPU); with CUDA_LAUNCH_BLOCKING=1 wait for it to finish."""
    configured(kernel, grid, block, runtime.current_numba_stream(), shared)(*args)
    if LAUNCH_BLOCKING:
        cuda.synchronize()


_launchers = {}


def configured(kernel, grid, block, stream, shared=0):
    """`kernel[grid, block, stream, shared]`, cached: configuring a launch costs microseconds.

    `shared` is the dynamic shared memory per block, in bytes. The cache holds the stream
    (so its id, part of the key, cannot be reused) and is cleared when it grows past a
    few thousand entries. Under the simulator nothing is cached: there `kernel[grid,
    block]` sets the launch shape on the kernel object itself and returns it, so two
    cached shapes of one kernel would be the same object.
    """
    if SIMULATOR:
        return kernel[grid, block, stream, shared]
    key = (kernel, grid, block, id(stream) if stream else 0, shared)
    launcher = _launchers.get(key)
    if launcher is None:
        if len(_launchers) > 4096:
            _launchers.clear()
        launcher = _launchers[key] = kernel[grid, block, stream, shared]
    return launcher


# CUDA_LAUNCH_BLOCKING=1 (read at first CUDA use): every launch waits for its kernel, so
# a failing kernel is reported at the op that launched it. The simulator always is.
LAUNCH_BLOCKING = os.environ.get("CUDA_LAUNCH_BLOCKING", "0") not in ("", "0")


def sim_launch_synced(kernel, grid, block, *args, shared=0):
    """Launch a kernel that calls syncthreads() on the simulator, quickly.

    The simulator's syncthreads() hands the GIL between Python threads that poll: a short
    switch interval while the kernel runs makes that about 10x faster.
    """
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-4)
    try:
        kernel[grid, block, 0, shared](*args)
    finally:
        sys.setswitchinterval(interval)


def _merged(operands, out):
    """4-d views of `operands` (arrays; other values pass through) and `out`, dims merged.

    Returns (views, extra): extra > 0 when more than 4 dims could not be merged; the
    views then have 4 + extra dims and the caller loops over the leading ones.
    """
    shape = list(out.shape)
    arrays = [x for x in operands if _is_array(x)] + [out]
    arrays = [x if x.shape == out.shape else broadcast_to(x, out.shape) for x in arrays]
    strides = [list(x.strides) for x in arrays]
    keep = [i for i, n in enumerate(shape) if n != 1]
    shape = [shape[i] for i in keep]
    strides = [[st[i] for i in keep] for st in strides]
    i = len(shape) - 2
    while i >= 0:
        if all(st[i] == st[i + 1] * shape[i + 1] for st in strides):
            shape[i] *= shape[i + 1]
            for st in strides:
                st[i] = st[i + 1]
                del st[i + 1]
            del shape[i + 1]
        i -= 1
    pad = _MAX_DIMS - len(shape)
    if pad > 0:
        shape = [1] * pad + shape
        strides = [[0] * pad + st for st in strides]
    views = iter([_restride(x, shape, st) for x, st in zip(arrays, strides)])
    result = [next(views) if _is_array(x) else x for x in operands]
    result.append(next(views))
    return result, len(shape) - _MAX_DIMS


def _run_strided(kernel, operands, out):
    views, extra = _merged(operands, out)
    if extra <= 0:
        _launch(kernel, out.size, *views)
        return
    # Rare: more than 4 unmergeable dims. One launch per index of the leading dims.
    lead = views[-1].shape[:extra]
    for idx in np.ndindex(*lead):
        sub = []
        for v in views:
            if not _is_array(v):
                sub.append(v)
                continue
            offset = sum(i * s for i, s in zip(idx, v.strides[:extra]))
            sub.append(_restride(v, v.shape[extra:], v.strides[extra:], offset))
        _launch(kernel, sub[-1].size, *sub)


def _same_c(x, out):
    return _is_array(x) and x.shape == out.shape and _is_c(x)


# --- elementwise --------------------------------------------------------------------------


def unary(name, a, out):
    """out[...] = name(a[...]); `a` already broadcast to out's shape and compute dtype."""
    if out.size == 0:
        return out
    mod = loops("unary", name)
    if _is_c(out) and _same_c(a, out):
        _launch(mod.c, out.size, _flat(a), _flat(out))
    else:
        _run_strided(mod.s, (a,), out)
    return out


def binary(name, a, b, out):
    """out[...] = name(a[...], b[...]); a, b: device arrays broadcastable to out, or NumPy scalars."""
    if out.size == 0:
        return out
    mod = loops("binary", name)
    a_arr, b_arr = _is_array(a), _is_array(b)
    if not (a_arr or b_arr):
        a, a_arr = _scalar_array(a), True
    if _is_c(out):
        a_c, b_c = _same_c(a, out), _same_c(b, out)
        if a_c and b_c:
            _launch(mod.cc, out.size, _flat(a), _flat(b), _flat(out))
            return out
        if a_c and not b_arr:
            _launch(mod.cv, out.size, _flat(a), b, _flat(out))
            return out
        if b_c and not a_arr:
            _launch(mod.vc, out.size, a, _flat(b), _flat(out))
            return out
    kernel = mod.ss if (a_arr and b_arr) else (mod.sv if a_arr else mod.vs)
    _run_strided(kernel, (a, b), out)
    return out


def ternary(name, a, b, c, out):
    """out[...] = name(a[...], b[...], c[...]) for operands broadcastable to out."""
    if out.size == 0:
        return out
    mod = loops("ternary", name)
    ops = tuple(x if _is_array(x) else _scalar_array(x) for x in (a, b, c))
    if _is_c(out) and all(_same_c(x, out) for x in ops):
        _launch(mod.ccc, out.size, *(_flat(x) for x in ops), _flat(out))
    else:
        _run_strided(mod.sss, ops, out)
    return out


def _scalar_array(value):
    arr = empty((), np.asarray(value).dtype)
    fill_(arr, value)
    return arr


def unary_fresh(name, a):
    """Fast path: a new array = name(a) for a C-contiguous array, else None."""
    if not _is_c(a):
        return None
    return unary(name, a, empty(a.shape, a.dtype))


def binary_fresh(name, a, b):
    """Fast path: a new array = name(a, b) for same-shape C-contiguous arrays, else None."""
    if a.shape != b.shape or not (_is_c(a) and _is_c(b)):
        return None
    return binary(name, a, b, empty(a.shape, a.dtype))


def binary_scalar_fresh(name, a, scalar, tensor_first):
    """Fast path: name(a, scalar) (or name(scalar, a)) into a new array, or None."""
    if not _is_c(a):
        return None
    out = empty(a.shape, a.dtype)
    return binary(name, a, scalar, out) if tensor_first else binary(name, scalar, a, out)


# --- copies and conversions -----------------------------------------------------------------


def fill_(dst, value):
    """Set every element of `dst` to `value`, converted as NumPy converts it."""
    if dst.size == 0:
        return dst
    host = np.empty((), dst.dtype)
    host.fill(value)
    uint = _UINT[dst.dtype.itemsize]
    bits = host.view(uint)[()]
    mod = loops("fill", "copy")
    target = _reinterpret(dst, uint)
    if _is_c(target):
        _launch(mod.c, dst.size, bits, _flat(target))
    else:
        _run_strided(mod.s, (bits,), target)
    return dst


def _overlaps(a, b):
    """Whether the memory spans of views a and b intersect (and they are not the same view)."""
    if a.size == 0 or b.size == 0:
        return False
    pa, pb = _ptr(a), _ptr(b)
    if pa == pb and a.shape == b.shape and a.strides == b.strides:
        return False
    span_a = sum((n - 1) * s for n, s in zip(a.shape, a.strides)) + a.dtype.itemsize
    span_b = sum((n - 1) * s for n, s in zip(b.shape, b.strides)) + b.dtype.itemsize
    return pa < pb + span_b and pb < pa + span_a


def copy_(dst, src):
    """Copy `src` (device array broadcastable to dst, any dtype; host array; or a scalar) into dst."""
    if not _is_array(src):
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
    if sd == dd:
        uint = _UINT[sd.itemsize]  # a copy moves bits: one kernel per item size
        unary("copy", _reinterpret(src, uint), _reinterpret(dst, uint))
    elif sd == _BF16:
        wide = empty(src.shape, _F32)
        unary("bf16_bits_to_f32_bits", _reinterpret(src, np.uint16), wide.view(np.uint32))
        _convert_into(dst, wide)
    elif dd == _BF16:
        if sd != _F32:
            wide = empty(dst.shape, _F32)
            _convert_into(wide, src)
            src = wide
        unary("f32_bits_to_bf16_bits", _reinterpret(src, np.uint32), _reinterpret(dst, np.uint16))
    elif sd == _F16 and dd == _BOOL:  # NVVM rejects a direct half -> bool conversion
        wide = empty(src.shape, _F32)
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


# --- more than one GPU ----------------------------------------------------------------------


class _OnDevice:
    """This backend with each call run on GPU `index` (its context made current)."""

    def __init__(self, index):
        self._index = index

    def __getattr__(self, name):
        fn = globals()[name]
        if not callable(fn):
            return fn
        index = self._index

        def on_device(*args, **kwargs):
            with runtime.device_context(index):
                return fn(*args, **kwargs)
        on_device.__name__ = name
        setattr(self, name, on_device)
        return on_device


_bound = {}


def on_device(index):
    """The backend for ops on cuda:`index`: this module itself when there is one GPU."""
    backend = _bound.get(index)
    if backend is None:
        count = runtime.device_count()
        if not 0 <= index < count:
            raise RuntimeError("CUDA error: invalid device ordinal")
        backend = _bound[index] = _OnDevice(index) if count > 1 else sys.modules[__name__]
    return backend


from .matmul import matmul  # noqa: E402,F401 - the matrix product
from .reduction import *  # noqa: E402,F401,F403 - reductions: reduce, arg_reduce, var_mean, median
