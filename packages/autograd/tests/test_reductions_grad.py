"""Gradients of reductions against NumPy formulas, for all dim/keepdim forms, 0-d and
non-contiguous inputs."""
import numpy as np
import pytest

import ember_autograd  # noqa: F401
import ember_tensor as E

RNG = np.random.default_rng(0)
BASE = RNG.standard_normal((3, 4))


def _leaf(array, transpose=False):
    if transpose:
        t = E.tensor(np.ascontiguousarray(array.T), dtype=E.float64).t()
        assert not t.is_contiguous()
    else:
        t = E.tensor(array, dtype=E.float64)
    return t.requires_grad_()


def _mean_grad(shape, axis):
    n = np.prod([shape[a] for a in axis]) if axis is not None else np.prod(shape)
    return np.full(shape, 1.0 / n)


CASES = [
    # (name, op on an ember tensor, expected gradient of op(x).sum() as a function of x)
    ("sum", lambda t: t.sum(), lambda x: np.ones_like(x)),
    ("sum_dim", lambda t: t.sum(1), lambda x: np.ones_like(x)),
    ("sum_dims_keepdim", lambda t: t.sum((0, 1), keepdim=True), lambda x: np.ones_like(x)),
    ("mean", lambda t: t.mean(), lambda x: _mean_grad(x.shape, None)),
    ("mean_dim", lambda t: t.mean(0), lambda x: _mean_grad(x.shape, (0,))),
    ("prod_dim", lambda t: t.prod(1), lambda x: np.prod(x, 1, keepdims=True) / x),
    ("prod", lambda t: t.prod(), lambda x: np.prod(x) / x),
    ("amax", lambda t: t.amax(1), lambda x: (x == x.max(1, keepdims=True)).astype(float)),
    ("max_all", lambda t: t.max(), lambda x: (x == x.max()).astype(float)),
    ("max_dim", lambda t: t.max(0)[0], lambda x: (x == x.max(0, keepdims=True)).astype(float)),
    ("min_dim_keepdim", lambda t: t.min(1, keepdim=True).values,
     lambda x: (x == x.min(1, keepdims=True)).astype(float)),
    ("var", lambda t: t.var(), lambda x: 2 * (x - x.mean()) / (x.size - 1)),
    ("var_dim_biased", lambda t: t.var(1, unbiased=False),
     lambda x: 2 * (x - x.mean(1, keepdims=True)) / x.shape[1]),
    ("std", lambda t: t.std(0), lambda x: (x - x.mean(0)) / ((x.shape[0] - 1) * x.std(0, ddof=1))),
    ("norm", lambda t: t.norm(), lambda x: x / np.linalg.norm(x)),
    ("norm_p1_dim", lambda t: t.norm(1, dim=0), lambda x: np.sign(x)),
    ("norm_p3", lambda t: t.norm(3), lambda x: x * np.abs(x) / (np.abs(x) ** 3).sum() ** (2 / 3)),
    ("logsumexp", lambda t: t.logsumexp(1),
     lambda x: np.exp(x) / np.exp(x).sum(1, keepdims=True)),
    ("trace", lambda t: t.trace(), lambda x: np.eye(*x.shape)),
    ("diag", lambda t: t.diag(1), lambda x: np.eye(*x.shape, k=1)),
]


@pytest.mark.parametrize("transpose", [False, True], ids=["contiguous", "transposed"])
@pytest.mark.parametrize("name, fn, expected", CASES, ids=[c[0] for c in CASES])
def test_reduction_gradient(name, fn, expected, transpose):
    x = BASE.T.copy() if transpose else BASE
    t = _leaf(x, transpose)
    fn(t).sum().backward()
    np.testing.assert_allclose(t.grad.numpy(), expected(x), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("fn", [lambda t: t.sum(), lambda t: t.mean(), lambda t: t.prod(),
                                lambda t: t.amax(), lambda t: t.max(), lambda t: t.norm(),
                                lambda t: t.logsumexp(0), lambda t: t.median()])
def test_zero_dim_inputs(fn):
    t = E.tensor(1.5, dtype=E.float64, requires_grad=True)
    fn(t).backward()
    assert t.grad.shape == ()
    assert t.grad.item() == pytest.approx(1.0)


def test_prod_with_zeros_matches_pytorch():
    # torch: x=[[2,0,3],[0,0,4],[1,2,3]]; x.prod(1).sum().backward() -> [[0,6,0],[0,0,0],[6,3,2]]
    t = E.tensor([[2.0, 0.0, 3.0], [0.0, 0.0, 4.0], [1.0, 2.0, 3.0]], requires_grad=True)
    t.prod(1).sum().backward()
    assert t.grad.tolist() == [[0.0, 6.0, 0.0], [0.0, 0.0, 0.0], [6.0, 3.0, 2.0]]


def test_amax_ties_share_the_gradient():
    t = E.tensor([1.0, 3.0, 3.0], requires_grad=True)
    t.amax().backward()
    assert t.grad.tolist() == [0.0, 0.5, 0.5]


def test_max_with_dim_sends_the_gradient_to_the_first_index():
    t = E.tensor([[1.0, 3.0, 3.0]], requires_grad=True)
    t.max(1).values.sum().backward()
    assert t.grad.tolist() == [[0.0, 1.0, 0.0]]


def test_var_mean_gradients_add():
    x = _leaf(BASE)
    v, m = E.var_mean(x, 1)
    (v.sum() + m.sum()).backward()
    expected = 2 * (BASE - BASE.mean(1, keepdims=True)) / 3 + 1 / 4
    np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-10)


@pytest.mark.parametrize("op, node", [
    (lambda t: t.sum(), "SumBackward0"), (lambda t: t.sum(0), "SumBackward1"),
    (lambda t: t.mean(), "MeanBackward0"), (lambda t: t.max(), "MaxBackward1"),
    (lambda t: t.max(0)[0], "MaxBackward0"), (lambda t: E.max(t, t), "MaximumBackward0"),
    (lambda t: t.amin(0), "AminBackward0"), (lambda t: t.std(), "StdBackward0"),
    (lambda t: t.norm(), "LinalgVectorNormBackward0"), (lambda t: t.prod(1), "ProdBackward1"),
])
def test_node_names_are_pytorchs(op, node):
    assert op(_leaf(BASE)).grad_fn.name() == node


@pytest.mark.parametrize("op", [lambda t: t.argmax(), lambda t: t.argmin(0), lambda t: t > 0,
                                lambda t: t.any(), lambda t: t.count_nonzero(),
                                lambda t: t.max(0)[1]])
def test_non_differentiable_outputs_do_not_require_grad(op):
    out = op(_leaf(BASE))
    assert not out.requires_grad and out.grad_fn is None
