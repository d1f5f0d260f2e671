"""Embedding with a sparse gradient (``F.embedding(..., sparse=True)``).

The forward is the dense embedding lookup; the op exists separately so that autograd
can give it a rule whose weight gradient is a sparse COO tensor holding one row per
looked-up index (uncoalesced, as PyTorch's), instead of a dense (num_weights, dim)
scatter-add: an update then touches only the rows a batch used.
"""
from .._dispatch import op
from .._ops.nn import sampling
from . import _compose
from ._coo import make_sparse

__all__ = ["embedding_sparse", "embedding_sparse_backward"]


@op()
def embedding_sparse(weight, indices, padding_idx=None, scale_grad_by_freq=False):
    """Rows of `weight` picked by `indices`; differentiates to a sparse weight gradient."""
    return sampling.embedding.impl(weight, indices, padding_idx, scale_grad_by_freq)


@op()
def embedding_sparse_backward(grad_output, indices, num_weights, padding_idx=None, scale_grad_by_freq=False):
    """The weight gradient of `embedding_sparse`: a sparse (num_weights, dim) tensor with one
    entry per index (the `padding_idx` ones dropped)."""
    idx, rows = _compose.embedding_backward(grad_output, indices, num_weights, padding_idx, scale_grad_by_freq)
    return make_sparse(idx, rows, (num_weights, rows.shape[1]), grad_output._dtype, device=grad_output._device)
