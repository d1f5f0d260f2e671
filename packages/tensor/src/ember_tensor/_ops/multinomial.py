"""multinomial: category indices drawn from the rows of a tensor of weights.

CPU tensors sample on the host from the CPU generator. CUDA tensors sample on the
device from the CUDA generator (`_backends.cuda.random.multinomial`: Gumbel keys and the device
top-k without replacement, inverse CDF by binary search with it), after the CPU's checks
of the weights (each reads back one flag, PyTorch's CUDA kernels assert instead).
"""
import numpy as np

from .. import _backends
from .. import _dtype as D
from .. import _random
from .._dispatch import op
from . import _iter
from ._random_args import int_arg, new_tensor

__all__ = ["multinomial"]

# The CPU's checks, in the order it makes them; the device path names the one that failed.
_ERRORS = {
    "not finite or negative": "probability tensor contains either `inf`, `nan` or element < 0",
    "negative": "invalid multinomial distribution (encountering probability entry < 0)",
    "infinite": "invalid multinomial distribution (encountering probability entry = infinity or NaN)",
    "zero sum": "invalid multinomial distribution (sum of probabilities <= 0)",
}


def _cuda_random():
    # Imported on the first CUDA sample: it loads numba.cuda, which CPU-only use never needs.
    from .._backends.cuda import random as _cuda_random
    return _cuda_random


def _into(samples, out):
    """`samples`, or `out` (resized like a factory's) holding them."""
    if out is None:
        return samples
    if tuple(out._data.shape) != tuple(samples._data.shape):
        out._data = out._storage.buf = _backends.get(out._device).storage.empty(samples._data.shape, np.int64)
    _backends.get(out._device).storage.copy_(out._data, samples._data)
    out._bump_version()
    return out


@op()
def multinomial(input, num_samples, replacement=False, *, generator=None, out=None):
    """Category indices drawn from the rows of `input` (non-negative weights).

    Without replacement each row gives distinct indices; categories of weight zero come
    only after all others. Returns int64 of shape (num_samples,) or (rows, num_samples).

    >>> import ember_tensor as torch
    >>> sorted(torch.multinomial(torch.tensor([0., 5., 0., 1.]), 2).tolist())
    [1, 3]
    """
    num_samples = int_arg(num_samples, "multinomial", "num_samples", 2)
    if input.dim() not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if input._dtype.category != D._FLOAT:
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: "
                           f"{_iter.type_name(input._dtype)}")
    if out is not None and out._dtype is not D.int64:
        raise RuntimeError(f"multinomial expects Long tensor out, got: {_iter.type_name(out._dtype)}")
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    n_categories = input.shape[-1]
    if not replacement and num_samples > n_categories:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
    if n_categories > 1 << 24:
        raise RuntimeError("number of categories cannot exceed 2^24")
    gen = _random.resolve(generator, input._device, "multinomial")
    if input._device.type == "cuda" and input.numel():
        samples, problem = _cuda_random().multinomial(input, num_samples, replacement, gen)
        if problem:
            raise RuntimeError(_ERRORS[problem])
        return _into(samples.reshape(num_samples) if input.dim() == 1 else samples, out)
    rows = input.shape[0] if input.dim() == 2 else 1
    probs = np.asarray(input._host_numpy(), np.float64).reshape(rows, n_categories)
    if probs.size == 0:
        samples = np.zeros((probs.shape[0], num_samples), np.int64)
    elif not replacement or num_samples == 1:
        samples = _sample_without_replacement(gen, probs, num_samples)
    else:
        samples = _sample_with_replacement(gen, probs, num_samples)
    if input.dim() == 1:
        samples = samples.reshape(num_samples)
    return new_tensor(samples, D.int64, input._device, out=out)


def _sample_without_replacement(gen, probs, n):
    if not (np.isfinite(probs).all() and (probs >= 0).all()):
        raise RuntimeError(_ERRORS["not finite or negative"])
    if (probs.sum(axis=1) == 0).any():
        raise RuntimeError(_ERRORS["zero sum"])
    # PyTorch's method (Gumbel top-k): the n largest p / q with q ~ Exp(1) are a draw
    # without replacement; zero weights get key 0 and so come last.
    q = gen._draw("standard_exponential", probs.shape)
    with np.errstate(divide="ignore", invalid="ignore"):
        keys = np.where(probs > 0, probs / q, 0.0)
    if n == 1:
        return np.argmax(keys, axis=1)[:, None]
    top = np.argpartition(-keys, n - 1, axis=1)[:, :n] if n < keys.shape[1] else \
        np.broadcast_to(np.arange(keys.shape[1]), keys.shape)
    order = np.argsort(-np.take_along_axis(keys, top, axis=1), axis=1, kind="stable")
    return np.take_along_axis(top, order, axis=1)


def _sample_with_replacement(gen, probs, n):
    if not (probs >= 0).all():
        raise RuntimeError(_ERRORS["negative"])
    if np.isinf(probs).any():
        raise RuntimeError(_ERRORS["infinite"])
    totals = probs.sum(axis=1)
    if (totals <= 0).any():
        raise RuntimeError(_ERRORS["zero sum"])
    rows, n_categories = probs.shape
    cdf = np.cumsum(probs, axis=1) / totals[:, None]
    u = gen._draw("random", (rows, n))
    # Inverse CDF for all rows in one search: row r's CDF and draws are shifted by 2r so
    # no draw reaches another row. A zero-weight category repeats the CDF value before it
    # and so can never be found with side='right'.
    shift = 2.0 * np.arange(rows)[:, None]
    found = np.searchsorted((cdf + shift).ravel(), (u + shift).ravel(), side="right")
    found = found.reshape(rows, n) - (np.arange(rows) * n_categories)[:, None]
    # A draw past a row's last CDF value (rounding) takes its last non-zero category.
    last = n_categories - 1 - np.argmax(probs[:, ::-1] > 0, axis=1)
    return np.minimum(found, last[:, None])
