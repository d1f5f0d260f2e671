"""Embedding/EmbeddingBag with sparse=True: sparse .grad equal to the dense one, and
clip_grad_norm_ over sparse gradients (optimizers on sparse grads: ember-optim's tests)."""
import numpy as np
import pytest

import ember_nn as nn
import ember_tensor as torch
from ember_nn.utils import clip_grad_norm_

RNG = np.random.default_rng(2)


def twin_embeddings(cls, num=6, dim=3, **kwargs):
    weight = torch.tensor(RNG.standard_normal((num, dim)).astype(np.float32))
    sparse = cls.from_pretrained(weight, freeze=False, sparse=True, **kwargs)
    dense = cls.from_pretrained(weight, freeze=False, sparse=False, **kwargs)
    return sparse, dense


@pytest.mark.parametrize("indices,padding_idx", [
    ([[0, 2, 4], [2, 2, 5]], None), ([1, 1, 1], None), ([[0, 3], [3, 1]], 3), (5, None),
])
def test_embedding_sparse_grad_equals_dense_grad(indices, padding_idx):
    sparse, dense = twin_embeddings(nn.Embedding, padding_idx=padding_idx)
    idx = torch.tensor(indices)
    upstream = torch.tensor(RNG.standard_normal(tuple(idx.shape) + (3,)).astype(np.float32))
    (sparse(idx) * upstream).sum().backward()
    (dense(idx) * upstream).sum().backward()
    assert sparse.weight.grad.is_sparse and not dense.weight.grad.is_sparse
    assert sparse.weight.grad.shape == sparse.weight.shape and sparse.weight.grad.dtype is torch.float32
    np.testing.assert_allclose(sparse.weight.grad.to_dense().numpy(), dense.weight.grad.numpy(), rtol=1e-6)


def test_embedding_bag_sparse_refuses_max_mode_as_pytorch():
    sparse, _ = twin_embeddings(nn.EmbeddingBag, mode="max")
    with pytest.raises(ValueError, match="max mode does not support sparse weights"):
        sparse(torch.tensor([0, 2]), torch.tensor([0]))


@pytest.mark.parametrize("mode", ["sum", "mean"])
def test_embedding_bag_sparse_grad_equals_dense_grad(mode):
    sparse, dense = twin_embeddings(nn.EmbeddingBag, mode=mode)
    idx, offsets = torch.tensor([0, 2, 2, 5, 1]), torch.tensor([0, 2])
    sparse(idx, offsets).pow(2).sum().backward()
    dense(idx, offsets).pow(2).sum().backward()
    assert sparse.weight.grad.is_sparse
    np.testing.assert_allclose(sparse.weight.grad.to_dense().numpy(), dense.weight.grad.numpy(), rtol=1e-5)


@pytest.mark.parametrize("norm_type", [2.0, 1.0, float("inf")])
def test_clip_grad_norm_with_sparse_gradients(norm_type):
    sparse, dense = twin_embeddings(nn.Embedding)
    idx = torch.tensor([0, 4, 4, 2])
    for emb in (sparse, dense):
        (emb(idx) * 3).sum().backward()
    total_sparse = clip_grad_norm_(sparse.parameters(), 0.5, norm_type)
    total_dense = clip_grad_norm_(dense.parameters(), 0.5, norm_type)
    np.testing.assert_allclose(total_sparse.item(), total_dense.item(), rtol=1e-6)
    assert sparse.weight.grad.is_sparse
    np.testing.assert_allclose(sparse.weight.grad.to_dense().numpy(), dense.weight.grad.numpy(), rtol=1e-5)
