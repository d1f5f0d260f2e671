"""Sparse COO tensors against their dense NumPy equivalents (and PyTorch's printing/errors).

The tests taking `device` check the CPU against NumPy and CUDA (Numba's simulator in CI)
against the CPU, computed on the device (`cuda_guard`): one value may be read back there,
an output's size or an error flag. Every op of the sparse API on every device is
test_sparse_api.py's, gradients test_sparse_gradients.py's; the ops' samples are also
the op database's (sparse family, tests/test_op_families.py).
"""
import numpy as np
import pytest

import ember_tensor as torch
from cuda_guard import DEVICES, cpu_result, matches_the_cpu
from sparse_cases import CASE_RNG, comparable, masked_softmax, sparse_case

RNG = np.random.default_rng(0)


def random_dense(shape, density=0.4, sparse_dim=None, rng=RNG):
    """A float64 array whose zeros fall on whole trailing blocks when sparse_dim < ndim."""
    sparse_dim = len(shape) if sparse_dim is None else sparse_dim
    mask = rng.random(shape[:sparse_dim]) < density
    values = rng.standard_normal(shape)
    return values * mask.reshape(mask.shape + (1,) * (len(shape) - sparse_dim))


def uncoalesced(dense, repeats=2):
    """A sparse tensor equal to `dense` whose entries are split into shuffled duplicates."""
    idx = np.array(np.nonzero(dense))
    vals = dense[tuple(idx)]
    parts = [vals / repeats] * repeats
    idx = np.concatenate([idx] * repeats, axis=1)
    vals = np.concatenate(parts)
    order = RNG.permutation(len(vals))
    return torch.sparse_coo_tensor(torch.tensor(idx[:, order]), torch.tensor(vals[order]), dense.shape)


SHAPES = [(5,), (3, 4), (2, 3, 4), (0, 3), (4, 1)]


@pytest.mark.parametrize("shape", SHAPES)
def test_to_sparse_round_trip_and_metadata(shape):
    dense = random_dense(shape)
    s = torch.tensor(dense).to_sparse()
    assert s.is_sparse and s.layout is torch.sparse_coo and not torch.tensor(dense).is_sparse
    assert s.sparse_dim() == len(shape) and s.dense_dim() == 0
    assert s._nnz() == np.count_nonzero(dense) and s.is_coalesced()
    assert tuple(s.shape) == shape and s.dtype is torch.float64
    np.testing.assert_array_equal(s.to_dense().numpy(), dense)
    np.testing.assert_array_equal(s.indices().numpy(), np.array(np.nonzero(dense)).reshape(len(shape), -1))


@pytest.mark.parametrize("shape,sparse_dim", [((3, 4), 1), ((2, 3, 4), 2), ((2, 3, 4), 1)])
def test_hybrid_tensors(shape, sparse_dim):
    dense = random_dense(shape, sparse_dim=sparse_dim)
    s = torch.tensor(dense).to_sparse(sparse_dim)
    assert s.sparse_dim() == sparse_dim and s.dense_dim() == len(shape) - sparse_dim
    assert tuple(s.values().shape)[1:] == shape[sparse_dim:]
    np.testing.assert_array_equal(s.to_dense().numpy(), dense)


def test_zero_dim_sparse_tensor():
    s = torch.sparse_coo_tensor(torch.zeros(0, 2, dtype=torch.int64), torch.tensor([5., 2.]), ())
    assert s.to_dense().item() == 7.0 and s.coalesce()._nnz() == 1
    assert torch.tensor(3.).to_sparse().to_dense().item() == 3.0
    assert torch.tensor(0.).to_sparse()._nnz() == 0


@pytest.mark.parametrize("shape", [(6,), (3, 4), (2, 3, 2)])
def test_coalesce_sums_duplicates_and_sorts(shape):
    dense = random_dense(shape, density=0.7)
    s = uncoalesced(dense, repeats=3)
    assert not s.is_coalesced()
    with pytest.raises(RuntimeError, match="Cannot get indices on an uncoalesced tensor"):
        s.indices()
    c = s.coalesce()
    assert c.is_coalesced() and c._nnz() == np.count_nonzero(dense)
    idx = c.indices().numpy()
    keys = np.ravel_multi_index(tuple(idx), shape)
    assert np.all(np.diff(keys) > 0)  # sorted and unique
    np.testing.assert_allclose(c.to_dense().numpy(), dense)
    np.testing.assert_allclose(s.to_dense().numpy(), dense)


def test_construction_infers_size_and_hybrid_shape():
    s = torch.sparse_coo_tensor([[0, 2], [1, 1]], [[1., 2.], [3., 4.]])
    assert tuple(s.shape) == (3, 2, 2)
    assert s.sparse_dim() == 2 and s.dense_dim() == 1
    s = torch.sparse_coo_tensor([[0, 1]], [1, 2], (3,), dtype=torch.float32)
    assert s.dtype is torch.float32
    assert s.to_dense().tolist() == [1.0, 2.0, 0.0]


@pytest.mark.parametrize("indices,values,size,message", [
    ([[0, 1]], [1., 2., 3.], (3,), "indices and values must have same nnz, but got nnz from indices: 2, nnz from values: 3"),
    ([0, 1], [1., 2.], (3,), "indices must be sparse_dim x nnz"),
    ([[0, 1], [0, 1]], [1., 2.], (3,), r"'len\(size\) == sparse_dim \+ dense_dim' is not satisfied: len\(size\) = 1, sparse_dim = 2, dense_dim = 0"),
    ([[0, 3]], [1., 2.], (3,), "size is inconsistent with indices: for dim 0, size is 3 but found index 3"),
    ([[0, -1]], [1., 2.], (3,), "found negative index -1 for dim 0"),
    ([[0, 1], [2, 5]], [1., 2.], (2, 3), "for dim 1, size is 3 but found index 5"),
])
@pytest.mark.parametrize("device", DEVICES)
def test_construction_errors(indices, values, size, message, device):
    """PyTorch's errors for indices and values that do not fit (on CUDA the CPU's, from one flag read back)."""
    if device != "cpu":
        matches_the_cpu(lambda i, v: torch.sparse_coo_tensor(i, v, size), [torch.tensor(indices), torch.tensor(values)],
                        message, reads_a_flag=True)
    with pytest.raises(RuntimeError, match=message):
        torch.sparse_coo_tensor(indices, values, size)


def test_printing_matches_pytorch():
    s = torch.sparse_coo_tensor([[0, 1, 1], [2, 0, 2]], [3., 4., 5.], (2, 3))
    assert repr(s) == ("tensor(indices=tensor([[0, 1, 1],\n"
                       "                       [2, 0, 2]]),\n"
                       "       values=tensor([3., 4., 5.]),\n"
                       "       size=(2, 3), nnz=3, layout=torch.sparse_coo)")
    d = s.double().requires_grad_()
    assert repr(d).endswith("size=(2, 3), nnz=3, dtype=torch.float64, layout=torch.sparse_coo,\n"
                            "       requires_grad=True)")
    assert repr(torch.sparse_coo_tensor([[0, 1]], torch.tensor([1, 2]), (3,))) == (
        "tensor(indices=tensor([[0, 1]]),\n"
        "       values=tensor([1, 2]),\n"
        "       size=(3,), nnz=2, layout=torch.sparse_coo)")
    assert repr(torch.sparse_coo_tensor(torch.zeros(1, 0, dtype=torch.int64), torch.zeros(0), (3,))) == (
        "tensor(indices=tensor([], size=(1, 0)),\n"
        "       values=tensor([], size=(0,)),\n"
        "       size=(3,), nnz=0, layout=torch.sparse_coo)")
    empty = torch.sparse_coo_tensor(torch.zeros(1, 0, dtype=torch.int64), torch.zeros(0, 2), (3, 2))
    assert repr(empty) == ("tensor(indices=tensor([], size=(1, 0)),\n"
                           "       values=tensor([], size=(0, 2)),\n"
                           "       size=(3, 2), nnz=0, layout=torch.sparse_coo)")


BINARY_SHAPES = [(4,), (3, 5), (2, 3, 2)]


@pytest.mark.parametrize("shape", BINARY_SHAPES)
def test_add_sparse_sparse_and_sparse_dense(shape):
    a, b = random_dense(shape), random_dense(shape)
    sa, sb = uncoalesced(a), torch.tensor(b).to_sparse()
    total = sa + sb
    assert total.is_sparse
    np.testing.assert_allclose(total.to_dense().numpy(), a + b)
    np.testing.assert_allclose((sa - sb).to_dense().numpy(), a - b)
    np.testing.assert_allclose(sa.add(sb, alpha=2).to_dense().numpy(), a + 2 * b)
    dense_b = torch.tensor(b)
    out = dense_b + sa
    assert not out.is_sparse
    np.testing.assert_allclose(out.numpy(), a + b)
    with pytest.raises(RuntimeError, match=r"add\(sparse, dense\) is not supported"):
        sa + dense_b


def test_add_size_mismatch():
    with pytest.raises(RuntimeError, match=r"expected sizes of 'self' and 'other' to match, but \[2, 3\] != \[2, 2\]"):
        torch.ones(2, 3).to_sparse() + torch.ones(2, 2).to_sparse()


@pytest.mark.parametrize("shape", BINARY_SHAPES)
def test_mul_scalar_zero_dim_and_same_shape_dense(shape):
    a, b = random_dense(shape), RNG.standard_normal(shape)
    s = uncoalesced(a)
    np.testing.assert_allclose((s * 2.5).to_dense().numpy(), a * 2.5)
    np.testing.assert_allclose((3 * s).to_dense().numpy(), a * 3)
    np.testing.assert_allclose((s * torch.tensor(-2.0, dtype=torch.float64)).to_dense().numpy(), -2 * a)
    np.testing.assert_allclose((-s).to_dense().numpy(), -a)
    np.testing.assert_allclose((s / 4).to_dense().numpy(), a / 4)
    # A non-contiguous dense factor (a transposed view).
    other = torch.tensor(np.ascontiguousarray(b.T)).permute(*reversed(range(len(shape))))
    assert not other.is_contiguous() or len(shape) == 1
    product = s * other
    assert product.is_sparse
    np.testing.assert_allclose(product.to_dense().numpy(), a * b)


@pytest.mark.parametrize("shape,dim0,dim1", [((3, 4), 0, 1), ((2, 3, 4), 0, 2), ((2, 3, 4), -1, 1)])
def test_transpose(shape, dim0, dim1):
    a = random_dense(shape)
    s = uncoalesced(a)
    np.testing.assert_allclose(s.transpose(dim0, dim1).to_dense().numpy(), np.swapaxes(a, dim0, dim1))
    if len(shape) == 2:
        np.testing.assert_allclose(s.t().to_dense().numpy(), a.T)


@pytest.mark.parametrize("shape,sparse_dim,dim,start,length", [
    ((5, 4), 2, 0, 1, 3), ((5, 4), 2, 1, 2, 2), ((5, 4), 1, 1, 1, 2), ((3, 4, 2), 2, 1, -3, 2), ((4,), 1, 0, 0, 0),
])
def test_narrow_copy(shape, sparse_dim, dim, start, length):
    a = random_dense(shape, sparse_dim=sparse_dim)
    s = torch.tensor(a).to_sparse(sparse_dim)
    start_pos = start + shape[dim] if start < 0 else start
    expected = np.take(a, np.arange(start_pos, start_pos + length), axis=dim)
    np.testing.assert_allclose(s.narrow_copy(dim, start, length).to_dense().numpy(), expected)
    with pytest.raises(RuntimeError, match=r"Invalid range to narrow. range\(start, start\+length\) must be a "
                                           rf"subset of range\(0, {shape[dim]}\)."):
        s.narrow_copy(dim, 0, shape[dim] + 1)


@pytest.mark.parametrize("shape,sparse_dim,dim,index", [
    ((4, 3), 2, 0, [3, 0, 3]), ((4, 3), 2, 1, [2]), ((4, 3), 1, 1, [2, 0]), ((2, 3, 4), 2, 1, [1, -1]),
])
@pytest.mark.parametrize("device", DEVICES)
def test_index_select(shape, sparse_dim, dim, index, device):
    """index_select of a sparse or a dense dim, and its IndexError (the same on every device)."""
    # The CPU draws from RNG as before this test took a device: the tests after it see the same numbers.
    a = random_dense(shape, sparse_dim=sparse_dim, rng=RNG if device == "cpu" else CASE_RNG)
    s = torch.tensor(a).to_sparse(sparse_dim)
    got = cpu_result(device, lambda t, i: comparable(t.index_select(dim, i)), s, torch.tensor(index))[0]
    np.testing.assert_allclose(got.numpy(), np.take(a, index, axis=dim))
    with pytest.raises(IndexError, match="index out of range in self"):
        cpu_result(device, lambda t, i: t.index_select(dim, i), s, torch.tensor([shape[dim]]))


@pytest.mark.parametrize("device", DEVICES)
def test_index_select_of_an_uncoalesced_sparse_dim_with_repeated_picks(device):
    """Repeated, negative and no picks of rows that hold duplicates: the picked entries, in the CPU's order."""
    s, a, _ = sparse_case((4, 3), 2, 2)
    for index in ([2, 0, 2, 1, 2], [], [3, 3], [-1, 0, -4]):
        got = cpu_result(device, lambda t, i: (*comparable(t.index_select(0, i)), t.index_select(0, i)._indices()),
                         s, torch.tensor(index, dtype=torch.int64))
        np.testing.assert_allclose(got[0].numpy(), np.take(a, index, axis=0))


@pytest.mark.parametrize("n,k,m", [(4, 5, 3), (1, 1, 1), (0, 3, 2), (6, 4, 0)])
def test_sparse_mm_and_addmm(n, k, m):
    a = random_dense((n, k))
    b = RNG.standard_normal((m, k)).T  # non-contiguous dense operand
    s = uncoalesced(a)
    got = torch.sparse.mm(s, torch.tensor(np.ascontiguousarray(b.T)).t())
    np.testing.assert_allclose(got.numpy(), a @ b, atol=1e-12)
    bias = RNG.standard_normal((n, m))
    got = torch.sparse.addmm(torch.tensor(bias), s, torch.tensor(b), beta=0.5, alpha=2.0)
    np.testing.assert_allclose(got.numpy(), 0.5 * bias + 2.0 * (a @ b), atol=1e-12)


def test_sparse_mm_parallel_path_matches_dense():
    a = random_dense((300, 200), density=0.6)  # above PARALLEL_NNZ: the row-parallel kernel
    b = RNG.standard_normal((200, 3))
    got = torch.sparse.mm(torch.tensor(a).to_sparse(), torch.tensor(b))
    np.testing.assert_allclose(got.numpy(), a @ b, atol=1e-10)


@pytest.mark.parametrize("device", DEVICES)
def test_sparse_mm_shape_error(device):
    """PyTorch's error for operands whose inner sizes differ."""
    with pytest.raises(RuntimeError, match="Expected dim 0 size 3, got 2"):
        cpu_result(device, torch.sparse.mm, torch.ones(2, 3).to_sparse(), torch.ones(2, 3))


@pytest.mark.parametrize("shape,sparse_dim,dim", [
    ((3, 4), 2, None), ((3, 4), 2, 0), ((3, 4), 2, 1), ((3, 4), 2, (0, 1)), ((2, 3, 4), 2, 2),
    ((2, 3, 4), 1, 2), ((2, 3, 4), 3, (0, 2)), ((2, 3, 4), 2, -1),
])
def test_sparse_sum(shape, sparse_dim, dim):
    a = random_dense(shape, sparse_dim=sparse_dim)
    s = uncoalesced(a) if sparse_dim == len(shape) else torch.tensor(a).to_sparse(sparse_dim)
    got = torch.sparse.sum(s, dim)
    got = got.to_dense() if got.is_sparse else got
    np.testing.assert_allclose(got.numpy(), a.sum(axis=dim), atol=1e-12)


@pytest.mark.parametrize("shape,dim", [((3, 4), 1), ((3, 4), 0), ((2, 3, 4), 1), ((2, 3, 4), -1)])
@pytest.mark.parametrize("log", [False, True])
def test_sparse_softmax_over_specified_entries(shape, dim, log):
    a = random_dense(shape, density=0.6)
    fn = torch.sparse.log_softmax if log else torch.sparse.softmax
    got = fn(uncoalesced(a), dim)
    assert got.is_sparse
    np.testing.assert_allclose(got.to_dense().numpy(), masked_softmax(a, dim, log), atol=1e-12)


def test_sparse_softmax_over_dense_dim():
    a = random_dense((3, 4), sparse_dim=1)
    got = torch.sparse.softmax(torch.tensor(a).to_sparse(1), 1).to_dense().numpy()
    rows = np.any(a != 0, axis=1)
    e = np.exp(a - a.max(axis=1, keepdims=True))
    np.testing.assert_allclose(got[rows], (e / e.sum(axis=1, keepdims=True))[rows])
    assert np.all(got[~rows] == 0)


def test_against_pytorch_when_installed():
    T = pytest.importorskip("torch")
    a = random_dense((4, 5))
    s, ts = torch.tensor(a).to_sparse(), T.tensor(a).to_sparse()
    assert repr(s.t()) == repr(ts.t()).replace("torch.", "torch.")
    b = RNG.standard_normal((5, 2))
    np.testing.assert_allclose(torch.sparse.mm(s, torch.tensor(b)).numpy(), T.sparse.mm(ts, T.tensor(b)).numpy())
    np.testing.assert_allclose(torch.sparse.softmax(s, 1).to_dense().numpy(),
                               T.sparse.softmax(ts, 1).to_dense().numpy(), atol=1e-12)


@pytest.mark.parametrize("call", [lambda s: s.exp(), lambda s: s.view(6), lambda s: s[0], lambda s: s ** 2,
                                  lambda s: s.abs(), lambda s: s.cumsum(0)])
def test_dense_only_methods_raise_instead_of_reading_the_placeholder(call):
    s = torch.ones(2, 3).to_sparse()
    with pytest.raises(NotImplementedError, match="with arguments from the 'SparseCPU' backend"):
        call(s)


def test_numpy_conversion_is_refused():
    with pytest.raises(TypeError, match="can't convert Sparse layout tensor to numpy. Use Tensor.to_dense\\(\\) first."):
        torch.ones(2).to_sparse().numpy()


# -- CUDA (Numba's simulator in CI; conftest sets NUMBA_ENABLE_CUDASIM=1) ----------------

needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA and no simulator")

CUDA_CASES = {
    "to_dense": lambda s, d: s.to_dense(),
    "coalesce": lambda s, d: s.coalesce().to_dense(),
    "add_sparse": lambda s, d: (s + s * 2).to_dense(),
    "dense_add": lambda s, d: torch.ones(tuple(s.shape), dtype=torch.float64, device=s.device) + s,
    "mul_dense": lambda s, d: (s * torch.full(tuple(s.shape), 3.0, dtype=torch.float64, device=s.device)).to_dense(),
    "transpose": lambda s, d: s.t().to_dense(),
    "narrow_copy": lambda s, d: s.narrow_copy(1, 1, 2).to_dense(),
    "index_select": lambda s, d: s.index_select(0, torch.tensor([2, 0], device=s.device)).to_dense(),
    "sum": lambda s, d: torch.sparse.sum(s, 1).to_dense(),
    "softmax": lambda s, d: torch.sparse.softmax(s, 1).to_dense(),
    "log_softmax": lambda s, d: torch.sparse.log_softmax(s, 0).to_dense(),
    "mm": lambda s, d: torch.sparse.mm(s, d),
    "addmm": lambda s, d: torch.sparse.addmm(torch.ones(3, 2, dtype=torch.float64, device=s.device), s, d, beta=2.0),
}


@needs_cuda
@pytest.mark.parametrize("name", sorted(CUDA_CASES))
def test_ops_on_cuda_match_cpu(name):
    a = np.array([[0., 1.5, 0., -2.], [3., 0., 0., 1.], [0., 0., 4., 0.]])
    b = RNG.standard_normal((4, 2))
    cpu = CUDA_CASES[name](uncoalesced(a), torch.tensor(b))
    s = uncoalesced(a).cuda()
    assert s.device.type == "cuda" and s.is_sparse
    gpu = CUDA_CASES[name](s, torch.tensor(b).cuda())
    assert gpu.device.type == "cuda"
    np.testing.assert_allclose(gpu.cpu().numpy(), cpu.numpy(), atol=1e-12)


@needs_cuda
def test_cuda_sparse_tensor_construction_and_printing():
    s = torch.sparse_coo_tensor([[0, 1]], [1., 2.], (3,), device="cuda")
    assert s.device.type == "cuda" and s.cpu().device.type == "cpu"
    assert "nnz=2, device='cuda:0', layout=torch.sparse_coo" in repr(s)


@needs_cuda
def test_operands_on_two_devices_are_refused():
    """Indices and values, or a product's operands, on the CPU and on CUDA raise PyTorch's
    errors; indices given as a list go to the values' device."""
    with pytest.raises(RuntimeError, match=r"backend of indices \(CPU\) must match backend of values \(CUDA\)"):
        torch.sparse_coo_tensor(torch.tensor([[0]]), torch.tensor([1.]).cuda(), (2,))
    s = torch.sparse_coo_tensor([[0, 1]], [1., 2.], (3,), device="cuda")
    assert s._indices().device.type == "cuda" and s.device.type == "cuda"
    sparse = torch.ones(3, 4).to_sparse()
    for a, b in ((sparse, torch.ones(4, 2).cuda()), (sparse.cuda(), torch.ones(4, 2))):
        with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
            torch.sparse.mm(a, b)


@pytest.mark.parametrize("call", [lambda s: torch.exp(s), lambda s: torch.cat([s, s]),
                                  lambda s: torch.cumsum(s, 0), lambda s: torch.where(s > 0, s, s)])
def test_dense_only_functions_raise_instead_of_computing_on_nothing(call):
    s = torch.ones(2, 3).to_sparse()
    with pytest.raises(NotImplementedError, match="'SparseCPU' backend"):
        call(s)


def test_sparse_mask_and_dense_to_dense():
    dense = torch.arange(6.).reshape(2, 3)
    mask = torch.sparse_coo_tensor([[1, 0, 1], [2, 0, 2]], [1., 1., 1.], (2, 3))
    picked = dense.t().t().sparse_mask(mask)  # a non-contiguous-origin view works too
    assert picked.is_sparse and picked._values().tolist() == [5.0, 0.0, 5.0]
    assert dense.to_dense() is dense
    with pytest.raises(RuntimeError, match=r"sparse_mask\(\): operands have incompatible sizes; self has size "
                                           r"\[2, 3\] but mask has size \[2, 2\]"):
        dense.sparse_mask(torch.ones(2, 2).to_sparse())
