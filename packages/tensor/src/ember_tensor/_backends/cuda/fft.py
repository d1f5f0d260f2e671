"""Discrete Fourier transforms of CUDA device arrays: cuFFT, or the host without it.

The same functions as `_backends.cpu.fft`. With cuFFT (`cufft.available()`: a GPU and
nvmath-python's bindings) each transform runs on the device: the operand is copied
C-contiguous with the transformed dims last (cuFFT's basic layout), transformed by
batched plans of at most three dims each (a transform over more dims runs as several,
complex-to-complex over the leading ones), scaled by the normalization in one
elementwise pass, and returned as a view in the operand's dim order. Without cuFFT
(no nvmath-python, complex32, the simulator) the operand goes to the host, NumPy's
pocketfft transforms it there (the CPU backend) and the result comes back: correct, and
as slow as two transfers make it.

`stft` frames, pads and windows the signals on the device (`kernels.stft`) and
transforms all frames in one batched real-to-complex plan.
"""
import math

import numpy as np

from ..cpu import fft as host
from . import cufft, storage
from .arrays import empty, restride
from .elementwise import binary
from .launch import grid_stride

__all__ = ["c2c", "r2c", "c2r", "stft"]

_MAX_RANK = 3  # cuFFT plans transform at most three dims


def _scale_factor(normalization, points):
    """The factor PyTorch's normalization code asks for over `points` samples (0: none,
    1: 1/sqrt(n), 2: 1/n)."""
    return (1.0, 1.0 / math.sqrt(points), 1.0 / points)[normalization]


def _scaled(out, normalization, points):
    if normalization and out.size:
        binary("mul", out, out.dtype.type(_scale_factor(normalization, points)), out)
    return out


def _dims_last(a, dims, copy=False, scale=1.0):
    """A C-contiguous device array of `a` with `dims` moved to the end (in their order),
    and the permutation that did it. A copy only where the layout (or `copy`) asks; a
    copy times `scale` when that is not 1 (one pass: the transforms are linear)."""
    rest = [d for d in range(a.ndim) if d not in dims]
    order = rest + list(dims)
    view = restride(a, [a.shape[d] for d in order], [a.strides[d] for d in order])
    if scale != 1.0:
        return binary("mul", view, view.dtype.type(scale), empty(view.shape, view.dtype)), order
    contiguous = storage.astype(view, view.dtype) if copy else storage.contiguous(view)
    return contiguous, order


def _in_order(out, order):
    """The view of `out` (laid out in `order`'s dims) in the original dim order."""
    inverse = np.argsort(order)
    return restride(out, [out.shape[i] for i in inverse], [out.strides[i] for i in inverse])


def _transform(kind, x, n, forward=True):
    """The cuFFT transform `kind` of contiguous `x` over its trailing len(n) dims (signal
    shape `n`, the real side's) into a new contiguous array."""
    lead = x.shape[:x.ndim - len(n)]
    if kind == "c2c":
        out = empty(x.shape, x.dtype)
    elif kind == "r2c":
        out = empty(lead + tuple(n[:-1]) + (n[-1] // 2 + 1,), host.COMPLEX_OF[x.dtype])
    else:
        out = empty(lead + tuple(n), host.REAL_OF[x.dtype])
    if not cufft.execute(kind, x, out, n, forward):
        raise RuntimeError(f"cuFFT could not run a {kind} transform of {x.dtype} over {tuple(n)}")
    return out


def _device_c2c(a, dims, forward):
    """The unscaled complex transform of `a` over `dims`, in groups of at most three dims."""
    x = a
    for first in range(0, len(dims), _MAX_RANK):
        group = dims[first:first + _MAX_RANK]
        moved, order = _dims_last(x, group)
        x = _in_order(_transform("c2c", moved, moved.shape[-len(group):], forward), order)
    return x


def c2c(a, dims, normalization, forward):
    """Complex-to-complex transform over `dims` (see `_backends.cpu.fft.c2c`)."""
    if not (cufft.available() and cufft.handles("c2c", a.dtype)) or a.size == 0 or not dims:
        return storage.adopt(host.c2c(storage.to_numpy(a), dims, normalization, forward))
    out = _device_c2c(a, list(dims), forward)
    points = int(np.prod([a.shape[d] for d in dims]))
    return _scaled(storage.contiguous(out), normalization, points)


def r2c(a, dims, normalization, onesided):
    """Real-to-complex transform over `dims` (see `_backends.cpu.fft.r2c`)."""
    if not (cufft.available() and cufft.handles("r2c", a.dtype)) or a.size == 0:
        return storage.adopt(host.r2c(storage.to_numpy(a), dims, normalization, onesided))
    if not onesided:  # the whole spectrum (fft of a real signal): the complex transform of it
        return c2c(storage.astype(a, host.COMPLEX_OF[a.dtype]), dims, normalization, True)
    dims = list(dims)
    real_dims, complex_dims = dims[-_MAX_RANK:], dims[:-_MAX_RANK]
    moved, order = _dims_last(a, real_dims)
    n = moved.shape[-len(real_dims):]
    half = _in_order(_transform("r2c", moved, n), order)
    if complex_dims:
        half = _device_c2c(half, complex_dims, True)
    points = int(np.prod([a.shape[d] for d in dims]))
    return _scaled(storage.contiguous(half), normalization, points)


def _hermitian_input(a, last, last_dim_size):
    """`a` with `last_dim_size` // 2 + 1 points along dim `last`: trimmed, or zero-padded."""
    kept = last_dim_size // 2 + 1
    if a.shape[last] == kept:
        return a
    shape = list(a.shape)
    shape[last] = kept
    if a.shape[last] > kept:
        return restride(a, shape, a.strides)
    padded = storage.zeros(shape, a.dtype)
    storage.copy_(restride(padded, a.shape, padded.strides), a)
    return padded


def c2r(a, dims, normalization, last_dim_size):
    """Complex-to-real inverse transform over `dims` (see `_backends.cpu.fft.c2r`)."""
    if not (cufft.available() and cufft.handles("c2r", a.dtype)) or a.size == 0 or last_dim_size < 1:
        return storage.adopt(host.c2r(storage.to_numpy(a), dims, normalization, last_dim_size))
    dims = list(dims)
    x = _hermitian_input(a, dims[-1], last_dim_size)
    real_dims, complex_dims = dims[-_MAX_RANK:], dims[:-_MAX_RANK]
    if complex_dims:
        x = _device_c2c(x, complex_dims, False)
    points = int(np.prod([a.shape[d] for d in dims[:-1]])) * last_dim_size
    # cuFFT overwrites a c2r input: the copy it gets is scaled on the way.
    moved, order = _dims_last(x, real_dims, copy=True, scale=_scale_factor(normalization, points))
    n = tuple(moved.shape[-len(real_dims):-1]) + (last_dim_size,)
    return storage.contiguous(_in_order(_transform("c2r", moved, n), order))


def stft(signal, window, n_fft, hop_length, win_length, offset, pad_mode, frames, normalized):
    """The onesided short-time transform of the rows of `signal` (see `_backends.cpu.fft.stft`)."""
    if not (cufft.available() and cufft.handles("r2c", signal.dtype)):
        host_window = None if window is None else storage.to_numpy(window)
        return storage.adopt(host.stft(storage.to_numpy(signal), host_window, n_fft, hop_length, win_length, offset,
                                       pad_mode, frames, normalized))
    from .kernels import stft as K
    rows = signal if signal.ndim == 2 else restride(signal, (1,) + tuple(signal.shape), (0,) + tuple(signal.strides))
    rows = storage.contiguous(rows)
    if window is None:
        window = empty((win_length,), signal.dtype)
        storage.fill_(window, 1.0)
    batch = rows.shape[0]
    framed = empty((batch * frames, n_fft), signal.dtype)
    scale = signal.dtype.type(1 / math.sqrt(n_fft) if normalized else 1.0)
    grid_stride(K.frame_signals, framed.size, rows, storage.contiguous(window), (n_fft - win_length) // 2, scale,
                hop_length, offset, host.PAD_MODES[pad_mode], framed)
    spectra = _transform("r2c", framed, (n_fft,))  # (batch * frames, bins)
    bins = n_fft // 2 + 1
    item = spectra.dtype.itemsize
    # (batch, frames, bins) read as (batch, bins, frames), then laid out so.
    transposed = restride(spectra, (batch, bins, frames), (frames * bins * item, item, bins * item))
    out = storage.contiguous(transposed)
    return out if signal.ndim == 2 else restride(out, (bins, frames), out.strides[1:])
