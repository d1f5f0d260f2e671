"""Gradients through torch.gradient, renorm and fill_diagonal_ (compositions of
differentiable ops and in-place fills of diagonal views), against PyTorch where installed
and against the formulas."""
import numpy as np
import pytest

import ember_autograd  # noqa: F401 - fills ember-tensor's autograd slot
import ember_tensor as et

RNG = np.random.default_rng(0)


def test_gradient_is_differentiable():
    x = et.tensor(RNG.normal(size=5), requires_grad=True)
    (g,) = et.gradient(x)
    g.sum().backward()
    # sum(gradient(x)) = (x1 - x0) + (x2 - x0)/2 + (x3 - x1)/2 + (x4 - x2)/2 + (x4 - x3).
    np.testing.assert_allclose(x.grad.numpy(), [-1.5, 0.5, 0.0, -0.5, 1.5])


def test_renorm_gradient_matches_pytorch():
    torch = pytest.importorskip("torch")
    a = RNG.normal(size=(3, 4)) * 2
    a[:, 0] *= 0.1  # one column under maxnorm, the others over it
    weights = RNG.normal(size=(3, 4))
    grads = []
    for lib in (et, torch):
        x = lib.tensor(a, requires_grad=True)
        (lib.renorm(x, 2, 1, 1.5) * lib.tensor(weights)).sum().backward()
        grads.append(x.grad.numpy())
    assert np.abs(grads[1]).max() > 0.1
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-9, atol=1e-12)


def test_fill_diagonal_cuts_the_gradient_of_what_it_overwrites():
    x = et.ones(3, 4, requires_grad=True)
    y = x * 2
    y.fill_diagonal_(7.0)
    y.sum().backward()
    assert x.grad.tolist() == [[0, 2, 2, 2], [2, 0, 2, 2], [2, 2, 0, 2]]
