"""Transforms: inverse round trips, log |det J| against the Jacobian autograd computes,
shapes, caching, composition; biject_to/transform_to land in their constraint."""
import math

import numpy as np
import pytest

import ember_autograd
import ember_distributions as D
import ember_tensor as et
from ember_distributions import constraints, transforms as T


def _f64(values):
    return et.tensor(values, dtype=et.float64)


RNG = np.random.default_rng(1)
X = RNG.standard_normal((4, 3)) * 0.8

ELEMENTWISE = [
    ("Exp", T.ExpTransform(), X),
    ("Affine", T.AffineTransform(0.5, -2.0), X),
    ("Affine_tensor", T.AffineTransform(_f64([0.5, 1.0, -1.0]), _f64([2.0, -0.5, 3.0])), X),
    ("Sigmoid", T.SigmoidTransform(), X),
    ("Softplus", T.SoftplusTransform(), X),
    ("Tanh", T.TanhTransform(), X),
    ("Power", T.PowerTransform(_f64(2.5)), np.abs(X) + 0.1),
    ("Power_negative", T.PowerTransform(_f64(-1.5)), np.abs(X) + 0.1),
    ("Exp_inv", T.ExpTransform().inv, np.abs(X) + 0.1),
    ("Compose", T.ComposeTransform([T.AffineTransform(1.0, 0.5), T.ExpTransform()]), X),
    ("Cat", T.CatTransform([T.ExpTransform(), T.AffineTransform(0.0, 3.0)], dim=1, lengths=[1, 2]), X),
    ("Stack", T.StackTransform([T.ExpTransform(), T.SigmoidTransform(), T.TanhTransform()], dim=1), X),
]


@pytest.mark.parametrize("name, transform, x", ELEMENTWISE, ids=[c[0] for c in ELEMENTWISE])
def test_elementwise_round_trip_and_log_det(name, transform, x):
    x = _f64(x).requires_grad_()
    y = transform(x)
    np.testing.assert_allclose(transform.inv(y.detach()).tolist(), x.detach().tolist(), rtol=1e-9, atol=1e-12)
    # Elementwise: the Jacobian is diagonal, and dy_i/dx_i is the gradient of sum(y).
    (dy_dx,) = ember_autograd.grad(y.sum(), [x])
    np.testing.assert_allclose(transform.log_abs_det_jacobian(x, y).tolist(), np.log(np.abs(dy_dx.tolist())),
                               rtol=1e-9, atol=1e-12)


def _jacobian(fn, x):
    """The Jacobian of fn (flattened output) at a 1-d x, row by row with autograd."""
    x = x.detach().requires_grad_()
    y = fn(x).reshape(-1)
    rows = []
    for i in range(y.shape[0]):
        (row,) = ember_autograd.grad(y[i], [x], retain_graph=True)
        rows.append(row.tolist())
    return np.array(rows)


def test_stick_breaking_log_det_is_the_jacobian_of_the_free_coordinates():
    transform = T.StickBreakingTransform()
    x = _f64([0.3, -1.2, 0.7])
    y = transform(x)
    assert abs(float(y.sum()) - 1.0) < 1e-12 and tuple(y.shape) == (4,)
    np.testing.assert_allclose(transform.inv(y).tolist(), x.tolist(), rtol=1e-9)
    jac = _jacobian(lambda v: transform(v)[:-1], x)
    assert abs(float(transform.log_abs_det_jacobian(x, y)) - math.log(abs(np.linalg.det(jac)))) < 1e-9


def test_corr_cholesky_log_det_is_the_jacobian_of_the_lower_triangle():
    transform = T.CorrCholeskyTransform()
    x = _f64([0.3, -1.2, 0.7])
    L = transform(x)
    assert bool(constraints.corr_cholesky.check(L))
    np.testing.assert_allclose(transform.inv(L).tolist(), x.tolist(), rtol=1e-8)
    rows, cols = np.tril_indices(3, k=-1)
    jac = _jacobian(lambda v: transform(v)[rows, cols], x)
    assert abs(float(transform.log_abs_det_jacobian(x, L)) - math.log(abs(np.linalg.det(jac)))) < 1e-9


def test_matrix_transforms_land_in_their_codomain():
    x = _f64(RNG.standard_normal((2, 3, 3)))
    lower = T.LowerCholeskyTransform()(x)
    assert bool(constraints.lower_cholesky.check(lower).all())
    np.testing.assert_allclose(T.LowerCholeskyTransform().inv(lower).tolist(), (np.tril(x.tolist())).tolist(),
                               rtol=1e-12)
    assert bool(constraints.positive_definite.check(T.PositiveDefiniteTransform()(x)).all())
    probs = T.SoftmaxTransform()(x)
    np.testing.assert_allclose(probs.sum(-1).tolist(), np.ones((2, 3)), rtol=1e-12)


def test_independent_and_reshape_transforms():
    x = _f64(X)
    independent = T.IndependentTransform(T.ExpTransform(), 1)
    assert independent.domain.event_dim == 1
    np.testing.assert_allclose(independent.log_abs_det_jacobian(x, independent(x)).tolist(), X.sum(-1), rtol=1e-12)
    reshape = T.ReshapeTransform((3,), (3, 1))
    assert tuple(reshape(x).shape) == (4, 3, 1)
    assert tuple(reshape.inv(reshape(x)).shape) == (4, 3)
    assert tuple(reshape.forward_shape((4, 3))) == (4, 3, 1)
    assert tuple(reshape.log_abs_det_jacobian(x, reshape(x)).shape) == (4,)
    with pytest.raises(ValueError, match="in_shape, out_shape have different numbers of elements"):
        T.ReshapeTransform((3,), (2, 2))


def test_cache_returns_the_original_input_and_keeps_its_graph():
    transform = T.TanhTransform(cache_size=1)
    x = _f64([20.0]).requires_grad_()
    y = transform(x)
    assert transform.inv(y) is x  # tanh(20) rounds to 1: only the cache gets x back exactly
    with pytest.raises(ValueError, match="cache_size must be 0 or 1"):
        T.ExpTransform(cache_size=2)


def test_compose_equality_sign_and_inverse():
    compose = T.ComposeTransform([T.ExpTransform(), T.AffineTransform(0.0, -2.0)])
    assert compose.sign == -1
    assert compose.inv.inv is compose
    assert T.ExpTransform() == T.ExpTransform() and T.ExpTransform() != T.SigmoidTransform()
    assert T.identity_transform(_f64([1.0])).tolist() == [1.0]


CONSTRAINTS = [constraints.real, constraints.positive, constraints.nonnegative, constraints.greater_than(2.0),
               constraints.greater_than_eq(-1.0), constraints.less_than(3.0), constraints.unit_interval,
               constraints.interval(-2.0, 5.0), constraints.half_open_interval(0.0, 4.0), constraints.simplex,
               constraints.independent(constraints.positive, 1),
               constraints.cat([constraints.positive, constraints.unit_interval], dim=-1, lengths=[1, 3]),
               constraints.stack([constraints.positive, constraints.real, constraints.unit_interval, constraints.positive],
                                 dim=-1)]


@pytest.mark.parametrize("constraint", CONSTRAINTS, ids=repr)
@pytest.mark.parametrize("registry", [D.biject_to, D.transform_to], ids=["biject_to", "transform_to"])
def test_registry_maps_reals_into_the_constraint(registry, constraint):
    x = _f64(RNG.standard_normal((5, 4)) * 2)
    transform = registry(constraint)
    if constraint is constraints.simplex and registry is D.biject_to:
        x = x[:, :3]
    y = transform(x)
    assert bool(constraint.check(y).all())
    if transform.bijective:
        np.testing.assert_allclose(transform.inv(y).tolist(), x.tolist(), rtol=1e-7, atol=1e-9)


def test_registry_for_matrix_constraints_and_unknown_ones():
    x = _f64(RNG.standard_normal((3, 3)))
    assert bool(constraints.lower_cholesky.check(D.transform_to(constraints.lower_cholesky)(x)))
    assert bool(constraints.positive_definite.check(D.transform_to(constraints.positive_definite)(x)))
    assert bool(constraints.corr_cholesky.check(D.biject_to(constraints.corr_cholesky)(x[0])))
    with pytest.raises(NotImplementedError, match="Cannot transform _Boolean constraints"):
        D.biject_to(constraints.boolean)


def test_transformed_distribution_log_prob_is_change_of_variables():
    base = D.Normal(_f64([0.2, -0.4]), _f64([1.0, 0.5]))
    dist = D.TransformedDistribution(base, [T.AffineTransform(1.0, 2.0), T.ExpTransform()])
    y = _f64([0.7, 3.0])
    x = (y.log() - 1.0) / 2.0
    expected = base.log_prob(x) - math.log(2.0) - y.log()
    np.testing.assert_allclose(dist.log_prob(y).tolist(), expected.tolist(), rtol=1e-12)
    assert bool(dist.support.check(dist.sample((10,))).all())
    # cdf through a decreasing transform flips: P(-X <= y) = 1 - P(X <= -y).
    flipped = D.TransformedDistribution(D.Normal(_f64(0.0), _f64(1.0)), T.AffineTransform(0.0, -1.0))
    assert abs(float(flipped.cdf(_f64(0.3))) - float(D.Normal(0.0, 1.0).cdf(_f64(0.3)))) < 1e-9
    independent = D.TransformedDistribution(D.Normal(et.zeros(2, 3), et.ones(2, 3)), T.StickBreakingTransform())
    assert tuple(independent.event_shape) == (4,) and tuple(independent.batch_shape) == (2,)


def test_abs_softmax_and_cdf_transforms():
    x = _f64([-1.5, 0.0, 2.0])
    assert T.AbsTransform()(x).tolist() == [1.5, 0.0, 2.0]
    assert T.AbsTransform().inv(_f64([1.5])).tolist() == [1.5]  # the positive branch
    assert not T.AbsTransform().bijective and not T.SoftmaxTransform().bijective
    probs = T.SoftmaxTransform()(x)
    np.testing.assert_allclose(probs.tolist(), np.exp([-1.5, 0, 2]) / np.exp([-1.5, 0, 2]).sum(), rtol=1e-12)
    normal = D.Normal(_f64(0.5), _f64(2.0))
    cdf = T.CumulativeDistributionTransform(normal)
    u = cdf(x)
    np.testing.assert_allclose(cdf.inv(u).tolist(), x.tolist(), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(cdf.log_abs_det_jacobian(x, u).tolist(), normal.log_prob(x).tolist(), rtol=1e-12)


def test_every_pytorch_transform_name_is_importable_from_transforms():
    # transforms/ is a package of private modules: the public path stays PyTorch's.
    torch = pytest.importorskip("torch")
    import importlib

    module = importlib.import_module("ember_distributions.transforms")
    missing = [name for name in torch.distributions.transforms.__all__ if not hasattr(module, name)]
    assert not missing
    assert set(T.__all__) >= set(torch.distributions.transforms.__all__)
    for name in T.__all__:
        assert getattr(D, name) is getattr(T, name)
