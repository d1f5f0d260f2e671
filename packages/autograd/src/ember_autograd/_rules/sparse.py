"""Rules of the sparse ops: ``sparse.mm`` in both arguments, and embedding with a sparse
weight gradient.

The gradient of a sparse argument is sparse on that argument's own pattern (PyTorch's
``torch.sparse.mm`` contract): grad @ mat2.T is only ever evaluated at the entries the
sparse matrix stores, never formed densely.
"""
import numpy as np

from ember_tensor import nn_ops as SN
from ember_tensor import sparse as S

from ._registry import composite, derivative, not_differentiable


@derivative("sparse_mm", inputs=("mat1", "mat2"), save=lambda mat1, mat2: (mat1, mat2))
def sparse_mm(ctx, grad, mat1, mat2):
    needs = ctx.needs_input_grad
    grad_mat1 = S.sampled_dense_product(mat1, grad, mat2) if needs[0] else None
    grad_mat2 = S.sparse_mm(mat1.t(), grad) if needs[1] else None
    return grad_mat1, grad_mat2


@derivative("embedding_sparse", inputs=("weight",), name="EmbeddingBackward0",
            save=lambda weight, indices, padding_idx=None, scale_grad_by_freq=False:
            (weight.shape[0], indices, padding_idx, scale_grad_by_freq))
def embedding_sparse(ctx, grad, num_weights, indices, padding_idx, scale_grad_by_freq):
    return SN.embedding_sparse_backward(grad, indices, num_weights, padding_idx, scale_grad_by_freq)


# The gradient-building ops themselves: first-order gradients only (no double backward
# through a sparse gradient yet).
not_differentiable("embedding_sparse_backward", "sparse_sampled_dense_product")


def _values_at_pattern(grad, indices):
    # The gradient of each stored entry. A sparse gradient on exactly our pattern (what
    # sparse.mm and to_dense give back) already holds it, duplicates included; otherwise
    # every entry gets the gradient's element at its index.
    if grad.is_sparse:
        if np.array_equal(grad._indices()._host_numpy(), indices._host_numpy()):
            return grad._values()
        grad = grad.to_dense()
    return grad[tuple(indices[d] for d in range(indices.shape[0]))]


@derivative("sparse_coo_from_values", inputs=("values",),
            save=lambda indices, values, size, is_coalesced=False: (indices,))
def sparse_coo_from_values(ctx, grad, indices):
    return _values_at_pattern(grad, indices)


@derivative("sparse_to_dense", save=lambda input: (input,))
def sparse_to_dense(ctx, grad, input):
    return grad.sparse_mask(input)


@derivative("sparse_coalesce", save=lambda input: (input,))
def sparse_coalesce(ctx, grad, input):
    # A merged entry's gradient goes to every entry that was summed into it.
    return (grad.to_dense() if grad.is_sparse else grad).sparse_mask(input)


# torch.spmm is torch.mm: matmul's rule differentiates it (a sparse operand's gradient is
# dense there, as PyTorch's mm gives).
composite("spmm")
