"""Gradients through sparse ops: sparse.mm in both arguments, sparse embedding gradients,
and accumulation of sparse gradients into sparse and dense .grad."""
import numpy as np
import pytest

import ember_autograd
import ember_tensor as torch
from ember_tensor import nn_ops as _sparse_nn

RNG = np.random.default_rng(1)


def sparse_and_dense(shape, density=0.5):
    dense = RNG.standard_normal(shape) * (RNG.random(shape) < density)
    return torch.tensor(dense).to_sparse(), dense


@pytest.mark.parametrize("n,k,m", [(3, 4, 2), (1, 5, 1), (4, 2, 3)])
def test_sparse_mm_gradients_match_dense_formulas(n, k, m):
    s, a = sparse_and_dense((n, k))
    s.requires_grad_()
    b = RNG.standard_normal((k, m))
    d = torch.tensor(b, requires_grad=True)
    weight = RNG.standard_normal((n, m))
    (torch.sparse.mm(s, d) * torch.tensor(weight)).sum().backward()
    # dL/dS = (W @ B.T) on S's pattern; dL/dD = A.T @ W.
    assert s.grad.is_sparse and s.grad.layout is torch.sparse_coo
    np.testing.assert_array_equal(s.grad.coalesce().indices().numpy(), s.indices().numpy())
    np.testing.assert_allclose(s.grad.to_dense().numpy(), (weight @ b.T) * (a != 0), atol=1e-12)
    np.testing.assert_allclose(d.grad.numpy(), a.T @ weight, atol=1e-12)


def test_sparse_mm_grad_fn_and_dense_only_grad():
    s, a = sparse_and_dense((3, 3))
    d = torch.tensor(RNG.standard_normal((3, 2)), requires_grad=True)
    y = torch.sparse.mm(s, d)
    assert type(y.grad_fn).__name__ == "SparseMmBackward0"
    y.sum().backward()
    assert s.grad is None
    np.testing.assert_allclose(d.grad.numpy(), a.T @ np.ones((3, 2)))


def test_gradcheck_dense_argument_of_sparse_mm():
    s, _ = sparse_and_dense((4, 3))
    d = torch.tensor(RNG.standard_normal((3, 2)), requires_grad=True)
    assert ember_autograd.gradcheck(lambda x: torch.sparse.mm(s, x), (d,))


def test_sparse_argument_gradient_by_finite_differences():
    s, a = sparse_and_dense((3, 4), density=0.6)
    b = RNG.standard_normal((4, 2))
    s.requires_grad_()
    (torch.sparse.mm(s, torch.tensor(b)) ** 2).sum().backward()
    grad = s.grad.coalesce().values().numpy()
    idx = s.indices().numpy()
    eps = 1e-6
    for e in range(idx.shape[1]):
        bumped = a.copy()
        bumped[idx[0, e], idx[1, e]] += eps
        numeric = (((bumped @ b) ** 2).sum() - ((a @ b) ** 2).sum()) / eps
        assert abs(numeric - grad[e]) < 1e-3 * max(1.0, abs(numeric))


@pytest.mark.parametrize("index_shape", [(4,), (2, 3), ()])
def test_sparse_embedding_gradient_equals_dense_one(index_shape):
    weight = RNG.standard_normal((5, 3))
    idx = RNG.integers(0, 5, index_shape)
    w_sparse = torch.tensor(weight, requires_grad=True)
    w_dense = torch.tensor(weight, requires_grad=True)
    upstream = torch.tensor(RNG.standard_normal(index_shape + (3,)))
    (_sparse_nn.embedding_sparse(w_sparse, torch.tensor(idx)) * upstream).sum().backward()
    from ember_tensor import nn_ops as K
    (K.embedding(w_dense, torch.tensor(idx)) * upstream).sum().backward()
    assert w_sparse.grad.is_sparse and w_sparse.grad._nnz() == idx.size
    assert type(_sparse_nn.embedding_sparse(w_sparse, torch.tensor(idx)).grad_fn).__name__ == "EmbeddingBackward0"
    np.testing.assert_allclose(w_sparse.grad.to_dense().numpy(), w_dense.grad.numpy())


def test_sparse_embedding_padding_idx_and_scale_grad_by_freq():
    weight = torch.tensor(RNG.standard_normal((4, 2)), requires_grad=True)
    idx = torch.tensor([0, 2, 2, 3, 0])
    _sparse_nn.embedding_sparse(weight, idx, 0, True).sum().backward()
    grad = weight.grad.to_dense().numpy()
    np.testing.assert_allclose(grad, [[0, 0], [0, 0], [1, 1], [1, 1]])  # 2 seen twice, scaled by 1/2
    assert 0 not in weight.grad._indices().numpy()


def test_sparse_gradients_accumulate_into_sparse_grad():
    weight = torch.tensor(RNG.standard_normal((5, 2)), requires_grad=True)
    _sparse_nn.embedding_sparse(weight, torch.tensor([1, 3])).sum().backward()
    _sparse_nn.embedding_sparse(weight, torch.tensor([3, 4])).sum().backward()
    assert weight.grad.is_sparse
    np.testing.assert_allclose(weight.grad.to_dense().numpy()[:, 0], [0, 1, 0, 2, 1])


def test_sparse_gradient_accumulates_into_dense_grad():
    weight = torch.tensor(RNG.standard_normal((4, 2)), requires_grad=True)
    weight.grad = torch.ones(4, 2, dtype=torch.float64)
    _sparse_nn.embedding_sparse(weight, torch.tensor([2, 2])).sum().backward()
    assert not weight.grad.is_sparse
    np.testing.assert_allclose(weight.grad.numpy()[:, 1], [1, 1, 3, 1])


def test_dense_gradient_accumulates_into_sparse_grad():
    weight = torch.tensor(RNG.standard_normal((3, 2)), requires_grad=True)
    _sparse_nn.embedding_sparse(weight, torch.tensor([1])).sum().backward()
    (weight * 2).sum().backward()
    assert not weight.grad.is_sparse
    np.testing.assert_allclose(weight.grad.numpy()[:, 0], [2, 3, 2])


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA and no simulator")
def test_sparse_mm_gradients_on_cuda_match_cpu():
    s_cpu, a = sparse_and_dense((3, 4), density=0.6)
    b = RNG.standard_normal((4, 2))
    grads = {}
    for device in ("cpu", "cuda"):
        s = s_cpu.to(device).requires_grad_()
        d = torch.tensor(b, device=device, requires_grad=True)
        (torch.sparse.mm(s, d) ** 2).sum().backward()
        assert s.grad.is_sparse and s.grad.device.type == device and d.grad.device.type == device
        grads[device] = (s.grad.to_dense().cpu().numpy(), d.grad.cpu().numpy())
    for got, want in zip(grads["cuda"], grads["cpu"]):
        np.testing.assert_allclose(got, want, atol=1e-12)


@pytest.mark.parametrize("sparse_first", [True, False])
def test_weight_used_by_sparse_and_dense_ops_gets_their_summed_gradient(sparse_first):
    # Weight tying: the engine sums a sparse and a dense gradient for one leaf, in either order.
    start = RNG.standard_normal((4, 2))
    weight = torch.tensor(start, requires_grad=True)
    looked_up = _sparse_nn.embedding_sparse(weight, torch.tensor([1, 1, 3])).sum()
    dense_use = (weight * 3).sum()
    (looked_up + dense_use if sparse_first else dense_use + looked_up).backward()
    expected = np.full((4, 2), 3.0)
    expected[1] += 2
    expected[3] += 1
    assert not weight.grad.is_sparse
    np.testing.assert_allclose(weight.grad.numpy(), expected)


INDEX_PATTERNS = [[[0, 1, 1], [2, 0, 2]], [[0, 1, 0], [2, 0, 2]], [[1], [1]]]  # the second repeats (0, 2)


@pytest.mark.parametrize("pattern", INDEX_PATTERNS)
@pytest.mark.parametrize("coalesce", [False, True])
def test_gradcheck_through_sparse_coo_tensor_values(pattern, coalesce):
    values = torch.tensor(RNG.standard_normal(len(pattern[0])), requires_grad=True)
    dense = torch.tensor(RNG.standard_normal((3, 2)))

    def build(v):
        s = torch.sparse_coo_tensor(pattern, v, (2, 3))
        return s.coalesce() if coalesce else s

    assert ember_autograd.gradcheck(lambda v: torch.sparse.mm(build(v), dense), (values,))
    assert ember_autograd.gradcheck(lambda v: build(v).to_dense(), (values,))


def test_values_gradient_matches_numpy():
    values = torch.tensor([1., 2., 3.], dtype=torch.float64, requires_grad=True)
    weight = np.arange(6.).reshape(2, 3)
    s = torch.sparse_coo_tensor([[0, 1, 1], [2, 0, 2]], values, (2, 3))
    assert type(s.grad_fn).__name__ == "SparseCooFromValuesBackward0"
    (s.to_dense() * torch.tensor(weight)).sum().backward()
    np.testing.assert_allclose(values.grad.numpy(), weight[[0, 1, 1], [2, 0, 2]])
