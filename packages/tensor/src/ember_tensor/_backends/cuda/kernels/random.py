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

Every elementwise kernel is a grid-stride loop over the groups of four elements of a
contiguous 1-d output `out` (any length: the last group is cut short). multinomial's
kernels and poisson (a variable number of draws per element, on counter streams of its
own) follow at the end. Values are computed in the
output's float type (float32 or float64); half types are drawn in float32 by the caller
and cast on the device. The integer arithmetic is done in uint64 (32-bit values in
64-bit registers) so that nothing overflows: under Numba's simulator the kernels run as
Python on NumPy scalars, where an overflowing uint32 add would warn. Uniform draws for
logarithms use (0, 1] so that log() never sees 0 and the simulator's `math` never raises.

One file on purpose, although long: the kernels are cached on disk (`cache=True`), and
Numba keys that cache on the defining file alone, so a kernel must not inline Philox from
another file (an edit there would leave a stale kernel in the cache).
"""
import math

import numpy as np
from numba import cuda

__all__ = ["philox4x32", "uniform32", "uniform64", "normal32", "normal64", "exponential32",
           "exponential64", "cauchy32", "cauchy64", "randint32", "randint64", "bernoulli_scalar",
           "bernoulli_tensor", "geometric", "multinomial_keys", "multinomial_search", "poisson", "POISSON_BLOCKS",
           "flag_outside"]

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


def philox4x32(seed, block, group):
    """Philox4x32-10 of counter (block, group) under key `seed`: four words (uint64 < 2**32)."""
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
    return c0, c1, c2, c3


_philox = cuda.jit(device=True)(philox4x32)


@cuda.jit(device=True)
def _words32(seed, block, g):
    """The four 32-bit words of group g (one counter block)."""
    return _philox(seed, block, np.uint64(g))


@cuda.jit(device=True)
def _words64(seed, block, g):
    """Four 64-bit words for group g, from two consecutive counter blocks."""
    a0, a1, a2, a3 = _philox(seed, block, np.uint64(g))
    b0, b1, b2, b3 = _philox(seed, block + _U1, np.uint64(g))
    return (a0 << _U32) | a1, (a2 << _U32) | a3, (b0 << _U32) | b1, (b2 << _U32) | b3


@cuda.jit(device=True)
def _put4(out, i, v0, v1, v2, v3):
    """out[i:i+4] = v0..v3, cut at the end of out (values are computed for all four in
    registers: a local array indexed at run time would live in slow local memory)."""
    n = out.shape[0]
    out[i] = v0
    if i + 1 < n:
        out[i + 1] = v1
    if i + 2 < n:
        out[i + 2] = v2
    if i + 3 < n:
        out[i + 3] = v3


@cuda.jit(device=True)
def _unit32(x, shift, scale):
    """A float32 in [0, 1) from the top (32 - shift) bits of word x, `scale` = 2**(shift - 32)."""
    return np.float32(x >> shift) * scale


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


@cuda.jit(device=True)
def _box_muller32(a, b):
    """Two independent standard normals (float32) from words a, b."""
    radius = math.sqrt(_F32_MINUS_TWO * math.log(_open_unit32(a)))
    angle = _F32_TWO_PI * (np.float32(b >> _U8) * _F32_2POW_M24)
    return np.float32(radius * math.cos(angle)), np.float32(radius * math.sin(angle))


@cuda.jit(device=True)
def _box_muller64(a, b):
    """Two independent standard normals (float64) from 64-bit words a, b."""
    radius = math.sqrt(-2.0 * math.log(_open_unit64(a)))
    angle = 2.0 * math.pi * _unit64(b)
    return radius * math.cos(angle), radius * math.sin(angle)


# --- continuous distributions -------------------------------------------------------------


@cuda.jit(**_JIT)
def uniform32(out, seed, block, shift, scale, low, span):
    """out = low + span * u, u in [0, 1) on a grid of 2**-bits (shift = 32 - bits; float32)."""
    for g in range(cuda.grid(1), (out.shape[0] + 3) // 4, cuda.gridsize(1)):
        x0, x1, x2, x3 = _words32(seed, block, g)
        _put4(out, 4 * g, low + span * _unit32(x0, shift, scale), low + span * _unit32(x1, shift, scale),
              low + span * _unit32(x2, shift, scale), low + span * _unit32(x3, shift, scale))


@cuda.jit(**_JIT)
def uniform64(out, seed, block, low, span):
    """out = low + span * u, u in [0, 1) with 53 random bits (float64; two blocks)."""
    for g in range(cuda.grid(1), (out.shape[0] + 3) // 4, cuda.gridsize(1)):
        r0, r1, r2, r3 = _words64(seed, block, g)
        _put4(out, 4 * g, low + span * _unit64(r0), low + span * _unit64(r1), low + span * _unit64(r2),
              low + span * _unit64(r3))


@cuda.jit(**_JIT)
def normal32(out, seed, block, mean, std):
    """out = mean + std * z, z standard normal by Box-Muller on word pairs (float32)."""
    for g in range(cuda.grid(1), (out.shape[0] + 3) // 4, cuda.gridsize(1)):
        x0, x1, x2, x3 = _words32(seed, block, g)
        z0, z1 = _box_muller32(x0, x1)
        z2, z3 = _box_muller32(x2, x3)
        _put4(out, 4 * g, mean + std * z0, mean + std * z1, mean + std * z2, mean + std * z3)


@cuda.jit(**_JIT)
def normal64(out, seed, block, mean, std):
    """out = mean + std * z, z standard normal by Box-Muller on 53-bit uniforms (float64)."""
    for g in range(cuda.grid(1), (out.shape[0] + 3) // 4, cuda.gridsize(1)):
        r0, r1, r2, r3 = _words64(seed, block, g)
        z0, z1 = _box_muller64(r0, r1)
        z2, z3 = _box_muller64(r2, r3)
        _put4(out, 4 * g, mean + std * z0, mean + std * z1, mean + std * z2, mean + std * z3)


@cuda.jit(device=True)
def _exponential32(x, lambd):
    return np.float32(-math.log(_open_unit32(x))) / lambd


@cuda.jit(**_JIT)
def exponential32(out, seed, block, lambd):
    """out = -log(u) / lambd, u in (0, 1] (float32)."""
    for g in range(cuda.grid(1), (out.shape[0] + 3) // 4, cuda.gridsize(1)):
        x0, x1, x2, x3 = _words32(seed, block, g)
        _put4(out, 4 * g, _exponential32(x0, lambd), _exponential32(x1, lambd), _exponential32(x2, lambd),
              _exponential32(x3, lambd))


@cuda.jit(device=True)
def _exponential64(r, lambd):
    return -math.log(_open_unit64(r)) / lambd


@cuda.jit(**_JIT)
def exponential64(out, seed, block, lambd):
    """out = -log(u) / lambd, u in (0, 1] with 53 random bits (float64)."""
    for g in range(cuda.grid(1), (out.shape[0] + 3) // 4, cuda.gridsize(1)):
        r0, r1, r2, r3 = _words64(seed, block, g)
        _put4(out, 4 * g, _exponential64(r0, lambd), _exponential64(r1, lambd), _exponential64(r2, lambd),
              _exponential64(r3, lambd))


@cuda.jit(device=True)
def _cauchy(u, median, sigma):
    return median + sigma * math.tan(math.pi * (u - 0.5))


@cuda.jit(**_JIT)
def cauchy32(out, seed, block, shift, scale, median, sigma):
    """out = median + sigma * tan(pi * (u - 1/2)), u on the output type's grid (as uniform32),
    computed in float64 like the CPU."""
    for g in range(cuda.grid(1), (out.shape[0] + 3) // 4, cuda.gridsize(1)):
        x0, x1, x2, x3 = _words32(seed, block, g)
        _put4(out, 4 * g, _cauchy(np.float64(_unit32(x0, shift, scale)), median, sigma),
              _cauchy(np.float64(_unit32(x1, shift, scale)), median, sigma),
              _cauchy(np.float64(_unit32(x2, shift, scale)), median, sigma),
              _cauchy(np.float64(_unit32(x3, shift, scale)), median, sigma))


@cuda.jit(**_JIT)
def cauchy64(out, seed, block, median, sigma):
    """out = median + sigma * tan(pi * (u - 1/2)), u with 53 random bits (float64)."""
    for g in range(cuda.grid(1), (out.shape[0] + 3) // 4, cuda.gridsize(1)):
        r0, r1, r2, r3 = _words64(seed, block, g)
        _put4(out, 4 * g, _cauchy(_unit64(r0), median, sigma), _cauchy(_unit64(r1), median, sigma),
              _cauchy(_unit64(r2), median, sigma), _cauchy(_unit64(r3), median, sigma))


# --- discrete distributions ---------------------------------------------------------------


@cuda.jit(**_JIT)
def randint32(out, seed, block, low, span):
    """out = low + word % span for span <= 2**32 (int64 out, int64 low, uint64 span)."""
    for g in range(cuda.grid(1), (out.shape[0] + 3) // 4, cuda.gridsize(1)):
        x0, x1, x2, x3 = _words32(seed, block, g)
        _put4(out, 4 * g, low + np.int64(x0 % span), low + np.int64(x1 % span), low + np.int64(x2 % span),
              low + np.int64(x3 % span))


@cuda.jit(device=True)
def _offset_by(low, r, span):
    """low + r % span (span 0: 2**64) without overflow: the sum fits in int64 (it is at most
    the range's top) but the step may not, so its top bit is added as two halves."""
    step = r if span == 0 else r % span
    if step >= _TOP_BIT:
        return low + np.int64(step - _TOP_BIT) + _HALF_INT64 + _HALF_INT64
    return low + np.int64(step)


@cuda.jit(**_JIT)
def randint64(out, seed, block, low, span):
    """out = low + r % span for a 64-bit r (span 0 stands for 2**64: the whole int64 range)."""
    for g in range(cuda.grid(1), (out.shape[0] + 3) // 4, cuda.gridsize(1)):
        r0, r1, r2, r3 = _words64(seed, block, g)
        _put4(out, 4 * g, _offset_by(low, r0, span), _offset_by(low, r1, span), _offset_by(low, r2, span),
              _offset_by(low, r3, span))


@cuda.jit(**_JIT)
def bernoulli_scalar(out, seed, block, threshold):
    """out = 1 where word < threshold (P = threshold / 2**32), else 0; out of any numeric type."""
    for g in range(cuda.grid(1), (out.shape[0] + 3) // 4, cuda.gridsize(1)):
        x0, x1, x2, x3 = _words32(seed, block, g)
        _put4(out, 4 * g, 1 if x0 < threshold else 0, 1 if x1 < threshold else 0,
              1 if x2 < threshold else 0, 1 if x3 < threshold else 0)


@cuda.jit(device=True)
def _below(x, p, i):
    """1 if word x / 2**32 < p[i], else 0 (0 past the end of p: the tail of a last group)."""
    if i >= p.shape[0]:
        return 0
    return 1 if np.float64(x) * _F64_2POW_M32 < p[i] else 0


@cuda.jit(**_JIT)
def bernoulli_tensor(out, p, seed, block):
    """out = 1 where u < p[i] (u = word / 2**32, p float64 of out's length), else 0."""
    for g in range(cuda.grid(1), (out.shape[0] + 3) // 4, cuda.gridsize(1)):
        x0, x1, x2, x3 = _words32(seed, block, g)
        i = 4 * g
        _put4(out, i, _below(x0, p, i), _below(x1, p, i + 1), _below(x2, p, i + 2), _below(x3, p, i + 3))


@cuda.jit(device=True)
def _trials(x, log1m_p):
    """ceil(log(u) / log(1 - p)) for u in (0, 1) from word x: at least 1, at most int64 max."""
    trials = math.log((np.float64(x) + 0.5) * _F64_2POW_M32) / log1m_p
    if trials >= _INT64_MAX_AS_FLOAT:
        return _INT64_MAX
    count = np.int64(trials)  # trials > 0: truncation, then up to the ceiling
    if count < trials:
        count += 1
    return count


@cuda.jit(**_JIT)
def geometric(out, seed, block, log1m_p):
    """out = ceil(log(u) / log(1 - p)) >= 1, u in (0, 1), as int64 (clamped at int64 max)."""
    for g in range(cuda.grid(1), (out.shape[0] + 3) // 4, cuda.gridsize(1)):
        x0, x1, x2, x3 = _words32(seed, block, g)
        _put4(out, 4 * g, _trials(x0, log1m_p), _trials(x1, log1m_p), _trials(x2, log1m_p),
              _trials(x3, log1m_p))


@cuda.jit(device=True)
def _gumbel_key(p, i, x):
    """p[i] / q for q = -log(u) ~ Exp(1), u in (0, 1) from word x (0 where p[i] is 0 or past
    the end of p)."""
    if i >= p.shape[0] or not p[i] > 0.0:
        return 0.0
    return p[i] / -math.log((np.float64(x) + 0.5) * _F64_2POW_M32)


@cuda.jit(**_JIT)
def multinomial_keys(p, keys, seed, block):
    """keys = p / Exp(1) elementwise (float64): each row's k largest keys are a draw of k
    categories without replacement (weights p); categories of weight 0 get key 0."""
    for g in range(cuda.grid(1), (p.shape[0] + 3) // 4, cuda.gridsize(1)):
        x0, x1, x2, x3 = _words32(seed, block, g)
        i = 4 * g
        _put4(keys, i, _gumbel_key(p, i, x0), _gumbel_key(p, i + 1, x1), _gumbel_key(p, i + 2, x2),
              _gumbel_key(p, i + 3, x3))


@cuda.jit(device=True)
def _search(cdf, totals, samples, i, r):
    """Sample i (of row i // samples) by inverse CDF: the first category whose running sum
    exceeds u * total; when rounding leaves none, the row's last category of non-zero weight."""
    row = i // samples
    n = cdf.shape[1]
    target = _unit64(r) * totals[row]
    lo = 0
    hi = n
    while lo < hi:
        mid = (lo + hi) // 2
        if cdf[row, mid] > target:
            hi = mid
        else:
            lo = mid + 1
    if lo == n:
        lo = n - 1
        while lo > 0 and cdf[row, lo] == cdf[row, lo - 1]:
            lo -= 1
    return lo


@cuda.jit(**_JIT)
def multinomial_search(cdf, totals, out, seed, block):
    """out (rows * samples, int64) = categories drawn with replacement from the running
    sums `cdf` (rows, categories) of each row's weights, `totals` their last column."""
    n = out.shape[0]
    samples = n // cdf.shape[0]
    for g in range(cuda.grid(1), (n + 3) // 4, cuda.gridsize(1)):
        r0, r1, r2, r3 = _words64(seed, block, g)
        i = 4 * g
        out[i] = _search(cdf, totals, samples, i, r0)
        if i + 1 < n:
            out[i + 1] = _search(cdf, totals, samples, i + 1, r1)
        if i + 2 < n:
            out[i + 2] = _search(cdf, totals, samples, i + 2, r2)
        if i + 3 < n:
            out[i + 3] = _search(cdf, totals, samples, i + 3, r3)


# Poisson draws take a variable number of uniforms: element i reads its own stream of
# counter blocks (block + t, i | _POISSON_STREAMS), t = 0, 1, ... The tag bit keeps these
# subsequences apart from every other kernel's (groups < 2**62); the op reserves
# POISSON_BLOCKS blocks, far more than the ~1-11 uniforms an element needs on average.
_POISSON_STREAMS = np.uint64(1 << 63)
POISSON_BLOCKS = 64


@cuda.jit(device=True)
def _stream_uniform(seed, block, sub, count, words):
    """The count-th uniform in (0, 1) of stream `sub` (32 random bits; words: a 4-word cache)."""
    j = count % 4
    if j == 0:
        w0, w1, w2, w3 = _philox(seed, block + np.uint64(count // 4), sub)
        words[0] = w0
        words[1] = w1
        words[2] = w2
        words[3] = w3
    return (np.float64(words[j]) + 0.5) * _F64_2POW_M32


@cuda.jit(device=True)
def _poisson_one(lam, seed, block, sub, words):
    """One Poisson(lam) count, as a float64: Knuth's product of uniforms below 10, else
    Hoermann's transformed rejection with squeeze (PTRS, as NumPy); huge rates are their
    own count (the CPU's rule)."""
    if lam == 0.0:
        return 0.0
    if lam > 1e18:
        return lam
    count = 0
    if lam < 10.0:
        limit = math.exp(-lam)
        k = 0
        product = _stream_uniform(seed, block, sub, count, words)
        while product > limit:
            count += 1
            k += 1
            product *= _stream_uniform(seed, block, sub, count, words)
        return np.float64(k)
    slam = math.sqrt(lam)
    loglam = math.log(lam)
    b = 0.931 + 2.53 * slam
    a = -0.059 + 0.02483 * b
    log_invalpha = math.log(1.1239 + 1.1328 / (b - 3.4))
    vr = 0.9277 - 3.6224 / (b - 2.0)
    while True:
        u = _stream_uniform(seed, block, sub, count, words) - 0.5
        v = _stream_uniform(seed, block, sub, count + 1, words)
        count += 2
        us = 0.5 - abs(u)
        k = math.floor((2.0 * a / us + b) * u + lam + 0.43)
        if us >= 0.07 and v <= vr:
            return np.float64(k)
        if k < 0.0 or (us < 0.013 and v > us):
            continue
        if math.log(v) + log_invalpha - math.log(a / (us * us) + b) <= -lam + k * loglam - math.lgamma(k + 1.0):
            return np.float64(k)


@cuda.jit(**_JIT)
def poisson(rates, out, seed, block):
    """out[i] = a Poisson count of rate rates[i] (float64 in and out; rates checked >= 0)."""
    words = cuda.local.array(4, np.uint64)
    for i in range(cuda.grid(1), out.shape[0], cuda.gridsize(1)):
        out[i] = _poisson_one(rates[i], seed, block, np.uint64(i) | _POISSON_STREAMS, words)


@cuda.jit(**_JIT)
def flag_outside(values, low, high, flag):
    """flag[0] = 1 if any of `values` (1-d) is outside [low, high] or NaN."""
    for i in range(cuda.grid(1), values.shape[0], cuda.gridsize(1)):
        v = values[i]
        if not (v >= low and v <= high):
            flag[0] = 1
