"""Stochastic depth (Huang et al. 2016): drop whole residual branches while training."""
import ember_nn as nn
import ember_tensor as torch

__all__ = ["stochastic_depth", "StochasticDepth"]


def stochastic_depth(input, p, mode, training=True):
    """Zero each sample's (``mode="row"``) or the whole batch's (``"batch"``) residual branch
    with probability ``p`` and scale the survivors by ``1 / (1 - p)``; identity in eval.

    >>> import ember_tensor as torch
    >>> stochastic_depth(torch.ones(2, 3), 0.5, "row", training=False).sum().item()
    6.0
    """
    if p < 0.0 or p > 1.0:
        raise ValueError(f"drop probability has to be between 0 and 1, but got {p}")
    if mode not in ("batch", "row"):
        raise ValueError(f"mode has to be either 'batch' or 'row', but got {mode}")
    if not training or p == 0.0:
        return input
    survival_rate = 1.0 - p
    size = [input.shape[0]] + [1] * (input.ndim - 1) if mode == "row" else [1] * input.ndim
    noise = torch.bernoulli(torch.full(size, survival_rate, dtype=input.dtype, device=input.device))
    if survival_rate > 0.0:
        noise = noise / survival_rate
    return input * noise


class StochasticDepth(nn.Module):
    """``stochastic_depth`` as a module (``p``, ``mode``; follows ``self.training``)."""

    def __init__(self, p, mode):
        super().__init__()
        self.p = p
        self.mode = mode

    def forward(self, input):
        return stochastic_depth(input, self.p, self.mode, self.training)

    def __repr__(self):
        return f"{self.__class__.__name__}(p={self.p}, mode={self.mode})"
