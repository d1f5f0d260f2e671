"""Every distribution's log_prob, cdf, icdf, moments, entropy and support enumeration equal
PyTorch's (float64), where PyTorch is installed (a test-only oracle, never a dependency)."""
import numpy as np
import pytest

import ember_distributions as D
import ember_tensor as et

from _cases import CASES

torch = pytest.importorskip("torch")


def _numpy(value):
    return value.detach().cpu().numpy() if hasattr(value, "detach") else np.asarray(value)


def _evaluate(dist, method, values, lib):
    if method in ("log_prob", "cdf"):
        tensor = et.tensor(values, dtype=et.float64) if lib == "ember" else torch.tensor(values, dtype=torch.float64)
        return getattr(dist, method)(tensor)
    if method == "icdf":
        probs = np.array([0.1, 0.5, 0.8])[:dist.batch_shape[-1]] if dist.batch_shape else np.array(0.3)
        tensor = et.tensor(probs, dtype=et.float64) if lib == "ember" else torch.tensor(probs, dtype=torch.float64)
        return dist.icdf(tensor)
    if method in ("entropy", "enumerate_support"):
        return getattr(dist, method)()
    return getattr(dist, method)


@pytest.mark.parametrize("case, method", [(c, m) for c in CASES for m in c.methods],
                         ids=[f"{c.name}-{m}" for c in CASES for m in c.methods])
def test_matches_pytorch(case, method):
    ours = _evaluate(case.build("ember", D), method, case.values, "ember")
    theirs = _evaluate(case.build("torch", torch), method, case.values, "torch")
    assert tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_allclose(_numpy(ours), _numpy(theirs), rtol=1e-6, atol=1e-9, equal_nan=True)


@pytest.mark.parametrize("case", CASES, ids=repr)
def test_shapes_and_support_match_pytorch(case):
    ours, theirs = case.build("ember", D), case.build("torch", torch)
    assert tuple(ours.batch_shape) == tuple(theirs.batch_shape)
    assert tuple(ours.event_shape) == tuple(theirs.event_shape)
    assert ours.has_rsample == theirs.has_rsample
    assert ours.has_enumerate_support == theirs.has_enumerate_support
    assert tuple(ours.sample((4,)).shape) == tuple(theirs.sample((4,)).shape)
    assert tuple(ours.expand((2,) + tuple(ours.batch_shape)).batch_shape) == (2,) + tuple(theirs.batch_shape)
