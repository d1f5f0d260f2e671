"""Derivatives of random ops: samples carry no gradient to the distribution's parameters
(PyTorch's derivatives.yaml gives them zeros), and factories start new leaves."""
import ember_tensor as E

from ._registry import derivative, not_differentiable


def _zeros(ctx, grad, *saved):
    return tuple(E.zeros_like(grad) if need else None for need in ctx.needs_input_grad)


# In place on a non-leaf, the old values are overwritten: nothing flows back to them.
for _name, _node in (("normal_", "NormalBackward0"), ("uniform_", "UniformBackward0"),
                     ("bernoulli_", "BernoulliBackward1"), ("cauchy_", "CauchyBackward0"),
                     ("exponential_", "ExponentialBackward0"), ("geometric_", "GeometricBackward0"),
                     ("log_normal_", "LogNormalBackward0"), ("random_", "RandomBackward0")):
    derivative(_name, inputs=("self",), name=_node)(_zeros)

derivative("bernoulli", name="BernoulliBackward0")(_zeros)
derivative("poisson", name="PoissonBackward0")(_zeros)
derivative("normal", inputs=("mean", "std"),
           name=lambda mean, std=None, *a, **k: "NormalBackward3" if isinstance(std, E.Tensor) and isinstance(
               mean, E.Tensor) else "NormalBackward1")(_zeros)

not_differentiable("rand", "randn", "randint", "randperm", "rand_like", "randn_like", "randint_like",
                   "multinomial")
