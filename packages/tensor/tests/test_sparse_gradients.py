"""Gradients of and into sparse COO tensors: embedding's sparse weight gradient, sparse.mm's
backward (the sampled product), gradients reaching the values through coalesce and
to_dense, and an Embedding(sparse=True) trained by one SGD step.

On the CPU against the gradients worked out in NumPy, on CUDA (Numba's simulator in CI)
against the CPU's, computed on the device.
"""
import contextlib

import numpy as np
import pytest

import ember_tensor as torch
from cuda_guard import DEVICES, cpu_result, device_only
from sparse_cases import CASE_RNG, comparable, sparse_case


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("padding_idx,scale", [(None, False), (1, False), (None, True), (2, True)])
def test_embedding_sparse_backward(padding_idx, scale, device):
    """The sparse weight gradient of an embedding: the output gradient's rows added at their
    indices, padding rows dropped, divided by each index's count when scaling by frequency."""
    from ember_tensor.sparse._nn import embedding_sparse_backward
    idx = np.array([[1, 2], [1, 0], [2, 2]])
    grad = CASE_RNG.standard_normal((3, 2, 4))
    got = cpu_result(device, lambda g, i: comparable(embedding_sparse_backward(g, i, 5, padding_idx, scale)),
                     torch.tensor(grad), torch.tensor(idx))[0]
    counts = np.bincount(idx.ravel(), minlength=5)
    want = np.zeros((5, 4))
    np.add.at(want, idx.ravel(), grad.reshape(-1, 4) / (counts[idx.ravel(), None] if scale else 1))
    if padding_idx is not None:
        want[padding_idx] = 0
    np.testing.assert_allclose(got.numpy(), want, atol=1e-12)


def _gradients(device, call, *leaves, guarded=True):
    """The gradients of call(*leaves) (a scalar) w.r.t. copies of the leaves made on
    `device` (inside device_only on CUDA when `guarded`: one value may be read back)."""
    pytest.importorskip("ember_autograd")  # the tensor tox env installs no autograd
    leaves = [x.detach().clone().to(device).requires_grad_() for x in leaves]
    with device_only(allow_scalar_reads=True) if device != "cpu" and guarded else contextlib.nullcontext():
        call(*leaves).backward()
    return [x.grad for x in leaves]


@pytest.mark.parametrize("device", DEVICES)
def test_sparse_mm_backward(device):
    """sum((S @ D)^2)'s gradients: 2 (S D) D^T at each of S's entries (two per element
    here: S is uncoalesced), and 2 S^T (S D)."""
    s, a, present = sparse_case((3, 4), 2, 2)
    b = CASE_RNG.standard_normal((4, 2))

    def loss(x, y):
        return (torch.sparse.mm(x, y) ** 2).sum()
    grads = _gradients(device, loss, s, torch.tensor(b))
    if device != "cpu":
        for got, want in zip(grads, _gradients("cpu", loss, s, torch.tensor(b))):
            assert got.is_sparse == want.is_sparse
            same = (lambda t: t.to_dense()) if want.is_sparse else (lambda t: t)
            np.testing.assert_allclose(same(got).cpu().numpy(), same(want).numpy(), atol=1e-12)
    product = a @ b
    np.testing.assert_allclose(grads[0].to_dense().cpu().numpy(), 2 * np.where(present, 2 * product @ b.T, 0), atol=1e-10)
    np.testing.assert_allclose(grads[1].cpu().numpy(), 2 * a.T @ product, atol=1e-10)


@pytest.mark.parametrize("device", DEVICES)
def test_gradients_reach_the_values_through_coalesce_and_to_dense(device):
    """sum((dense(S) * W)^2)'s gradient w.r.t. S's values: 2 dense(S) W^2 at each value's place."""
    s, a, _ = sparse_case((3, 4), 2, 2)
    weights = CASE_RNG.standard_normal((3, 4))
    indices = s._indices().numpy()

    def loss(values):
        t = torch.sparse_coo_tensor(torch.tensor(indices, device=values.device), values, (3, 4))
        return ((t.coalesce().to_dense() * torch.tensor(weights, device=values.device)) ** 2).sum()
    # Not guarded: the gradient through coalesce reads the indices back (a known host step).
    (got,) = _gradients(device, loss, s._values(), guarded=False)
    if device != "cpu":
        np.testing.assert_allclose(got.cpu().numpy(), _gradients("cpu", loss, s._values())[0].numpy(), atol=1e-12)
    want = (2 * a * weights ** 2)[tuple(indices)]
    np.testing.assert_allclose(got.cpu().numpy(), want, atol=1e-10)


@pytest.mark.parametrize("device", DEVICES)
def test_sparse_embedding_and_an_sgd_step(device):
    """An Embedding(sparse=True) gives a sparse gradient on its device; SGD's step subtracts
    lr times it (the padding row untouched), the same on every device."""
    nn = pytest.importorskip("ember_nn")  # the tensor tox env installs neither nn nor optim
    optim = pytest.importorskip("ember_optim")
    torch.manual_seed(0)
    emb = nn.Embedding(5, 3, sparse=True, padding_idx=0)
    before = emb.weight.detach().numpy().copy()
    emb = emb.to(device)
    opt = optim.SGD(emb.parameters(), lr=0.1)
    idx = np.array([[1, 2, 0], [2, 2, 4]])
    with device_only(allow_scalar_reads=True) if device != "cpu" else contextlib.nullcontext():
        (emb(torch.tensor(idx, device=device)) ** 2).sum().backward()
        opt.step()
    assert emb.weight.grad.is_sparse and emb.weight.grad._indices().device.type == device
    grad = np.zeros_like(before)
    np.add.at(grad, idx.ravel(), 2 * before[idx.ravel()])
    grad[0] = 0
    np.testing.assert_allclose(emb.weight.detach().cpu().numpy(), before - 0.1 * grad, rtol=1e-6, atol=1e-6)
