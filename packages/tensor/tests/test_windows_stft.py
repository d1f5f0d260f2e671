"""Window functions (``torch.hann_window`` ... and ``torch.signal.windows``) and
``torch.stft``/``istft`` (issue 27), against PyTorch (test-only oracle): values, dtypes,
errors and warnings, round trips."""
import warnings

import numpy as np
import pytest

import ember_tensor as E

torch = pytest.importorskip("torch")

TOLERANCE = {"float32": 1e-6, "float64": 1e-12, "float16": 2e-3, "bfloat16": 1e-2}


@pytest.mark.parametrize("name, extra", [("hann_window", ()), ("hamming_window", ()), ("hamming_window", (0.6, 0.3)),
                                         ("blackman_window", ()), ("bartlett_window", ()), ("kaiser_window", ()),
                                         ("kaiser_window", (3.5,))])
@pytest.mark.parametrize("dtype", list(TOLERANCE))
def test_windows_match_pytorch(name, extra, dtype):
    for length in (0, 1, 2, 5, 8, 33):
        for periodic in (True, False):
            ours = getattr(E, name)(length, periodic, *extra, dtype=getattr(E, dtype))
            expected = getattr(torch, name)(length, periodic, *extra, dtype=getattr(torch, dtype))
            assert ours.dtype.name == dtype
            np.testing.assert_allclose(ours.float().numpy(), expected.float().numpy(), atol=TOLERANCE[dtype])


def test_window_defaults_and_requires_grad():
    assert E.hann_window(4).dtype == E.float32
    assert E.hann_window(4, requires_grad=True).requires_grad
    np.testing.assert_allclose(E.hann_window(6).numpy(), E.hann_window(7, periodic=False)[:6].numpy())


@pytest.mark.parametrize("call", [
    lambda m: m.hann_window(-1),
    lambda m: m.hamming_window(3, dtype=m.int64),
    lambda m: m.blackman_window(3, dtype=m.int8),
    lambda m: m.bartlett_window(3, dtype=m.complex64),
    lambda m: m.hann_window(4.0),
    lambda m: m.signal.windows.hann(-1),
    lambda m: m.signal.windows.hann(3, dtype=m.int64),
    lambda m: m.signal.windows.gaussian(5, std=-1),
    lambda m: m.signal.windows.exponential(5, tau=-1),
    lambda m: m.signal.windows.exponential(5, center=1.0),
    lambda m: m.signal.windows.kaiser(5, beta=-1),
    lambda m: m.signal.windows.general_cosine(5, a=1.0),
    lambda m: m.signal.windows.general_cosine(5, a=[]),
], ids=lambda _: "")
def test_window_errors_match_pytorch(call):
    with pytest.raises(Exception) as expected:
        call(torch)
    with pytest.raises(type(expected.value)) as ours:
        call(E)
    assert str(ours.value) == str(expected.value)


@pytest.mark.parametrize("name, kwargs", [
    ("hann", {}), ("hamming", {}), ("blackman", {}), ("bartlett", {}), ("nuttall", {}), ("cosine", {}),
    ("gaussian", {"std": 2.5}), ("exponential", {"tau": 3.0}), ("kaiser", {"beta": 4.0}),
    ("general_cosine", {"a": [0.5, 0.3, 0.2]}), ("general_hamming", {"alpha": 0.6})])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_signal_windows_match_pytorch(name, kwargs, dtype):
    for m in (0, 1, 2, 5, 8):
        for sym in (True, False):
            ours = getattr(E.signal.windows, name)(m, sym=sym, dtype=getattr(E, dtype), **kwargs)
            expected = getattr(torch.signal.windows, name)(m, sym=sym, dtype=getattr(torch, dtype), **kwargs)
            assert ours.dtype.name == dtype
            np.testing.assert_allclose(ours.numpy(), expected.numpy(), atol=TOLERANCE[dtype])
    ours = E.signal.windows.exponential(6, sym=False, center=1.5)
    np.testing.assert_allclose(ours.numpy(), torch.signal.windows.exponential(6, sym=False, center=1.5).numpy())


# -- stft / istft --------------------------------------------------------------------------

RNG = np.random.default_rng(0)
SIGNAL = RNG.standard_normal((2, 100)).astype(np.float32)
STFT_CASES = [
    {"n_fft": 16}, {"n_fft": 16, "hop_length": 5}, {"n_fft": 16, "win_length": 10}, {"n_fft": 15, "center": False},
    {"n_fft": 16, "pad_mode": "constant"}, {"n_fft": 16, "pad_mode": "replicate"},
    {"n_fft": 16, "pad_mode": "circular"}, {"n_fft": 16, "normalized": True}, {"n_fft": 16, "onesided": False},
    {"n_fft": 16, "win_length": 8, "center": False, "align_to_window": True},
    {"n_fft": 16, "win_length": 9, "center": False, "align_to_window": False},
]
SIGNALS = [SIGNAL, SIGNAL[0], SIGNAL.astype(np.float64), (SIGNAL + 1j * SIGNAL[:, ::-1]).astype(np.complex64)]


def _both(call, *arrays):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return (call(E, *[E.from_numpy(np.ascontiguousarray(a)) for a in arrays]),
                call(torch, *[torch.from_numpy(np.ascontiguousarray(a)) for a in arrays]))


@pytest.mark.parametrize("kwargs", STFT_CASES, ids=lambda k: "-".join(f"{a}={b}" for a, b in k.items()))
@pytest.mark.parametrize("windowed", [True, False])
def test_stft_matches_pytorch(kwargs, windowed):
    def call(m, t):
        window = m.hann_window(kwargs.get("win_length", kwargs["n_fft"])) if windowed else None
        return m.stft(t, window=window, return_complex=True, **kwargs)
    for signal in SIGNALS:
        ours, expected = _both(call, signal)
        assert ours.dtype.name == str(expected.dtype).split(".")[1]
        np.testing.assert_allclose(ours.numpy(), expected.numpy(), atol=1e-4)


@pytest.mark.parametrize("kwargs", [k for k in STFT_CASES if k.get("center", True) and "pad_mode" not in k],
                         ids=lambda k: "-".join(f"{a}={b}" for a, b in k.items()))
def test_istft_inverts_stft_like_pytorch(kwargs):
    def call(m, t):
        window = m.hann_window(kwargs.get("win_length", kwargs["n_fft"]), dtype=t.dtype)
        spectrum = m.stft(t, window=window, return_complex=True, **kwargs)
        return m.istft(spectrum, window=window, length=t.shape[-1], **kwargs)
    for signal in SIGNALS[:3]:
        ours, expected = _both(call, signal)
        np.testing.assert_allclose(ours.numpy(), expected.numpy(), atol=1e-5)
        np.testing.assert_allclose(ours.numpy(), signal, atol=1e-5)


def test_istft_forms_match_pytorch():
    window = lambda m: m.hann_window(16)  # noqa: E731
    cases = [
        lambda m, t: m.stft(t, 16, window=window(m), return_complex=False),
        lambda m, t: t.stft(16, window=window(m), return_complex=True).istft(16, window=window(m)),
        lambda m, t: m.istft(m.stft(t, 16, window=window(m), return_complex=True), 16, window=window(m), length=120),
        lambda m, t: m.istft(m.stft(t.to(m.complex64), 16, window=window(m), return_complex=True, onesided=False), 16,
                             window=window(m), return_complex=True),
        lambda m, t: m.istft(m.stft(t, 16, window=window(m), return_complex=True, normalized=True), 16,
                             window=window(m), normalized=True),
    ]
    for call in cases:
        ours, expected = _both(call, SIGNAL[0])
        assert tuple(ours.shape) == tuple(expected.shape)
        np.testing.assert_allclose(ours.numpy(), expected.numpy(), atol=1e-5)


def _spectrum(m):
    return m.stft(m.arange(100.0).sin(), 16, window=m.hann_window(16), return_complex=True)


@pytest.mark.parametrize("call", [
    lambda m: m.stft(m.ones(100), 16, window=m.hann_window(16)),
    lambda m: m.stft(m.ones(100), 200, window=m.hann_window(200), return_complex=True),
    lambda m: m.stft(m.ones(100), 16, hop_length=0, window=m.hann_window(16), return_complex=True),
    lambda m: m.stft(m.ones(100), 16, win_length=20, window=m.ones(20), return_complex=True),
    lambda m: m.stft(m.ones(100), 16, win_length=8, window=m.hann_window(16), return_complex=True),
    lambda m: m.stft(m.ones(100, dtype=m.int64), 16, window=m.hann_window(16), return_complex=True),
    lambda m: m.stft(m.ones(1, 1, 100), 16, window=m.hann_window(16), return_complex=True),
    lambda m: m.stft(m.ones(100, dtype=m.complex64), 16, window=m.hann_window(16), return_complex=True,
                     onesided=True),
    lambda m: m.stft(m.ones(100), 16, window=m.hann_window(16), return_complex=True, align_to_window=True),
    lambda m: m.stft(m.ones(100), 16, window=m.hann_window(16), return_complex=True, pad_mode="bad"),
    lambda m: m.stft(m.ones(10), 16, window=m.hann_window(16), return_complex=True, center=False),
    lambda m: m.istft(_spectrum(m).real, 16, window=m.hann_window(16)),
    lambda m: m.istft(_spectrum(m), 16, window=m.zeros(16)),
    lambda m: m.istft(_spectrum(m), 16, window=m.hann_window(16), center=False),
    lambda m: m.istft(_spectrum(m), 16, window=m.hann_window(16), onesided=False),
    lambda m: m.istft(_spectrum(m)[:5], 16, window=m.hann_window(16)),
    lambda m: m.istft(_spectrum(m)[None, None], 16, window=m.hann_window(16)),
    lambda m: m.istft(_spectrum(m), 16, window=m.hann_window(16), hop_length=20),
    lambda m: m.istft(_spectrum(m), 16, window=m.hann_window(16), return_complex=True),
    lambda m: m.istft(_spectrum(m), 16, window=m.ones(3)),
    lambda m: m.istft(m.zeros(3, 0, dtype=m.complex64), 4),
    lambda m: m.istft(_spectrum(m), 16, window=m.ones(16, dtype=m.complex64)),
], ids=lambda _: "")
def test_stft_errors_match_pytorch(call):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(Exception) as expected:
            call(torch)
        with pytest.raises(type(expected.value)) as ours:
            call(E)
    assert str(ours.value) == str(expected.value)


def test_stft_warnings():
    with pytest.warns(UserWarning, match="A window was not provided"):
        E.stft(E.ones(32), 8, return_complex=True)
    with pytest.warns(UserWarning, match="return_complex=False is deprecated"):
        E.stft(E.ones(32), 8, window=E.ones(8), return_complex=False)


def test_stft_of_a_tone_peaks_at_its_frequency():
    rate, n_fft = 16000, 512
    t = E.arange(rate, dtype=E.float64) / rate
    spectrum = E.stft(E.sin(2 * np.pi * 1000.0 * t), n_fft, hop_length=128, window=E.hann_window(n_fft),
                      return_complex=True)
    assert tuple(spectrum.shape) == (n_fft // 2 + 1, 1 + rate // 128)
    assert int(spectrum.abs().mean(1).argmax()) == 1000 * n_fft // rate


@pytest.mark.skipif(not E.cuda.is_available(), reason="no CUDA and no simulator")
def test_stft_on_cuda_matches_the_cpu():
    x = E.from_numpy(SIGNAL[0])
    spectrum = E.stft(x.cuda(), 16, window=E.hann_window(16, device="cuda"), return_complex=True)
    assert spectrum.device.type == "cuda"
    np.testing.assert_allclose(spectrum.cpu().numpy(),
                               E.stft(x, 16, window=E.hann_window(16), return_complex=True).numpy(), atol=1e-5)
