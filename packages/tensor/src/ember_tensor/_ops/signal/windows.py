"""PyTorch's top-level window functions: ``hann_window``, ``hamming_window``,
``blackman_window``, ``bartlett_window``, ``kaiser_window``.

A window of length N is symmetric (``periodic=False``) or periodic (the default: the
symmetric window of N + 1 points without its last one, the form a DFT wants, as `stft`
uses). Values are computed on the host in float64 and rounded once to the dtype (PyTorch
computes in the dtype, so float32 results can differ from its in the last bit).

>>> import ember_tensor as torch
>>> torch.hann_window(4)
tensor([0.0000, 0.5000, 1.0000, 0.5000])
>>> torch.hann_window(5, periodic=False)
tensor([0.0000, 0.5000, 1.0000, 0.5000, 0.0000])
"""
import numpy as np

from ... import _dtype as D
from ..creation import _dtype_or_default, from_host

__all__ = ["hann_window", "hamming_window", "blackman_window", "bartlett_window", "kaiser_window"]

# The C++ names PyTorch's TensorOptions print for the dtypes a window refuses.
_CPP_NAMES = {"int8": "signed char", "int16": "short int", "int32": "int", "int64": "long int",
              "uint8": "unsigned char", "bool": "bool"}


def _window(name, window_length, periodic, values_of, dtype, device, requires_grad):
    """Check the arguments as PyTorch does, then the window of `window_length` points
    (periodic: the symmetric one of one more point, less its last) from `values_of(m)`,
    the symmetric window of m >= 2 points as float64."""
    if not isinstance(window_length, (int, np.integer)) or isinstance(window_length, bool):
        raise TypeError(f"{name}(): argument 'window_length' (position 1) must be int, not "
                        f"{type(window_length).__name__}")
    if window_length < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got window_length={window_length}")
    dtype = _dtype_or_default(dtype)
    if dtype.category not in (D._FLOAT, D._COMPLEX):
        device_name = "cpu" if device is None else str(device)
        raise RuntimeError(
            f"{name} expects floating point dtypes, got: TensorOptions(dtype={_CPP_NAMES.get(dtype.name, dtype.name)}, "
            f"device={device_name}, layout=Strided (default), requires_grad=false (default), "
            f"pinned_memory=false, memory_format=(nullopt))")
    if window_length <= 1:
        return from_host(np.ones(window_length), dtype, device, requires_grad)
    if dtype.category == D._COMPLEX:
        raise NotImplementedError(f'"arange_cpu" not implemented for \'{D.scalar_type_name(dtype)}\'')
    m = window_length + 1 if periodic else window_length
    return from_host(values_of(m)[:window_length], dtype, device, requires_grad)


def _hamming_values(alpha, beta):
    return lambda m: alpha - beta * np.cos(2 * np.pi * np.arange(m) / (m - 1))


def hann_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, requires_grad=False):
    """The Hann window: w[n] = (1 - cos(2 pi n / (N - 1))) / 2.

    >>> import ember_tensor as torch
    >>> torch.hann_window(3, periodic=False)
    tensor([0., 1., 0.])
    """
    return _window("hann_window", window_length, periodic, _hamming_values(0.5, 0.5), dtype, device,
                   requires_grad)


def hamming_window(window_length, periodic=True, alpha=0.54, beta=0.46, *, dtype=None, layout=None, device=None,
                   requires_grad=False):
    """The generalised Hamming window: w[n] = alpha - beta cos(2 pi n / (N - 1)).

    >>> import ember_tensor as torch
    >>> torch.hamming_window(3, periodic=False)
    tensor([0.0800, 1.0000, 0.0800])
    """
    return _window("hamming_window", window_length, periodic, _hamming_values(alpha, beta), dtype, device,
                   requires_grad)


def _blackman_values(m):
    phase = np.pi * np.arange(m) / (m - 1)
    return 0.42 - 0.5 * np.cos(2 * phase) + 0.08 * np.cos(4 * phase)


def blackman_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, requires_grad=False):
    """The Blackman window: 0.42 - 0.5 cos(2 pi n / (N - 1)) + 0.08 cos(4 pi n / (N - 1)).

    >>> import ember_tensor as torch
    >>> torch.blackman_window(3, periodic=False).tolist()[1]
    1.0
    """
    return _window("blackman_window", window_length, periodic, _blackman_values, dtype, device, requires_grad)


def _bartlett_values(m):
    ramp = 2 * np.arange(m) / (m - 1)
    return np.where(np.arange(m) <= (m - 1) // 2, ramp, 2 - ramp)


def bartlett_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, requires_grad=False):
    """The Bartlett (triangular) window: 2n / (N - 1) up to the middle, then 2 - 2n / (N - 1).

    >>> import ember_tensor as torch
    >>> torch.bartlett_window(5, periodic=False)
    tensor([0.0000, 0.5000, 1.0000, 0.5000, 0.0000])
    """
    return _window("bartlett_window", window_length, periodic, _bartlett_values, dtype, device, requires_grad)


def kaiser_window(window_length, periodic=True, beta=12.0, *, dtype=None, layout=None, device=None,
                  requires_grad=False):
    """The Kaiser window: I0(beta sqrt(1 - ((n - a) / a)^2)) / I0(beta), a = (N - 1) / 2.

    >>> import ember_tensor as torch
    >>> torch.kaiser_window(3, periodic=False, beta=0.0)
    tensor([1., 1., 1.])
    """
    def values(m):
        half = (m - 1) / 2.0
        ratio = (np.arange(m) - half) / half
        return np.i0(beta * np.sqrt(np.abs(1 - ratio ** 2))) / np.i0(beta)
    return _window("kaiser_window", window_length, periodic, values, dtype, device, requires_grad)
