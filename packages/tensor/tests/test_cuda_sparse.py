"""Sparse COO tensors on CUDA compute on the device: every op runs inside `device_only()`
(one value may be read back: an output's size, an error flag) and matches the CPU result
(duplicates, empty nnz, hybrid and 0-d sparse tensors, float32/float64, non-contiguous
dense operands, PyTorch's errors). Numba's simulator in CI (conftest sets it)."""
import numpy as np
import pytest

import ember_tensor as torch
from cuda_guard import device_only

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA and no simulator")

RNG = np.random.default_rng(7)


def sparse_case(shape, sparse_dim=None, repeats=2, dtype=torch.float64, density=0.5):
    """A CPU sparse tensor (uncoalesced: entries split into shuffled duplicates) and its dense array."""
    sparse_dim = len(shape) if sparse_dim is None else sparse_dim
    mask = RNG.random(shape[:sparse_dim]) < density
    dense = RNG.integers(-4, 5, shape).astype(np.float64) * mask.reshape(mask.shape + (1,) * (len(shape) - sparse_dim))
    if sparse_dim == 0:
        idx = np.zeros((0, int(mask)), np.int64)
    else:
        idx = np.array(np.nonzero(mask)).reshape(sparse_dim, -1)
    picked = dense.reshape((1,) + shape)[:idx.shape[1]] if sparse_dim == 0 else dense[tuple(idx)]
    vals = picked / max(repeats, 1)
    idx = np.concatenate([idx] * repeats, axis=1) if repeats else idx[:, :0]
    vals = np.concatenate([vals] * repeats) if repeats else vals[:0]
    dense = dense if repeats else dense * 0
    order = RNG.permutation(len(vals))
    s = torch.sparse_coo_tensor(torch.tensor(idx[:, order]), torch.tensor(vals[order], dtype=dtype), shape)
    return s, dense


# (shape, sparse_dim, repeats): duplicates, no duplicates, empty nnz, hybrid, 0 sparse dims.
CASES = [((3, 4), 2, 2), ((5,), 1, 1), ((2, 3, 2), 3, 3), ((0, 3), 2, 2), ((4, 3), 2, 0),
         ((3, 2), 1, 2), ((2, 3, 2), 2, 2), ((2, 2), 0, 2)]
DTYPES = [torch.float32, torch.float64]


def check(gpu, cpu, dtype=torch.float64):
    """`gpu` (CUDA, sparse or dense) equals `cpu`: device, dtype, shape, layout and values."""
    assert gpu.device.type == "cuda" and gpu.dtype is cpu.dtype and tuple(gpu.shape) == tuple(cpu.shape)
    assert gpu.is_sparse == cpu.is_sparse
    if cpu.is_sparse:
        assert gpu._indices().device.type == "cuda" and gpu.is_coalesced() == cpu.is_coalesced()
        gpu, cpu = gpu.to_dense(), cpu.to_dense()
    atol = 1e-5 if dtype is torch.float32 else 1e-12
    np.testing.assert_allclose(gpu.cpu().numpy(), cpu.numpy(), atol=atol)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,sparse_dim,repeats", CASES)
def test_coalesce_and_to_dense_run_on_the_device(shape, sparse_dim, repeats, dtype):
    s, dense = sparse_case(shape, sparse_dim, repeats, dtype)
    g = s.cuda()
    with device_only(allow_scalar_reads=True):
        coalesced, as_dense = g.coalesce(), g.to_dense()
        as_double = g.to_dense(torch.float64)
    want = s.coalesce()
    check(coalesced, want, dtype)
    assert coalesced._nnz() == want._nnz()
    np.testing.assert_array_equal(coalesced._indices().cpu().numpy(), want._indices().numpy())
    check(as_dense, s.to_dense(), dtype)
    check(as_double, s.to_dense(torch.float64), dtype)
    np.testing.assert_allclose(as_dense.cpu().numpy(), dense, atol=1e-6)


@pytest.mark.parametrize("shape,sparse_dim,repeats", CASES)
def test_sparse_coo_tensor_from_cuda_indices_and_values(shape, sparse_dim, repeats):
    s, _ = sparse_case(shape, sparse_dim, repeats)
    idx, vals = s._indices().cuda(), s._values().cuda()
    with device_only(allow_scalar_reads=True):
        given = torch.sparse_coo_tensor(idx, vals, shape)
        inferred = torch.sparse_coo_tensor(idx, vals)
    check(given, s)
    assert tuple(inferred.shape) == tuple(torch.sparse_coo_tensor(s._indices(), s._values()).shape)


@pytest.mark.parametrize("indices,values,size,message", [
    ([[0, -1]], [1., 2.], (3,), "found negative index -1 for dim 0"),
    ([[0, 3]], [1., 2.], (3,), "size is inconsistent with indices: for dim 0, size is 3 but found index 3"),
    ([[0, 1], [2, 5]], [1., 2.], (2, 3), "for dim 1, size is 3 but found index 5"),
    ([[0, 1]], [1.], (3,), "indices and values must have same nnz, but got nnz from indices: 2, nnz from values: 1"),
    ([[0, 1]], [1., 2.], (3, 2), "'len\\(size\\) == sparse_dim \\+ dense_dim' is not satisfied"),
])
def test_sparse_coo_tensor_errors_on_cuda(indices, values, size, message):
    idx, vals = torch.tensor(indices).cuda(), torch.tensor(values).cuda()
    with pytest.raises(RuntimeError, match=message):
        torch.sparse_coo_tensor(torch.tensor(indices), torch.tensor(values), size)  # the CPU's message
    with device_only(allow_scalar_reads=True), pytest.raises(RuntimeError, match=message):
        torch.sparse_coo_tensor(idx, vals, size)


def test_sparse_coo_tensor_with_mixed_devices():
    with pytest.raises(RuntimeError, match=r"backend of indices \(CPU\) must match backend of values \(CUDA\)"):
        torch.sparse_coo_tensor(torch.tensor([[0]]), torch.tensor([1.]).cuda(), (2,))
    s = torch.sparse_coo_tensor([[0, 1]], [1., 2.], (3,), device="cuda")  # a list follows the values
    assert s._indices().device.type == "cuda" and s.device.type == "cuda"


@pytest.mark.parametrize("dtype", DTYPES + [torch.int64])
@pytest.mark.parametrize("shape,sparse_dim", [((3, 4), None), ((3, 4), 1), ((2, 3, 2), 2), ((0, 3), None),
                                               ((), None), ((4,), 0), ((2, 2), 0)])
def test_to_sparse_of_a_cuda_tensor(shape, sparse_dim, dtype):
    dense = torch.tensor(RNG.integers(-1, 2, shape) * (RNG.random(shape) < 0.5)).to(dtype)
    for x in (dense, torch.zeros(shape, dtype=dtype)):
        g = x.cuda()
        with device_only(allow_scalar_reads=True):
            got = g.to_sparse(sparse_dim)
        check(got, x.to_sparse(sparse_dim))
    t = torch.tensor(RNG.standard_normal((4, 3)) * (RNG.random((4, 3)) < 0.5)).cuda().t()  # non-contiguous
    with device_only(allow_scalar_reads=True):
        got = t.to_sparse()
    check(got, t.cpu().to_sparse())


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("repeats", [0, 1, 3])
def test_mm_and_addmm_on_the_device(dtype, repeats):
    s, _ = sparse_case((3, 4), 2, repeats, dtype)
    b = torch.tensor(RNG.standard_normal((2, 4)), dtype=dtype).t()  # non-contiguous
    bias = torch.tensor(RNG.standard_normal((3, 2)), dtype=dtype)
    g, gb, gbias = s.cuda(), b.cuda(), bias.cuda()
    with device_only(allow_scalar_reads=True):
        product = torch.sparse.mm(g, gb)
        affine = torch.sparse.addmm(gbias, g, gb, beta=0.5, alpha=2.0)
        sparse_product = torch.sparse.mm(g, g.t())
    check(product, torch.sparse.mm(s, b), dtype)
    check(affine, torch.sparse.addmm(bias, s, b, beta=0.5, alpha=2.0), dtype)
    check(sparse_product, torch.sparse.mm(s, s.t()), dtype)


def test_mm_errors_match_the_cpu():
    s, _ = sparse_case((3, 4), 2)
    with pytest.raises(RuntimeError, match="Expected dim 0 size 4, got 3"):
        torch.sparse.mm(s.cuda(), torch.ones(3, 2).cuda())
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        torch.sparse.mm(s, torch.ones(4, 2).cuda())
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        torch.sparse.mm(s.cuda(), torch.ones(4, 2))


# Every op of the sparse API as (CPU sparse s, CPU dense d of s's shape) -> result.
OPS = {
    "add_sparse": lambda s, d: s + s * 2,
    "sub_sparse": lambda s, d: s - s.double(),
    "add_alpha": lambda s, d: s.add(s, alpha=3),
    "dense_add": lambda s, d: d + s,
    "dense_sub": lambda s, d: d - s,
    "float_dense_add": lambda s, d: d.float() + s,
    "mul_scalar": lambda s, d: s * 2.5,
    "mul_0d": lambda s, d: s * torch.tensor(3.0, device=s.device),
    "mul_dense": lambda s, d: s * d,
    "mul_sparse": lambda s, d: s * s,
    "div": lambda s, d: s / 4,
    "neg": lambda s, d: -s,
    "transpose": lambda s, d: s.transpose(0, 1) if s.sparse_dim() >= 2 else s,
    "narrow_sparse": lambda s, d: s.narrow_copy(0, 1, 1),
    "narrow_dense": lambda s, d: s.narrow_copy(s.dim() - 1, 1, 1),
    "index_select_sparse": lambda s, d: s.index_select(0, torch.tensor([1, 0, 1, -1], device=s.device)),
    "index_select_dense": lambda s, d: s.index_select(s.dim() - 1, torch.tensor([1, 0], device=s.device)),
    "sum_all": lambda s, d: torch.sparse.sum(s),
    "sum_first": lambda s, d: torch.sparse.sum(s, 0),
    "sum_last": lambda s, d: torch.sparse.sum(s, s.dim() - 1),
    "sum_dims": lambda s, d: torch.sparse.sum(s, (0, 1)),
    "softmax_0": lambda s, d: torch.sparse.softmax(s, 0),
    "log_softmax_last": lambda s, d: torch.sparse.log_softmax(s, s.dim() - 1),
    "sparse_mask": lambda s, d: d.sparse_mask(s),
    "clone": lambda s, d: s.clone(),
    "to_float": lambda s, d: s.to(torch.float32),
    "mul_": lambda s, d: s.clone().mul_(2.0),
    "add_": lambda s, d: s.clone().add_(s),
    "zero_": lambda s, d: s.clone().zero_(),
}


@pytest.mark.parametrize("name", sorted(OPS))
@pytest.mark.parametrize("shape,sparse_dim", [((3, 2), 2), ((3, 2), 1), ((3, 2, 2), 2), ((2, 3), 2)])
def test_sparse_ops_run_on_the_device(name, shape, sparse_dim):
    repeats = 0 if shape == (2, 3) else 2  # (2, 3): no entries at all
    s, dense = sparse_case(shape, sparse_dim, repeats)
    d = torch.tensor(RNG.standard_normal(shape[::-1])).permute(*range(len(shape) - 1, -1, -1))  # strided
    want = OPS[name](s, d)
    g, gd = s.cuda(), d.cuda()
    with device_only(allow_scalar_reads=True):
        got = OPS[name](g, gd)
    check(got, want)


def test_dense_plus_sparse_into_non_contiguous_dense_in_place():
    from ember_tensor.sparse._ops import add_sparse_into_dense_
    s, _ = sparse_case((3, 4), 2, 3)
    base = torch.tensor(RNG.standard_normal((4, 3)))
    want = add_sparse_into_dense_(base.clone().t(), s, alpha=-2)
    target = base.cuda().t()
    with device_only(allow_scalar_reads=True):
        add_sparse_into_dense_(target, s.cuda(), alpha=-2)
    check(target, want)


def test_index_select_out_of_range_on_cuda():
    s, _ = sparse_case((3, 2), 2)
    with device_only(allow_scalar_reads=True), pytest.raises(IndexError, match="index out of range in self"):
        s.cuda().index_select(0, torch.tensor([3]).cuda())


@pytest.mark.parametrize("padding_idx,scale", [(None, False), (1, False), (None, True), (2, True)])
def test_embedding_sparse_backward_on_the_device(padding_idx, scale):
    from ember_tensor.sparse._nn import embedding_sparse_backward
    idx = torch.tensor([[1, 2], [1, 0], [2, 2]])
    grad = torch.tensor(RNG.standard_normal((3, 2, 4)))
    want = embedding_sparse_backward(grad, idx, 5, padding_idx, scale)
    with device_only(allow_scalar_reads=True):
        got = embedding_sparse_backward(grad.cuda(), idx.cuda(), 5, padding_idx, scale)
    check(got, want)


def test_sparse_mm_backward_on_the_device_matches_the_cpu():
    pytest.importorskip("ember_autograd")  # the tensor tox env installs no autograd
    s_cpu, _ = sparse_case((3, 4), 2, 2)
    b = RNG.standard_normal((4, 2))
    grads = {}
    for device in ("cpu", "cuda"):
        s = s_cpu.to(device).requires_grad_()
        d = torch.tensor(b, device=device, requires_grad=True)
        with device_only(allow_scalar_reads=True) if device == "cuda" else _nothing():
            (torch.sparse.mm(s, d) ** 2).sum().backward()
        grads[device] = (s.grad, d.grad)
    for got, want in zip(grads["cuda"], grads["cpu"]):
        check(got, want)


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def test_gradients_reach_cuda_values_through_coalesce_and_to_dense():
    pytest.importorskip("ember_autograd")
    s, _ = sparse_case((3, 4), 2, 2)
    weights = torch.tensor(RNG.standard_normal((3, 4)))
    grads = {}
    for device in ("cpu", "cuda"):
        values = torch.tensor(s._values().numpy(), device=device, requires_grad=True)
        t = torch.sparse_coo_tensor(s._indices().to(device), values, (3, 4))
        ((t.coalesce().to_dense() * weights.to(device)) ** 2).sum().backward()
        grads[device] = values.grad
    check(grads["cuda"], grads["cpu"])


HALF_AND_INTEGER_OPS = {
    "coalesce": lambda s: s.coalesce(),
    "to_dense": lambda s: s.to_dense(),
    "mul": lambda s: s * 2,
    "sum": lambda s: torch.sparse.sum(s, 1),
    "to_sparse": lambda s: s.to_dense().to_sparse(),
    "dense_add": lambda s: torch.ones(2, 3, dtype=s.dtype, device=s.device) + s,
}


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.int64, torch.int32, torch.bool])
@pytest.mark.parametrize("name", sorted(HALF_AND_INTEGER_OPS))
def test_half_and_integer_values_on_the_device(name, dtype):
    s = torch.sparse_coo_tensor([[0, 1, 0], [2, 0, 2]], torch.tensor([1, 2, 3]).to(dtype), (2, 3))
    want = HALF_AND_INTEGER_OPS[name](s)
    g = s.cuda()
    with device_only(allow_scalar_reads=True):
        got = HALF_AND_INTEGER_OPS[name](g)
    assert got.dtype is want.dtype and got.is_sparse == want.is_sparse and got.device.type == "cuda"
    got, want = (got.to_dense(), want.to_dense()) if want.is_sparse else (got, want)
    np.testing.assert_array_equal(got.cpu().float().numpy(), want.float().numpy())


@pytest.mark.parametrize("index", [[2, 0, 2, 1, 2], [], [3, 3], [-1, 0, -4]])
def test_index_select_of_a_sparse_dim_with_repeated_picks(index):
    s, _ = sparse_case((4, 3), 2, 2)
    want = s.index_select(0, torch.tensor(index, dtype=torch.int64))
    g, pick = s.cuda(), torch.tensor(index, dtype=torch.int64).cuda()
    with device_only(allow_scalar_reads=True):
        got = g.index_select(0, pick)
    check(got, want)
    np.testing.assert_array_equal(got._indices().cpu().numpy(), want._indices().numpy())


def test_sparse_embedding_and_sgd_step_on_the_device():
    nn = pytest.importorskip("ember_nn")  # the tensor tox env installs neither nn nor optim
    optim = pytest.importorskip("ember_optim")
    weights = {}
    for device in ("cpu", "cuda"):
        torch.manual_seed(0)
        emb = nn.Embedding(5, 3, sparse=True, padding_idx=0).to(device)
        opt = optim.SGD(emb.parameters(), lr=0.1)
        idx = torch.tensor([[1, 2, 0], [2, 2, 4]], device=device)
        with device_only(allow_scalar_reads=True) if device == "cuda" else _nothing():
            (emb(idx) ** 2).sum().backward()
            opt.step()
        assert emb.weight.grad.is_sparse and emb.weight.grad._indices().device.type == device
        weights[device] = emb.weight.detach()
    check(weights["cuda"], weights["cpu"])
