"""SparseAdam and SGD on sparse gradients: NumPy references, the dense run's losses, and
PyTorch's SparseAdam as an optional oracle.

The model is an embedding (ember_tensor's sparse-gradient lookup, the op behind
``nn.Embedding(sparse=True)``) followed by a linear readout, built from ember_tensor ops
so that these tests need only the layers ember-optim stands on.
"""
import math

import numpy as np
import pytest

import ember_autograd
import ember_optim as optim
import ember_tensor as torch
from ember_tensor import nn_ops as _sparse_nn
from ember_tensor import nn_ops as K

RNG = np.random.default_rng(3)
NUM, DIM = 6, 3


def numpy_sparse_adam(param, m, v, rows, grads, step, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
    """The reference update on a (rows, grads) gradient with unique rows."""
    b1, b2 = betas
    m[rows] = b1 * m[rows] + (1 - b1) * grads
    v[rows] = b2 * v[rows] + (1 - b2) * grads ** 2
    step_size = lr * math.sqrt(1 - b2 ** step) / (1 - b1 ** step)
    param[rows] -= step_size * m[rows] / (np.sqrt(v[rows]) + eps)


def test_sparse_adam_matches_numpy_reference_with_duplicate_indices():
    start = RNG.standard_normal((NUM, DIM))
    w = torch.tensor(start, requires_grad=True)
    opt = optim.SparseAdam([w], lr=0.05, betas=(0.8, 0.9))
    ref, m, v = start.copy(), np.zeros_like(start), np.zeros_like(start)
    for step, idx in enumerate([[0, 2, 2], [5], [2, 1, 0, 0]], start=1):
        upstream = RNG.standard_normal((len(idx), DIM))
        opt.zero_grad()
        (_sparse_nn.embedding_sparse(w, torch.tensor(idx)) * torch.tensor(upstream)).sum().backward()
        assert w.grad.is_sparse and w.grad._nnz() == len(idx)  # one entry per lookup, duplicates kept
        opt.step()
        rows = np.unique(idx)
        summed = np.zeros((NUM, DIM))
        np.add.at(summed, idx, upstream)
        numpy_sparse_adam(ref, m, v, rows, summed[rows], step, lr=0.05, betas=(0.8, 0.9))
        np.testing.assert_allclose(w.detach().numpy(), ref, rtol=1e-12, atol=1e-12)
    assert opt.state[w]["step"] == 3
    np.testing.assert_allclose(opt.state[w]["exp_avg"].numpy(), m, atol=1e-12)


def _train(sparse, make_optimizers, steps=6, batches=None):
    """Losses of embedding -> linear regression; every batch covers every row when given
    `batches` of full permutations, so sparse and dense updates coincide."""
    gen = np.random.default_rng(4)
    table = torch.tensor(gen.standard_normal((NUM, DIM)).astype(np.float32), requires_grad=True)
    readout = torch.tensor(gen.standard_normal((DIM, 1)).astype(np.float32), requires_grad=True)
    targets = torch.tensor(gen.standard_normal((NUM, 1)).astype(np.float32))
    opts = make_optimizers(table, readout)
    losses = []
    for step in range(steps):
        idx = torch.tensor(batches[step] if batches is not None else gen.permutation(NUM))
        lookup = _sparse_nn.embedding_sparse if sparse else K.embedding
        pred = lookup(table, idx) @ readout
        loss = ((pred - targets[idx]) ** 2).mean()
        for o in opts:
            o.zero_grad()
        loss.backward()
        assert table.grad.is_sparse == sparse
        for o in opts:
            o.step()
        losses.append(loss.item())
    return losses


def test_embedding_model_with_sparse_adam_matches_dense_adam_losses():
    # Adam and SparseAdam agree exactly when every row has a gradient at every step.
    sparse = _train(True, lambda t, r: [optim.SparseAdam([t], lr=0.05), optim.Adam([r], lr=0.05)])
    dense = _train(False, lambda t, r: [optim.Adam([t], lr=0.05), optim.Adam([r], lr=0.05)])
    np.testing.assert_allclose(sparse, dense, rtol=1e-5)
    assert sparse[-1] < sparse[0]


def test_embedding_model_with_sparse_sgd_matches_dense_sgd_losses():
    batches = [RNG.integers(0, NUM, 4) for _ in range(6)]  # rows skipped and repeated
    sparse = _train(True, lambda t, r: [optim.SGD([t, r], lr=0.1)], batches=batches)
    dense = _train(False, lambda t, r: [optim.SGD([t, r], lr=0.1)], batches=batches)
    np.testing.assert_allclose(sparse, dense, rtol=1e-5)


def test_sgd_sparse_gradient_rejects_momentum():
    w = torch.zeros(3, 2, requires_grad=True)
    w.grad = torch.sparse_coo_tensor([[1]], [[1.0, 2.0]], (3, 2))
    with pytest.raises(RuntimeError, match="sparse gradients only without momentum"):
        optim.SGD([w], lr=0.1, momentum=0.9).step()
    optim.SGD([w], lr=0.5, maximize=True).step()
    np.testing.assert_allclose(w.detach().numpy(), [[0, 0], [0.5, 1.0], [0, 0]])


def test_sparse_adam_rejects_dense_gradients_and_bad_hyperparameters():
    w = torch.zeros(2, requires_grad=True)
    w.grad = torch.ones(2)
    with pytest.raises(RuntimeError, match="SparseAdam does not support dense gradients, please consider Adam instead"):
        optim.SparseAdam([w]).step()
    for kwargs, message in [({"lr": -1}, "Invalid learning rate: -1"), ({"eps": 0.0}, "Invalid epsilon value: 0.0"),
                            ({"betas": (1.0, 0.9)}, "Invalid beta parameter at index 0: 1.0"),
                            ({"betas": (0.9, -0.1)}, "Invalid beta parameter at index 1: -0.1")]:
        with pytest.raises(ValueError, match=message):
            optim.SparseAdam([w], **kwargs)


def test_sparse_adam_state_dict_round_trip():
    w = torch.zeros(3, 1, requires_grad=True)
    w.grad = torch.sparse_coo_tensor([[2]], [[1.0]], (3, 1))
    opt = optim.SparseAdam([w], lr=0.1)
    opt.step()
    fresh = optim.SparseAdam([w], lr=0.1)
    fresh.load_state_dict(opt.state_dict())
    assert fresh.state[w]["step"] == 1
    np.testing.assert_allclose(fresh.state[w]["exp_avg"].numpy(), [[0], [0], [0.1]], rtol=1e-6)


def test_sparse_adam_against_pytorch():
    T = pytest.importorskip("torch")
    start = RNG.standard_normal((NUM, DIM))
    ours, theirs = torch.tensor(start, requires_grad=True), T.tensor(start, requires_grad=True)
    opt, topt = optim.SparseAdam([ours], lr=0.02), T.optim.SparseAdam([theirs], lr=0.02)
    for idx in ([1, 4, 4], [0, 1], [5, 5, 5, 2]):
        values = RNG.standard_normal((len(idx), DIM))
        ours.grad = torch.sparse_coo_tensor([idx], values, (NUM, DIM))
        theirs.grad = T.sparse_coo_tensor([idx], values, (NUM, DIM), check_invariants=True)
        opt.step()
        topt.step()
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-12, atol=1e-12)
