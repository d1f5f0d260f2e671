"""The short-time Fourier transform (`stft`) and its inverse (`istft`), as PyTorch 2.13
defines them.

The common case, a real float32/float64 signal with a real window of its dtype and a
onesided result, is one op, `_stft_onesided`: the backend frames, pads and windows the
signal straight into a buffer and transforms it in one call (ember-autograd holds its
rule). The others (complex signals or windows, two-sided spectra, mixed dtypes) are
composed from differentiable ops (padding by index, `unfold` frames, a window product,
the FFT primitives), which autograd follows with no rule of their own; `istft` too (an
overlap-add by `index_add`).

>>> import ember_tensor as torch
>>> x = torch.arange(64.)
>>> w = torch.hann_window(16)
>>> spec = torch.stft(x, 16, window=w, return_complex=True)
>>> tuple(spec.shape)
(9, 17)
>>> bool((torch.istft(spec, 16, window=w, length=64) - x).abs().max() < 1e-3)
True
"""
import warnings

import numpy as np

from ... import _backends
from ... import _dtype as D
from ..._dispatch import op
from ..._tensor import Tensor
from ..creation import ones, tensor, zeros
from ..fft.primitives import NORM_BY_N, NORM_BY_ROOT_N, NORM_NONE, _fft_c2c, _fft_c2r, _fft_r2c
from ..indexing import cat
from ..nn.sampling import constant_pad_nd
from ..complex_views import view_as_real

__all__ = ["stft", "istft"]

_NO_WINDOW = ("A window was not provided. A rectangular window will be applied,which is known to cause spectral "
              "leakage. Other windows such as torch.hann_window or torch.hamming_window are recommended to reduce "
              "spectral leakage.To suppress this warning and use a rectangular window, explicitly set "
              "`window=torch.ones(n_fft, device=<device>)`.")


def _flag(value):
    """An optional bool as PyTorch's argument reprs print it: None, 0 or 1."""
    return "None" if value is None else str(int(bool(value)))


def _window_repr(window):
    return "None" if window is None else f"{window.type()}{{{list(window.shape)}}}"


def _check_pad(input, pad, mode):
    """PyTorch's errors of ``F.pad(input, [pad, pad], mode)`` in its stft wrapper."""
    if mode not in ("constant", "reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    size = input.shape[-1]
    if (mode == "reflect" and pad >= size) or (mode == "circular" and pad > size):
        shape = [1] * (3 - input.dim()) + list(input.shape)
        if mode == "circular":
            raise RuntimeError("Padding value causes wrapping around more than once.")
        raise RuntimeError(f"Argument #4: Padding size should be less than the corresponding input dimension, but "
                           f"got: padding ({pad}, {pad}) at dimension 2 of input {shape}")


def _pad_signal(input, pad, mode):
    """`input` (1-D or 2-D) padded by `pad` on both ends of its last dim, as
    ``F.pad(input.view(1, 1, -1) ..., [pad, pad], mode)`` in PyTorch's stft wrapper."""
    _check_pad(input, pad, mode)
    if mode == "constant":
        return constant_pad_nd(input, (pad, pad))
    size = input.shape[-1]
    # The two edges are slices of the signal (flipped for reflect), joined to it by cat:
    # views and copies that autograd follows, and no gather over the whole signal.
    last = input.dim() - 1
    if mode == "reflect":
        left, right = input.narrow(last, 1, pad).flip(last), input.narrow(last, size - 1 - pad, pad).flip(last)
    elif mode == "replicate":
        edge_shape = tuple(input.shape[:-1]) + (pad,)
        left, right = input.narrow(last, 0, 1).expand(edge_shape), input.narrow(last, size - 1, 1).expand(edge_shape)
    else:
        left, right = input.narrow(last, size - pad, pad), input.narrow(last, 0, pad)
    return cat([left, input, right], last)


def _centered_window(window, n_fft, win_length, like):
    """The window (ones when None) zero-padded on both sides to n_fft points, centred."""
    if window is None:
        window = ones(win_length, dtype=like.dtype, device=like.device)
    left = (n_fft - win_length) // 2
    return constant_pad_nd(window, (left, n_fft - win_length - left)) if win_length < n_fft else window


# An op of its own (a composite, as ATen's): PyTorch's CPU autocast list names stft.
@op(composite=True)
def stft(input, n_fft, hop_length=None, win_length=None, window=None, center=True, pad_mode="reflect",
         normalized=False, onesided=None, return_complex=None, align_to_window=None):
    """The short-time Fourier transform: the DFTs of windowed frames of `input`.

    Args:
        input: a 1-D signal or a 2-D batch of signals (L) or (B, L).
        n_fft: the DFT size of each frame.
        hop_length: frame step (default n_fft // 4).
        win_length: window size (default n_fft); a shorter window is zero-padded to n_fft, centred.
        window: the window (default: rectangular, with PyTorch's warning).
        center: pad the signal by n_fft // 2 on both sides (with `pad_mode`) so that frame
            t is centred on sample t * hop_length.
        normalized: scale by 1/sqrt(n_fft).
        onesided: keep n_fft // 2 + 1 frequencies (default: for real input and window).
        return_complex: must be given for real inputs; False returns ``view_as_real`` of
            the result (deprecated by PyTorch, with its warning).
        align_to_window: with center=False, start frames where the window starts.

    Returns:
        (n_freq, n_frames) or (B, n_freq, n_frames), complex.

    >>> import ember_tensor as torch
    >>> torch.stft(torch.ones(8), 4, window=torch.ones(4), center=False, return_complex=True)[:, 0]
    tensor([4.+0.j, 0.+0.j, 0.+0.j])
    """
    if center and align_to_window is not None:
        raise RuntimeError("stft align_to_window should only be set when center = false")
    # The fused op takes real float32/float64 signals with a real window of their dtype
    # and device, onesided: it pads on the fly, so the checks below read the padded length.
    # Anything else (and its errors) takes the composed path.
    fused = (input._dtype in (D.float32, D.float64) and input.dim() in (1, 2) and onesided in (None, True)
             and (window is None or (window._dtype == input._dtype and window._device == input._device)))
    pad = n_fft // 2 if center else 0
    if center:
        if fused:
            _check_pad(input, pad, pad_mode)
        else:
            input = _pad_signal(input, pad, pad_mode)
    padded_shape = list(input.shape)
    if fused:
        padded_shape[-1] += 2 * pad
    if window is None:
        warnings.warn(_NO_WINDOW, UserWarning, stacklevel=2)
    complex_input = input.is_complex() or (window is not None and window.is_complex())
    if return_complex is None:
        if not complex_input:
            raise RuntimeError("stft requires the return_complex parameter be given for real inputs, and will further "
                               "require that return_complex=True in a future PyTorch release.")
        return_complex = True
    if not return_complex:
        warnings.warn("stft with return_complex=False is deprecated. In a future pytorch release, stft will return "
                      "complex tensors for all inputs, and return_complex=False will raise an error.\nNote: you can "
                      "still call torch.view_as_real on the complex output to recover the old return format.",
                      UserWarning, stacklevel=2)
    hop_length = n_fft >> 2 if hop_length is None else hop_length
    win_length = n_fft if win_length is None else win_length

    def where():  # the call as PyTorch's messages print it, built only for an error
        return (f"stft({input.type()}{padded_shape}, n_fft={n_fft}, hop_length={hop_length}, "
                f"win_length={win_length}, window={_window_repr(window)}, normalized={_flag(normalized)}, "
                f"onesided={_flag(onesided)}, return_complex={_flag(return_complex)}, "
                f"align_to_window={_flag(align_to_window)}) : ")
    if input.dtype.category not in (D._FLOAT, D._COMPLEX):
        raise RuntimeError(where() + "expected a tensor of floating point or complex values")
    if input.dim() not in (1, 2):
        raise RuntimeError(where() + "expected a 1D or 2D tensor")
    length = padded_shape[-1]
    if n_fft <= 0 or n_fft > length:
        raise RuntimeError(where() + f"expected 0 < n_fft < {length}, but got n_fft={n_fft}")
    if hop_length <= 0:
        raise RuntimeError(where() + f"expected hop_length > 0, but got hop_length={hop_length}")
    if win_length <= 0 or win_length > n_fft:
        raise RuntimeError(where() + f"expected 0 < win_length <= n_fft, but got win_length={win_length}")
    if window is not None and (window.dim() != 1 or window.shape[0] != win_length):
        raise RuntimeError(where() + f"expected a 1D window tensor of size equal to win_length={win_length}, but got "
                           f"window with size {list(window.shape)}")
    if input.dtype in (D.float16, D.bfloat16, D.complex32):
        raise RuntimeError(f"Unsupported dtype {D.scalar_type_name(input.dtype)}")
    aligned = bool(align_to_window) and win_length < n_fft
    if aligned:
        # Frames start where their window does: frame t's window covers
        # [t * hop, t * hop + win_length), so the frame begins `left` samples earlier.
        frames_count = 1 + (length - win_length) // hop_length
    else:
        frames_count = 1 + (length - n_fft) // hop_length
    if fused:
        offset, mode = (pad, pad_mode) if center else ((n_fft - win_length) // 2 if aligned else 0, "constant")
        spectrum = _stft_onesided(input, window, n_fft, hop_length, win_length, offset, mode, frames_count,
                                  bool(normalized))
        return spectrum if return_complex else view_as_real(spectrum)
    signal = input.unsqueeze(0) if input.dim() == 1 else input
    full_window = _centered_window(window, n_fft, win_length, signal)
    if aligned:
        left = (n_fft - win_length) // 2
        signal = constant_pad_nd(signal, (left, n_fft - win_length - left))
    # (B, frames, n_fft): overlapping views, copied once so that the window product runs
    # on the contiguous fast path (the strided one over overlapping frames is ~3x slower).
    frames = signal.unfold(1, n_fft, hop_length).narrow(1, 0, frames_count).contiguous() * full_window
    onesided = not frames.is_complex() if onesided is None else onesided
    code = NORM_BY_ROOT_N if normalized else NORM_NONE
    if frames.is_complex():
        if onesided:
            raise RuntimeError("Cannot have onesided output if window or input is complex")
        spectrum = _fft_c2c(frames, [2], code, True)
    else:
        spectrum = _fft_r2c(frames, [2], code, onesided)
    spectrum = spectrum.transpose(1, 2)
    if input.dim() == 1:
        spectrum = spectrum.squeeze(0)
    return spectrum if return_complex else view_as_real(spectrum)


@op("_stft_onesided")
def _stft_onesided(input, window, n_fft, hop_length, win_length, offset, pad_mode, frames, normalized):
    """The onesided STFT of a real (L) or (B, L) signal in one backend call: (n_fft // 2 + 1,
    frames), batched as the input. Frame t, sample n is ``x[t * hop_length + n - offset]``
    (x padded by `pad_mode` outside the signal) times the window (`win_length` points,
    ones when None, centred in n_fft); `normalized` scales by 1/sqrt(n_fft). `stft` checks
    the arguments; this op assumes them valid.
    """
    arr = _backends.get(input._device).fft.stft(input._data, None if window is None else window._data, n_fft,
                                                hop_length, win_length, offset, pad_mode, frames, normalized)
    return Tensor._wrap(arr, input._dtype.to_complex(), input._device)


def _overlap_add(frames, hop_length, signal_length):
    """The sum of (B, n_frames, n_fft) `frames` placed every `hop_length` samples:
    (B, signal_length), as PyTorch's unfold_backward."""
    batch, count, n_fft = frames.shape
    positions = (np.arange(count)[:, None] * hop_length + np.arange(n_fft)[None, :]).reshape(-1)
    out = zeros(batch, signal_length, dtype=frames.dtype, device=frames.device)
    return out.index_add(1, tensor(positions, device=frames.device), frames.reshape(batch, count * n_fft))


def istft(input, n_fft, hop_length=None, win_length=None, window=None, center=True, normalized=False,
          onesided=None, length=None, return_complex=False):
    """The inverse short-time Fourier transform: the least-squares signal whose `stft` is
    `input`, by windowed overlap-add divided by the summed squared window.

    Args:
        input: complex (n_freq, n_frames) or (B, n_freq, n_frames), as `stft` returns.
        length: trim (or zero-pad) the result to this many samples.
        return_complex: return the complex signal (needs onesided=False).
        The others as in `stft`.

    >>> import ember_tensor as torch
    >>> w = torch.hann_window(8)
    >>> x = torch.arange(32.)
    >>> y = torch.istft(torch.stft(x, 8, window=w, return_complex=True), 8, window=w, length=32)
    >>> bool((y - x).abs().max() < 1e-4)
    True
    """
    hop_length = n_fft >> 2 if hop_length is None else hop_length
    win_length = n_fft if win_length is None else win_length
    if not input.is_complex():
        raise RuntimeError("istft requires a complex-valued input tensor matching the output from stft with "
                           "return_complex=True.")
    where = (f"istft(CPU{D.scalar_type_name(input.dtype)}Type{list(input.shape)}, n_fft={n_fft}, "
             f"hop_length={hop_length}, win_length={win_length}, window={_window_repr(window)}, "
             f"center={_flag(center)}, normalized={_flag(normalized)}, onesided={_flag(onesided)}, "
             f"length={'None' if length is None else length}, return_complex={_flag(return_complex)}) ")
    if input.numel() == 0:
        raise RuntimeError(where + ": input tensor cannot be empty.")
    if input.dim() not in (2, 3):
        raise RuntimeError(where + f": expected a tensor with 3 or 4 dimensions, but got {input.dim() + 1}")
    n_frames, fft_size = input.shape[-1], input.shape[-2]
    onesided = fft_size != n_fft if onesided is None else onesided
    if onesided and n_fft // 2 + 1 != fft_size:
        raise RuntimeError(where + ": expected the frequency dimension (3rd to the last) of the input tensor to match "
                           f"n_fft / 2 + 1 when onesided=True, but got {fft_size}")
    if not onesided and n_fft != fft_size:
        raise RuntimeError(where + ": expected the frequency dimension (3rd to the last) of the input tensor to match "
                           f"n_fft when onesided=False, but got {fft_size}")
    if not 0 < hop_length <= win_length:
        raise RuntimeError(where + ": expected 0 < hop_length <= win_length")
    if not 0 < win_length <= n_fft:
        raise RuntimeError(where + ": expected 0 < win_length <= n_fft")
    if window is not None and (window.dim() != 1 or window.shape[0] != win_length):
        raise RuntimeError(where + ": Invalid window shape. window has to be 1D and length of `win_length`")
    real_dtype = input.dtype.to_real()
    full_window = _centered_window(window, n_fft, win_length, ones(1, dtype=real_dtype, device=input.device))
    spectra = (input.unsqueeze(0) if input.dim() == 2 else input).transpose(1, 2)  # (B, n_frames, fft_size)
    code = NORM_BY_ROOT_N if normalized else NORM_BY_N
    if return_complex:
        if onesided:
            raise RuntimeError("Cannot have onesided output if window or input is complex")
        frames = _fft_c2c(spectra, [2], code, False)
    else:
        if window is not None and window.is_complex():
            raise RuntimeError("Complex windows are incompatible with return_complex=False")
        if not onesided:
            spectra = spectra.narrow(2, 0, n_fft // 2 + 1)
        frames = _fft_c2r(spectra, [2], code, n_fft)
    expected_length = n_fft + hop_length * (n_frames - 1)
    signal = _overlap_add(frames * full_window, hop_length, expected_length)
    envelope = _overlap_add((full_window * full_window).expand(1, n_frames, n_fft), hop_length, expected_length)
    start = n_fft // 2 if center else 0
    if length is not None:
        end = start + length
    else:
        end = expected_length - n_fft // 2 if center else expected_length
    stop = min(end, expected_length)
    signal = signal.narrow(1, start, stop - start)
    envelope = envelope.narrow(1, start, stop - start)
    if bool((envelope.abs() < 1e-11).any()):
        raise RuntimeError(where + "window overlap add min: 1\n[ CPUBoolType{} ]")
    signal = signal / envelope
    if input.dim() == 2:
        signal = signal.squeeze(0)
    if end > expected_length:
        warnings.warn("The length of signal is shorter than the length parameter. Result is being padded with zeros "
                      "in the tail. Please check your center and hop_length settings.", UserWarning, stacklevel=2)
        signal = constant_pad_nd(signal, (0, end - expected_length))
    return signal
