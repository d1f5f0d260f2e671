"""torch.nn.functional calls that PyTorch's autocast lists name by their ATen op
(avg_pool3d, reflection_pad2d, ctc_loss, grid_sampler, stft, upsample_bilinear2d, ...):
ember-nn runs them as composite ops under those names, so autocast gives PyTorch's
dtypes. The CPU cases are compared with PyTorch's CPU autocast (the test-only oracle);
CUDA's float32 list (the upsampling ops) runs on the simulator."""
import numpy as np
import pytest

import ember

F = ember.nn.functional


def _cases(T, F):
    """name -> a call of F on bfloat16 inputs built with library T (the same values each time)."""
    RNG = np.random.default_rng(0)
    x5 = T.tensor(RNG.standard_normal((1, 2, 4, 4, 4)).astype(np.float32)).bfloat16()
    x4 = x5[0]
    log_probs = T.tensor(RNG.standard_normal((6, 2, 5)).astype(np.float32)).log_softmax(2).bfloat16()
    return {
        "avg_pool3d": lambda: F.avg_pool3d(x5, 2),
        "avg_pool2d": lambda: F.avg_pool2d(x4, 2),
        "max_pool3d": lambda: F.max_pool3d(x5, 2),
        "max_pool3d_with_indices": lambda: F.max_pool3d(x5, 2, return_indices=True)[0],
        "adaptive_avg_pool3d": lambda: F.adaptive_avg_pool3d(x5, 2),
        "adaptive_max_pool3d": lambda: F.adaptive_max_pool3d(x5, 2),
        "fractional_max_pool2d": lambda: F.fractional_max_pool2d(x4, 2, output_size=2),
        "reflection_pad2d": lambda: F.pad(x4, (1, 1, 1, 1), mode="reflect"),
        "replication_pad3d": lambda: F.pad(x5, (1, 1, 1, 1, 1, 1), mode="replicate"),
        "circular_pad": lambda: F.pad(x4, (1, 1, 1, 1), mode="circular"),
        "ctc_loss": lambda: F.ctc_loss(log_probs, T.tensor([[1, 2], [3, 4]]), [6, 6], [2, 2]),
        "grid_sampler": lambda: F.grid_sample(x4, T.zeros(2, 3, 3, 2).bfloat16(), align_corners=False),
        "upsample_bilinear2d": lambda: F.interpolate(x4, scale_factor=2, mode="bilinear"),
        "stft": lambda: T.stft(x4.reshape(-1)[:64], 16, window=T.hann_window(16), return_complex=True),
    }


@pytest.mark.parametrize("name", sorted(_cases(ember, F)))
def test_cpu_autocast_dtypes_match_pytorch(name):
    torch = pytest.importorskip("torch")
    with ember.autocast("cpu", dtype=ember.bfloat16):
        got = _cases(ember, F)[name]()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        expected = _cases(torch, torch.nn.functional)[name]()
    assert str(got.dtype) == str(expected.dtype)


def test_cpu_list_functions_run_in_float32_and_keep_values():
    with ember.autocast("cpu", dtype=ember.bfloat16):
        cases = {name: call() for name, call in _cases(ember, F).items()}
    for name in ("avg_pool3d", "max_pool3d", "adaptive_avg_pool3d", "reflection_pad2d", "ctc_loss", "grid_sampler"):
        assert cases[name].dtype == ember.float32, name
    for name in ("avg_pool2d", "max_pool3d_with_indices", "circular_pad", "upsample_bilinear2d"):
        assert cases[name].dtype == ember.bfloat16, name
    outside = _cases(ember, F)
    np.testing.assert_allclose(cases["avg_pool3d"].numpy(), outside["avg_pool3d"]().float().numpy(), rtol=1e-2)


@pytest.mark.skipif(not ember.cuda.is_available(), reason="no GPU and no CUDA simulator")
@pytest.mark.parametrize("mode, size", [("nearest", (1, 2, 4, 4)), ("bilinear", (1, 2, 4, 4)),
                                        ("linear", (1, 2, 4)), ("trilinear", (1, 2, 2, 2, 2))])
def test_cuda_upsampling_runs_in_float32(mode, size):
    x = ember.randn(*size, device="cuda").half()
    with ember.autocast("cuda"):
        assert F.interpolate(x, scale_factor=2, mode=mode).dtype == ember.float32
    assert F.interpolate(x, scale_factor=2, mode=mode).dtype == ember.float16
