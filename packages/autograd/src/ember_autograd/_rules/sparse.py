"""Rules of the sparse ops: ``sparse.mm`` in both arguments, and embedding with a sparse
weight gradient.

The gradient of a sparse argument is sparse on that argument's own pattern (PyTorch's
``torch.sparse.mm`` contract): grad @ mat2.T is only ever evaluated at the entries the
sparse matrix stores, never formed densely.
"""
from ember_tensor import _sparse_nn as SN
from ember_tensor import sparse as S

from ._registry import derivative, not_differentiable


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
