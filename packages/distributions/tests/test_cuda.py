"""Every distribution on CUDA tensors: log_prob, cdf, moments and entropy equal the CPU's,
computed on the device (inside the tensor tests' `device_only()`, where reading a CUDA
array back to the host fails); samples and reparameterised samples stay on the device,
have the right shapes and lie in the support; gradients reach CUDA parameters; KL on CUDA.

CUDA runs on Numba's simulator unless NUMBA_ENABLE_CUDASIM=0 is set (on a real GPU).
"""
import os
import sys
from pathlib import Path

import numpy as np
import pytest

os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")
if "numba" in sys.modules:  # numba read its config at import: make it see the variable
    from numba.core import config as _numba_config
    _numba_config.reload_config()

import ember_distributions as D  # noqa: E402
import ember_tensor as et  # noqa: E402

from _cases import CASES  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tensor" / "tests"))
from cuda_guard import device_only  # noqa: E402

pytestmark = pytest.mark.skipif(not et.cuda.is_available(), reason="no CUDA and no simulator")


def _on(case, device):
    kwargs = {k: et.tensor(v, dtype=et.float64, device=device) if isinstance(v, np.ndarray) else v
              for k, v in case.kwargs.items()}
    return getattr(D, case.cls)(**kwargs, validate_args=False)


def _values(case, method, device):
    if method == "icdf":
        return et.tensor(np.full(case.values.shape[:1], 0.3), dtype=et.float64, device=device)
    return et.tensor(case.values, dtype=et.float64, device=device)


def _compute(dist, method, value):
    if method in ("log_prob", "cdf", "icdf"):
        return getattr(dist, method)(value)
    if method in ("entropy", "enumerate_support"):
        return getattr(dist, method)()
    return getattr(dist, method)


# Binomial's and Multinomial's entropies enumerate the support, whose size is read on the host.
HOST_READS = {("Binomial", "entropy"), ("Binomial", "enumerate_support"), ("Multinomial", "entropy")}


@pytest.mark.parametrize("case", CASES, ids=repr)
def test_densities_and_moments_on_cuda_equal_cpu(case):
    cpu, cuda = _on(case, "cpu"), _on(case, "cuda")
    for method in case.methods:
        expected = _compute(cpu, method, _values(case, method, "cpu"))
        value = _values(case, method, "cuda")
        if (case.cls, method) in HOST_READS:
            got = _compute(cuda, method, value)
        else:
            with device_only(allow_scalar_reads=True):
                got = _compute(cuda, method, value)
        assert got.device.type == "cuda", method
        np.testing.assert_allclose(np.asarray(got.cpu().tolist(), dtype=float),
                                   np.asarray(expected.tolist(), dtype=float), rtol=1e-9, atol=1e-12,
                                   equal_nan=True, err_msg=method)


@pytest.mark.parametrize("case", CASES, ids=repr)
def test_samples_stay_on_cuda_in_the_support(case):
    dist = _on(case, "cuda")
    draws = [dist.sample((6,))] + ([dist.rsample((6,))] if dist.has_rsample else [])
    for sample in draws:
        assert sample.device.type == "cuda"
        assert tuple(sample.shape) == (6,) + tuple(dist.batch_shape) + tuple(dist.event_shape)
        assert bool(dist.support.check(sample).all().cpu())


def test_rsample_gradients_reach_cuda_parameters():
    loc = et.tensor([0.5, -1.0], device="cuda", requires_grad=True)
    alpha = et.tensor([0.7, 3.0], dtype=et.float64, device="cuda", requires_grad=True)
    (D.Normal(loc, 1.0).rsample((3,)).sum() + D.Gamma(alpha, 1.0).rsample((3,)).sum()).backward()
    assert loc.grad.device.type == "cuda" and loc.grad.cpu().tolist() == [3.0, 3.0]
    assert alpha.grad.device.type == "cuda" and bool(et.isfinite(alpha.grad).all().cpu())


def test_kl_on_cuda_equals_cpu():
    def pair(device):
        f = dict(dtype=et.float64, device=device)
        return [(D.Normal(et.tensor([0.3, 1.0], **f), et.tensor([1.0, 2.0], **f)),
                 D.Laplace(et.tensor([0.0, 0.5], **f), et.tensor([2.0, 1.0], **f))),
                (D.Gamma(et.tensor([0.7, 2.0], **f), et.tensor([1.5, 0.8], **f)),
                 D.Gamma(et.tensor([1.0, 3.0], **f), et.tensor([2.0, 1.0], **f))),
                (D.Categorical(et.tensor([0.2, 0.8], **f)), D.Categorical(et.tensor([0.5, 0.5], **f)))]

    for (p_cpu, q_cpu), (p_cuda, q_cuda) in zip(pair("cpu"), pair("cuda")):
        with device_only(allow_scalar_reads=True):
            got = D.kl_divergence(p_cuda, q_cuda)
        np.testing.assert_allclose(got.cpu().tolist(), D.kl_divergence(p_cpu, q_cpu).tolist(), rtol=1e-12)


def test_categorical_counting_sampler_on_cuda():
    # One row, many draws: the inverse CDF by counting runs on the device.
    probs = np.array([0.0, 0.3, 0.0, 0.7])
    n = 4096
    samples = D.Categorical(et.tensor(probs, device="cuda")).sample((n,))
    assert samples.device.type == "cuda" and samples.dtype == et.int64 and tuple(samples.shape) == (n,)
    counts = np.bincount(np.asarray(samples.cpu().tolist()), minlength=4)
    assert counts[0] == counts[2] == 0
    # Within 6 standard errors of the expected frequency.
    assert abs(counts[1] / n - 0.3) <= 6 * np.sqrt(0.3 * 0.7 / n)
