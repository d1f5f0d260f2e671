"""Gradients of ``torch.fft`` and ``torch.stft``/``istft`` (issue 27): backward of real
losses against PyTorch (test-only oracle), and gradcheck/gradgradcheck in float64 and
complex128 (complex inputs are checked through their real views)."""
import numpy as np
import pytest

import ember_autograd
import ember_tensor as E

torch = pytest.importorskip("torch")

gradcheck = ember_autograd.gradcheck
gradgradcheck = ember_autograd.gradgradcheck

RNG = np.random.default_rng(0)
REAL = RNG.standard_normal((4, 6))
COMPLEX = REAL + 1j * RNG.standard_normal((4, 6))

# (id, loss of (module, tensor), input): each loss is real, so backward() needs no gradient.
LOSSES = [
    ("rfft-abs", lambda m, t: m.fft.rfft(t).abs().sum(), REAL),
    ("fft-real-input", lambda m, t: (m.fft.fft(t, n=8, norm="ortho") * m.fft.fft(t, n=8).conj()).real.sum(), REAL),
    ("fft-trimmed", lambda m, t: m.fft.fft(t, n=4).abs().sum(), COMPLEX),
    ("ifft-dim0", lambda m, t: m.fft.ifft(t, dim=0).abs().pow(2).sum(), COMPLEX),
    ("ifft-real-input", lambda m, t: m.fft.ifft(t, norm="forward").imag.sum(), REAL),
    ("irfft-odd", lambda m, t: (m.fft.irfft(t, n=9) ** 2 * m.arange(9.0)).sum(), COMPLEX),
    ("irfft-even", lambda m, t: (m.fft.irfft(t) ** 3).sum(), COMPLEX),
    ("irfft-trimmed", lambda m, t: (m.fft.irfft(t, n=4, norm="ortho") ** 2).sum(), COMPLEX),
    ("hfft", lambda m, t: (m.fft.hfft(t, norm="forward") * m.arange(10.0)).sum(), COMPLEX),
    ("ihfft", lambda m, t: m.fft.ihfft(t).abs().sum(), REAL),
    ("fftn", lambda m, t: m.fft.fftn(t, s=(5, 4)).abs().sum(), COMPLEX),
    ("rfftn", lambda m, t: m.fft.rfftn(t, norm="ortho").abs().sum(), REAL),
    ("rfft2-padded", lambda m, t: m.fft.rfft2(t, s=(5, 9)).abs().sum(), REAL),
    ("irfftn", lambda m, t: (m.fft.irfftn(t, s=(4, 7)) ** 2).sum(), COMPLEX),
    ("hfft2", lambda m, t: (m.fft.hfft2(t) * m.arange(10.0)).sum(), COMPLEX),
    ("ihfftn", lambda m, t: m.fft.ihfftn(t).abs().sum(), REAL),
    ("fftshift", lambda m, t: (m.fft.fftshift(m.fft.fft(t)) * m.arange(6.0)).abs().sum(), REAL),
    ("stft", lambda m, t: m.stft(t.reshape(-1), 8, hop_length=3, window=m.hann_window(8, dtype=m.float64),
                                 return_complex=True).abs().sum(), REAL),
    ("stft-complex", lambda m, t: m.stft(t.reshape(-1), 8, window=m.hann_window(8, dtype=m.float64),
                                         return_complex=True, center=False).abs().sum(), COMPLEX),
    ("istft", lambda m, t: (m.istft(m.stft(t.reshape(-1), 8, window=m.hann_window(8, dtype=m.float64),
                                           return_complex=True) * 2, 8,
                                    window=m.hann_window(8, dtype=m.float64)) ** 2 * m.arange(24.0)).sum(), REAL),
]


@pytest.mark.parametrize("loss, values", [(c[1], c[2]) for c in LOSSES], ids=[c[0] for c in LOSSES])
def test_backward_matches_pytorch(loss, values):
    expected = torch.tensor(values, requires_grad=True)
    loss(torch, expected).backward()
    ours = E.tensor(values, requires_grad=True)
    loss(E, ours).backward()
    np.testing.assert_allclose(ours.grad.numpy(), expected.grad.resolve_conj().numpy(), atol=1e-10)


def test_grad_fn_names_match_pytorch():
    x = E.tensor(REAL, requires_grad=True)
    z = E.tensor(COMPLEX, requires_grad=True)
    assert type(E.fft.rfft(x).grad_fn).__name__ == "FftR2CBackward0"
    assert type(E.fft.irfft(z).grad_fn).__name__ == "FftC2RBackward0"
    assert type(E.fft.fft(z).grad_fn).__name__ == "FftC2CBackward0"


# (id, function, input, second order): gradcheck on complex outputs checks their real views.
CHECKS = [
    ("fft", lambda t: E.view_as_real(E.fft.fft(t, n=7)), COMPLEX[:2, :5], True),
    ("fft-real", lambda t: E.view_as_real(E.fft.fft(t, norm="ortho")), REAL[:2, :5], True),
    ("ifft", lambda t: E.view_as_real(E.fft.ifft(t, dim=0)), COMPLEX[:3, :2], True),
    ("rfft", lambda t: E.view_as_real(E.fft.rfft(t, n=6, norm="forward")), REAL[:2, :5], True),
    ("irfft", lambda t: E.fft.irfft(t, n=5), COMPLEX[:2, :3], True),
    ("irfft-even", lambda t: E.fft.irfft(t, norm="ortho"), COMPLEX[:2, :4], True),
    ("hfft", lambda t: E.fft.hfft(t), COMPLEX[:2, :4], True),
    ("ihfft", lambda t: E.view_as_real(E.fft.ihfft(t)), REAL[:2, :5], True),
    ("fftn", lambda t: E.view_as_real(E.fft.fftn(t, s=(3, 4))), COMPLEX[:2, :3], False),
    ("rfftn", lambda t: E.view_as_real(E.fft.rfftn(t)), REAL[:3, :4], False),
    ("irfftn", lambda t: E.fft.irfftn(t, s=(3, 5)), COMPLEX[:3, :3], False),
    ("hfftn", lambda t: E.fft.hfftn(t), COMPLEX[:2, :3], False),
    ("ihfftn", lambda t: E.view_as_real(E.fft.ihfftn(t)), REAL[:2, :4], False),
    ("stft", lambda t: E.view_as_real(E.stft(t, 4, hop_length=2, window=E.hann_window(4, dtype=E.float64),
                                             return_complex=True)), REAL[0], False),
]


@pytest.mark.parametrize("fn, values, second", [(c[1], c[2], c[3]) for c in CHECKS], ids=[c[0] for c in CHECKS])
def test_gradcheck(fn, values, second):
    x = E.tensor(np.ascontiguousarray(values), requires_grad=True)
    assert gradcheck(fn, (x,))
    if second:
        assert gradgradcheck(fn, (x,))


# The fused stft of real signals (`_stft_onesided`) has a rule of its own: gradients of the
# signal and of the window against PyTorch's, over pad modes, shorter windows, batches,
# normalization and frames aligned to the window.
STFT_GRAD_CASES = [
    dict(n_fft=16, hop_length=4),
    dict(n_fft=16, hop_length=5, pad_mode="constant"),
    dict(n_fft=16, hop_length=4, pad_mode="replicate", normalized=True),
    dict(n_fft=16, hop_length=3, pad_mode="circular"),
    dict(n_fft=16, hop_length=4, win_length=10),
    dict(n_fft=12, hop_length=4),
    dict(n_fft=16, hop_length=4, center=False),
    dict(n_fft=16, hop_length=4, win_length=8, center=False, align_to_window=True),
]


@pytest.mark.parametrize("kwargs", STFT_GRAD_CASES, ids=lambda k: "-".join(f"{a}={b}" for a, b in k.items()))
@pytest.mark.parametrize("shape", [(40,), (2, 40)], ids=["1d", "2d"])
def test_fused_stft_gradients_match_pytorch(kwargs, shape):
    signal = RNG.standard_normal(shape)
    window = np.hanning(kwargs.get("win_length", kwargs["n_fft"]) + 2)[1:-1]
    weights = RNG.standard_normal(2 * (kwargs["n_fft"] // 2 + 1))

    def run(m):
        x = m.tensor(signal, requires_grad=True)
        w = m.tensor(window, requires_grad=True)
        spectrum = m.stft(x, window=w, return_complex=True, **kwargs)
        # A loss touching real and imaginary parts unevenly, so that each counts.
        loss = (m.view_as_real(spectrum).reshape(-1, spectrum.shape[-1], 2).sum(1).reshape(-1)[:len(weights)]
                * m.tensor(weights)).sum() + spectrum.abs().sum()
        loss.backward()
        return x.grad.numpy(), w.grad.numpy()
    for ours, expected in zip(run(E), run(torch)):
        np.testing.assert_allclose(ours, expected, atol=1e-10)


def test_fused_stft_grad_fn_and_gradgradcheck():
    x = E.tensor(REAL[0], requires_grad=True)
    w = E.tensor(np.hanning(6)[1:-1], requires_grad=True)
    assert type(E.stft(x, 4, window=w, return_complex=True).grad_fn).__name__ == "StftOnesidedBackward0"

    def fn(signal, window):
        return E.view_as_real(E.stft(signal, 4, hop_length=1, window=window, pad_mode="reflect", return_complex=True))
    assert gradcheck(fn, (x, w))
    assert gradgradcheck(fn, (x, w))
