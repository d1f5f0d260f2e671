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

Each kernel is serial (the transforms over a range of (sample, channel) planes, the
adjoint over a block of samples, channels last) and releases the GIL, as
`kernels/conv.py`'s are (a block runs on one thread; threads take whole blocks). Every
loop that writes the transformed coordinates is one loop per coordinate with a single
store stream: LLVM vectorises those, where one loop storing 16 streams stayed scalar
(it needs more runtime alias checks than LLVM makes). float32
and float64, compiled on first use; the kernels inline no function of another file, so
Numba's on-disk cache (keyed on this file) can never serve a stale kernel.
"""
import numpy as np
from numba import njit

__all__ = ["input_transform", "output_transform", "output_adjoint"]

_OPTIONS = dict(cache=True, nogil=True, error_model="numpy", boundscheck=False)
# B^T's rows (and B's columns): row r is element _FIRST[r] +- element _SECOND[r] (minus but
# for r = 1): d0 - d2, d1 + d2, d2 - d1, d1 - d3.
_FIRST = (0, 1, 2, 1)
_SECOND = (2, 2, 1, 3)


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
    uhalf = np.uint64(rows * (tw + 1))
    even, odd = np.empty(rows * (tw + 1), x.dtype), np.empty(rows * (tw + 1), x.dtype)
    utw, uplane = np.uint64(tw), np.uint64(plane)
    ustride = np.uint64(stride)
    one = x.dtype.type(1)
    for p in range(p_lo, p_hi):
        b, ch = p // c, p % c
        for i in range(i_lo, i_hi):
            src = np.uint64(p * h * w + (i - ph) * w + j_lo - pw)
            dst = np.uint64(i * cols + j_lo)
            for j in range(np.uint64(j_hi - j_lo)):
                d[dst + j] = xf[src + j]
        # The padded plane's even and odd columns (its row length is even: column
        # 2*j + q of row r is element r*(tw + 1) + j of half q), in one pass that LLVM
        # turns into shuffles, then the phases as contiguous runs of the halves (a
        # gather from d per phase row made the phases cost as much as the transform).
        for e in range(uhalf):
            even[e] = d[np.uint64(2) * e]
            odd[e] = d[np.uint64(2) * e + np.uint64(1)]
        for rp in range(2):
            for l in range(4):
                base = np.uint64((rp * 4 + l) * ext)
                for i in range(th + 1):
                    src = np.uint64((2 * i + rp) * (tw + 1) + l // 2)
                    dst = base + np.uint64(i * tw)
                    if l % 2 == 0:
                        for j in range(utw):
                            g[dst + j] = even[src + j]
                    else:
                        for j in range(utw):
                            g[dst + j] = odd[src + j]
        out = np.uint64(ch * count + b * plane)
        # One loop per coordinate xi = 4*r + k, each with a single store stream: LLVM
        # vectorises it, where one loop storing all 16 coordinates needed more runtime
        # alias checks than it makes and stayed scalar (measured 1.5x slower). B^T's row r
        # combines rows a1, a2 of the tile (sign sa), B's column k columns l1, l2 (sign
        # sk): (d[a1, l1] +- d[a2, l1]) +- (d[a1, l2] +- d[a2, l2]), a product by +-1 being
        # exact (x + (-1)*y is x - y, bit for bit).
        for xi in range(16):
            r, k = xi // 4, xi % 4
            a1, a2 = _FIRST[r], _SECOND[r]
            l1, l2 = _FIRST[k], _SECOND[k]
            sa = one if r == 1 else -one
            sk = one if k == 1 else -one
            # Row a of the tile, column offset l: g[a % 2, l] one tile row on when a >= 2.
            o1 = np.uint64((a1 % 2) * 4 * ext + l1 * ext + (a1 // 2) * tw)
            o2 = np.uint64((a2 % 2) * 4 * ext + l1 * ext + (a2 // 2) * tw)
            o3 = np.uint64((a1 % 2) * 4 * ext + l2 * ext + (a1 // 2) * tw)
            o4 = np.uint64((a2 % 2) * 4 * ext + l2 * ext + (a2 // 2) * tw)
            dst = out + np.uint64(xi) * ustride
            for t in range(uplane):
                v[dst + t] = (g[o1 + t] + sa * g[o2 + t]) + sk * (g[o3 + t] + sa * g[o4 + t])


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
    one = y.dtype.type(1)
    step2, step4, step5, step6 = np.uint64(2) * step, np.uint64(4) * step, np.uint64(5) * step, np.uint64(6) * step
    step8, step9, step10 = np.uint64(8) * step, np.uint64(9) * step, np.uint64(10) * step
    for p in range(p_lo, p_hi):
        b, ch = p // o, p % o
        shift = bias[ch] if bias.size else y.dtype.type(0)
        src = np.uint64(ch * count + b * plane)
        # One loop per output (a, b) of the tile, each with a single store stream (as in
        # `input_transform`): A^T's row a sums rows a, a+1, a+2 of M (minus the last two
        # for a = 1), r_c = (M[a, c] +- M[a+1, c]) +- M[a+2, c], and its row b the same
        # across the columns, ((r_b +- r_b+1) +- r_b+2) + bias.
        for q in range(4):
            a, bq = q // 2, q % 2
            sa = one if a == 0 else -one
            sb = one if bq == 0 else -one
            base = src + np.uint64(4 * a + bq) * step
            zq = np.uint64(q) * uplane
            for t in range(uplane):
                e = base + t
                r0 = (m[e] + sa * m[e + step4]) + sa * m[e + step8]
                r1 = (m[e + step] + sa * m[e + step5]) + sa * m[e + step9]
                r2 = (m[e + step2] + sa * m[e + step6]) + sa * m[e + step10]
                z[zq + t] = ((r0 + sb * r1) + sb * r2) + shift
        for r in range(oh):
            dst = np.uint64((p * oh + r) * ow)
            row = np.uint64(2 * (r % 2) * plane + (r // 2) * tw)
            for j in range(np.uint64(ow)):
                yf[dst + j] = z[row + (j & np.uint64(1)) * uplane + (j >> np.uint64(1))]


@njit(**_OPTIONS)
def output_adjoint(gy, th, tw, m):
    """The adjoint of `output_transform` (bias aside), channels last: fill m (16, B*th*tw,
    O), C-contiguous, with A g A^T of the 2x2 tiles of the C-contiguous gradient gy (B,
    oh, ow, O), zero past its edge: coordinate xi of tile (i, j) of sample b, channel ch
    at m[xi, (b*th + i)*tw + j, ch]. The weight gradient's 16 GEMMs, V (C, T) @ m[xi] (T,
    O), take it as it is: with the tiles' gradient laid out as the input's tiles (O, T)
    they needed V^T, whose copy cost ~40% of the product (and OpenBLAS ran the product on
    the transposed view slower than copy and product together)."""
    nb, oh, ow, o = gy.shape
    count = nb * th * tw
    gf = gy.reshape(nb * oh * ow * o)
    mf = m.reshape(16 * count * o)
    uo = np.uint64(o)
    step = np.uint64(count * o)  # between coordinates
    # The tile's four gradient vectors g00, g01, g10, g11 (zero past the edge) and a
    # fifth of -0, the partner of a lone term (see below); then A g's rows, and a -0 row.
    z = np.zeros(5 * o, gy.dtype)
    z[4 * o:] = -0.0
    rows = np.empty(9 * o, gy.dtype)
    rows[8 * o:] = -0.0
    one = gy.dtype.type(1)
    for b in range(nb):
        for ti in range(th):
            for tj in range(tw):
                for q in range(4):
                    r, c = 2 * ti + q // 2, 2 * tj + q % 2
                    at = np.uint64(q) * uo
                    if r < oh and c < ow:
                        src = np.uint64(((b * oh + r) * ow + c) * o)
                        for e in range(uo):
                            z[at + e] = gf[src + e]
                    else:
                        for e in range(uo):
                            z[at + e] = 0
                # A g down the tile's rows, column c: rows g0, g0 + g1, g0 - g1, -g1 into
                # rows[2*i + c] (i = 0..3), then (A g) A^T the same across the columns into
                # coordinate 4*i + k: one loop over the channels per row and coordinate,
                # x + s*y each (s = +-1), with a single store stream, so that LLVM
                # vectorises it (a loop storing 16 streams stayed scalar). The lone terms
                # take -0 for their partner: x + (-0) is x and -0 - y is -y, bit for bit
                # (a NaN's sign aside).
                for i in range(4):
                    s = -one if i >= 2 else one
                    for c in range(2):
                        first = np.uint64(c if i != 3 else 4) * uo
                        second = np.uint64(2 + c if i != 0 else 4) * uo
                        at = np.uint64(2 * i + c) * uo
                        for e in range(uo):
                            rows[at + e] = z[first + e] + s * z[second + e]
                dst = np.uint64((b * th + ti) * tw + tj) * uo
                for xi in range(16):
                    i, k = xi // 4, xi % 4
                    s = -one if k >= 2 else one
                    first = np.uint64(2 * i if k != 3 else 8) * uo
                    second = np.uint64(2 * i + 1 if k != 0 else 8) * uo
                    at = dst + np.uint64(xi) * step
                    for e in range(uo):
                        mf[at + e] = rows[first + e] + s * rows[second + e]
