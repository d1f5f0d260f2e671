"""CPU random sampling: NumPy's PCG64 stream, float32 directly where the result is not
float64.

Every sampler takes `stream`, the NumPy Generator of the op's `Generator` (held locked
by the op while it draws), and the result's `shape` and NumPy `dtype`. The fills take
`out`: None for a new C-contiguous array, or an array of that shape to write into (its
values cast as a copy would). Parameters that are tensors (probabilities, rates,
standard deviations, multinomial weights) come as float64 arrays from `checked_float64`,
which also says whether one is NaN or out of range: the op raises PyTorch's error.
"""
import os
from concurrent.futures import ThreadPoolExecutor

import ml_dtypes
import numpy as np

from . import threads
from ..lazy import lazy

__all__ = ["Engine", "uniform", "normal", "log_normal", "exponential", "cauchy", "integers", "geometric",
           "bernoulli_scalar", "bernoulli_tensor", "normal_tensors", "checked_float64", "poisson",
           "multinomial", "permutation"]

# Mantissa digits of the half types: uniform draws them on their own grid, so that a
# float32 value just below 1 cannot round up to 1.0 in the cast.
_NARROW_DIGITS = {np.dtype(np.float16): 11, np.dtype(ml_dtypes.bfloat16): 8}
# NumPy's Poisson sampler refuses rates near 2**63; such counts equal their rate to
# within float precision anyway.
_POISSON_MAX_RATE = 1e18
# The size of a CPU generator's state.
_STATE_SIZE = 45


class Engine:
    """The CPU generators' engine: NumPy's PCG64. Its state, as `torch.Generator.get_state`
    gives it: initial seed (8 bytes, little-endian), PCG64 state (16), increment (16),
    has_uint32 (1), the buffered uint32 (4)."""

    def __init__(self, seed):
        self.reseed(seed)

    def reseed(self, seed):
        """Restart the stream from `seed`."""
        self.initial_seed = seed
        self.numpy = np.random.Generator(np.random.PCG64(seed))

    def state_bytes(self):
        """The state as bytes (the layout in the class docstring)."""
        state = self.numpy.bit_generator.state
        return b"".join((
            self.initial_seed.to_bytes(8, "little"),
            state["state"]["state"].to_bytes(16, "little"),
            state["state"]["inc"].to_bytes(16, "little"),
            int(state["has_uint32"]).to_bytes(1, "little"),
            int(state["uinteger"]).to_bytes(4, "little"),
        ))

    def load(self, raw):
        """Restore a state from `state_bytes`'s bytes; PyTorch's error for a wrong size."""
        if len(raw) != _STATE_SIZE:
            raise RuntimeError(
                f"Expected a PCG64 generator state of size {_STATE_SIZE} but found the input RNG "
                f"state size to be {len(raw)}")
        self.initial_seed = int.from_bytes(raw[:8], "little")
        self.numpy.bit_generator.state = {
            "bit_generator": "PCG64",
            "state": {"state": int.from_bytes(raw[8:24], "little"),
                      "inc": int.from_bytes(raw[24:40], "little")},
            "has_uint32": raw[40],
            "uinteger": int.from_bytes(raw[41:45], "little"),
        }

    def host_stream(self):
        """A NumPy Generator to draw from on the host."""
        return self.numpy

    def backend_stream(self):
        """What the CPU backend draws from: the NumPy Generator itself."""
        return self.numpy


def _compute_type(dtype):
    """Draw float64 for float64 results and float32 for every other one (NumPy's fast path)."""
    return np.float64 if dtype == np.float64 else np.float32


def _deliver(values, dtype, out):
    """`values` as a new C-contiguous `dtype` array, or written into `out`."""
    if out is None:
        return np.asarray(values, dtype=dtype, order="C")
    np.copyto(out, values, casting="unsafe")
    return out


def _uniform01(stream, shape, dtype):
    values = stream.random(shape, dtype=_compute_type(dtype))
    digits = _NARROW_DIGITS.get(np.dtype(dtype), 24)
    if digits < 24:
        # Round down onto the narrow type's grid: float32 values just below 1 would round
        # up to 1.0 in half or bfloat16, and rand() must stay in [0, 1).
        scale = np.float32(1 << digits)
        values = np.floor(values * scale) / scale
    return values


# Float32 normals come from the Numba kernel of `kernels.normal`: blocks of
# `NORMAL.BLOCK` values, each from a key of its own drawn from the generator's stream, so
# the numbers do not depend on how many threads make them; several blocks fill in
# parallel, a range of blocks per thread of `_pool` (Python threads running the nogil
# kernel, not Numba's OpenMP pool, which would terminate a forked child at its first
# parallel region).
NORMAL = lazy("cpu.kernels.normal")  # Numba loads on first use
_pool = None


def _threads():
    """The pool that fills normal blocks in parallel (made on first use, dropped in a
    forked child, where its threads do not exist)."""
    global _pool
    if _pool is None:
        _pool = ThreadPoolExecutor(max(1, min(os.cpu_count() or 1, 8)), thread_name_prefix="ember-randn")
    return _pool


def _drop_pool():
    global _pool
    _pool = None


os.register_at_fork(after_in_child=_drop_pool)


def _standard_normal(stream, shape, dtype):
    """Standard normals of `shape`: float64 by NumPy's ziggurat; float32 (for every other
    result dtype) by `kernels.normal`'s vectorised Box-Muller: on one thread about 3x
    faster than Box-Muller in NumPy's float32 functions, 5x than NumPy's float32 ziggurat."""
    if _compute_type(dtype) is np.float64:
        return stream.standard_normal(shape, dtype=np.float64)
    out = np.empty(shape, np.float32)
    flat = out.reshape(-1)
    blocks = -(-flat.size // NORMAL.BLOCK)
    keys = stream.integers(0, 1 << 63, blocks, dtype=np.int64)  # advances the generator
    parts = min(blocks, threads.budget())
    if parts > 1:
        # Contiguous ranges of blocks, one per thread; the calling thread takes the first.
        bounds = [blocks * i // parts for i in range(parts + 1)]
        pending = [_threads().submit(NORMAL.fill_standard_normal, keys, flat, bounds[i], bounds[i + 1])
                   for i in range(1, parts)]
        NORMAL.fill_standard_normal(keys, flat, bounds[0], bounds[1])
        for future in pending:
            future.result()
    elif blocks:
        NORMAL.fill_standard_normal(keys, flat, 0, blocks)
    return out


def uniform(stream, shape, dtype, out, low, high):
    """Uniform samples in [low, high).

    >>> uniform(np.random.default_rng(0), (2,), np.dtype(np.float32), None, 0.0, 1.0).dtype
    dtype('float32')
    """
    values = _uniform01(stream, shape, dtype)
    if low != 0.0 or high != 1.0:  # [0, 1) itself needs no pass (x * 1 + 0 == x)
        values = values * (high - low) + low
    return _deliver(values, dtype, out)


def normal(stream, shape, dtype, out, mean, std):
    """Normal samples of mean `mean` and standard deviation `std`."""
    values = _standard_normal(stream, shape, dtype)
    if mean != 0.0 or std != 1.0:
        values = mean + std * values
    return _deliver(values, dtype, out)


def log_normal(stream, shape, dtype, out, mean, std):
    """exp(x) for x normal of mean `mean` and standard deviation `std`."""
    return _deliver(np.exp(mean + std * _standard_normal(stream, shape, dtype)), dtype, out)


def exponential(stream, shape, dtype, out, lambd):
    """Exponential samples of rate `lambd`."""
    return _deliver(stream.standard_exponential(shape, dtype=_compute_type(dtype)) / lambd, dtype, out)


def cauchy(stream, shape, dtype, out, median, sigma):
    """Cauchy samples median + sigma * tan(pi * (u - 1/2)), u uniform in [0, 1)."""
    u = _uniform01(stream, shape, dtype).astype(np.float64)
    return _deliver(median + sigma * np.tan(np.pi * (u - 0.5)), dtype, out)


def integers(stream, shape, dtype, out, low, high):
    """Integers uniform in [low, high] (inclusive), converted to `dtype`."""
    return _deliver(stream.integers(low, high, shape, dtype=np.int64, endpoint=True), dtype, out)


def geometric(stream, shape, dtype, out, p):
    """The number of Bernoulli(p) trials up to the first success (1, 2, ...)."""
    return _deliver(stream.geometric(p, shape), dtype, out)


def bernoulli_scalar(stream, shape, dtype, out, p):
    """1 with probability `p` (a float in [0, 1]), else 0."""
    return _deliver(stream.random(shape) < p, dtype, out)


def bernoulli_tensor(stream, shape, dtype, out, probabilities):
    """1 where u < p elementwise; `probabilities` from `checked_float64`."""
    return _deliver(stream.random(shape) < probabilities, dtype, out)


def normal_tensors(stream, shape, dtype, out, mean, std):
    """mean + std * z: `mean`, `std` arrays broadcastable to `shape`, or floats; computed in
    the draw's type (standard normals, then * and +)."""
    compute = _compute_type(dtype)
    mean = mean.astype(compute) if isinstance(mean, np.ndarray) else mean
    std = std.astype(compute) if isinstance(std, np.ndarray) else std
    return _deliver(mean + std * _standard_normal(stream, shape, dtype), dtype, out)


def checked_float64(a, shape, low, high):
    """(values, bad): `a`'s values broadcast to `shape` as float64, and whether any is NaN or
    outside [low, high].

    >>> checked_float64(np.array([0.5, 2.0]), (2,), 0.0, 1.0)[1]
    True
    """
    values = np.broadcast_to(np.asarray(a, np.float64), shape)
    inside = values >= low if high == np.inf else (values >= low) & (values <= high)
    return values, not inside.all()


def poisson(stream, rates, shape, dtype):
    """Poisson counts of `rates` (from `checked_float64` for `shape`, >= 0), as a new
    `dtype` array."""
    huge = rates > _POISSON_MAX_RATE
    counts = stream.poisson(np.where(huge, 0.0, rates))
    return _deliver(np.where(huge, rates, counts), dtype, None)


def multinomial(stream, probs, num_samples, replacement):
    """(samples, problem): int64 (rows, num_samples) category indices drawn from the rows of
    the 1-d or 2-d weights `probs`, or (None, why) for bad weights, with why one of
    'not finite or negative', 'negative', 'infinite', 'zero sum' (checked in that order).

    Without replacement (or one sample): PyTorch's Gumbel top-k, the largest p / q with
    q ~ Exp(1). With replacement: an inverse CDF search of uniform draws.
    """
    n_categories = probs.shape[-1]
    rows = probs.shape[0] if probs.ndim == 2 else 1
    probs = np.asarray(probs, np.float64).reshape(rows, n_categories)
    if probs.size == 0:
        return np.zeros((rows, num_samples), np.int64), None
    if not replacement or num_samples == 1:
        return _sample_without_replacement(stream, probs, num_samples)
    return _sample_with_replacement(stream, probs, num_samples)


def _sample_without_replacement(stream, probs, n):
    if not (np.isfinite(probs).all() and (probs >= 0).all()):
        return None, "not finite or negative"
    if (probs.sum(axis=1) == 0).any():
        return None, "zero sum"
    # PyTorch's method (Gumbel top-k): the n largest p / q with q ~ Exp(1) are a draw
    # without replacement; zero weights get key 0 and so come last.
    q = stream.standard_exponential(probs.shape)
    with np.errstate(divide="ignore", invalid="ignore"):
        keys = np.where(probs > 0, probs / q, 0.0)
    if n == 1:
        return np.argmax(keys, axis=1)[:, None], None
    top = np.argpartition(-keys, n - 1, axis=1)[:, :n] if n < keys.shape[1] else \
        np.broadcast_to(np.arange(keys.shape[1]), keys.shape)
    order = np.argsort(-np.take_along_axis(keys, top, axis=1), axis=1, kind="stable")
    return np.take_along_axis(top, order, axis=1), None


def _sample_with_replacement(stream, probs, n):
    if not (probs >= 0).all():
        return None, "negative"
    if np.isinf(probs).any():
        return None, "infinite"
    totals = probs.sum(axis=1)
    if (totals <= 0).any():
        return None, "zero sum"
    rows, n_categories = probs.shape
    cdf = np.cumsum(probs, axis=1) / totals[:, None]
    u = stream.random((rows, n))
    # Inverse CDF for all rows in one search: row r's CDF and draws are shifted by 2r so
    # no draw reaches another row. A zero-weight category repeats the CDF value before it
    # and so can never be found with side='right'.
    shift = 2.0 * np.arange(rows)[:, None]
    found = np.searchsorted((cdf + shift).ravel(), (u + shift).ravel(), side="right")
    found = found.reshape(rows, n) - (np.arange(rows) * n_categories)[:, None]
    # A draw past a row's last CDF value (rounding) takes its last non-zero category.
    last = n_categories - 1 - np.argmax(probs[:, ::-1] > 0, axis=1)
    return np.minimum(found, last[:, None]), None


def permutation(stream, n):
    """A random permutation of 0 .. n-1 as int64.

    >>> sorted(permutation(np.random.default_rng(0), 4).tolist())
    [0, 1, 2, 3]
    """
    return stream.permutation(n)
