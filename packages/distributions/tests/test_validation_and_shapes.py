"""validate_args with PyTorch's ValueError wording, set_default_validate_args, and the
batch/event shape rules: sample shapes, expand, Independent, broadcasting in log_prob."""
import numpy as np
import pytest

import ember_distributions as D
import ember_tensor as et


@pytest.mark.parametrize("build, message", [
    (lambda: D.Normal(et.tensor([0.0]), et.tensor([-1.0])),
     r"Expected parameter scale \(Tensor of shape \(1,\)\) of distribution Normal\(loc: tensor\(\[0.\]\), scale: "
     r"tensor\(\[-1.\]\)\) to satisfy the constraint GreaterThan\(lower_bound=0.0\), but found invalid values:"),
    (lambda: D.Bernoulli(et.tensor([1.5])), r"Expected parameter probs .* to satisfy the constraint "
                                            r"Interval\(lower_bound=0.0, upper_bound=1.0\)"),
    (lambda: D.Categorical(et.tensor([-0.1, 1.1])), r"Expected parameter probs .* Simplex\(\)"),
    (lambda: D.Gamma(et.tensor([0.0]), et.tensor([1.0])), r"Expected parameter concentration"),
    (lambda: D.Dirichlet(et.tensor([1.0, -1.0])), r"Expected parameter concentration .* IndependentConstraint"),
    (lambda: D.Binomial(et.tensor([2.5]), et.tensor([0.5])), r"Expected parameter total_count .* IntegerGreaterThan"),
    (lambda: D.MultivariateNormal(et.zeros(2), et.tensor([[1.0, 2.0], [2.0, 1.0]])),
     r"Expected parameter covariance_matrix .* PositiveDefinite\(\)"),
    (lambda: D.Uniform(et.tensor([1.0]), et.tensor([0.0])), r"Uniform is not defined when low>= high"),
    (lambda: D.Geometric(et.tensor([0.0])), r"Expected parameter probs .* to be positive but found invalid values"),
    (lambda: D.Bernoulli(), r"Either `probs` or `logits` must be specified, but not both."),
    (lambda: D.Categorical(et.tensor(0.5)), r"`probs` parameter must be at least one-dimensional."),
    (lambda: D.MultivariateNormal(et.zeros(2)),
     r"Exactly one of covariance_matrix or precision_matrix or scale_tril may be specified."),
    (lambda: D.Independent(D.Normal(et.zeros(2), et.ones(2)), 2),
     r"Expected reinterpreted_batch_ndims <= len\(base_distribution.batch_shape\), actual 2 vs 1"),
    (lambda: D.MixtureSameFamily(D.Categorical(et.ones(3)), D.Normal(et.zeros(2), et.ones(2))),
     r"`mixture_distribution component` \(3\) does not equal `component_distribution.batch_shape\[-1\]` \(2\)"),
    (lambda: D.LKJCholesky(1), r"Expected dim to be an integer greater than or equal to 2. Found dim=1."),
])
def test_invalid_parameters_raise_pytorchs_errors(build, message):
    with pytest.raises(ValueError, match=message):
        build()


@pytest.mark.parametrize("dist, value, message", [
    (D.Normal(0.0, 1.0), [0.5], r"The value argument to log_prob must be a Tensor"),
    (D.Exponential(et.tensor([1.0])), et.tensor([-1.0]),
     r"Expected value argument \(Tensor of shape \(1,\)\) to be within the support \(GreaterThanEq\(lower_bound=0.0\)\) "
     r"of the distribution Exponential\(rate: tensor\(\[1.\]\)\), but found invalid values:"),
    (D.Bernoulli(et.tensor([0.3])), et.tensor([0.5]), r"to be within the support \(Boolean\(\)\)"),
    (D.Normal(et.zeros(3), et.ones(3)), et.zeros(2), r"Value is not broadcastable with batch_shape\+event_shape"),
    (D.Dirichlet(et.ones(3)), et.ones(2) / 2, r"The right-most size of value must match event_shape"),
    (D.Categorical(et.ones(3)), et.tensor(3), r"to be within the support \(IntegerInterval\(lower_bound=0, "
                                              r"upper_bound=2\)\)"),
])
def test_invalid_values_raise_pytorchs_errors(dist, value, message):
    with pytest.raises(ValueError, match=message):
        dist.log_prob(value)


def test_validate_args_false_and_default_switch():
    assert float(D.Normal(0.0, -1.0, validate_args=False).scale) == -1.0
    D.Distribution.set_default_validate_args(False)
    try:
        D.Normal(0.0, -1.0)
        assert float(D.Exponential(et.tensor(1.0)).log_prob(et.tensor(-1.0))) == 1.0  # not validated
    finally:
        D.Distribution.set_default_validate_args(True)
    with pytest.raises(ValueError):
        D.Normal(0.0, -1.0)
    with pytest.raises(ValueError):
        D.Distribution.set_default_validate_args("yes")


SHAPE_CASES = [
    # (distribution, batch_shape, event_shape)
    (lambda: D.Normal(et.zeros(2, 3), et.ones(3)), (2, 3), ()),
    (lambda: D.Normal(0.0, 1.0), (), ()),
    (lambda: D.Dirichlet(et.ones(2, 4)), (2,), (4,)),
    (lambda: D.Categorical(et.ones(5, 4)), (5,), ()),
    (lambda: D.OneHotCategorical(et.ones(5, 4)), (5,), (4,)),
    (lambda: D.Multinomial(3, et.ones(2, 4)), (2,), (4,)),
    (lambda: D.MultivariateNormal(et.zeros(2, 3), et.eye(3)), (2,), (3,)),
    (lambda: D.LowRankMultivariateNormal(et.zeros(3), et.ones(2, 3, 1), et.ones(3)), (2,), (3,)),
    (lambda: D.Independent(D.Normal(et.zeros(2, 3), et.ones(2, 3)), 1), (2,), (3,)),
    (lambda: D.Independent(D.Normal(et.zeros(2, 3), et.ones(2, 3)), 2), (), (2, 3)),
    (lambda: D.LKJCholesky(3, et.ones(2)), (2,), (3, 3)),
    (lambda: D.MixtureSameFamily(D.Categorical(et.ones(2, 3)), D.Normal(et.zeros(2, 3), et.ones(2, 3))), (2,), ()),
    (lambda: D.MixtureSameFamily(D.Categorical(et.ones(3)),
                                 D.Independent(D.Normal(et.zeros(3, 2), et.ones(3, 2)), 1)), (), (2,)),
    (lambda: D.RelaxedOneHotCategorical(et.tensor(0.5), et.ones(2, 4)), (2,), (4,)),
    (lambda: D.Beta(et.ones(2, 1), et.ones(3)), (2, 3), ()),
]


@pytest.mark.parametrize("build, batch_shape, event_shape", SHAPE_CASES, ids=range(len(SHAPE_CASES)))
def test_shape_rules(build, batch_shape, event_shape):
    dist = build()
    assert tuple(dist.batch_shape) == batch_shape and tuple(dist.event_shape) == event_shape
    sample = dist.sample((4, 1))
    assert tuple(sample.shape) == (4, 1) + batch_shape + event_shape
    assert tuple(dist.log_prob(sample).shape) == (4, 1) + batch_shape
    expanded = dist.expand((6,) + batch_shape)
    assert tuple(expanded.batch_shape) == (6,) + batch_shape
    assert tuple(expanded.sample().shape) == (6,) + batch_shape + event_shape
    assert tuple(expanded.log_prob(sample).shape) == (4, 6) + batch_shape


def test_expand_shares_parameters_and_keeps_values():
    dist = D.Normal(et.tensor([0.0, 1.0]), et.tensor([1.0, 2.0]))
    expanded = dist.expand((3, 2))
    assert expanded.loc.tolist() == [[0.0, 1.0]] * 3
    assert expanded.log_prob(et.tensor([0.5, 0.5])).tolist() == [dist.log_prob(et.tensor([0.5, 0.5])).tolist()] * 3


def test_independent_sums_log_prob_and_entropy():
    base = D.Normal(et.zeros(2, 3), et.ones(2, 3) * 2)
    dist = D.Independent(base, 1)
    value = et.randn(2, 3)
    np.testing.assert_allclose(dist.log_prob(value).tolist(), base.log_prob(value).sum(-1).tolist(), rtol=1e-6)
    np.testing.assert_allclose(dist.entropy().tolist(), base.entropy().sum(-1).tolist(), rtol=1e-6)
    assert dist.has_rsample and not dist.has_enumerate_support


def test_log_prob_broadcasts_values_against_the_batch():
    dist = D.Normal(et.zeros(3), et.ones(3))
    assert tuple(dist.log_prob(et.zeros(5, 1)).shape) == (5, 3)


def test_dtypes_follow_the_parameters():
    assert D.Normal(et.zeros(2, dtype=et.float64), 1.0).sample().dtype == et.float64
    assert D.Gamma(et.ones(2), et.ones(2)).rsample().dtype == et.float32
    assert D.Categorical(et.ones(3)).sample().dtype == et.int64
    assert D.Normal(0.0, 1.0).sample().dtype == et.get_default_dtype()


def test_mixture_support_checks_every_component():
    mix = D.MixtureSameFamily(D.Categorical(et.ones(2, 3)),
                              D.Uniform(et.zeros(2, 3), et.tensor([[1.0, 2.0, 3.0], [1.0, 1.0, 1.0]])))
    assert isinstance(mix.support, D.constraints.MixtureSameFamilyConstraint)
    assert mix.support.check(et.tensor([0.5, 0.5])).tolist() == [True, True]
    assert mix.support.check(et.tensor([1.5, 0.5])).tolist() == [False, True]
