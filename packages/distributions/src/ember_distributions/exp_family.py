"""``ExponentialFamily``: distributions whose density is exp(<t(x), theta> - F(theta) + k(x))."""
import ember_autograd

from .distribution import Distribution

__all__ = ["ExponentialFamily"]


class ExponentialFamily(Distribution):
    """Base class of exponential-family distributions: entropy (and the KL between two members
    of the same family) follow from the log normalizer F by a Bregman divergence, whose
    gradient autograd computes."""

    @property
    def _natural_params(self):
        raise NotImplementedError

    def _log_normalizer(self, *natural_params):
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self):
        raise NotImplementedError

    def entropy(self):
        """Entropy from the Bregman divergence of the log normalizer: F(theta) - <theta, grad F(theta)> - E[k(x)]."""
        result = -self._mean_carrier_measure
        nparams = [p.detach().requires_grad_() for p in self._natural_params]
        with ember_autograd.enable_grad():
            lg_normal = self._log_normalizer(*nparams)
            gradients = ember_autograd.grad(lg_normal.sum(), nparams, create_graph=True)
        result = result + lg_normal
        for np_, g in zip(nparams, gradients):
            result = result - (np_ * g).reshape(self._batch_shape + (-1,)).sum(-1)
        return result
