"""Numba loops of the Winograd F(2x2, 3x3) convolution: the input tile transform
V = B^T d B, the output transform Y = A^T M A and its adjoint A g A^T for the weight
gradient (Lavin & Gray, "Fast Algorithms for Convolutional Neural Networks", 2015).

A 3x3 stride-1 convolution computes each 2x2 output tile from a 4x4 input tile. In the
transformed domain it is 16 independent products, one per coordinate xi of the 4x4
tile: M[xi] (O, T) = U[xi] (O, C) @ V[xi] (C, T) over T tiles, 2.25x fewer multiplies
than the direct convolution, done by the BLAS (`cpu/winograd.py`). These kernels are the
transforms on either side:

    B^T = [1  0 -1  0]      A^T = [1  1  1  0]
          [0  1  1  0]            [0  1 -1 -1]
          [0 -1  1  0]
          [0  1  0 -1]

Only additions and subtractions: the transforms cost a few operations per input and
output element, and lose no precision beyond the rounding of those sums.

Each kernel is serial over a range of (sample, channel) planes and releases the GIL, as
`kernels/conv.py`'s are (a block runs on one thread; threads take whole blocks). float32
and float64, compiled on first use; the kernels inline no function of another file, so
Numba's on-disk cache (keyed on this file) can never serve a stale kernel.
"""
import numpy as np
from numba import njit

__all__ = ["input_transform", "output_transform", "output_adjoint"]

_OPTIONS = dict(cache=True, nogil=True, error_model="numpy", boundscheck=False)


@njit(**_OPTIONS)
def input_transform(x, ph, pw, th, tw, v, stride, p_lo, p_hi):
    """Fill the flat buffer v with the transformed 4x4 tiles of the C-contiguous block
    x (B, C, H, W) padded by (ph, pw) (zeros; negative: a crop): coordinate xi of tile
    (i, j) of sample b, channel ch at v[xi*stride + ch*B*th*tw + (b*th + i)*tw + j], for
    the (sample, channel) planes [p_lo, p_hi)."""
    nb, c, h, w = x.shape
    count = nb * th * tw
    # Flat views and unsigned offsets: with a signed index Numba tests it for wraparound
    # on every element, and LLVM no longer vectorises the loop (as in kernels/conv.py).
    xf = x.reshape(nb * c * h * w)
    rows, cols = 2 * th + 2, 2 * tw + 2
    # The plane, padded and extended to whole tiles (zeros outside the input): the
    # loops below read no bounds and partial edge tiles need no case of their own.
    d = np.zeros(rows * cols, x.dtype)
    i_lo, i_hi = max(0, ph), min(rows, h + ph)
    j_lo, j_hi = max(0, pw), max(min(cols, w + pw), max(0, pw))
    # Its phases: g[rp, l][i*tw + j] = d[2*i + rp, 2*j + l], rows of parity rp and column
    # offset l = 0..3. Row 2*i + a of tile (i, j), column 2*j + l, is then
    # g[a % 2, l][t + (a // 2)*tw] with t = i*tw + j: all the tiles of a plane in one
    # unit-stride loop over t (a loop per tile row is 8 tiles long on a 16x16 plane).
    plane = th * tw
    ext = (th + 1) * tw
    g = np.empty(8 * ext, x.dtype)
    utw, uplane, uext = np.uint64(tw), np.uint64(plane), np.uint64(ext)
    ustride = np.uint64(stride)
    uodd = np.uint64(4 * ext)  # g[1, l] - g[0, l]
    for p in range(p_lo, p_hi):
        b, ch = p // c, p % c
        for i in range(i_lo, i_hi):
            src = np.uint64(p * h * w + (i - ph) * w + j_lo - pw)
            dst = np.uint64(i * cols + j_lo)
            for j in range(np.uint64(j_hi - j_lo)):
                d[dst + j] = xf[src + j]
        for rp in range(2):
            for l in range(4):
                base = np.uint64((rp * 4 + l) * ext)
                for i in range(th + 1):
                    src = np.uint64((2 * i + rp) * cols + l)
                    dst = base + np.uint64(i * tw)
                    for j in range(utw):
                        g[dst + j] = d[src + np.uint64(2) * j]
        out = np.uint64(ch * count + b * plane)
        for t in range(uplane):
            # B^T d down the tile's rows, column by column: rows 0 - 2, 1 + 2, 2 - 1, 1 - 3
            # (rows 0 and 2 at g[0, l] and g[0, l] one tile row on, 1 and 3 at g[1, l]).
            e = t
            a0, a1, a2, a3 = g[e], g[e + uodd], g[e + utw], g[e + uodd + utw]
            c00, c10, c20, c30 = a0 - a2, a1 + a2, a2 - a1, a1 - a3
            e += uext
            a0, a1, a2, a3 = g[e], g[e + uodd], g[e + utw], g[e + uodd + utw]
            c01, c11, c21, c31 = a0 - a2, a1 + a2, a2 - a1, a1 - a3
            e += uext
            a0, a1, a2, a3 = g[e], g[e + uodd], g[e + utw], g[e + uodd + utw]
            c02, c12, c22, c32 = a0 - a2, a1 + a2, a2 - a1, a1 - a3
            e += uext
            a0, a1, a2, a3 = g[e], g[e + uodd], g[e + utw], g[e + uodd + utw]
            c03, c13, c23, c33 = a0 - a2, a1 + a2, a2 - a1, a1 - a3
            # ... then (B^T d) B across the columns, row k to coordinates 4k..4k+3.
            s = out + t
            v[s] = c00 - c02
            v[s + ustride] = c01 + c02
            v[s + np.uint64(2) * ustride] = c02 - c01
            v[s + np.uint64(3) * ustride] = c01 - c03
            v[s + np.uint64(4) * ustride] = c10 - c12
            v[s + np.uint64(5) * ustride] = c11 + c12
            v[s + np.uint64(6) * ustride] = c12 - c11
            v[s + np.uint64(7) * ustride] = c11 - c13
            v[s + np.uint64(8) * ustride] = c20 - c22
            v[s + np.uint64(9) * ustride] = c21 + c22
            v[s + np.uint64(10) * ustride] = c22 - c21
            v[s + np.uint64(11) * ustride] = c21 - c23
            v[s + np.uint64(12) * ustride] = c30 - c32
            v[s + np.uint64(13) * ustride] = c31 + c32
            v[s + np.uint64(14) * ustride] = c32 - c31
            v[s + np.uint64(15) * ustride] = c31 - c33


@njit(**_OPTIONS)
def output_transform(m, stride, bias, th, tw, y, p_lo, p_hi):
    """Write y (B, O, oh, ow), C-contiguous, from the transformed products in the flat
    buffer m, laid out as `input_transform`'s tiles, plus bias (O,) when it has any
    element, for the (sample, channel) planes [p_lo, p_hi); a partial edge tile writes
    only its part inside y."""
    nb, o, oh, ow = y.shape
    count = nb * th * tw
    yf = y.reshape(nb * o * oh * ow)
    step = np.uint64(stride)
    plane = th * tw
    uplane = np.uint64(plane)
    # The plane's 2x2 output tiles, output (a, b) of tile t at z[(2*a + b)*plane + t]:
    # every tile in one unit-stride loop, then copied out row by row, cropped to ow.
    z = np.empty(4 * plane, y.dtype)
    for p in range(p_lo, p_hi):
        b, ch = p // o, p % o
        shift = bias[ch] if bias.size else y.dtype.type(0)
        src = np.uint64(ch * count + b * plane)
        for t in range(uplane):
            s = src + t
            # A^T M: rows 0 + 1 + 2 and rows 1 - 2 - 3, per column...
            m4, m5, m6, m7 = m[s + 4 * step], m[s + 5 * step], m[s + 6 * step], m[s + 7 * step]
            m8, m9, m10, m11 = m[s + 8 * step], m[s + 9 * step], m[s + 10 * step], m[s + 11 * step]
            s0 = m[s] + m4 + m8
            s1 = m[s + step] + m5 + m9
            s2 = m[s + 2 * step] + m6 + m10
            s3 = m[s + 3 * step] + m7 + m11
            e0 = m4 - m8 - m[s + 12 * step]
            e1 = m5 - m9 - m[s + 13 * step]
            e2 = m6 - m10 - m[s + 14 * step]
            e3 = m7 - m11 - m[s + 15 * step]
            # ... then (A^T M) A the same across the columns.
            z[t] = s0 + s1 + s2 + shift
            z[uplane + t] = s1 - s2 - s3 + shift
            z[2 * uplane + t] = e0 + e1 + e2 + shift
            z[3 * uplane + t] = e1 - e2 - e3 + shift
        for r in range(oh):
            dst = np.uint64((p * oh + r) * ow)
            row = np.uint64(2 * (r % 2) * plane + (r // 2) * tw)
            for j in range(np.uint64(ow)):
                yf[dst + j] = z[row + (j & np.uint64(1)) * uplane + (j >> np.uint64(1))]


@njit(**_OPTIONS)
def output_adjoint(gy, th, tw, m, stride, p_lo, p_hi):
    """The adjoint of `output_transform` (bias aside): fill the flat buffer m, laid out
    as `input_transform`'s tiles, with A G A^T of the 2x2 tiles of the C-contiguous
    gradient gy (B, O, oh, ow), zero past its edge, for the (sample, channel) planes
    [p_lo, p_hi). The weight gradient's 16 GEMMs multiply it with the input's tiles."""
    nb, o, oh, ow = gy.shape
    count = nb * th * tw
    gf = gy.reshape(nb * o * oh * ow)
    step = np.uint64(stride)
    plane = th * tw
    uplane = np.uint64(plane)
    # The plane's 2x2 tiles, element (a, b) of tile t at z[(2*a + b)*plane + t] (zero
    # past the edge): every tile in one unit-stride loop, as in `output_transform`.
    z = np.zeros(4 * plane, gy.dtype)
    for p in range(p_lo, p_hi):
        b, ch = p // o, p % o
        for r in range(oh):
            src = np.uint64((p * oh + r) * ow)
            row = np.uint64(2 * (r % 2) * plane + (r // 2) * tw)
            for j in range(np.uint64(ow)):
                z[row + (j & np.uint64(1)) * uplane + (j >> np.uint64(1))] = gf[src + j]
        dst = np.uint64(ch * count + b * plane)
        for t in range(uplane):
            g00, g01 = z[t], z[uplane + t]
            g10, g11 = z[2 * uplane + t], z[3 * uplane + t]
            # A g: rows g0, g0 + g1, g0 - g1, -g1 (g0, g1 the tile's rows)...
            r00, r01 = g00, g01
            r10, r11 = g00 + g10, g01 + g11
            r20, r21 = g00 - g10, g01 - g11
            r30, r31 = -g10, -g11
            # ... then (A g) A^T the same across the columns.
            s = dst + t
            m[s] = r00
            m[s + step] = r00 + r01
            m[s + 2 * step] = r00 - r01
            m[s + 3 * step] = -r01
            m[s + 4 * step] = r10
            m[s + 5 * step] = r10 + r11
            m[s + 6 * step] = r10 - r11
            m[s + 7 * step] = -r11
            m[s + 8 * step] = r20
            m[s + 9 * step] = r20 + r21
            m[s + 10 * step] = r20 - r21
            m[s + 11 * step] = -r21
            m[s + 12 * step] = r30
            m[s + 13 * step] = r30 + r31
            m[s + 14 * step] = r30 - r31
            m[s + 15 * step] = -r31
