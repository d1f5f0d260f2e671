"""Discrete Fourier transforms on the CPU: NumPy's pocketfft (`numpy.fft`).

The three transforms PyTorch builds every FFT from (ATen's `_fft_c2c`, `_fft_r2c`,
`_fft_c2r`), over any set of dims of a strided array, with PyTorch's normalization
codes: 0 scales by nothing, 1 by 1/sqrt(n), 2 by 1/n (n: the signal size over `dims`),
whichever the direction. Since NumPy 2.0 pocketfft computes float32/complex64 in single
precision, so results come back in the input's precision without a float64 detour (the
`astype` below is a no-op then, and a cast for older NumPy).

`stft` is the short-time transform of real signals in one call: framing, padding and
windowing straight into a buffer, then a batched real FFT (`kernels.stft`, ember's own
Numba FFT, for power-of-two n_fft; NumPy's pocketfft for the other sizes).
"""
import numpy as np

from ..lazy import lazy

__all__ = ["c2c", "r2c", "c2r", "stft", "COMPLEX_OF", "REAL_OF", "PAD_MODES"]

K = lazy("cpu.kernels.stft")  # Numba loads on first use

# PyTorch's normalization code -> NumPy's `norm` for a forward (exp(-i...)) transform, and
# for an inverse one: NumPy names the direction that is scaled by 1/n.
_FORWARD_NORM = ("backward", "ortho", "forward")
_INVERSE_NORM = ("forward", "ortho", "backward")

# The complex dtype of each real one, and back (the CUDA backend's too).
COMPLEX_OF = {np.dtype(np.float32): np.dtype(np.complex64), np.dtype(np.float64): np.dtype(np.complex128)}
REAL_OF = {c: r for r, c in COMPLEX_OF.items()}


def _complex_dtype(dtype):
    return dtype if dtype.kind == "c" else COMPLEX_OF[dtype]


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
    size = a.shape[dims[-1]]
    if a.dtype == np.float32 and tuple(dims) == (a.ndim - 1,) and a.size // size > _RFFT_ROWS:
        half = _rfft_by_rows(a, normalization, dtype)
    else:
        half = np.fft.rfftn(a, axes=dims, norm=_FORWARD_NORM[normalization]).astype(dtype, copy=False)
    return half if onesided else _full_spectrum(half, dims, size)


# NumPy 2.4's float32 rfft gets ~4-10x slower a row past ~128 rows in one call (1000 rows
# of 256 points: 2.8 ms in one call, 0.7 ms in chunks of 128): last-dim float32
# transforms of more rows run in chunks of this many.
_RFFT_ROWS = 128


def _rfft_by_rows(a, normalization, dtype):
    """The onesided rfft of every row of float32 `a` along its last dim, `_RFFT_ROWS`
    rows a call."""
    size = a.shape[-1]
    rows = a.reshape(-1, size)
    out = np.empty((rows.shape[0], size // 2 + 1), dtype)
    for start in range(0, rows.shape[0], _RFFT_ROWS):
        out[start:start + _RFFT_ROWS] = np.fft.rfft(rows[start:start + _RFFT_ROWS], axis=-1,
                                                    norm=_FORWARD_NORM[normalization])
    return out.reshape(a.shape[:-1] + (size // 2 + 1,))


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
    dtype = REAL_OF[np.dtype(a.dtype)]
    sizes = [a.shape[d] for d in dims[:-1]] + [last_dim_size]
    if a.size == 0:
        shape = list(a.shape)
        shape[dims[-1]] = last_dim_size
        return np.zeros(shape, dtype)
    return np.fft.irfftn(a, s=sizes, axes=dims, norm=_INVERSE_NORM[normalization]).astype(dtype, copy=False)


# Pad modes as the stft kernels number them (`kernels.stft`, and the CUDA backend's).
PAD_MODES = {"constant": 0, "reflect": 1, "replicate": 2, "circular": 3}
# The FFT's tables by (n_fft, dtype): cos and sin of 2 pi k / n_fft, k = 0 .. n_fft / 2,
# and the buffer row of each sample (even samples are real parts, odd ones imaginary
# parts, in bit-reversed order).
_TABLES = {}
# Frames a chunk of the buffer holds: the butterflies' loops run along the frames, and
# each row's loop set-up costs about 9 SIMD iterations' work, so longer rows pay (n_fft
# 2048: 128 frames ~1.4x faster than 64); but past ~2^18 elements (1 MiB in float32) the
# buffer leaves L2 and calls slow down erratically (n_fft 4096 at 128 frames: 3-5x).
_CHUNK_FRAMES = 128
_CHUNK_ELEMENTS = 1 << 18


def _tables(n_fft, dtype):
    key = (n_fft, dtype)
    tables = _TABLES.get(key)
    if tables is None:
        half = n_fft // 2
        angles = 2 * np.pi * np.arange(half + 1) / n_fft
        bits = half.bit_length() - 1
        index = np.arange(half)
        reversed_index = np.zeros(half, np.int64)
        for i in range(bits):
            reversed_index |= ((index >> i) & 1) << (bits - 1 - i)
        rows = np.empty(n_fft, np.int64)
        rows[0::2] = reversed_index
        rows[1::2] = reversed_index + half
        tables = _TABLES[key] = (np.cos(angles).astype(dtype), np.sin(angles).astype(dtype), rows)
    return tables


def _padded_positions(length, offset, mode, needed):
    """Indices into a signal of `length` samples of its padded positions 0 .. needed-1:
    position p shows sample p - offset, mapped by `mode` ("reflect", "replicate",
    "circular") where it lies outside the signal."""
    p = np.arange(-offset, needed - offset)
    if mode == "reflect":
        p = np.abs(p)
        p = np.where(p >= length, 2 * (length - 1) - p, p)
    elif mode == "circular":
        p = p % length
    return np.clip(p, 0, length - 1)


def stft(signal, window, n_fft, hop_length, win_length, offset, pad_mode, frames, normalized):
    """The onesided short-time Fourier transform of a real (L) signal or of the rows of a
    real (B, L) `signal`.

    Frame t, sample n is ``x[t * hop_length + n - offset]`` times the window (`window`, W
    = `win_length` points, ones when None, centred in n_fft), x padded outside [0, L) by
    `pad_mode` ("constant" (zeros), "reflect", "replicate", "circular"); `frames` frames;
    `normalized` scales by 1/sqrt(n_fft). Returns the complex (n_fft // 2 + 1, frames) or
    (B, n_fft // 2 + 1, frames) spectra, C-contiguous, in the signal's precision.

    >>> stft(np.arange(8.0), None, 4, 4, 4, 0, "constant", 2, False)[:, 0]
    array([ 6.+0.j, -2.+2.j, -2.+0.j])
    """
    if signal.ndim == 1:
        return stft(signal[None], window, n_fft, hop_length, win_length, offset, pad_mode, frames, normalized)[0]
    dtype = np.dtype(signal.dtype)
    signal = np.ascontiguousarray(signal)
    window = np.ones(win_length, dtype) if window is None else np.ascontiguousarray(window, dtype)
    win_left = (n_fft - win_length) // 2
    scale = 1 / np.sqrt(n_fft) if normalized else 1.0
    batch = signal.shape[0]
    out = np.empty((batch, n_fft // 2 + 1, frames), COMPLEX_OF[dtype])
    if n_fft >= 4 and n_fft & (n_fft - 1) == 0:
        cos_n, sin_n, rows = _tables(n_fft, dtype)
        width = K.chunk_width(min(frames, _CHUNK_FRAMES, max(32, _CHUNK_ELEMENTS // n_fft)))
        K.stft_onesided(signal, window, win_left, dtype.type(scale), hop_length, offset, PAD_MODES[pad_mode],
                        cos_n, sin_n, rows, width, out)
        return out
    # Other sizes: the same frames cut by NumPy, then pocketfft's batched rfft, a chunk of
    # frames at a time (NumPy 2.4's float32 rfft gets ~10x slower a row past ~128 rows).
    needed = (frames - 1) * hop_length + n_fft
    padded = np.empty((batch, needed), dtype)
    # Positions lo .. hi-1 show the signal itself (one slice); the padded ends by index.
    lo = min(offset, needed)
    hi = min(max(offset + signal.shape[1], lo), needed)
    padded[:, lo:hi] = signal[:, lo - offset:hi - offset]
    ends = np.r_[0:lo, hi:needed]
    padded[:, ends] = 0 if pad_mode == "constant" else signal[:, _padded_positions(signal.shape[1], offset,
                                                                                    pad_mode, needed)[ends]]
    full_window = np.zeros(n_fft, dtype)
    full_window[win_left:win_left + win_length] = window * dtype.type(scale)
    framed = np.lib.stride_tricks.sliding_window_view(padded, n_fft, axis=1)[:, ::hop_length]
    for b in range(batch):
        for first in range(0, frames, _CHUNK_FRAMES):
            last = min(first + _CHUNK_FRAMES, frames)
            out[b, :, first:last] = np.fft.rfft(framed[b, first:last] * full_window, axis=1).T
    return out
