"""Numba CUDA kernels for random numbers: counter-based Philox4x32-10, as cuRAND and PyTorch.

Philox turns a 128-bit counter and a 64-bit key into four random 32-bit words with no
state to carry between calls, so every thread can compute its own numbers. Element i of
an op's output is made from

    key     = the generator's seed
    counter = (block, i // 4)   low 64 bits: the generator's offset / 4 (+1 for a second
                                word block), high 64 bits: the group (cuRAND's subsequence)

and word i % 4 of that block (or words 2(i % 4), 2(i % 4)+1 of two blocks, for 64-bit
values). A result therefore depends only on (seed, offset, i), never on the launch
configuration; each op advances the generator's offset by the blocks it used, so
successive calls draw independent streams.

Every kernel is a grid-stride loop over the groups of four elements of a contiguous 1-d
output `out` (any length: the last group is cut short). Values are computed in the
output's float type (float32 or float64); half types are drawn in float32 by the caller
and cast on the device. The integer arithmetic is done in uint64 (32-bit values in
64-bit registers) so that nothing overflows: under Numba's simulator the kernels run as
Python on NumPy scalars, where an overflowing uint32 add would warn. Uniform draws for
logarithms use (0, 1] so that log() never sees 0 and the simulator's `math` never raises.
"""
import math

import numpy as np
from numba import cuda

__all__ = ["philox4x32", "uniform32", "uniform64", "normal32", "normal64", "exponential32",
           "exponential64", "cauchy32", "cauchy64", "randint32", "randint64", "bernoulli_scalar",
           "bernoulli_tensor", "geometric", "flag_outside"]

_JIT = dict(cache=True)

# Philox4x32 constants (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3").
_M0 = np.uint64(0xD2511F53)
_M1 = np.uint64(0xCD9E8D57)
_W0 = np.uint64(0x9E3779B9)
_W1 = np.uint64(0xBB67AE85)
_MASK32 = np.uint64(0xFFFFFFFF)
_U32 = np.uint64(32)
_U1 = np.uint64(1)
_U8 = np.uint64(8)
_U11 = np.uint64(11)
_TOP_BIT = np.uint64(1 << 63)
_HALF_INT64 = np.int64(1 << 62)

_F32_2POW_M24 = np.float32(2.0 ** -24)
_F32_ONE = np.float32(1.0)
_F32_MINUS_TWO = np.float32(-2.0)
_F32_TWO_PI = np.float32(2.0 * math.pi)
_F64_2POW_M53 = 2.0 ** -53
_F64_2POW_M32 = 2.0 ** -32
_INT64_MAX_AS_FLOAT = 9.223372036854775e18
_INT64_MAX = np.int64((1 << 63) - 1)


def philox4x32(seed, block, group, words, at):
    """words[at:at+4] = Philox4x32-10(key=seed, counter=(block, group)); all uint64."""
    k0 = seed & _MASK32
    k1 = seed >> _U32
    c0 = block & _MASK32
    c1 = block >> _U32
    c2 = group & _MASK32
    c3 = group >> _U32
    for _ in range(10):
        p0 = _M0 * c0
        p1 = _M1 * c2
        c0, c1, c2, c3 = ((p1 >> _U32) ^ c1 ^ k0, p1 & _MASK32,
                          (p0 >> _U32) ^ c3 ^ k1, p0 & _MASK32)
        k0 = (k0 + _W0) & _MASK32
        k1 = (k1 + _W1) & _MASK32
    words[at] = c0
    words[at + 1] = c1
    words[at + 2] = c2
    words[at + 3] = c3


_philox = cuda.jit(device=True)(philox4x32)


@cuda.jit(device=True)
def _draw(seed, block, g, words, blocks):
    """Fill words[0:4*blocks] for group g from `blocks` consecutive counter blocks."""
    group = np.uint64(g)
    _philox(seed, block, group, words, 0)
    if blocks == 2:
        _philox(seed, block + _U1, group, words, 4)


@cuda.jit(device=True)
def _word64(words, j):
    return (words[2 * j] << _U32) | words[2 * j + 1]


@cuda.jit(device=True)
def _open_unit32(x):
    """A float32 in (0, 1] from the top 24 bits of word x."""
    return (np.float32(x >> _U8) + _F32_ONE) * _F32_2POW_M24


@cuda.jit(device=True)
def _open_unit64(x):
    """A float64 in (0, 1] from the top 53 bits of 64-bit x."""
    return (np.float64(x >> _U11) + 1.0) * _F64_2POW_M53


@cuda.jit(device=True)
def _unit64(x):
    """A float64 in [0, 1) from the top 53 bits of 64-bit x."""
    return np.float64(x >> _U11) * _F64_2POW_M53


# --- continuous distributions -------------------------------------------------------------


@cuda.jit(**_JIT)
def uniform32(out, seed, block, shift, scale, low, span):
    """out = low + span * u, u in [0, 1) on a grid of 2**-bits (shift = 32 - bits; float32)."""
    n = out.shape[0]
    words = cuda.local.array(4, np.uint64)
    for g in range(cuda.grid(1), (n + 3) // 4, cuda.gridsize(1)):
        _draw(seed, block, g, words, 1)
        for j in range(min(4, n - 4 * g)):
            out[4 * g + j] = low + span * (np.float32(words[j] >> shift) * scale)


@cuda.jit(**_JIT)
def uniform64(out, seed, block, low, span):
    """out = low + span * u, u in [0, 1) with 53 random bits (float64; two blocks)."""
    n = out.shape[0]
    words = cuda.local.array(8, np.uint64)
    for g in range(cuda.grid(1), (n + 3) // 4, cuda.gridsize(1)):
        _draw(seed, block, g, words, 2)
        for j in range(min(4, n - 4 * g)):
            out[4 * g + j] = low + span * _unit64(_word64(words, j))


@cuda.jit(**_JIT)
def normal32(out, seed, block, mean, std):
    """out = mean + std * z, z standard normal by Box-Muller on word pairs (float32)."""
    n = out.shape[0]
    words = cuda.local.array(4, np.uint64)
    for g in range(cuda.grid(1), (n + 3) // 4, cuda.gridsize(1)):
        _draw(seed, block, g, words, 1)
        for j in range(0, min(4, n - 4 * g), 2):
            radius = math.sqrt(_F32_MINUS_TWO * math.log(_open_unit32(words[j])))
            angle = _F32_TWO_PI * (np.float32(words[j + 1] >> _U8) * _F32_2POW_M24)
            out[4 * g + j] = mean + std * np.float32(radius * math.cos(angle))
            if 4 * g + j + 1 < n:
                out[4 * g + j + 1] = mean + std * np.float32(radius * math.sin(angle))


@cuda.jit(**_JIT)
def normal64(out, seed, block, mean, std):
    """out = mean + std * z, z standard normal by Box-Muller on 53-bit uniforms (float64)."""
    n = out.shape[0]
    words = cuda.local.array(8, np.uint64)
    for g in range(cuda.grid(1), (n + 3) // 4, cuda.gridsize(1)):
        _draw(seed, block, g, words, 2)
        for j in range(0, min(4, n - 4 * g), 2):
            radius = math.sqrt(-2.0 * math.log(_open_unit64(_word64(words, j))))
            angle = 2.0 * math.pi * _unit64(_word64(words, j + 1))
            out[4 * g + j] = mean + std * (radius * math.cos(angle))
            if 4 * g + j + 1 < n:
                out[4 * g + j + 1] = mean + std * (radius * math.sin(angle))


@cuda.jit(**_JIT)
def exponential32(out, seed, block, lambd):
    """out = -log(u) / lambd, u in (0, 1] (float32)."""
    n = out.shape[0]
    words = cuda.local.array(4, np.uint64)
    for g in range(cuda.grid(1), (n + 3) // 4, cuda.gridsize(1)):
        _draw(seed, block, g, words, 1)
        for j in range(min(4, n - 4 * g)):
            out[4 * g + j] = np.float32(-math.log(_open_unit32(words[j]))) / lambd


@cuda.jit(**_JIT)
def exponential64(out, seed, block, lambd):
    """out = -log(u) / lambd, u in (0, 1] with 53 random bits (float64)."""
    n = out.shape[0]
    words = cuda.local.array(8, np.uint64)
    for g in range(cuda.grid(1), (n + 3) // 4, cuda.gridsize(1)):
        _draw(seed, block, g, words, 2)
        for j in range(min(4, n - 4 * g)):
            out[4 * g + j] = -math.log(_open_unit64(_word64(words, j))) / lambd


@cuda.jit(**_JIT)
def cauchy32(out, seed, block, shift, scale, median, sigma):
    """out = median + sigma * tan(pi * (u - 1/2)), u on the output type's grid (as uniform32),
    computed in float64 like the CPU."""
    n = out.shape[0]
    words = cuda.local.array(4, np.uint64)
    for g in range(cuda.grid(1), (n + 3) // 4, cuda.gridsize(1)):
        _draw(seed, block, g, words, 1)
        for j in range(min(4, n - 4 * g)):
            u = np.float64(np.float32(words[j] >> shift) * scale)
            out[4 * g + j] = median + sigma * math.tan(math.pi * (u - 0.5))


@cuda.jit(**_JIT)
def cauchy64(out, seed, block, median, sigma):
    """out = median + sigma * tan(pi * (u - 1/2)), u with 53 random bits (float64)."""
    n = out.shape[0]
    words = cuda.local.array(8, np.uint64)
    for g in range(cuda.grid(1), (n + 3) // 4, cuda.gridsize(1)):
        _draw(seed, block, g, words, 2)
        for j in range(min(4, n - 4 * g)):
            out[4 * g + j] = median + sigma * math.tan(math.pi * (_unit64(_word64(words, j)) - 0.5))


# --- discrete distributions ---------------------------------------------------------------


@cuda.jit(**_JIT)
def randint32(out, seed, block, low, span):
    """out = low + word % span for span <= 2**32 (int64 out, int64 low, uint64 span)."""
    n = out.shape[0]
    words = cuda.local.array(4, np.uint64)
    for g in range(cuda.grid(1), (n + 3) // 4, cuda.gridsize(1)):
        _draw(seed, block, g, words, 1)
        for j in range(min(4, n - 4 * g)):
            out[4 * g + j] = low + np.int64(words[j] % span)


@cuda.jit(**_JIT)
def randint64(out, seed, block, low, span):
    """out = low + r % span for a 64-bit r (span 0 stands for 2**64: the whole int64 range)."""
    n = out.shape[0]
    words = cuda.local.array(8, np.uint64)
    for g in range(cuda.grid(1), (n + 3) // 4, cuda.gridsize(1)):
        _draw(seed, block, g, words, 2)
        for j in range(min(4, n - 4 * g)):
            r = _word64(words, j)
            step = r if span == 0 else r % span
            # low + step fits in int64 (it is at most the range's top) but step may not:
            # add its top bit as two halves so that no intermediate overflows.
            if step >= _TOP_BIT:
                out[4 * g + j] = low + np.int64(step - _TOP_BIT) + _HALF_INT64 + _HALF_INT64
            else:
                out[4 * g + j] = low + np.int64(step)


@cuda.jit(**_JIT)
def bernoulli_scalar(out, seed, block, threshold):
    """out = 1 where word < threshold (P = threshold / 2**32), else 0; out of any numeric type."""
    n = out.shape[0]
    words = cuda.local.array(4, np.uint64)
    for g in range(cuda.grid(1), (n + 3) // 4, cuda.gridsize(1)):
        _draw(seed, block, g, words, 1)
        for j in range(min(4, n - 4 * g)):
            out[4 * g + j] = 1 if words[j] < threshold else 0


@cuda.jit(**_JIT)
def bernoulli_tensor(out, p, seed, block):
    """out = 1 where u < p[i] (u = word / 2**32, p float64 of out's length), else 0."""
    n = out.shape[0]
    words = cuda.local.array(4, np.uint64)
    for g in range(cuda.grid(1), (n + 3) // 4, cuda.gridsize(1)):
        _draw(seed, block, g, words, 1)
        for j in range(min(4, n - 4 * g)):
            out[4 * g + j] = 1 if np.float64(words[j]) * _F64_2POW_M32 < p[4 * g + j] else 0


@cuda.jit(**_JIT)
def geometric(out, seed, block, log1m_p):
    """out = ceil(log(u) / log(1 - p)) >= 1, u in (0, 1), as int64 (clamped at int64 max)."""
    n = out.shape[0]
    words = cuda.local.array(4, np.uint64)
    for g in range(cuda.grid(1), (n + 3) // 4, cuda.gridsize(1)):
        _draw(seed, block, g, words, 1)
        for j in range(min(4, n - 4 * g)):
            u = (np.float64(words[j]) + 0.5) * _F64_2POW_M32
            trials = math.log(u) / log1m_p
            if trials >= _INT64_MAX_AS_FLOAT:
                out[4 * g + j] = _INT64_MAX
            else:
                count = np.int64(trials)  # trials > 0: truncation, then up to the ceiling
                if count < trials:
                    count += 1
                out[4 * g + j] = count


@cuda.jit(**_JIT)
def flag_outside(values, low, high, flag):
    """flag[0] = 1 if any of `values` (1-d) is outside [low, high] or NaN."""
    for i in range(cuda.grid(1), values.shape[0], cuda.gridsize(1)):
        v = values[i]
        if not (v >= low and v <= high):
            flag[0] = 1
