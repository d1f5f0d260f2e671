"""ember-distributions: PyTorch's ``torch.distributions`` for ember.

Parameterisable probability distributions with sampling (reparameterised where PyTorch's
are, differentiable through ember-autograd), log densities, moments, entropies, the
KL-divergence registry, constraints and bijective transforms.

>>> import ember_tensor as torch
>>> from ember_distributions import Normal, kl_divergence
>>> p, q = Normal(torch.tensor(0.0), torch.tensor(1.0)), Normal(torch.tensor(1.0), torch.tensor(2.0))
>>> p.log_prob(torch.tensor(0.0))
tensor(-0.9189)
>>> kl_divergence(p, q)
tensor(0.4431)
"""

import ember_autograd
import ember_tensor
from ember_tensor.version import check_layers

__version__ = "0.1.0"

_NEEDED_BY = f"ember-distributions {__version__}"
check_layers(__file__, _NEEDED_BY)

from . import constraints, transforms, utils  # noqa: E402 -- after the version checks
from .bernoulli import Bernoulli  # noqa: E402
from .beta import Beta  # noqa: E402
from .binomial import Binomial  # noqa: E402
from .categorical import Categorical  # noqa: E402
from .cauchy import Cauchy  # noqa: E402
from .chi2 import Chi2  # noqa: E402
from .constraint_registry import biject_to, transform_to  # noqa: E402
from .continuous_bernoulli import ContinuousBernoulli  # noqa: E402
from .dirichlet import Dirichlet  # noqa: E402
from .distribution import Distribution  # noqa: E402
from .exp_family import ExponentialFamily  # noqa: E402
from .exponential import Exponential  # noqa: E402
from .fishersnedecor import FisherSnedecor  # noqa: E402
from .gamma import Gamma  # noqa: E402
from .generalized_pareto import GeneralizedPareto  # noqa: E402
from .geometric import Geometric  # noqa: E402
from .gumbel import Gumbel  # noqa: E402
from .half_cauchy import HalfCauchy  # noqa: E402
from .half_normal import HalfNormal  # noqa: E402
from .independent import Independent  # noqa: E402
from .inverse_gamma import InverseGamma  # noqa: E402
from .kl import kl_divergence, register_kl  # noqa: E402
from . import _kl_cross  # noqa: E402,F401 -- registers the cross-family KL pairs
from .kumaraswamy import Kumaraswamy  # noqa: E402
from .laplace import Laplace  # noqa: E402
from .lkj_cholesky import LKJCholesky  # noqa: E402
from .log_normal import LogNormal  # noqa: E402
from .logistic_normal import LogisticNormal  # noqa: E402
from .lowrank_multivariate_normal import LowRankMultivariateNormal  # noqa: E402
from .mixture_same_family import MixtureSameFamily  # noqa: E402
from .multinomial import Multinomial  # noqa: E402
from .multivariate_normal import MultivariateNormal  # noqa: E402
from .negative_binomial import NegativeBinomial  # noqa: E402
from .normal import Normal  # noqa: E402
from .one_hot_categorical import OneHotCategorical, OneHotCategoricalStraightThrough  # noqa: E402
from .pareto import Pareto  # noqa: E402
from .poisson import Poisson  # noqa: E402
from .relaxed_bernoulli import LogitRelaxedBernoulli, RelaxedBernoulli  # noqa: E402
from .relaxed_categorical import ExpRelaxedCategorical, RelaxedOneHotCategorical  # noqa: E402
from .student_t import StudentT  # noqa: E402
from .transformed_distribution import TransformedDistribution  # noqa: E402
from .transforms import *  # noqa: E402,F403 -- PyTorch exports every transform at the top level
from .uniform import Uniform  # noqa: E402
from .von_mises import VonMises  # noqa: E402
from .weibull import Weibull  # noqa: E402
from .wishart import Wishart  # noqa: E402

__all__ = [
    "Bernoulli", "Beta", "Binomial", "Categorical", "Cauchy", "Chi2", "ContinuousBernoulli", "Dirichlet",
    "Distribution", "Exponential", "ExponentialFamily", "FisherSnedecor", "Gamma", "GeneralizedPareto", "Geometric", "Gumbel", "HalfCauchy", "HalfNormal",
    "Independent", "InverseGamma", "Kumaraswamy", "LKJCholesky", "Laplace", "LogNormal", "LogisticNormal",
    "LogitRelaxedBernoulli",
    "LowRankMultivariateNormal", "MixtureSameFamily", "Multinomial", "MultivariateNormal", "NegativeBinomial",
    "Normal", "OneHotCategorical", "OneHotCategoricalStraightThrough", "Pareto", "Poisson", "RelaxedBernoulli",
    "RelaxedOneHotCategorical", "ExpRelaxedCategorical", "StudentT", "TransformedDistribution", "Uniform",
    "VonMises", "Weibull", "Wishart", "biject_to", "kl_divergence", "register_kl", "transform_to", "constraints",
    "transforms", "utils", *transforms.__all__,
]
