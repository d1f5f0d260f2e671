"""CUDA random sampling: Philox kernels that fill device arrays, with no copy to or from
the host.

The same functions as `_backends.cpu.random`. Every sampler takes `stream`, the CUDA
generator's `reserve(words) -> (seed, offset)` (held locked by the op), and the result's
`shape` and NumPy `dtype`; the fills take `out` (None: a new array). Each fill reserves
offset words (4 per counter block its kernel reads per group of four elements) and
launches its kernel(s) from `kernels.random`. Only an array of parameters
(probabilities, standard deviations, multinomial weights, Poisson rates) is checked for
bad values, and each check reads back one flag: PyTorch's CUDA kernels assert there
instead, ember raises the CPU's error before writing anything.

A kernel writes float32, float64 or int64 (float16 too where it computes in float32;
bernoulli: any type but bfloat16) into a contiguous array directly; an array of another
dtype or layout is filled from a contiguous buffer of the kernel's type by one device
copy, which also casts float32 to bfloat16.
"""
import numpy as np

from . import arrays, elementwise, launch, reduction, scans, sorting, storage
from .kernels import random as K

__all__ = ["Engine", "uniform", "normal", "log_normal", "exponential", "cauchy", "integers", "geometric",
           "bernoulli_scalar", "bernoulli_tensor", "normal_tensors", "checked_float64", "poisson",
           "multinomial", "permutation"]

# Mantissa digits of the half types: rand() draws them on their own grid, so that a
# float32 value just below 1 cannot round up to 1.0 in the cast.
_NARROW_DIGITS = {np.dtype(np.float16): 11, arrays.BF16: 8}
# Dtypes a bernoulli kernel writes directly (float16 too: dropout masks under AMP); bfloat16
# arrays cannot be typed by Numba and go through a uint8 buffer and a device cast.
_DIRECT_BERNOULLI = {np.dtype(t) for t in (np.float16, np.float32, np.float64, np.int8, np.int16,
                                           np.int32, np.int64, np.uint8, np.bool_)}
# The size of a CUDA generator's state (PyTorch's), and the offset's wrap-around.
_PHILOX_STATE_SIZE = 16
_UINT64_MASK = (1 << 64) - 1


class Engine:
    """The CUDA generators' engine: Philox4x32-10 state (seed, offset), as PyTorch's CUDA
    generator; `get_state` gives seed (8 bytes, little-endian) then offset (8).

    `offset` counts 32-bit words per subsequence and grows by a multiple of 4 per op.
    """

    def __init__(self, seed):
        self.reseed(seed)

    def reseed(self, seed):
        """Restart the stream from `seed`."""
        self.initial_seed = seed
        self.offset = 0

    def state_bytes(self):
        """The state as bytes (the layout in the class docstring)."""
        return self.initial_seed.to_bytes(8, "little") + self.offset.to_bytes(8, "little")

    def load(self, raw):
        """Restore a state from `state_bytes`'s bytes; PyTorch's error for a wrong size."""
        # PyTorch also takes a seed alone (8 bytes) and then starts at offset 0.
        if len(raw) not in (_PHILOX_STATE_SIZE, 8):
            raise RuntimeError("RNG state is wrong size")
        self.initial_seed = int.from_bytes(raw[:8], "little")
        self.offset = int.from_bytes(raw[8:], "little")

    def reserve(self, increment):
        """(seed, offset) for an op that uses `increment` words per subsequence; advances."""
        offset = self.offset
        self.offset = (offset + increment) & _UINT64_MASK
        return self.initial_seed, offset

    def backend_stream(self):
        """What the CUDA backend draws from: `reserve`, counters for its Philox kernels."""
        return self.reserve

    def host_stream(self):
        """A NumPy Generator to draw from on the host."""
        # For host code handed a CUDA generator (every random op of a CUDA tensor has a
        # device kernel now): a NumPy Philox stream keyed by the seed, at a counter no
        # other call uses, so it too is reproducible and advances the offset.
        _, offset = self.reserve(4)
        counter = np.array([0, 0, offset, 0], np.uint64)
        return np.random.Generator(np.random.Philox(key=self.initial_seed, counter=counter))


def _compute_type(dtype):
    """float64 for float64 results, float32 for every other float (half types included)."""
    return np.dtype(np.float64) if dtype == np.float64 else np.dtype(np.float32)


def _reserve(stream, blocks):
    """The kernel's (seed, first counter block) arguments; advances the generator."""
    seed, offset = stream(4 * blocks)
    return np.uint64(seed), np.uint64(offset // 4)


def _target(out, shape, dtype):
    """The array a fill writes: `out`, or a new one."""
    return storage.empty(tuple(shape), dtype) if out is None else out


def _fill(data, kind, run, float16_direct=False):
    """Fill device array `data` by `run(flat_out)`, a launch writing a contiguous 1-d array
    of `kind`; returns `data`.

    Writes straight into `data` when it is contiguous and of that type (or float16, for
    kernels that compute in float32 and may store half: `float16_direct`), else into a
    buffer that one device copy moves (and casts) into it.
    """
    if data.size:
        direct = data.dtype == kind or float16_direct and data.dtype == np.float16
        if direct and arrays.is_c(data):
            run(arrays.flat(data))
        else:
            buf = storage.empty(data.shape, kind)
            run(arrays.flat(buf))
            storage.copy_(data, buf)
    return data


def _launcher(kernel, stream, blocks, *params):
    """run(out) for `kernel(out, seed, block, *params)` with offsets from `stream`."""
    def run(out):
        seed, block = _reserve(stream, blocks)
        launch.grid_stride(kernel, (out.shape[0] + 3) // 4, out, seed, block, *params)
    return run


def _uniform_grid(dtype):
    """(shift, scale) that turn a 32-bit word into a float32 in [0, 1) on dtype's grid."""
    digits = min(24, _NARROW_DIGITS.get(np.dtype(dtype), 24))
    return np.uint64(32 - digits), np.float32(2.0 ** -digits)


def uniform(stream, shape, dtype, out, low, high):
    """Uniform samples in [low, high)."""
    kind = _compute_type(dtype)
    if kind == np.float64:
        run = _launcher(K.uniform64, stream, 2, np.float64(low), np.float64(high - low))
    else:
        shift, scale = _uniform_grid(dtype)
        run = _launcher(K.uniform32, stream, 1, shift, scale, np.float32(low), np.float32(high - low))
    return _fill(_target(out, shape, dtype), kind, run, float16_direct=True)


def _normal_run(dtype, stream, mean, std):
    if _compute_type(dtype) == np.float64:
        return _launcher(K.normal64, stream, 2, np.float64(mean), np.float64(std))
    return _launcher(K.normal32, stream, 1, np.float32(mean), np.float32(std))


def normal(stream, shape, dtype, out, mean, std):
    """Normal samples of mean `mean` and standard deviation `std`."""
    return _fill(_target(out, shape, dtype), _compute_type(dtype), _normal_run(dtype, stream, mean, std),
                 float16_direct=True)


def log_normal(stream, shape, dtype, out, mean, std):
    """exp(x) for x normal of mean `mean` and standard deviation `std`: exp runs on the
    kernel's output type."""
    normal_run = _normal_run(dtype, stream, mean, std)

    def run(flat_out):
        normal_run(flat_out)
        elementwise.unary("exp", flat_out, flat_out)
    return _fill(_target(out, shape, dtype), _compute_type(dtype), run)


def exponential(stream, shape, dtype, out, lambd):
    """Exponential samples of rate `lambd`."""
    kind = _compute_type(dtype)
    data = _target(out, shape, dtype)
    if kind == np.float64:
        return _fill(data, kind, _launcher(K.exponential64, stream, 2, np.float64(lambd)))
    return _fill(data, kind, _launcher(K.exponential32, stream, 1, np.float32(lambd)), float16_direct=True)


def cauchy(stream, shape, dtype, out, median, sigma):
    """Cauchy samples median + sigma * tan(pi * (u - 1/2)), u uniform in [0, 1)."""
    kind = _compute_type(dtype)
    data = _target(out, shape, dtype)
    if kind == np.float64:
        return _fill(data, kind, _launcher(K.cauchy64, stream, 2, np.float64(median), np.float64(sigma)))
    shift, scale = _uniform_grid(dtype)
    return _fill(data, kind, _launcher(K.cauchy32, stream, 1, shift, scale, np.float64(median),
                                       np.float64(sigma)), float16_direct=True)


def integers(stream, shape, dtype, out, low, high):
    """Integers uniform in [low, high] (inclusive), converted to `dtype`.

    Ranges up to 2**32 take one 32-bit word per element, wider ones a 64-bit pair, as in
    PyTorch (and, as there, the modulo leaves a bias of at most range / 2**32 or 2**64).
    """
    span = high - low + 1
    if span <= 1 << 32:
        run = _launcher(K.randint32, stream, 1, np.int64(low), np.uint64(span))
    else:
        run = _launcher(K.randint64, stream, 2, np.int64(low), np.uint64(span & ((1 << 64) - 1)))
    return _fill(_target(out, shape, dtype), np.dtype(np.int64), run)


def geometric(stream, shape, dtype, out, p):
    """The number of Bernoulli(p) trials up to the first success (1, 2, ...), p in (0, 1)."""
    return _fill(_target(out, shape, dtype), np.dtype(np.int64),
                 _launcher(K.geometric, stream, 1, np.float64(np.log1p(-p))))


def bernoulli_scalar(stream, shape, dtype, out, p):
    """1 with probability `p` (a float in [0, 1]), else 0: what dropout uses."""
    # word < threshold has probability threshold / 2**32: p rounded up to that grid.
    threshold = np.uint64(int(np.ceil(p * 2.0 ** 32)))
    data = _target(out, shape, dtype)
    kind = data.dtype if data.dtype in _DIRECT_BERNOULLI else np.dtype(np.uint8)
    run = _launcher(K.bernoulli_scalar, stream, 1, threshold)
    if kind == np.bool_:  # Numba stores 0/1 into bool arrays through their bytes
        def run_bool(flat_out, run=run):
            run(arrays.reinterpret(flat_out, np.uint8))
        return _fill(data, kind, run_bool)
    return _fill(data, kind, run)


def _any_outside(values, low, high):
    """Whether 1-d float64 device array `values` has a NaN or a value outside [low, high]
    (one flag read back)."""
    if values.size == 0:
        return False
    flag = storage.empty((1,), np.uint8)
    storage.fill_(flag, 0)
    launch.grid_stride(K.flag_outside, values.size, values, np.float64(low), np.float64(high), flag)
    return bool(storage.to_numpy(flag)[0])


def checked_float64(a, shape, low, high):
    """(values, bad): `a`'s values broadcast to `shape` as a contiguous float64 device array,
    and whether any is NaN or outside [low, high].

    `bad` costs one flag read back to the host: PyTorch's CUDA kernels assert on such
    values instead; ember raises the CPU's error.
    """
    values = storage.astype(storage.broadcast_to(a, shape), np.float64)
    return values, _any_outside(arrays.flat(values), low, high)


def poisson(stream, rates, shape, dtype):
    """Poisson counts of `rates` (from `checked_float64`, >= 0), as a new `dtype` array."""
    flat_rates = arrays.flat(rates)

    def run(flat_out):
        seed, block = _reserve(stream, K.POISSON_BLOCKS)
        launch.grid_stride(K.poisson, flat_out.shape[0], flat_rates, flat_out, seed, block)
    return _fill(_target(None, shape, dtype), np.dtype(np.float64), run)


_FLOAT64_MAX = np.finfo(np.float64).max
_FLOAT64_TINY = np.finfo(np.float64).smallest_subnormal


def multinomial(stream, probs, num_samples, replacement):
    """(samples, problem): int64 (rows, num_samples) category indices drawn from the rows of
    the 1-d or 2-d weights `probs`, or (None, why) for bad weights, with why one of
    'not finite or negative', 'negative', 'infinite', 'zero sum': the CPU's checks, in its
    order, each reading back one flag.

    Without replacement (or one sample) as the CPU: the largest keys p / Exp(1) of each
    row, by the device top-k. With replacement: a binary search of u * total in each row's
    running sums (device scan), one thread per sample.
    """
    n_categories = probs.shape[-1]
    rows = probs.shape[0] if probs.ndim == 2 else 1
    if rows * n_categories == 0:
        samples = storage.empty((rows, num_samples), np.int64)
        return storage.fill_(samples, 0), None
    if replacement and num_samples > 1:
        shaped, negative = checked_float64(probs, tuple(probs.shape), 0.0, np.inf)
        values = arrays.flat(shaped)
        if negative:
            return None, "negative"
        if _any_outside(values, -np.inf, _FLOAT64_MAX):
            return None, "infinite"
    else:
        shaped, bad = checked_float64(probs, tuple(probs.shape), 0.0, _FLOAT64_MAX)
        values = arrays.flat(shaped)
        if bad:
            return None, "not finite or negative"
    weights = arrays.restride(values, (rows, n_categories), (8 * n_categories, 8))
    totals = reduction.reduce("sum", weights, (1,), np.float64)
    if _any_outside(totals, _FLOAT64_TINY, np.inf):
        return None, "zero sum"
    if not replacement or num_samples == 1:
        keys = storage.empty((rows, n_categories), np.float64)
        seed, block = _reserve(stream, 1)
        launch.grid_stride(K.multinomial_keys, (values.size + 3) // 4, values, arrays.flat(keys), seed, block)
        _, order = sorting.topk(keys, num_samples, 1, True)
        return order, None
    cdf = scans.accumulate(weights, 1, False, np.dtype(np.float64))
    samples = storage.empty((rows, num_samples), np.int64)
    seed, block = _reserve(stream, 2)
    launch.grid_stride(K.multinomial_search, (rows * num_samples + 3) // 4, cdf, arrays.flat(totals),
                       arrays.flat(samples), seed, block)
    return samples, None


def bernoulli_tensor(stream, shape, dtype, out, probabilities):
    """1 where u < p elementwise; `probabilities` from `checked_float64`."""
    data = _target(out, shape, dtype)
    kind = data.dtype if data.dtype in _DIRECT_BERNOULLI else np.dtype(np.uint8)
    flat_probabilities = arrays.flat(probabilities)

    def run(flat_out):
        seed, block = _reserve(stream, 1)
        target = arrays.reinterpret(flat_out, np.uint8) if flat_out.dtype == np.bool_ else flat_out
        launch.grid_stride(K.bernoulli_tensor, (flat_out.shape[0] + 3) // 4, target, flat_probabilities, seed,
                           block)
    return _fill(data, kind, run)


def normal_tensors(stream, shape, dtype, out, mean, std):
    """mean + std * z: `mean`, `std` device arrays broadcastable to `shape`, or floats;
    computed in the draw's type like the CPU (standard normals, then * and +)."""
    kind = _compute_type(dtype)
    shape = tuple(shape)

    def operand(value):
        if isinstance(value, float):
            return kind.type(value)
        return storage.broadcast_to(storage.astype(value, kind), shape)

    def run(flat_out):
        z = arrays.restride(flat_out, shape, _contiguous_strides(shape, kind.itemsize))
        _normal_run(dtype, stream, 0.0, 1.0)(flat_out)
        elementwise.binary("mul", operand(std), z, z)
        elementwise.binary("add", operand(mean), z, z)
    return _fill(_target(out, shape, dtype), kind, run)


def _contiguous_strides(shape, itemsize):
    strides, step = [], itemsize
    for n in reversed(shape):
        strides.append(step)
        step *= max(n, 1)
    return tuple(reversed(strides))


def permutation(stream, n):
    """A random permutation of 0 .. n-1 as int64, as PyTorch's CUDA randperm: random 64-bit
    keys sorted on the device. Equal keys (probability about n**2 / 2**65) keep index
    order: a tiny bias."""
    keys = integers(stream, (n,), np.dtype(np.int64), None, -(1 << 63), (1 << 63) - 1)
    return sorting.argsort(keys, 0, False)
