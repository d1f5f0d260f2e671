"""The parameter handling shared by the distributions of one success probability given as
``probs`` or as ``logits`` (exactly one): Bernoulli, Binomial, NegativeBinomial,
ContinuousBernoulli and LogitRelaxedBernoulli (and through it RelaxedBernoulli)."""
from .utils import broadcast_all, lazy_property, logits_to_probs, probs_to_logits

__all__ = ["ProbsOrLogits"]


class ProbsOrLogits:
    """Mixin: stores whichever of ``probs``/``logits`` was given (as ``_param`` too), derives
    the other on first use, and expands them; ``param_shape`` is the stored one's shape.

    >>> import ember_tensor as torch
    >>> from ember_distributions import Binomial
    >>> d = Binomial(4, logits=torch.tensor([0.0, 1.0]))
    >>> d.probs, d.param_shape
    (tensor([0.5000, 0.7311]), torch.Size([2]))
    """

    def _init_probs_or_logits(self, probs, logits, *others):
        """Store ``probs`` or ``logits`` broadcast with ``others`` (numbers or tensors, such as
        a total count), and return those broadcast in the parameter's dtype.

        Raises PyTorch's ValueError unless exactly one of ``probs`` and ``logits`` is given.
        """
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        name, given = ("probs", probs) if probs is not None else ("logits", logits)
        *others, param = broadcast_all(*others, given)
        setattr(self, name, param)
        self._param = param
        return [other.type_as(param) for other in others]

    def _expand_probs_or_logits(self, new, batch_shape):
        """Give ``new`` (the instance ``expand`` builds) this one's ``probs`` and/or ``logits``,
        whichever are stored, expanded to ``batch_shape``."""
        for name in ("probs", "logits"):
            if name in self.__dict__:
                new._param = self.__dict__[name].expand(batch_shape)
                setattr(new, name, new._param)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self):
        return self._param.size()
