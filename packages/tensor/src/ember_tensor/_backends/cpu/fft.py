"""Discrete Fourier transforms on the CPU: NumPy's pocketfft (`numpy.fft`).

The three transforms PyTorch builds every FFT from (ATen's `_fft_c2c`, `_fft_r2c`,
`_fft_c2r`), over any set of dims of a strided array, with PyTorch's normalization
codes: 0 scales by nothing, 1 by 1/sqrt(n), 2 by 1/n (n: the signal size over `dims`),
whichever the direction. Since NumPy 2.0 pocketfft computes float32/complex64 in single
precision, so results come back in the input's precision without a float64 detour (the
`astype` below is a no-op then, and a cast for older NumPy).
"""
import numpy as np

__all__ = ["c2c", "r2c", "c2r"]

# PyTorch's normalization code -> NumPy's `norm` for a forward (exp(-i...)) transform, and
# for an inverse one: NumPy names the direction that is scaled by 1/n.
_FORWARD_NORM = ("backward", "ortho", "forward")
_INVERSE_NORM = ("forward", "ortho", "backward")

_COMPLEX_OF = {np.dtype(np.float32): np.dtype(np.complex64), np.dtype(np.float64): np.dtype(np.complex128)}
_REAL_OF = {c: r for r, c in _COMPLEX_OF.items()}


def _complex_dtype(dtype):
    return dtype if dtype.kind == "c" else _COMPLEX_OF[dtype]


def c2c(a, dims, normalization, forward):
    """The complex `a` transformed over `dims`: forward (exp(-2 pi i jk/n)) or inverse."""
    dtype = np.dtype(a.dtype)
    if not dims or a.size == 0:
        return np.array(a, dtype=dtype, copy=True)
    if forward:
        out = np.fft.fftn(a, axes=dims, norm=_FORWARD_NORM[normalization])
    else:
        out = np.fft.ifftn(a, axes=dims, norm=_INVERSE_NORM[normalization])
    return out.astype(dtype, copy=False)


def r2c(a, dims, normalization, onesided):
    """The forward transform of real `a` over `dims`; `onesided` keeps the n//2 + 1 first
    frequencies of the last dim (the others are their conjugates)."""
    dtype = _complex_dtype(np.dtype(a.dtype))
    if a.size == 0:
        shape = list(a.shape)
        if onesided:
            shape[dims[-1]] = shape[dims[-1]] // 2 + 1
        return np.zeros(shape, dtype)
    half = np.fft.rfftn(a, axes=dims, norm=_FORWARD_NORM[normalization]).astype(dtype, copy=False)
    return half if onesided else _full_spectrum(half, dims, a.shape[dims[-1]])


def _full_spectrum(half, dims, size):
    """The whole spectrum of a real signal from its onesided half (`size` points along the
    last of `dims`): X[k] = conj(X[-k mod n]) over all of `dims`. A real-input rfft plus
    this fill is 3x faster than pocketfft's complex transform of the same signal."""
    last = dims[-1]
    kept = half.shape[last]
    full = np.empty(half.shape[:last] + (size,) + half.shape[last + 1:], half.dtype)
    at = [slice(None)] * half.ndim
    at[last] = slice(0, kept)
    full[tuple(at)] = half
    # Frequencies kept .. size-1 mirror size-kept .. 1 of the last dim, and -k of the others.
    source = [slice(None)] * half.ndim
    source[last] = slice(size - kept, 0, -1)
    mirrored = np.conj(half[tuple(source)])
    for d in dims[:-1]:
        mirrored = np.roll(np.flip(mirrored, d), 1, d)
    at[last] = slice(kept, size)
    full[tuple(at)] = mirrored
    return full


def c2r(a, dims, normalization, last_dim_size):
    """The real inverse transform of the onesided, Hermitian `a` over `dims`, with
    `last_dim_size` points along the last of them (its imaginary parts where a
    Hermitian signal has none, at frequency 0 and n/2, are ignored)."""
    dtype = _REAL_OF[np.dtype(a.dtype)]
    sizes = [a.shape[d] for d in dims[:-1]] + [last_dim_size]
    if a.size == 0:
        shape = list(a.shape)
        shape[dims[-1]] = last_dim_size
        return np.zeros(shape, dtype)
    return np.fft.irfftn(a, s=sizes, axes=dims, norm=_INVERSE_NORM[normalization]).astype(dtype, copy=False)
