"""Activations at their edges (issue 21): NaN, the limits of hardtanh and relu6, large
inputs, and the in-place forms on non-leaves. Expected values are PyTorch 2.13's, written
out literally (no PyTorch needed here)."""
import math

import pytest

import ember_autograd  # noqa: F401 - backward()
import ember_nn.functional as F
import ember_tensor as E

nan, inf = math.nan, math.inf


def grad_of(fn, values):
    x = E.tensor(values, dtype=E.float64).requires_grad_()
    fn(x).sum().backward()
    return x.grad.tolist()


def test_relu_keeps_nan_and_gives_positive_zero():
    assert str(F.relu(E.tensor([nan, -1.0, -math.inf, 2.0]))) == "tensor([nan, 0., 0., 2.])"


def test_piecewise_activations_keep_nan_as_pytorch():
    x = E.tensor([nan, 0.5, -3.0, 3.0, 0.0], dtype=E.float64)
    assert F.threshold(x, 0.5, -1.0).tolist()[1:] == [-1.0, -1.0, 3.0, -1.0]
    assert F.hardshrink(x).tolist()[1:] == [0.0, -3.0, 3.0, 0.0]
    assert F.softshrink(x).tolist()[1:] == [0.0, -2.5, 2.5, 0.0]
    for fn in (F.threshold, F.hardshrink, F.softshrink, F.hardswish, F.hardsigmoid, F.logsigmoid):
        args = (0.5, -1.0) if fn is F.threshold else ()
        assert math.isnan(fn(x, *args)[0].item()), fn.__name__
    assert [math.copysign(1, v) for v in F.logsigmoid(E.tensor([inf, 1e300], dtype=E.float64)).tolist()] == [1, 1]


GRADIENTS = [
    # id, function, input, PyTorch's gradient
    ("hardtanh: none at the limits, NaN passes", F.hardtanh, [-1.0, 0.0, 1.0, 6.0, nan], [0.0, 1.0, 0.0, 0.0, 1.0]),
    ("relu6: none at 0 and 6, NaN passes", F.relu6, [-1.0, 0.0, 1.0, 6.0, nan], [0.0, 0.0, 1.0, 0.0, 1.0]),
    ("relu: NaN passes", F.relu, [nan, 0.0], [1.0, 0.0]),
    ("elu: NaN takes the linear branch, large x stays finite", F.elu, [nan, -1.0, 1000.0],
     [1.0, 0.36787944117144233, 1.0]),
    ("selu", F.selu, [nan, 1000.0], [1.0507009873554805, 1.0507009873554805]),
    ("celu", F.celu, [nan, -1e300, 0.0], [1.0, 0.0, 1.0]),
    ("softplus: nan at NaN", F.softplus, [nan, 1e300, -1e300], [nan, 1.0, 0.0]),
    ("logsigmoid of a 0-d tensor", F.logsigmoid, 1.0, 0.2689414213699951),
    ("logsigmoid: sigmoid(-x), 0.5 at 0", F.logsigmoid, [nan, 0.0, -3.0, 1e300, -1e300],
     [nan, 0.5, 0.9525741268224333, 0.0, 1.0]),
    ("threshold keeps NaN", lambda x: F.threshold(x, 0.5, -1.0), [nan, 0.5, 3.0], [1.0, 0.0, 1.0]),
    ("hardshrink: none inside the band, limits included", F.hardshrink, [nan, 0.5, -0.5, -3.0], [1.0, 0.0, 0.0, 1.0]),
    ("softshrink", F.softshrink, [nan, 0.5, -3.0, 3.0], [1.0, 0.0, 1.0, 1.0]),
    ("rrelu in evaluation: the slope at 0", F.rrelu, [nan, 0.0, 1.0], [0.22916666666666666, 0.22916666666666666, 1.0]),
    ("hardsigmoid: none at -3, 3 and NaN", F.hardsigmoid, [nan, -3.0, 3.0, 0.0], [0.0, 0.0, 0.0, 1 / 6]),
    ("hardswish: 0 at -3, 1 at 3 and NaN", F.hardswish, [nan, -3.0, 3.0, 0.0, -inf, inf], [1.0, 0.0, 1.0, 0.5, 0.0, 1.0]),
]


@pytest.mark.parametrize("fn, values, expected", [g[1:] for g in GRADIENTS], ids=[g[0] for g in GRADIENTS])
def test_activation_gradient_at_edges(fn, values, expected):
    assert grad_of(fn, values) == pytest.approx(expected, rel=1e-12, nan_ok=True)


INPLACE = [
    # name, PyTorch's gradient of f(x.clone(), inplace=True) at [-1.5, 0.5, 2.0]
    ("relu", [0.0, 1.0, 1.0]),
    ("relu6", [0.0, 1.0, 1.0]),
    ("hardtanh", [0.0, 1.0, 0.0]),
    ("elu", [0.2231301601484298, 1.0, 1.0]),
    ("selu", [0.39228498748012397, 1.0507009873554805, 1.0507009873554805]),
    ("celu", [0.2231301601484298, 1.0, 1.0]),
    ("leaky_relu", [0.01, 1.0, 1.0]),
    ("rrelu", [0.22916666666666666, 1.0, 1.0]),
    ("silu", [-0.041294154299142946, 0.7399611873026519, 1.0907842487848955]),
    ("mish", [-0.06409781589225869, 0.8864243753577272, 1.0693179342794896]),
    ("hardswish", [0.0, 0.6666666666666666, 1.1666666666666665]),
    ("hardsigmoid", [1 / 6, 1 / 6, 1 / 6]),
]


@pytest.mark.parametrize("name, expected", INPLACE, ids=[i[0] for i in INPLACE])
def test_inplace_activation_on_a_non_leaf_backpropagates(name, expected):
    fn = getattr(F, name)
    assert grad_of(lambda x: fn(x.clone(), inplace=True), [-1.5, 0.5, 2.0]) == pytest.approx(expected, rel=1e-6)


def test_inplace_activation_writes_its_input_and_bumps_its_version():
    x = E.tensor([-1.5, 0.5, 2.0], dtype=E.float64).requires_grad_()
    y = x.clone()
    version = y._version
    assert F.silu(y, inplace=True) is y and y._version > version
    assert y.tolist() == pytest.approx([-0.27363828570953447, 0.3112296656, 1.7615941560])


def test_inplace_activation_on_a_leaf_requiring_grad_raises():
    with pytest.raises(RuntimeError, match="leaf Variable"):
        F.leaky_relu(E.tensor([1.0]).requires_grad_(), inplace=True)

