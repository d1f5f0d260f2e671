"""float32 real FFTs along the last dim, which run pocketfft 128 rows a call past 128
rows: values against PyTorch (test-only oracle) over sizes, batch shapes (below, at and
past a chunk), norms, strides and the two-sided spectrum of real inputs."""
import numpy as np
import pytest

import ember_tensor as E

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(20)


def _check(call, values):
    ours = call(E, E.from_numpy(values)).numpy()
    expected = call(torch, torch.from_numpy(values)).numpy()
    assert ours.dtype == expected.dtype and ours.shape == expected.shape
    np.testing.assert_allclose(ours, expected, rtol=0, atol=2e-6 * max(np.abs(expected).max(), 1))


@pytest.mark.parametrize("size", [4, 8, 16, 64, 256, 512, 1024, 12])
@pytest.mark.parametrize("batch", [(), (1,), (3,), (128,), (129,), (300,), (2, 5), (3, 100)], ids=str)
def test_rfft_rows_match_pytorch(size, batch):
    values = RNG.standard_normal(batch + (size,)).astype(np.float32)
    _check(lambda m, t: m.fft.rfft(t), values)


@pytest.mark.parametrize("norm", ["backward", "ortho", "forward"])
@pytest.mark.parametrize("size", [8, 128])
def test_rfft_rows_norms_and_two_sided(norm, size):
    values = RNG.standard_normal((300, size)).astype(np.float32)  # past a chunk of 128 rows
    _check(lambda m, t: m.fft.rfft(t, norm=norm), values)
    _check(lambda m, t: m.fft.fft(t, norm=norm), values)  # real input: r2c, then the mirrored half
    _check(lambda m, t: m.fft.rfftn(t, dim=(-1,), norm=norm), values)


def test_rfft_rows_of_non_contiguous_and_padded_inputs():
    values = RNG.standard_normal((64, 10)).astype(np.float32)
    _check(lambda m, t: m.fft.rfft(t.t()), values)  # the transpose: 10 rows of 64 strided points
    _check(lambda m, t: m.fft.rfft(t, n=16), values)  # zero-padded to a power of two
    _check(lambda m, t: m.fft.rfft(t, dim=0), values)  # not the last dim: pocketfft
