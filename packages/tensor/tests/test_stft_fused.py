"""The fused stft of real signals (`_stft_onesided`: framing, padding and windowing into a
buffer, then ember's own batched real FFT for power-of-two n_fft, pocketfft for the
others), against PyTorch (test-only oracle) and a NumPy reference, over sizes, hops,
pad modes, windows, batching and dtypes."""
import warnings

import numpy as np
import pytest

import ember_tensor as E

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(27)
TOLERANCE = {np.float32: 2e-6, np.float64: 1e-12}  # relative to the spectrum's largest magnitude

# (n_fft, hop_length, win_length, signal length): powers of two from the smallest the
# Numba FFT takes (odd and even stage counts) to 2048; other sizes (pocketfft: 2, odd 15,
# 400); hops that divide n_fft, do not, and exceed it; a shorter centred window; and
# enough frames for several chunks of the buffer (32, 2: 501 frames).
SIZES = [(2, 1, None, 10), (4, 1, None, 20), (8, 3, None, 50), (15, 4, None, 100), (16, 4, None, 100),
         (16, 5, 9, 100), (32, 8, None, 90), (32, 2, None, 1000), (64, 16, None, 1000), (64, 80, 48, 1000),
         (128, 32, None, 700), (400, 160, None, 3000), (512, 128, None, 4000), (512, 128, 400, 4000),
         (2048, 512, None, 9000)]
MODES = ["reflect", "constant", "replicate", "circular"]


def _numpy_stft(x, n_fft, hop, window, center, mode, normalized, win_length):
    """The reference: pad with NumPy's own modes, frame, window, rfft in float64."""
    x = np.atleast_2d(x).astype(np.float64)
    if center:
        numpy_mode = {"reflect": "reflect", "constant": "constant", "replicate": "edge", "circular": "wrap"}[mode]
        x = np.pad(x, ((0, 0), (n_fft // 2, n_fft // 2)), mode=numpy_mode)
    win = np.ones(win_length) if window is None else window.astype(np.float64)
    left = (n_fft - win_length) // 2
    full = np.zeros(n_fft)
    full[left:left + win_length] = win
    count = 1 + (x.shape[1] - n_fft) // hop
    frames = np.stack([x[:, t * hop: t * hop + n_fft] for t in range(count)], 1) * full
    spectrum = np.fft.rfft(frames, axis=2).transpose(0, 2, 1)
    return spectrum / np.sqrt(n_fft) if normalized else spectrum


def _compare(n_fft, hop, win_length, length, dtype, batch, mode="reflect", center=True, normalized=False,
             windowed=True):
    x = RNG.standard_normal((3, length) if batch else length).astype(dtype)
    wl = win_length or n_fft
    window = np.hanning(wl + 1)[:-1].astype(dtype) if windowed else None
    kwargs = dict(hop_length=hop, win_length=win_length, center=center, pad_mode=mode, normalized=normalized,
                  return_complex=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the rectangular-window warning
        ours = E.stft(E.from_numpy(x), n_fft, window=None if window is None else E.from_numpy(window), **kwargs)
        expected = torch.stft(torch.from_numpy(x), n_fft, window=None if window is None else torch.from_numpy(window),
                              **kwargs).numpy()
    assert ours.dtype.name == str(expected.dtype)
    assert tuple(ours.shape) == expected.shape
    scale = np.abs(expected).max()
    np.testing.assert_allclose(ours.numpy(), expected, rtol=0, atol=TOLERANCE[dtype] * scale)
    reference = _numpy_stft(x, n_fft, hop, window, center, mode, normalized, wl).reshape(expected.shape)
    np.testing.assert_allclose(ours.numpy(), reference, rtol=0, atol=TOLERANCE[dtype] * scale)


@pytest.mark.parametrize("n_fft, hop, win_length, length", SIZES, ids=lambda v: str(v))
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("batch", [False, True], ids=["1d", "2d"])
def test_fused_stft_matches_pytorch_and_numpy(n_fft, hop, win_length, length, dtype, batch):
    _compare(n_fft, hop, win_length, length, dtype, batch)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("n_fft, hop", [(16, 4), (64, 16), (400, 100), (512, 128)])
def test_fused_stft_pad_modes(mode, n_fft, hop):
    _compare(n_fft, hop, None, 1200, np.float32, True, mode=mode)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("n_fft, hop, length", [(16, 300, 100), (16, 97, 100), (32, 40, 33)])
def test_fused_stft_hops_past_the_signal(mode, n_fft, hop, length):
    # Padding as wide as the signal allows and hops longer than it: one or two frames.
    _compare(n_fft, hop, None, length, np.float64, False, mode=mode)


@pytest.mark.parametrize("options", [dict(center=False), dict(normalized=True), dict(windowed=False),
                                     dict(center=False, normalized=True, windowed=False)],
                         ids=["center-false", "normalized", "no-window", "all"])
@pytest.mark.parametrize("n_fft, hop", [(16, 4), (64, 20), (400, 160), (2048, 256)])
def test_fused_stft_options(options, n_fft, hop):
    _compare(n_fft, hop, None, 5000, np.float64, True, **options)


@pytest.mark.parametrize("n_fft, win_length", [(16, 8), (64, 40), (512, 300)])
def test_fused_stft_align_to_window_and_return_complex_false(n_fft, win_length):
    x = RNG.standard_normal(2000).astype(np.float32)

    def call(m, t):
        window = m.hann_window(win_length)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # return_complex=False is deprecated
            return m.stft(t, n_fft, hop_length=n_fft // 4, win_length=win_length, window=window, center=False,
                          align_to_window=True, return_complex=False)
    ours, expected = call(E, E.from_numpy(x)), call(torch, torch.from_numpy(x)).numpy()
    assert tuple(ours.shape) == expected.shape
    np.testing.assert_allclose(ours.numpy(), expected, atol=2e-6 * np.abs(expected).max())


def test_fused_stft_of_a_non_contiguous_signal():
    x = RNG.standard_normal((2000, 3))
    ours = E.stft(E.from_numpy(x).t(), 64, window=E.hann_window(64, dtype=E.float64), return_complex=True)
    expected = torch.stft(torch.from_numpy(x).t(), 64, window=torch.hann_window(64, dtype=torch.float64),
                          return_complex=True)
    np.testing.assert_allclose(ours.numpy(), expected.numpy(), atol=1e-10)


@pytest.mark.parametrize("n_fft, hop", [(64, 16), (400, 100), (512, 128)])
@pytest.mark.parametrize("dtype", [E.float32, E.float64], ids=["float32", "float64"])
def test_fused_stft_round_trips_through_istft(n_fft, hop, dtype):
    x = E.from_numpy(RNG.standard_normal((2, 4000))).to(dtype)
    window = E.hann_window(n_fft, dtype=dtype)
    spectrum = E.stft(x, n_fft, hop_length=hop, window=window, return_complex=True)
    back = E.istft(spectrum, n_fft, hop_length=hop, window=window, length=x.shape[-1])
    np.testing.assert_allclose(back.numpy(), x.numpy(), atol=1e-5 if dtype is E.float32 else 1e-12)


@pytest.mark.skipif(not E.cuda.is_available(), reason="no CUDA and no simulator")
def test_fused_stft_on_cuda_matches_the_cpu():
    x = E.from_numpy(RNG.standard_normal((2, 300)).astype(np.float32))
    window = E.hann_window(32)
    spectrum = E.stft(x.cuda(), 32, hop_length=8, window=window.cuda(), pad_mode="constant", return_complex=True)
    assert spectrum.device.type == "cuda"
    expected = E.stft(x, 32, hop_length=8, window=window, pad_mode="constant", return_complex=True)
    np.testing.assert_allclose(spectrum.cpu().numpy(), expected.numpy(), atol=1e-5)


def test_fused_stft_of_an_empty_batch():
    # PyTorch's CPU build raises an MKL configuration error here (MKL refuses a batch of
    # 0 transforms); ember returns the empty spectra of the shape the sizes give.
    ours = E.stft(E.zeros(0, 100), 16, window=E.hann_window(16), center=False, return_complex=True)
    assert tuple(ours.shape) == (0, 9, 1 + (100 - 16) // 4) and ours.dtype.name == "complex64"
