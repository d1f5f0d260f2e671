"""Numba kernels of the short-time Fourier transform: framing and a batched real FFT.

`stft_onesided` runs, for each chunk of frames of each signal:

* framing: the padded signal (reflect, constant, replicate or circular ends, mapped on
  the fly) is first laid out as a (hop, steps) matrix of its phases, so that sample n of
  every frame is one contiguous run of a phase row; each is scaled by its window value
  into row n of a frames-inner buffer. Every later loop then runs along the frames,
  contiguous, and vectorises whatever the transform size. (Reading sample n of every
  frame straight from the signal strides by `hop`, a power of two: those loads share a
  few L1 sets and miss, 2.5x slower.)
* a complex FFT of h = n_fft / 2 points: the even and odd samples of each frame, packed
  as the real and imaginary parts of h points (split re/im rows, bit-reversed row order as
  the framing wrote them), go through an iterative decimation-in-time FFT, two radix-2
  stages a pass over the buffer (radix 2^2). Every butterfly multiplies one scalar
  twiddle into a whole row of frames: SIMD loops.
* a real-to-complex pass turning the h-point spectrum into the n_fft / 2 + 1
  frequencies of the real frames, written straight into PyTorch's (B, n_freq, frames)
  layout.

float32 is computed in float32, twiddles included, as PyTorch's FFT libraries do. The
kernel is serial, releases the GIL, compiles lazily for float32 and float64 only and
caches on disk; everything it inlines lives in this file (Numba's cache keys on it).
"""
import numpy as np
from numba import njit

__all__ = ["stft_onesided", "chunk_width"]

_OPTIONS = dict(cache=True, nogil=True, error_model="numpy", fastmath={"contract"})


@njit(inline="always")
def _source(p, length, mode):
    """The index of the signal sample that padded position `p` shows (-1: a zero).

    The op's checks keep every position a frame reads within one reflection or wrap of
    the signal; the phase matrix also holds a few positions past the last frame, which
    may lie further out: they read as zeros, never outside the signal."""
    if 0 <= p < length:
        return p
    if mode == 1:
        p = -p if p < 0 else 2 * (length - 1) - p
    elif mode == 2:
        p = 0 if p < 0 else length - 1
    elif mode == 3:
        p = p + length if p < 0 else p - length
    return p if 0 <= p < length else -1


@njit(**_OPTIONS)
def stft_onesided(signal, window, win_left, scale, hop, offset, mode, cos_n, sin_n, rows, width, out):
    """The onesided STFT of every row of `signal` into `out` (B, n_fft // 2 + 1, T), complex.

    Frame t, sample n is ``scale * window[n - win_left] * x[t * hop + n - offset]``, x
    padded by `mode` outside [0, L), the window zero outside [win_left, win_left + W).
    Frames go through in chunks of `width` columns (`chunk_width`) so that the working
    buffer stays in cache; `rows` places sample n in the buffer (see the backend's `_tables`).
    """
    batch = signal.shape[0]
    count = out.shape[2]
    n_fft = rows.shape[0]
    h = n_fft // 2
    # What buffer row i is made of: sample n (phase n % hop, step n // hop of the frame)
    # times its window value, 0 outside the window (phase 0, step 0 then: any valid run).
    weight = np.zeros(n_fft, signal.dtype)
    phase = np.zeros(n_fft, np.int64)
    step = np.zeros(n_fft, np.int64)
    for n in range(win_left, win_left + window.shape[0]):
        i = rows[n]
        weight[i] = scale * window[n - win_left]
        phase[i] = n % hop
        step[i] = n // hop
    stages = 0
    while (1 << stages) < h:
        stages += 1
    # The padded signal as a (hop, M) matrix: phase r, step m holds x[m * hop + r - offset].
    steps = count + (n_fft + hop - 1) // hop
    phases = np.empty((hop, chunk_width(steps)), signal.dtype)
    buf = np.empty((n_fft, width), signal.dtype)
    for b in range(batch):
        _phases(signal[b], hop, offset, mode, steps, phases)
        for first in range(0, count, width):
            cols = min(width, count - first)
            if stages % 2 == 0:
                _frame_radix4(phases, weight, phase, step, first, cols, h, buf)
                _fft_rows(buf, h, 4, cos_n, sin_n)
            else:
                _frame_radix2(phases, weight, phase, step, first, cols, h, buf)
                _fft_rows(buf, h, 2, cos_n, sin_n)
            _real_spectrum(buf, h, cos_n, sin_n, out[b], first, cols)


@njit(**_OPTIONS)
def chunk_width(count):
    """A buffer row length for `count` columns: a multiple of 8 (whole SIMD vectors) whose
    eighth is odd, so that rows a power of two apart do not share L1 cache sets."""
    width = (count + 7) // 8 * 8
    return width + 8 if (width // 8) % 2 == 0 else width


@njit(inline="always")
def _phases(x, hop, offset, mode, steps, phases):
    # Steps wholly inside the signal copy one contiguous run each; the few at the ends
    # map every position through `mode`.
    length = x.shape[0]
    inner_first = min((offset + hop - 1) // hop, steps)
    inner_end = min(max((length + offset - hop) // hop + 1, inner_first), steps)
    for m in range(inner_first, inner_end):
        run = x[m * hop - offset: m * hop - offset + hop]
        for r in range(hop):
            phases[r, m] = run[r]
    for m in range(inner_first):
        _edge_step(x, hop, offset, mode, m, phases)
    for m in range(inner_end, steps):
        _edge_step(x, hop, offset, mode, m, phases)


@njit(inline="always")
def _edge_step(x, hop, offset, mode, m, phases):
    for r in range(hop):
        s = _source(m * hop + r - offset, x.shape[0], mode)
        phases[r, m] = 0 if s < 0 else x[s]


@njit(inline="always")
def _frame_radix2(phases, weight, phase, step, first, cols, h, buf):
    # Framing fused with the first radix-2 stage (twiddle 1): rows g, g + 1 (and their
    # imaginary rows) come from their runs and leave as their sum and difference.
    zero = buf.dtype.type(0)
    for g in range(0, h, 2):
        ra, rb, ia, ib = g, g + 1, h + g, h + g + 1
        sa = phases[phase[ra], first + step[ra]: first + step[ra] + cols]
        sb = phases[phase[rb], first + step[rb]: first + step[rb] + cols]
        ta = phases[phase[ia], first + step[ia]: first + step[ia] + cols]
        tb = phases[phase[ib], first + step[ib]: first + step[ib] + cols]
        wa, wb, va, vb = weight[ra], weight[rb], weight[ia], weight[ib]
        for c in range(cols):
            ar = wa * sa[c]
            br = wb * sb[c]
            ai = va * ta[c]
            bi = vb * tb[c]
            buf[ra, c] = ar + br
            buf[rb, c] = ar - br
            buf[ia, c] = ai + bi
            buf[ib, c] = ai - bi
        # Columns past the last frame hold zeros, never NaN garbage.
        for c in range(cols, buf.shape[1]):
            buf[ra, c] = zero
            buf[rb, c] = zero
            buf[ia, c] = zero
            buf[ib, c] = zero


@njit(inline="always")
def _frame_radix4(phases, weight, phase, step, first, cols, h, buf):
    # Framing fused with the first two stages (twiddles 1 and -i): rows g .. g + 3 come
    # from their runs and leave transformed, one write of the buffer instead of three.
    zero = buf.dtype.type(0)
    for g in range(0, h, 4):
        sa = phases[phase[g], first + step[g]: first + step[g] + cols]
        sb = phases[phase[g + 1], first + step[g + 1]: first + step[g + 1] + cols]
        sc = phases[phase[g + 2], first + step[g + 2]: first + step[g + 2] + cols]
        sd = phases[phase[g + 3], first + step[g + 3]: first + step[g + 3] + cols]
        ta = phases[phase[h + g], first + step[h + g]: first + step[h + g] + cols]
        tb = phases[phase[h + g + 1], first + step[h + g + 1]: first + step[h + g + 1] + cols]
        tc = phases[phase[h + g + 2], first + step[h + g + 2]: first + step[h + g + 2] + cols]
        td = phases[phase[h + g + 3], first + step[h + g + 3]: first + step[h + g + 3] + cols]
        wa, wb, wc, wd = weight[g], weight[g + 1], weight[g + 2], weight[g + 3]
        va, vb, vc, vd = weight[h + g], weight[h + g + 1], weight[h + g + 2], weight[h + g + 3]
        for c in range(cols):
            ar = wa * sa[c]
            br = wb * sb[c]
            cr = wc * sc[c]
            dr = wd * sd[c]
            ai = va * ta[c]
            bi = vb * tb[c]
            ci = vc * tc[c]
            di = vd * td[c]
            # A = a + b, B = a - b, C = c + d, D = c - d; out: A + C, B - i D, A - C, B + i D.
            a2r = ar + br
            a2i = ai + bi
            b2r = ar - br
            b2i = ai - bi
            c2r = cr + dr
            c2i = ci + di
            d2r = cr - dr
            d2i = ci - di
            buf[g, c] = a2r + c2r
            buf[h + g, c] = a2i + c2i
            buf[g + 2, c] = a2r - c2r
            buf[h + g + 2, c] = a2i - c2i
            buf[g + 1, c] = b2r + d2i
            buf[h + g + 1, c] = b2i - d2r
            buf[g + 3, c] = b2r - d2i
            buf[h + g + 3, c] = b2i + d2r
        for i in range(4):
            for c in range(cols, buf.shape[1]):
                buf[g + i, c] = zero
                buf[h + g + i, c] = zero


@njit(inline="always")
def _fft_rows(buf, h, q, cos_n, sin_n):
    # The rest of the h-point complex DFT of every column (rows 0 .. h-1 real parts,
    # h .. 2h-1 imaginary parts, bit-reversed input, natural output), from stage `q` on
    # (the framing ran the first ones): radix-2 decimation in time, two stages a pass
    # (radix 2^2) so that the buffer is read and written half as often.
    width = buf.shape[1]
    n_fft = 2 * h
    while q < h:
        # Stages q and 2q: rows a, b = a + q, c = a + 2q, d = a + 3q; b and d take w1 in
        # the first stage, c takes w2 in the second and d takes -i w2.
        for j in range(q):
            w1r = cos_n[j * (n_fft // (2 * q))]
            w1i = -sin_n[j * (n_fft // (2 * q))]
            w2r = cos_n[j * (n_fft // (4 * q))]
            w2i = -sin_n[j * (n_fft // (4 * q))]
            for g in range(j, h, 4 * q):
                ra, rb, rc, rd = g, g + q, g + 2 * q, g + 3 * q
                ia, ib, ic, id_ = h + ra, h + rb, h + rc, h + rd
                for c in range(width):
                    ar = buf[ra, c]
                    ai = buf[ia, c]
                    br = buf[rb, c]
                    bi = buf[ib, c]
                    cr = buf[rc, c]
                    ci = buf[ic, c]
                    dr = buf[rd, c]
                    di = buf[id_, c]
                    # first stage: w1 b, w1 d
                    tr = w1r * br - w1i * bi
                    ti = w1r * bi + w1i * br
                    ur = w1r * dr - w1i * di
                    ui = w1r * di + w1i * dr
                    a2r = ar + tr
                    a2i = ai + ti
                    b2r = ar - tr
                    b2i = ai - ti
                    c2r = cr + ur
                    c2i = ci + ui
                    d2r = cr - ur
                    d2i = ci - ui
                    # second stage: w2 c, and -i w2 d = (w2i d2r + w2r d2i) - i (w2r d2r - w2i d2i)
                    tr = w2r * c2r - w2i * c2i
                    ti = w2r * c2i + w2i * c2r
                    ur = w2r * d2i + w2i * d2r
                    ui = w2i * d2i - w2r * d2r
                    buf[ra, c] = a2r + tr
                    buf[ia, c] = a2i + ti
                    buf[rc, c] = a2r - tr
                    buf[ic, c] = a2i - ti
                    buf[rb, c] = b2r + ur
                    buf[ib, c] = b2i + ui
                    buf[rd, c] = b2r - ur
                    buf[id_, c] = b2i - ui
        q *= 4


@njit(inline="always")
def _real_spectrum(buf, h, cos_n, sin_n, dest, first, cols):
    # With Z the h-point DFT of z = even + i odd samples, A = Z[k], B = Z[h - k]:
    # X[k] = E - i W^k O, E = (A + conj(B)) / 2, O = (A - conj(B)) / 2, W = exp(-2 pi i / n).
    # Stores go through a row slice (a non-negative index): LLVM vectorises them then.
    low = dest[0, first: first + cols]
    high = dest[h, first: first + cols]
    for c in range(cols):
        zr = buf[0, c]
        zi = buf[h, c]
        low[c] = complex(zr + zi, 0)
        high[c] = complex(zr - zi, 0)
    one_half = buf.dtype.type(0.5)
    for k in range(1, h):
        wr = cos_n[k]
        wi = -sin_n[k]
        seg = dest[k, first: first + cols]
        for c in range(cols):
            ar = buf[k, c]
            ai = buf[h + k, c]
            br = buf[h - k, c]
            bi = buf[2 * h - k, c]
            er = one_half * (ar + br)
            ei = one_half * (ai - bi)
            orr = one_half * (ar - br)
            oi = one_half * (ai + bi)
            # -i W O = (wr oi + wi orr) - i (wr orr - wi oi)
            seg[c] = complex(er + (wr * oi + wi * orr), ei - (wr * orr - wi * oi))
