"""The Numba kernel of float32 standard normals: counter-based uniforms and Box-Muller in
one pass, vectorised.

The output is cut into blocks of `BLOCK` values and each block has a 64-bit key drawn
from the generator's stream (by `random._standard_normal`), so the numbers depend on the
seed only: threads take whole blocks, and any split of them gives the same values.
Within a block the j-th pair of uniforms comes from one 64-bit word, SplitMix64's output
for the counter j + 1 from the key (the generator of Java's SplittableRandom, which
passes BigCrush): a pure function of (key, j), so the loop has no carried state and LLVM
vectorises it, where a PCG64 or Mersenne stream is one serial dependency chain. The pair
gives r cos(t) to the block's first half and r sin(t) to its second (both halves are
contiguous stores), r = sqrt(-2 log u1), t = 2 pi u2, from 24-bit uniforms: u1 in
(0, 1] (so the log is finite; |z| <= 5.77, as PyTorch's float32 normals), u2 in [0, 1).

Numba has no SVML on this machine, so `math.log`/`math.cos` would be scalar libm calls
(~8 ms per 1e6 normals); `_log32` and `_sincos_2pi` are Cephes' float32 polynomials
(logf, sinf/cosf), with the range reductions done on the integer bits, which vectorise
with the rest. Measured against a float64 reference from the same bits: <= 7e-7 absolute
error on values up to 5.8.

One specialisation (int64 keys, float32 output), compiled lazily on first use; everything
the kernel inlines lives in this file, so Numba's on-disk cache (keyed on this file)
never serves a stale kernel.
"""
import numpy as np
from numba import njit, types
from numba.extending import intrinsic

__all__ = ["BLOCK", "fill_standard_normal"]

# Values per block: each block has its own key; big enough that the keys are a negligible
# part of the stream, small enough that a few blocks share out over threads.
BLOCK = 1 << 16

# SplitMix64's increment (the golden ratio) and its output mixer's multipliers.
_GAMMA = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_U24 = np.float32(2.0 ** -24)  # a 24-bit integer to [0, 1)
# A quarter turn is 2**22 steps of the 24-bit angle; one step in radians.
_QUARTER_STEP = np.float32(np.pi / 2 / 2 ** 22)


@intrinsic
def _float32_bits(typingctx, x):
    """The int32 bit pattern of the float32 `x` (a bitcast, free in registers)."""
    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], context.get_value_type(types.int32))
    return types.int32(types.float32), codegen


@intrinsic
def _bits_float32(typingctx, bits):
    """The float32 whose bit pattern is the int32 `bits`."""
    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], context.get_value_type(types.float32))
    return types.float32(types.int32), codegen


@njit(inline="always")
def _splitmix64(key, counter):
    z = key + np.uint64(counter) * _GAMMA
    z = (z ^ (z >> np.uint64(30))) * _MIX1
    z = (z ^ (z >> np.uint64(27))) * _MIX2
    return z ^ (z >> np.uint64(31))


@njit(inline="always", fastmath={"contract"})
def _log32(x):
    # log of a positive normal float32 (Cephes' logf, ~1 ulp): x = 2**e * m with m in
    # [sqrt(1/2), sqrt(2)) taken from the bits, log(m) by a degree-9 polynomial in m - 1,
    # e * ln 2 added in two parts so that the large part is exact.
    bits = _float32_bits(x)
    e = (bits >> np.int32(23)) - np.int32(126)
    m = _bits_float32((bits & np.int32(0x7FFFFF)) | np.int32(0x3F000000))  # [0.5, 1)
    below = m < np.float32(0.70710677)
    e = e - np.int32(1) if below else e
    m = m + m - np.float32(1.0) if below else m - np.float32(1.0)
    z = m * m
    p = np.float32(7.0376836292e-2)
    p = p * m + np.float32(-1.1514610310e-1)
    p = p * m + np.float32(1.1676998740e-1)
    p = p * m + np.float32(-1.2420140846e-1)
    p = p * m + np.float32(1.4249322787e-1)
    p = p * m + np.float32(-1.6668057665e-1)
    p = p * m + np.float32(2.0000714765e-1)
    p = p * m + np.float32(-2.4999993993e-1)
    p = p * m + np.float32(3.3333331174e-1)
    fe = np.float32(e)
    y = p * m * z + fe * np.float32(-2.12194440e-4) - np.float32(0.5) * z
    return m + y + fe * np.float32(0.693359375)


@njit(inline="always", fastmath={"contract"})
def _sincos_2pi(steps):
    # (cos, sin) of 2 pi steps / 2**24 for an int32 `steps` in [0, 2**24): the nearest
    # quarter turn k is taken off in integers (exactly), leaving |r| <= pi/4 for Cephes'
    # sinf/cosf polynomials; k mod 4 swaps and negates them.
    k = (steps + np.int32(1 << 21)) >> np.int32(22)
    r = np.float32(steps - (k << np.int32(22))) * _QUARTER_STEP
    z = r * r
    s = ((np.float32(-1.9515295891e-4) * z + np.float32(8.3321608736e-3)) * z
         + np.float32(-1.6666654611e-1)) * z * r + r
    c = ((np.float32(2.443315711809948e-5) * z + np.float32(-1.388731625493765e-3)) * z
         + np.float32(4.166664568298827e-2)) * z * z - np.float32(0.5) * z + np.float32(1.0)
    quadrant = k & np.int32(3)
    odd = (quadrant & np.int32(1)) != 0
    cos = s if odd else c
    sin = c if odd else s
    cos = -cos if ((quadrant + np.int32(1)) & np.int32(2)) != 0 else cos  # quadrants 1, 2
    sin = -sin if (quadrant & np.int32(2)) != 0 else sin  # quadrants 2, 3
    return cos, sin


@njit(inline="always", fastmath={"contract"})
def _normal_pair(key, j):
    word = _splitmix64(key, j + 1)
    radius_bits = np.int32(word >> np.uint64(40))  # the top 24 bits
    angle_bits = np.int32((word >> np.uint64(8)) & np.uint64(0xFFFFFF))  # 24 more
    u = np.float32(radius_bits + np.int32(1)) * _U24  # (0, 1]
    radius = np.sqrt(np.float32(-2.0) * _log32(u))
    cos, sin = _sincos_2pi(angle_bits)
    return radius * cos, radius * sin


@njit(nogil=True, cache=True, fastmath={"contract"}, error_model="numpy")
def fill_standard_normal(keys, out, first, last):
    """Fill blocks `first` .. `last - 1` of the float32 1-d array `out` with standard
    normals, block b from the int64 key `keys[b]` (the last block may be short).

    nogil: the CPU backend runs several calls at once on threads, one range of blocks each.
    """
    n = out.shape[0]
    for b in range(first, last):
        start = b * BLOCK
        size = min(BLOCK, n - start)
        half = (size + 1) // 2
        low = out[start:start + half]
        # An odd block's last pair gives its cosine only: its sines go to a scratch row
        # and all but the last are copied out after, so that the pair's code is inlined
        # (and compiled) once, not again for a tail (~0.4 s of a cold start).
        odd = half > size - half
        high = np.empty(half, np.float32) if odd else out[start + half:start + size]
        key = np.uint64(keys[b])
        for j in range(half):
            low[j], high[j] = _normal_pair(key, j)
        if odd:
            for j in range(half - 1):
                out[start + half + j] = high[j]
