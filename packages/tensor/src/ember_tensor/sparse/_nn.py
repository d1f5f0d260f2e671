"""Embedding with a sparse gradient (``F.embedding(..., sparse=True)``).

The forward is the dense embedding lookup; the op exists separately so that autograd
can give it a rule whose weight gradient is a sparse COO tensor holding one row per
looked-up index (uncoalesced, as PyTorch's), instead of a dense (num_weights, dim)
scatter-add: an update then touches only the rows a batch used.
"""
import numpy as np

from .. import _dtype as D
from .._dispatch import op
from .._ops.nn import sampling
from .._ops.nn._common import array_of
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
    if grad_output._device.type == "cuda":  # the composition of device ops (the CPU's below is NumPy)
        idx, rows = _compose.embedding_backward(grad_output, indices, num_weights, padding_idx, scale_grad_by_freq)
        return make_sparse(idx, rows, (num_weights, rows.shape[1]), grad_output._dtype, device=grad_output._device)
    idx = array_of(indices, np.int64).reshape(-1)
    g = array_of(grad_output).reshape(len(idx), -1)
    if scale_grad_by_freq:
        counts = np.bincount(idx, minlength=num_weights)
        g = g / counts[idx][:, None]
    if padding_idx is not None and padding_idx >= 0:
        keep = idx != padding_idx
        idx, g = idx[keep], g[keep]
    return make_sparse(idx.reshape(1, -1), g, (num_weights, g.shape[1]), grad_output._dtype, device=grad_output._device)
