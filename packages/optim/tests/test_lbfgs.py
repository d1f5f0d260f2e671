"""LBFGS minimises smooth functions through its closure, with and without line search."""
import numpy as np
import pytest

import ember_tensor as et
import ember_optim as optim
from ember_optim._line_search import cubic_interpolate


def _rosenbrock(xy):
    x, y = xy[0], xy[1]
    return (1 - x) ** 2 + 100 * (y - x * x) ** 2


@pytest.mark.parametrize("line_search_fn, steps", [(None, 60), ("strong_wolfe", 3)])
def test_minimises_rosenbrock(line_search_fn, steps):
    xy = et.tensor([-1.5, 2.0], dtype=et.float64, requires_grad=True)
    opt = optim.LBFGS([xy], lr=1 if line_search_fn else 0.1, max_iter=100, line_search_fn=line_search_fn)

    def closure():
        opt.zero_grad()
        loss = _rosenbrock(xy)
        loss.backward()
        return loss

    for _ in range(steps):
        opt.step(closure)
    if line_search_fn:
        np.testing.assert_allclose(xy.detach().numpy(), [1.0, 1.0], atol=1e-5)
    assert _rosenbrock(xy.detach()).item() < _rosenbrock(et.tensor([-1.5, 2.0], dtype=et.float64)).item()


@pytest.mark.parametrize("line_search_fn", [None, "strong_wolfe"])
def test_matches_pytorch_iterates(line_search_fn):
    torch = pytest.importorskip("torch")
    results = []
    for lib, opt_mod in ((et, optim), (torch, torch.optim)):
        xy = lib.tensor([-1.2, 1.0], dtype=lib.float64, requires_grad=True)
        opt = opt_mod.LBFGS([xy], lr=0.5, max_iter=15, history_size=5, line_search_fn=line_search_fn)

        def closure():
            opt.zero_grad()
            loss = _rosenbrock(xy)
            loss.backward()
            return loss

        for _ in range(2):
            opt.step(closure)
        results.append(np.array(xy.detach().numpy()))
    np.testing.assert_allclose(results[0], results[1], rtol=1e-9)


def test_unknown_line_search_is_refused():
    w = et.tensor([1.0], requires_grad=True)
    opt = optim.LBFGS([w], line_search_fn="armijo")

    def closure():
        opt.zero_grad()
        loss = (w * w).sum()
        loss.backward()
        return loss

    with pytest.raises(RuntimeError, match="only 'strong_wolfe' is supported"):
        opt.step(closure)


@pytest.mark.parametrize("args, expected", [
    ((0.0, 0.0, -1.0, 1.0, 0.0, 1.0), 0.5),            # f = (x - 0.5)^2 shape: minimum inside
    ((0.0, 1.0, -2.0, 2.0, 1.0, 2.0), 1.0),            # parabola (x-1)^2 through both points
])
def test_cubic_interpolate_finds_the_minimum(args, expected):
    assert cubic_interpolate(*args) == pytest.approx(expected)
