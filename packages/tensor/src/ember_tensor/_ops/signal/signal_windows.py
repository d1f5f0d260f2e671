"""``torch.signal.windows``: SciPy-style windows of M points (``sym=True``: symmetric, for
filter design; ``sym=False``: periodic, for spectral analysis), float32 or float64.

Values are computed on the host in float64 and rounded once to the dtype. The argument
checks raise PyTorch's ValueErrors (the hann/hamming/blackman/nuttall windows are
general cosine windows, and their errors say so, as PyTorch's do).

>>> import ember_tensor as torch
>>> torch.signal.windows.hann(5)
tensor([0.0000, 0.5000, 1.0000, 0.5000, 0.0000])
"""
from collections.abc import Iterable

import numpy as np

from ... import _dtype as D
from ..._layout import strided
from ..creation import _dtype_or_default, from_host

__all__ = ["bartlett", "blackman", "cosine", "exponential", "gaussian", "general_cosine", "general_hamming",
           "hamming", "hann", "kaiser", "nuttall"]


def _checked(name, M, dtype, layout):
    """The dtype (default: the default float dtype) after PyTorch's checks of M, layout, dtype."""
    if M < 0:
        raise ValueError(f"{name} requires non-negative window length, got M={M}")
    if layout is not None and layout is not strided:
        raise ValueError(f"{name} is implemented for strided tensors only, got: {layout}")
    dtype = _dtype_or_default(dtype)
    if dtype not in (D.float32, D.float64):
        raise ValueError(f"{name} expects float32 or float64 dtypes, got: {dtype}")
    return dtype


def _span(M, sym):
    """The length the window's formula spans: M - 1 when symmetric, M when periodic."""
    return M if not sym and M > 1 else M - 1


def _made(values, dtype, device, requires_grad):
    return from_host(np.asarray(values, dtype=np.float64), dtype, device, requires_grad)


def exponential(M, *, center=None, tau=1.0, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    """The exponential (Poisson) window: exp(-|n - center| / tau).

    >>> import ember_tensor as torch
    >>> torch.signal.windows.exponential(3, tau=1.0).tolist()[1]
    1.0
    """
    dtype = _checked("exponential", M, dtype, layout)
    if tau <= 0:
        raise ValueError(f"Tau must be positive, got: {tau} instead.")
    if sym and center is not None:
        raise ValueError("Center must be None for symmetric windows")
    if center is None:
        center = _span(M, sym) / 2.0
    return _made(np.exp(-np.abs(np.arange(M) - center) / tau), dtype, device, requires_grad)


def cosine(M, *, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    """The cosine (sine) window: sin(pi (n + 1/2) / M).

    >>> import ember_tensor as torch
    >>> torch.signal.windows.cosine(2)
    tensor([0.7071, 0.7071])
    """
    dtype = _checked("cosine", M, dtype, layout)
    period = M + 1 if not sym and M > 1 else M
    return _made(np.sin(np.pi * (np.arange(M) + 0.5) / max(period, 1)), dtype, device, requires_grad)


def gaussian(M, *, std=1.0, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    """The Gaussian window: exp(-(n - c)^2 / (2 std^2)), c the window's middle.

    >>> import ember_tensor as torch
    >>> torch.signal.windows.gaussian(3).tolist()[1]
    1.0
    """
    dtype = _checked("gaussian", M, dtype, layout)
    if std <= 0:
        raise ValueError(f"Standard deviation must be positive, got: {std} instead.")
    n = np.arange(M) - _span(M, sym) / 2.0
    return _made(np.exp(-(n / std) ** 2 / 2), dtype, device, requires_grad)


def kaiser(M, *, beta=12.0, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    """The Kaiser window: I0(beta sqrt(1 - (2n / N - 1)^2)) / I0(beta), N = M - 1 (sym) or M.

    >>> import ember_tensor as torch
    >>> torch.signal.windows.kaiser(3, beta=0.0)
    tensor([1., 1., 1.])
    """
    dtype = _checked("kaiser", M, dtype, layout)
    if beta < 0:
        raise ValueError(f"beta must be non-negative, got: {beta} instead.")
    if M <= 1:
        return _made(np.ones(M), dtype, device, requires_grad)
    k = np.minimum(-beta + np.arange(M) * (2.0 * beta / (M if not sym else M - 1)), beta)
    return _made(np.i0(np.sqrt(np.maximum(beta * beta - k * k, 0.0))) / np.i0(beta), dtype, device, requires_grad)


def general_cosine(M, *, a, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    """A sum of cosines: sum_i (-1)^i a[i] cos(2 pi i n / N), N = M - 1 (sym) or M.

    >>> import ember_tensor as torch
    >>> torch.signal.windows.general_cosine(3, a=[0.5, 0.5])
    tensor([0., 1., 0.])
    """
    dtype = _checked("general_cosine", M, dtype, layout)
    if M <= 1:
        return _made(np.ones(M), dtype, device, requires_grad)
    if not isinstance(a, Iterable):
        raise TypeError("Coefficients must be a list/tuple")
    if not a:
        raise ValueError("Coefficients cannot be empty")
    phase = 2 * np.pi * np.arange(M) / (M if not sym else M - 1)
    values = sum((-1) ** i * c * np.cos(i * phase) for i, c in enumerate(a))
    return _made(values, dtype, device, requires_grad)


def general_hamming(M, *, alpha=0.54, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    """The generalised Hamming window: alpha - (1 - alpha) cos(2 pi n / N).

    >>> import ember_tensor as torch
    >>> torch.signal.windows.general_hamming(3, alpha=0.5)
    tensor([0., 1., 0.])
    """
    return general_cosine(M, a=[alpha, 1.0 - alpha], sym=sym, dtype=dtype, layout=layout, device=device,
                          requires_grad=requires_grad)


def hamming(M, *, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    """The Hamming window: general_hamming with alpha = 0.54.

    >>> import ember_tensor as torch
    >>> torch.signal.windows.hamming(3)
    tensor([0.0800, 1.0000, 0.0800])
    """
    return general_hamming(M, sym=sym, dtype=dtype, layout=layout, device=device, requires_grad=requires_grad)


def hann(M, *, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    """The Hann window: general_hamming with alpha = 0.5.

    >>> import ember_tensor as torch
    >>> torch.signal.windows.hann(3)
    tensor([0., 1., 0.])
    """
    return general_hamming(M, alpha=0.5, sym=sym, dtype=dtype, layout=layout, device=device,
                           requires_grad=requires_grad)


def blackman(M, *, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    """The Blackman window: general_cosine with a = [0.42, 0.5, 0.08].

    >>> import ember_tensor as torch
    >>> torch.signal.windows.blackman(3).tolist()[1]
    1.0
    """
    return general_cosine(M, a=[0.42, 0.5, 0.08], sym=sym, dtype=dtype, layout=layout, device=device,
                          requires_grad=requires_grad)


def bartlett(M, *, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    """The Bartlett (triangular) window: 1 - |2n / N - 1|, N = M - 1 (sym) or M.

    >>> import ember_tensor as torch
    >>> torch.signal.windows.bartlett(5)
    tensor([0.0000, 0.5000, 1.0000, 0.5000, 0.0000])
    """
    dtype = _checked("bartlett", M, dtype, layout)
    if M <= 1:
        return _made(np.ones(M), dtype, device, requires_grad)
    return _made(1 - np.abs(-1 + np.arange(M) * (2 / (M if not sym else M - 1))), dtype, device, requires_grad)


def nuttall(M, *, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    """The minimum 4-term Blackman-Harris window of Nuttall.

    >>> import ember_tensor as torch
    >>> round(torch.signal.windows.nuttall(3).tolist()[1], 4)
    1.0
    """
    return general_cosine(M, a=[0.3635819, 0.4891775, 0.1365995, 0.0106411], sym=sym, dtype=dtype, layout=layout,
                          device=device, requires_grad=requires_grad)
