"""Random sampling on CUDA tensors: fills that run Philox kernels on the device.

Called by the random ops (`_ops.random`, `_ops.random_inplace`, `_ops.multinomial`)
after their argument checks, with the tensor to fill and the CUDA `Generator` to draw
from. Each fill reserves offset words from the generator (4 per counter block its kernel
reads per group of four elements), launches its kernel(s) from `_backends.cuda.kernels.random`,
and never copies values to the host. Only a tensor of parameters (probabilities,
standard deviations, multinomial weights, Poisson rates) is checked for bad values, and
each check reads back one flag: PyTorch's CUDA kernels assert there instead, ember
raises the CPU's error before writing anything.

A kernel writes float32, float64 or int64 (float16 too where it computes in float32;
bernoulli: any type but bfloat16) into a contiguous tensor directly; a tensor of another
dtype or layout is filled from a contiguous buffer of the kernel's type by one device
copy, which also casts float32 to bfloat16.
"""
import numpy as np

from . import arrays, elementwise, launch, reduction, storage
from ... import _dtype as D
from . import runtime
from .kernels import random as K

__all__ = ["uniform_", "normal_", "log_normal_", "exponential_", "cauchy_", "integers_", "geometric_",
           "bernoulli_scalar_", "bernoulli_tensor_", "normal_tensors", "checked_float64", "multinomial",
           "poisson"]

# Mantissa digits of the half types: rand() draws them on their own grid, so that a
# float32 value just below 1 cannot round up to 1.0 in the cast.
_NARROW_DIGITS = {"float16": 11, "bfloat16": 8}
# Dtypes a bernoulli kernel writes directly (float16 too: dropout masks under AMP); bfloat16
# arrays cannot be typed by Numba and go through a uint8 buffer and a device cast.
_DIRECT_BERNOULLI = {np.dtype(t) for t in (np.float16, np.float32, np.float64, np.int8, np.int16,
                                           np.int32, np.int64, np.uint8, np.bool_)}


def _compute_type(dtype):
    """float64 for float64 tensors, float32 for every other float (half types included)."""
    return np.dtype(np.float64) if dtype is D.float64 else np.dtype(np.float32)


def _reserve(gen, blocks):
    """The kernel's (seed, first counter block) arguments; advances the generator."""
    seed, offset = gen._philox_reserve(4 * blocks)
    return np.uint64(seed), np.uint64(offset // 4)


def _fill(tensor, kind, run, float16_direct=False):
    """Fill `tensor` by `run(flat_out)`, a launch writing a contiguous 1-d array of `kind`.

    Writes straight into the tensor when it is contiguous and of that type (or float16,
    for kernels that compute in float32 and may store half: `float16_direct`), else into
    a buffer that one device copy moves (and casts) into it. Bumps the version.
    """
    data = tensor._data
    if data.size:
        with runtime.device_context(tensor._device.index or 0):
            direct = data.dtype == kind or float16_direct and data.dtype == np.float16
            if direct and arrays.is_c(data):
                run(arrays.flat(data))
            else:
                buf = storage.empty(data.shape, kind)
                run(arrays.flat(buf))
                storage.copy_(data, buf)
    tensor._bump_version()
    return tensor


def _launcher(kernel, gen, blocks, *params):
    """run(out) for `kernel(out, seed, block, *params)` with offsets from `gen`."""
    def run(out):
        seed, block = _reserve(gen, blocks)
        launch.grid_stride(kernel, (out.shape[0] + 3) // 4, out, seed, block, *params)
    return run


def _uniform_grid(dtype):
    """(shift, scale) that turn a 32-bit word into a float32 in [0, 1) on dtype's grid."""
    digits = min(24, _NARROW_DIGITS.get(dtype.name, 24))
    return np.uint64(32 - digits), np.float32(2.0 ** -digits)


def uniform_(tensor, gen, low, high):
    """Fill with uniform samples in [low, high)."""
    kind = _compute_type(tensor._dtype)
    if kind == np.float64:
        run = _launcher(K.uniform64, gen, 2, np.float64(low), np.float64(high - low))
    else:
        shift, scale = _uniform_grid(tensor._dtype)
        run = _launcher(K.uniform32, gen, 1, shift, scale, np.float32(low), np.float32(high - low))
    return _fill(tensor, kind, run, float16_direct=True)


def _normal_run(dtype, gen, mean, std):
    if _compute_type(dtype) == np.float64:
        return _launcher(K.normal64, gen, 2, np.float64(mean), np.float64(std))
    return _launcher(K.normal32, gen, 1, np.float32(mean), np.float32(std))


def normal_(tensor, gen, mean, std):
    """Fill with normal samples of mean `mean` and standard deviation `std`."""
    return _fill(tensor, _compute_type(tensor._dtype), _normal_run(tensor._dtype, gen, mean, std),
                 float16_direct=True)


def log_normal_(tensor, gen, mean, std):
    """Fill with exp(x), x normal (mean, std): exp runs on the kernel's output type."""
    normal = _normal_run(tensor._dtype, gen, mean, std)

    def run(out):
        normal(out)
        elementwise.unary("exp", out, out)
    return _fill(tensor, _compute_type(tensor._dtype), run)


def exponential_(tensor, gen, lambd):
    """Fill with exponential samples of rate `lambd`."""
    kind = _compute_type(tensor._dtype)
    if kind == np.float64:
        return _fill(tensor, kind, _launcher(K.exponential64, gen, 2, np.float64(lambd)))
    return _fill(tensor, kind, _launcher(K.exponential32, gen, 1, np.float32(lambd)), float16_direct=True)


def cauchy_(tensor, gen, median, sigma):
    """Fill with Cauchy samples median + sigma * tan(pi * (u - 1/2))."""
    kind = _compute_type(tensor._dtype)
    if kind == np.float64:
        return _fill(tensor, kind, _launcher(K.cauchy64, gen, 2, np.float64(median), np.float64(sigma)))
    shift, scale = _uniform_grid(tensor._dtype)
    return _fill(tensor, kind, _launcher(K.cauchy32, gen, 1, shift, scale, np.float64(median),
                                         np.float64(sigma)), float16_direct=True)


def integers_(tensor, gen, low, high):
    """Fill with integers uniform in [low, high] (inclusive), converted to the tensor's dtype.

    Ranges up to 2**32 take one 32-bit word per element, wider ones a 64-bit pair, as in
    PyTorch (and, as there, the modulo leaves a bias of at most range / 2**32 or 2**64).
    """
    span = high - low + 1
    if span <= 1 << 32:
        run = _launcher(K.randint32, gen, 1, np.int64(low), np.uint64(span))
    else:
        run = _launcher(K.randint64, gen, 2, np.int64(low), np.uint64(span & ((1 << 64) - 1)))
    return _fill(tensor, np.dtype(np.int64), run)


def geometric_(tensor, gen, p):
    """Fill with geometric samples (trials up to the first success, p in (0, 1))."""
    return _fill(tensor, np.dtype(np.int64), _launcher(K.geometric, gen, 1, np.float64(np.log1p(-p))))


def bernoulli_scalar_(tensor, gen, p):
    """Fill with 1 with probability `p` (a float in [0, 1]), else 0: what dropout uses."""
    # word < threshold has probability threshold / 2**32: p rounded up to that grid.
    threshold = np.uint64(int(np.ceil(p * 2.0 ** 32)))
    kind = tensor._data.dtype if tensor._data.dtype in _DIRECT_BERNOULLI else np.dtype(np.uint8)
    run = _launcher(K.bernoulli_scalar, gen, 1, threshold)
    if kind == np.bool_:  # Numba stores 0/1 into bool arrays through their bytes
        def run_bool(out, run=run):
            run(arrays.reinterpret(out, np.uint8))
        return _fill(tensor, kind, run_bool)
    return _fill(tensor, kind, run)


def _any_outside(values, low, high):
    """Whether 1-d float64 device array `values` has a NaN or a value outside [low, high]
    (one flag read back)."""
    if values.size == 0:
        return False
    flag = storage.empty((1,), np.uint8)
    storage.fill_(flag, 0)
    launch.grid_stride(K.flag_outside, values.size, values, np.float64(low), np.float64(high), flag)
    return bool(storage.to_numpy(flag)[0])


def checked_float64(tensor, shape, low, high):
    """(values, bad): tensor's values broadcast to `shape` as a contiguous 1-d float64 device
    array, and whether any is NaN or outside [low, high].

    `bad` costs one flag read back to the host: PyTorch's CUDA kernels assert on such
    values instead; ember raises the CPU's error.
    """
    with runtime.device_context(tensor._device.index or 0):
        values = arrays.flat(storage.astype(storage.broadcast_to(tensor._data, shape), np.float64))
        return values, _any_outside(values, low, high)


def poisson(result, rates, gen):
    """Fill `result` with Poisson counts of `rates` (from `checked_float64`, >= 0)."""
    def run(out):
        seed, block = _reserve(gen, K.POISSON_BLOCKS)
        launch.grid_stride(K.poisson, out.shape[0], rates, out, seed, block)
    return _fill(result, np.dtype(np.float64), run)


_FLOAT64_MAX = np.finfo(np.float64).max
_FLOAT64_TINY = np.finfo(np.float64).smallest_subnormal


def multinomial(input, num_samples, replacement, gen):
    """(samples, problem): int64 tensor (rows, num_samples) drawn from the rows of the 1-d
    or 2-d CUDA tensor `input`, or (None, why) for bad weights, with why one of
    'not finite or negative', 'negative', 'infinite', 'zero sum': the CPU's checks, in its
    order, each reading back one flag.

    Without replacement (or one sample) as the CPU: the largest keys p / Exp(1) of each
    row, by the device top-k. With replacement: a binary search of u * total in each row's
    running sums (device scan), one thread per sample.
    """
    from . import scans as _cuda_scan, sorting as _cuda_sort
    from ..._tensor import Tensor
    n_categories = input.shape[-1]
    rows = input.shape[0] if input.dim() == 2 else 1
    device = input._device
    with runtime.device_context(device.index or 0):
        if replacement and num_samples > 1:
            values, negative = checked_float64(input, tuple(input.shape), 0.0, np.inf)
            if negative:
                return None, "negative"
            if _any_outside(values, -np.inf, _FLOAT64_MAX):
                return None, "infinite"
        else:
            values, bad = checked_float64(input, tuple(input.shape), 0.0, _FLOAT64_MAX)
            if bad:
                return None, "not finite or negative"
        weights = arrays.restride(values, (rows, n_categories), (8 * n_categories, 8))
        totals = reduction.reduce("sum", weights, (1,), np.float64)
        if _any_outside(totals, _FLOAT64_TINY, np.inf):
            return None, "zero sum"
        if not replacement or num_samples == 1:
            keys = storage.empty((rows, n_categories), np.float64)
            seed, block = _reserve(gen, 1)
            launch.grid_stride(K.multinomial_keys, (values.size + 3) // 4, values, arrays.flat(keys), seed, block)
            _, order = _cuda_sort.topk(Tensor._wrap(keys, D.float64, device), num_samples, 1, True)
            return order, None
        cdf = _cuda_scan.accumulate(Tensor._wrap(weights, D.float64, device), 1, False, D.float64)._data
        samples = storage.empty((rows, num_samples), np.int64)
        seed, block = _reserve(gen, 2)
        launch.grid_stride(K.multinomial_search, (rows * num_samples + 3) // 4, cdf, arrays.flat(totals),
                      arrays.flat(samples), seed, block)
        return Tensor._wrap(samples, D.int64, device), None


def bernoulli_tensor_(tensor, gen, probabilities):
    """Fill with 1 where u < p elementwise; `probabilities`: from `checked_float64`."""
    kind = tensor._data.dtype if tensor._data.dtype in _DIRECT_BERNOULLI else np.dtype(np.uint8)

    def run(out):
        seed, block = _reserve(gen, 1)
        target = arrays.reinterpret(out, np.uint8) if out.dtype == np.bool_ else out
        launch.grid_stride(K.bernoulli_tensor, (out.shape[0] + 3) // 4, target, probabilities, seed, block)
    return _fill(tensor, kind, run)


def normal_tensors(out, gen, mean, std):
    """Fill `out` with mean + std * z: `mean`, `std` device arrays broadcastable to out, or
    floats; computed in out's compute type like the CPU (standard normals, then * and +)."""
    kind = _compute_type(out._dtype)
    shape = tuple(out._data.shape)

    def operand(value):
        if isinstance(value, float):
            return kind.type(value)
        return storage.broadcast_to(storage.astype(value, kind), shape)

    def run(flat):
        z = arrays.restride(flat, shape, _contiguous_strides(shape, kind.itemsize))
        _normal_run(out._dtype, gen, 0.0, 1.0)(flat)
        elementwise.binary("mul", operand(std), z, z)
        elementwise.binary("add", operand(mean), z, z)
    return _fill(out, kind, run)


def _contiguous_strides(shape, itemsize):
    strides, step = [], itemsize
    for n in reversed(shape):
        strides.append(step)
        step *= max(n, 1)
    return tuple(reversed(strides))
