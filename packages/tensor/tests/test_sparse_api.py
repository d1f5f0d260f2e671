"""Every op of the sparse COO API (arithmetic with sparse, dense and 0-d operands, transpose,
narrow_copy, index_select, sums, softmax, sparse_mask, copies and in-place forms) on
uncoalesced, hybrid and empty sparse tensors, and half, integer and bool values.

On the CPU each is held to a dense NumPy reference, on CUDA (Numba's simulator in CI) to
the CPU, computed on the device inside `cuda_guard.device_only()` (one value may be read
back: an output's size, an error flag).
"""
import numpy as np
import pytest

import ember_tensor as torch
from cuda_guard import DEVICES, cpu_result
from sparse_cases import CASE_RNG, comparable, masked_softmax, sparse_case


# name: (call on a sparse s and a dense d of its shape, NumPy reference on s's dense a, d
# and the mask p of s's specified elements, given s's sparse_dim).
OPS = {
    "add_sparse": (lambda s, d: s + s * 2, lambda a, d, p, k: 3 * a),
    "sub_sparse": (lambda s, d: s - s.double(), lambda a, d, p, k: 0 * a),
    "add_alpha": (lambda s, d: s.add(s, alpha=3), lambda a, d, p, k: 4 * a),
    "dense_add": (lambda s, d: d + s, lambda a, d, p, k: d + a),
    "dense_sub": (lambda s, d: d - s, lambda a, d, p, k: d - a),
    "float_dense_add": (lambda s, d: d.float() + s, lambda a, d, p, k: d.astype(np.float32) + a),
    "mul_scalar": (lambda s, d: s * 2.5, lambda a, d, p, k: 2.5 * a),
    "mul_0d": (lambda s, d: s * torch.tensor(3.0, device=s.device), lambda a, d, p, k: 3 * a),
    "mul_dense": (lambda s, d: s * d, lambda a, d, p, k: a * d),
    "mul_sparse": (lambda s, d: s * s, lambda a, d, p, k: a * a),
    "div": (lambda s, d: s / 4, lambda a, d, p, k: a / 4),
    "neg": (lambda s, d: -s, lambda a, d, p, k: -a),
    "transpose": (lambda s, d: s.transpose(0, 1) if s.sparse_dim() >= 2 else s,
                  lambda a, d, p, k: np.swapaxes(a, 0, 1) if k >= 2 else a),
    "narrow_sparse": (lambda s, d: s.narrow_copy(0, 1, 1), lambda a, d, p, k: a[1:2]),
    "narrow_dense": (lambda s, d: s.narrow_copy(s.dim() - 1, 1, 1), lambda a, d, p, k: a[..., 1:2]),
    "index_select_sparse": (lambda s, d: s.index_select(0, torch.tensor([1, 0, 1, -1], device=s.device)),
                            lambda a, d, p, k: a[[1, 0, 1, -1]]),
    "index_select_dense": (lambda s, d: s.index_select(s.dim() - 1, torch.tensor([1, 0], device=s.device)),
                           lambda a, d, p, k: a[..., [1, 0]]),
    "sum_all": (lambda s, d: torch.sparse.sum(s), lambda a, d, p, k: a.sum()),
    "sum_first": (lambda s, d: torch.sparse.sum(s, 0), lambda a, d, p, k: a.sum(0)),
    "sum_last": (lambda s, d: torch.sparse.sum(s, s.dim() - 1), lambda a, d, p, k: a.sum(-1)),
    "sum_dims": (lambda s, d: torch.sparse.sum(s, (0, 1)), lambda a, d, p, k: a.sum((0, 1))),
    "softmax_0": (lambda s, d: torch.sparse.softmax(s, 0), lambda a, d, p, k: masked_softmax(a, 0, False, p)),
    "log_softmax_last": (lambda s, d: torch.sparse.log_softmax(s, s.dim() - 1),
                         lambda a, d, p, k: masked_softmax(a, -1, True, p)),
    # s holds each element twice: so does the masked result, whose dense form adds them
    "sparse_mask": (lambda s, d: d.sparse_mask(s), lambda a, d, p, k: 2 * np.where(p, d, 0)),
    "clone": (lambda s, d: s.clone(), lambda a, d, p, k: a),
    "to_float": (lambda s, d: s.to(torch.float32), lambda a, d, p, k: a.astype(np.float32)),
    "mul_": (lambda s, d: s.clone().mul_(2.0), lambda a, d, p, k: 2 * a),
    "add_": (lambda s, d: s.clone().add_(s), lambda a, d, p, k: 2 * a),
    "zero_": (lambda s, d: s.clone().zero_(), lambda a, d, p, k: 0 * a),
}
# (shape, sparse_dim): hybrid ones, and (2, 3) with no entries at all.
OP_SHAPES = [((3, 2), 2), ((3, 2), 1), ((3, 2, 2), 2), ((2, 3), 2)]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", sorted(OPS))
def test_sparse_ops_match_their_dense_reference(name, device):
    """Each op of uncoalesced, hybrid and empty sparse tensors with a strided dense operand
    gives the dense reference (on CUDA the CPU's result, layout and coalesced flag)."""
    call, ref = OPS[name]
    for shape, sparse_dim in OP_SHAPES:
        s, a, present = sparse_case(shape, sparse_dim, 0 if shape == (2, 3) else 2)
        d = CASE_RNG.standard_normal(shape)
        strided = torch.tensor(np.ascontiguousarray(d.T)).permute(*range(len(shape) - 1, -1, -1))
        got = cpu_result(device, lambda t, u: comparable(call(t, u)), s, strided)[0]
        np.testing.assert_allclose(got.numpy(), ref(a, d, present, sparse_dim), atol=1e-12, err_msg=str(shape))


# Half, integer and bool values: ops on (2, 3) holding 1, 2, 3 at (0, 2), (1, 0), (0, 2).
HALF_AND_INTEGER_OPS = {
    "coalesce": (lambda s: s.coalesce(), lambda a: a),
    "to_dense": (lambda s: s.to_dense(), lambda a: a),
    "to_dense_float64": (lambda s: s.to_dense(torch.float64), lambda a: a),
    "mul": (lambda s: s * 2, lambda a: a * 2),
    "sum": (lambda s: torch.sparse.sum(s, 1), lambda a: a.sum(1)),
    "to_sparse": (lambda s: s.to_dense().to_sparse(), lambda a: a),
    "dense_add": (lambda s: torch.ones(2, 3, dtype=s.dtype, device=s.device) + s, lambda a: 1 + a),
}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16, torch.int64, torch.int32, torch.bool],
                         ids=str)
def test_half_integer_and_bool_values(dtype, device):
    """Sparse ops keep (or promote as dense ops do) half, integer and bool values."""
    s = torch.sparse_coo_tensor([[0, 1, 0], [2, 0, 2]], torch.tensor([1, 2, 3]).to(dtype), (2, 3))
    a = np.array([[0, 0, 4], [2, 0, 0]]) if dtype is not torch.bool else np.array([[0, 0, 1], [1, 0, 0]])
    for name, (call, ref) in HALF_AND_INTEGER_OPS.items():
        got = cpu_result(device, lambda t: comparable(call(t)), s)[0]
        if dtype is torch.bool and name in ("mul", "sum"):
            continue  # ember keeps bool where PyTorch's sparse bool * 2 is int64: the devices agree, PyTorch not
        want = np.ones((2, 3)) if dtype is torch.bool and name == "dense_add" else ref(a)  # bool + is or
        np.testing.assert_array_equal(got.float().numpy(), want, err_msg=name)


@pytest.mark.parametrize("device", DEVICES)
def test_dense_plus_sparse_into_a_non_contiguous_dense_in_place(device):
    """dense += alpha * sparse (SGD's update) writes through a transposed dense view."""
    from ember_tensor.sparse._ops import add_sparse_into_dense_
    s, a, _ = sparse_case((3, 4), 2, 3)
    base = CASE_RNG.standard_normal((4, 3))
    got = cpu_result(device, lambda b, t: add_sparse_into_dense_(b.clone().t(), t, alpha=-2), torch.tensor(base), s)
    np.testing.assert_allclose(got.numpy(), base.T - 2 * a)
