"""Discrete Fourier transforms of CUDA device arrays: for now, through the host.

The same functions as `_backends.cpu.fft`. There is no cuFFT binding yet, so each call
copies its operand to the host, transforms it there with the CPU backend (NumPy's
pocketfft) and uploads the result: correct, and as slow as two transfers make it. A
cuFFT implementation (nvmath-python's `nvmath.fft`, or the CUDA library bindings the
cuBLAS products use) replaces these three functions and nothing above them.
"""
from ..cpu import fft as host
from . import storage

__all__ = ["c2c", "r2c", "c2r", "stft"]


def c2c(a, dims, normalization, forward):
    """Complex-to-complex transform over `dims` (see `_backends.cpu.fft.c2c`)."""
    return storage.adopt(host.c2c(storage.to_numpy(a), dims, normalization, forward))


def r2c(a, dims, normalization, onesided):
    """Real-to-complex transform over `dims` (see `_backends.cpu.fft.r2c`)."""
    return storage.adopt(host.r2c(storage.to_numpy(a), dims, normalization, onesided))


def c2r(a, dims, normalization, last_dim_size):
    """Complex-to-real inverse transform over `dims` (see `_backends.cpu.fft.c2r`)."""
    return storage.adopt(host.c2r(storage.to_numpy(a), dims, normalization, last_dim_size))


def stft(signal, window, n_fft, hop_length, win_length, offset, pad_mode, frames, normalized):
    """The onesided short-time transform of the rows of `signal` (see `_backends.cpu.fft.stft`)."""
    host_window = None if window is None else storage.to_numpy(window)
    return storage.adopt(host.stft(storage.to_numpy(signal), host_window, n_fft, hop_length, win_length, offset,
                                   pad_mode, frames, normalized))
