"""Numba CUDA kernel of stft's framing: the padded, windowed frames of a batch of signals,
laid out for one batched real-to-complex cuFFT plan (`_backends.cuda.fft.stft`).

The semantics are those of the CPU path (`_backends/cpu/fft.py`'s `stft` and
`_padded_positions`): frame t of signal b, sample n is ``x[t * hop + n - offset]`` times
the window (`win_length` points centred in n_fft, zeros outside it, times `scale`), x
padded outside [0, L) by the pad mode (0 constant (zeros), 1 reflect, 2 replicate,
3 circular). Nothing here calls a function of another file, so Numba's on-disk cache
(keyed on this file) can never serve a stale kernel.
"""
from numba import cuda

__all__ = ["frame_signals"]


@cuda.jit(cache=True)
def frame_signals(signals, window, win_left, scale, hop, offset, pad_mode, out):
    """out[b * frames + t, n] = padded signals[b] at t * hop + n - offset, windowed; one
    thread per output element (grid-stride)."""
    rows, n_fft = out.shape
    batch, length = signals.shape
    frames = rows // batch
    win_length = window.shape[0]
    for p in range(cuda.grid(1), rows * n_fft, cuda.gridsize(1)):
        row = p // n_fft
        n = p % n_fft
        b = row // frames
        t = row % frames
        w = n - win_left
        value = scale * 0  # zero, in the signal's type (scale arrives as one)
        if 0 <= w < win_length:
            i = t * hop + n - offset
            inside = 0 <= i < length
            if not inside and pad_mode != 0:
                if pad_mode == 1:  # reflect
                    i = abs(i)
                    if i >= length:
                        i = 2 * (length - 1) - i
                elif pad_mode == 3:  # circular
                    i = i % length
                i = min(max(i, 0), length - 1)
                inside = True
            if inside:
                value = signals[b, i] * window[w] * scale
        out[row, n] = value
