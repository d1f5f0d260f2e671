"""Derivatives of the FFTs, in PyTorch's convention (conjugate Wirtinger, see `complex`).

The public transforms of ``torch.fft`` are compositions of three primitives (padding,
slicing and ``conj`` around them), so only these have rules. A DFT scaled by a real
factor has as adjoint the opposite-direction DFT scaled by the same factor, so each
backward is the transform the other way with the same normalization code:

* `_fft_c2c`: the c2c transform in the other direction;
* `_fft_r2c`: the inverse c2c transform of the gradient (zero-padded back to the full
  spectrum when onesided), real part;
* `_fft_c2r`: the forward r2c transform of the gradient, with the frequencies whose
  conjugate twins the onesided input stands for (1 .. n - n//2 - 1) counted twice.

`_stft_onesided` (stft's fused op: frames of the padded signal, windowed, r2c) goes back
the same way: the r2c rule gives the gradient of every windowed frame; the window's is
the sum over frames of that times the frame, the signal's the overlap-add of that times
the window, each frame sample sent back to the signal sample it was padded from.
"""
import numpy as np

import ember_tensor as E

from ._registry import composite, derivative


def _wrapped(dims, ndim):
    return [d + ndim if d < 0 else d for d in dims]


@derivative("_fft_c2c", save=lambda input, dim, normalization, forward: (dim, normalization, forward),
            name="FftC2CBackward0")
def fft_c2c(ctx, grad, dim, normalization, forward):
    return E._fft_c2c(grad, dim, normalization, not forward)


@derivative("_fft_r2c", save=lambda input, dim, normalization, onesided: (input.shape, dim, normalization, onesided),
            name="FftR2CBackward0")
def fft_r2c(ctx, grad, shape, dim, normalization, onesided):
    dims = _wrapped(dim, len(shape))
    last = dims[-1]
    missing = shape[last] - grad.shape[last]
    if onesided and missing > 0:
        # The dropped frequencies got no gradient: zeros, then the full inverse transform.
        zeros_shape = list(grad.shape)
        zeros_shape[last] = missing
        grad = E.cat([grad, E.zeros(zeros_shape, dtype=grad.dtype, device=grad.device)], last)
    return E._fft_c2c(grad, dims, normalization, False).real


@derivative("_fft_c2r", save=lambda input, dim, normalization, last_dim_size: (dim, normalization),
            name="FftC2RBackward0")
def fft_c2r(ctx, grad, dim, normalization):
    dims = _wrapped(dim, grad.dim())
    last = dims[-1]
    result = E._fft_r2c(grad, dims, normalization, True)
    doubled = grad.shape[last] - result.shape[last]
    if doubled > 0:
        scale = [1.0] * result.shape[last]
        scale[1:1 + doubled] = [2.0] * doubled
        shape = [1] * result.dim()
        shape[last] = len(scale)
        result = result * E.tensor(scale, dtype=grad.dtype, device=grad.device).reshape(shape)
    return result


def _frame_sources(length, n_fft, hop_length, offset, pad_mode, frames):
    """Flat (frames * n_fft) indices of the signal sample each frame sample shows, as the
    pad mode maps positions outside [0, length); `length` (one past the end) for a zero."""
    p = (np.arange(frames)[:, None] * hop_length + np.arange(n_fft)[None, :] - offset).reshape(-1)
    if pad_mode == "constant":
        return np.where((p >= 0) & (p < length), p, length)
    if pad_mode == "reflect":
        return np.where(p < 0, -p, np.where(p >= length, 2 * (length - 1) - p, p))
    if pad_mode == "replicate":
        return np.clip(p, 0, length - 1)
    return p % length  # circular


def _stft_save(input, window, n_fft, hop_length, win_length, offset, pad_mode, frames, normalized):
    # The signal is needed only for the window's gradient (PyTorch saves the frames then).
    wanted = window is not None and window.requires_grad
    return (input if wanted else None, tuple(input.shape), window, n_fft, hop_length, win_length, offset, pad_mode,
            frames, normalized)


@derivative("_stft_onesided", inputs=("input", "window"), save=_stft_save)
def stft_onesided(ctx, grad, input, shape, window, n_fft, hop_length, win_length, offset, pad_mode, frames,
                  normalized):
    spectra = (grad if grad.dim() == 3 else grad.unsqueeze(0)).transpose(1, 2)  # (B, frames, n_fft // 2 + 1)
    batch, length = spectra.shape[0], shape[-1]
    missing = n_fft - spectra.shape[2]
    if missing > 0:
        spectra = E.cat([spectra, E.zeros(batch, frames, missing, dtype=spectra.dtype, device=spectra.device)], 2)
    frame_grad = E._fft_c2c(spectra, [2], 1 if normalized else 0, False).real  # d loss / d windowed frame
    real = frame_grad.dtype
    left = (n_fft - win_length) // 2
    if window is None:
        window = E.ones(win_length, dtype=real, device=frame_grad.device)
    zeros = E.zeros(n_fft, dtype=real, device=window.device)
    full_window = E.cat([zeros[:left], window, zeros[left + win_length:]])  # centred in n_fft
    sources = E.tensor(_frame_sources(length, n_fft, hop_length, offset, pad_mode, frames), device=frame_grad.device)
    input_grad = window_grad = None
    if ctx.needs_input_grad[0]:
        weighted = (frame_grad * full_window).reshape(batch, frames * n_fft)
        summed = E.zeros(batch, length + 1, dtype=real, device=frame_grad.device).index_add(1, sources, weighted)
        input_grad = summed.narrow(1, 0, length).reshape(shape)
    if ctx.needs_input_grad[1]:
        signal = input.reshape(-1, length)
        extended = E.cat([signal, E.zeros(signal.shape[0], 1, dtype=signal.dtype, device=signal.device)], 1)
        framed = extended.index_select(1, sources).reshape(-1, frames, n_fft)
        window_grad = (frame_grad * framed).sum((0, 1)).narrow(0, left, win_length)
    return input_grad, window_grad


composite("fft_fft", "fft_ifft", "fft_rfft", "fft_irfft", "fft_hfft", "fft_ihfft",
          "fft_fft2", "fft_ifft2", "fft_rfft2", "fft_irfft2", "fft_hfft2", "fft_ihfft2",
          "fft_fftn", "fft_ifftn", "fft_rfftn", "fft_irfftn", "fft_hfftn", "fft_ihfftn")
# stft frames, windows and transforms through the ops above (an op of its own for autocast).
composite("stft")
