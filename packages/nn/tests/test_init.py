"""nn.init: the calculate_gain table, bounds and statistics of each initialiser, exact
fills (eye, dirac, orthogonality) and PyTorch's errors."""
import math

import numpy as np
import pytest

import ember_tensor as torch
from ember_nn import init


@pytest.mark.parametrize("nonlinearity, param, gain", [
    ("linear", None, 1), ("conv2d", None, 1), ("conv_transpose3d", None, 1), ("sigmoid", None, 1),
    ("tanh", None, 5.0 / 3), ("relu", None, math.sqrt(2.0)), ("leaky_relu", None, math.sqrt(2 / (1 + 0.01 ** 2))),
    ("leaky_relu", 0.2, math.sqrt(2 / 1.04)), ("leaky_relu", 1, 1.0), ("selu", None, 0.75),
])
def test_calculate_gain_table(nonlinearity, param, gain):
    assert init.calculate_gain(nonlinearity, param) == pytest.approx(gain)


@pytest.mark.parametrize("args, message", [
    (("softmax",), "Unsupported nonlinearity softmax"),
    (("leaky_relu", True), "negative_slope True not a valid number"),
])
def test_calculate_gain_errors(args, message):
    with pytest.raises(ValueError, match=message):
        init.calculate_gain(*args)


def values(t):
    return np.asarray(t.detach(), dtype=np.float64)


# (initialiser, shape, bound on |w|)  -- fan_in = shape[1] * prod(shape[2:])
BOUNDED = [
    (lambda w: init.uniform_(w, -0.3, 0.3), (50, 40), 0.3),
    (lambda w: init.xavier_uniform_(w), (50, 40), math.sqrt(6 / 90)),
    (lambda w: init.xavier_uniform_(w, gain=2.0), (8, 4, 3, 3), 2 * math.sqrt(6 / (36 + 72))),
    (lambda w: init.kaiming_uniform_(w, a=math.sqrt(5)), (50, 40), 1 / math.sqrt(40)),
    (lambda w: init.kaiming_uniform_(w, mode="fan_out", nonlinearity="relu"), (50, 40),
     math.sqrt(2) * math.sqrt(3 / 50)),
    (lambda w: init.trunc_normal_(w, std=1.0, a=-0.5, b=0.5), (50, 40), 0.5),
]


@pytest.mark.parametrize("initialise, shape, bound", BOUNDED)
def test_bounded_initialisers_stay_in_bounds_and_fill_them(initialise, shape, bound):
    w = torch.empty(*shape)
    assert initialise(w) is w
    v = values(w)
    assert np.abs(v).max() <= bound + 1e-6
    assert np.abs(v).max() > 0.8 * bound  # uses the range, not a sliver of it


# (initialiser, shape, expected std)
NORMAL = [
    (lambda w: init.normal_(w, 0.0, 0.5), (100, 100), 0.5),
    (lambda w: init.xavier_normal_(w), (100, 100), math.sqrt(2 / 200)),
    (lambda w: init.kaiming_normal_(w, nonlinearity="relu"), (100, 100), math.sqrt(2 / 100)),
    (lambda w: init.kaiming_normal_(w, mode="fan_out"), (20, 10, 5), math.sqrt(2 / (1 + 1e-4)) / 10),
]


@pytest.mark.parametrize("initialise, shape, std", NORMAL)
def test_normal_initialisers_have_the_right_std(initialise, shape, std):
    torch.manual_seed(0)
    v = values(initialise(torch.empty(*shape)))
    assert abs(v.mean()) < 4 * std / math.sqrt(v.size)
    assert v.std() == pytest.approx(std, rel=0.05)


def test_constant_ones_zeros_and_non_contiguous_targets():
    w = torch.empty(3, 4)
    assert values(init.constant_(w, 2.5)).tolist() == [[2.5] * 4] * 3
    column = w.t()[1]  # a strided view: init writes through to the base
    init.zeros_(column)
    assert values(w)[:, 1].tolist() == [0.0, 0.0, 0.0] and values(w)[0, 0] == 2.5
    assert values(init.ones_(torch.empty(()))).tolist() == 1.0


def test_eye_and_dirac():
    np.testing.assert_array_equal(values(init.eye_(torch.empty(2, 3))), np.eye(2, 3))
    w = init.dirac_(torch.empty(4, 2, 3, 3), groups=2)
    expected = np.zeros((4, 2, 3, 3))
    for g in range(2):
        for d in range(2):
            expected[g * 2 + d, d, 1, 1] = 1
    np.testing.assert_array_equal(values(w), expected)


def test_orthogonal_rows_or_columns_are_orthonormal():
    for shape in [(3, 5), (5, 3), (4, 2, 2)]:
        w = values(init.orthogonal_(torch.empty(*shape), gain=2.0)).reshape(shape[0], -1)
        small = min(w.shape)
        gram = w @ w.T if w.shape[0] == small else w.T @ w
        np.testing.assert_allclose(gram, 4 * np.eye(small), atol=1e-5)


def test_sparse_zeroes_the_fraction_in_every_column():
    w = values(init.sparse_(torch.empty(10, 6), sparsity=0.3, std=0.5))
    assert ((w == 0).sum(axis=0) >= 3).all()


def test_seed_makes_init_reproducible():
    torch.manual_seed(3)
    a = values(init.kaiming_uniform_(torch.empty(4, 4)))
    torch.manual_seed(3)
    b = values(init.kaiming_uniform_(torch.empty(4, 4)))
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("call, message", [
    (lambda: init.xavier_uniform_(torch.empty(3)), "Fan in and fan out can not be computed for tensor with fewer "
                                                   "than 2 dimensions"),
    (lambda: init.kaiming_uniform_(torch.empty(2, 2), mode="fan_avg"), "Mode fan_avg not supported"),
    (lambda: init.eye_(torch.empty(2, 2, 2)), "Only tensors with 2 dimensions are supported"),
    (lambda: init.dirac_(torch.empty(2, 2)), "Only tensors with 3, 4, or 5 dimensions are supported"),
    (lambda: init.dirac_(torch.empty(3, 2, 3), groups=2), "dim 0 must be divisible by groups"),
    (lambda: init.orthogonal_(torch.empty(3)), "Only tensors with 2 or more dimensions are supported"),
])
def test_errors(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_init_does_not_record_autograd():
    from ember_nn import Parameter
    p = Parameter(torch.empty(3, 3))
    init.kaiming_uniform_(p)
    init.trunc_normal_(p)
    assert p.is_leaf and p.grad_fn is None


@pytest.mark.parametrize("old, new", [("eye", "eye_"), ("dirac", "dirac_")])
def test_deprecated_spellings_of_eye_and_dirac_warn_and_fill(old, new):
    tensor, expected = torch.empty(3, 2, 3), torch.empty(3, 2, 3)
    if old == "eye":
        tensor, expected = torch.empty(3, 4), torch.empty(3, 4)
    with pytest.warns(FutureWarning, match=f"`nn.init.{old}` is now deprecated in favor of `nn.init.{new}`"):
        getattr(init, old)(tensor)
    getattr(init, new)(expected)
    assert torch.equal(tensor, expected)
