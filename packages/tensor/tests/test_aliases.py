"""PyTorch's names that are one line over existing ops (issue 21's namespace check):
deg2rad/rad2deg, fix, the arc* and comparison in-place spellings, clamp_min_/clamp_max_,
diagflat, dist, the in-place BLAS-like ops, row/column/dstack, linalg.vander, and the
answers about conjugate/negative bits and inference tensors. Expected values are NumPy's
(or PyTorch's, written out)."""
import math

import numpy as np
import pytest

import ember_tensor as torch

A = np.array([[0.5, -0.25], [0.75, 0.1]])


def _t(a, **kw):
    return torch.tensor(a, dtype=torch.float64, **kw)


def test_deg2rad_rad2deg_promote_integers_and_work_in_place():
    degrees = torch.tensor([0, 90, 180])
    assert degrees.deg2rad().dtype == torch.float32
    np.testing.assert_allclose(torch.deg2rad(degrees).numpy(), np.deg2rad([0, 90, 180]), rtol=1e-6)
    np.testing.assert_allclose(_t(A).rad2deg().numpy(), np.rad2deg(A))
    x = _t(A)
    assert x.deg2rad_() is x
    np.testing.assert_allclose(x.numpy(), np.deg2rad(A))
    np.testing.assert_allclose(torch.rad2deg_(x).numpy(), A)


@pytest.mark.parametrize("alias, op", [
    ("arcsin_", np.arcsin), ("arccos_", np.arccos), ("arctan_", np.arctan),
    ("arcsinh_", np.arcsinh), ("arctanh_", np.arctanh), ("fix_", np.trunc),
])
def test_in_place_aliases(alias, op):
    x = _t(A)
    assert getattr(x, alias)() is x
    np.testing.assert_allclose(x.numpy(), op(A))
    np.testing.assert_allclose(getattr(torch, alias)(_t(A)).numpy(), op(A))


def test_arccosh_arctan2_and_fix():
    x = _t(A + 2)
    np.testing.assert_allclose(x.arccosh_().numpy(), np.arccosh(A + 2))
    np.testing.assert_allclose(_t(A).arctan2_(_t(A.T)).numpy(), np.arctan2(A, A.T))
    np.testing.assert_array_equal(torch.fix(torch.tensor([-1.5, 2.7])).numpy(), [-1.0, 2.0])


@pytest.mark.parametrize("method, op", [
    ("greater_", np.greater), ("greater_equal_", np.greater_equal), ("less_", np.less),
    ("less_equal_", np.less_equal), ("not_equal_", np.not_equal),
])
def test_comparison_in_place_spellings_keep_the_dtype(method, op):
    x = _t(A)
    assert getattr(x, method)(_t(A.T)) is x
    assert x.dtype == torch.float64
    np.testing.assert_array_equal(x.numpy(), op(A, A.T).astype(np.float64))


def test_clamp_min_max_in_place():
    x = _t(A)
    torch.clamp_min_(x, 0.0).clamp_max_(0.6)
    np.testing.assert_allclose(x.numpy(), np.clip(A, 0.0, 0.6))


def test_diagflat_and_dist():
    np.testing.assert_array_equal(torch.diagflat(_t(A), 1).numpy(), np.diagflat(A, 1))
    assert _t(A).dist(_t(A.T)).item() == pytest.approx(np.linalg.norm((A - A.T).ravel()))
    assert torch.dist(_t(A), _t([0.0, 0.0]), 1).item() == pytest.approx(np.abs(A).sum())
    assert torch.dist(_t(A), _t(A.T), math.inf).item() == pytest.approx(np.abs(A - A.T).max())


def test_dist_gradient():
    pytest.importorskip("ember_autograd")  # installs backward()
    x = _t(A, requires_grad=True)
    torch.dist(x, _t(A.T)).backward()
    diff = A - A.T
    np.testing.assert_allclose(x.grad.numpy(), diff / np.linalg.norm(diff))


def test_blas_like_in_place_ops():
    b = np.array([[1.0, 2.0], [3.0, 4.0]])
    v = np.array([1.0, -1.0])
    batch = np.stack([A, b])
    x = _t(b)
    assert x.addmm_(_t(A), _t(A), beta=0.5, alpha=2) is x
    np.testing.assert_allclose(x.numpy(), 0.5 * b + 2 * A @ A)
    np.testing.assert_allclose(_t(v).addmv_(_t(A), _t(v)).numpy(), v + A @ v)
    np.testing.assert_allclose(torch.addmv_(_t(v), _t(A), _t(v), alpha=3).numpy(), v + 3 * A @ v)
    np.testing.assert_allclose(_t(b).addbmm_(_t(batch), _t(batch)).numpy(), b + (batch @ batch).sum(0))
    np.testing.assert_allclose(_t(batch).baddbmm_(_t(batch), _t(batch), beta=2).numpy(), 2 * batch + batch @ batch)
    np.testing.assert_allclose(_t(b).addr_(_t(v), _t([2.0, 3.0])).numpy(), b + np.outer(v, [2.0, 3.0]))


def test_in_place_blas_like_op_refuses_a_leaf_that_requires_grad():
    pytest.importorskip("ember_autograd")
    with pytest.raises(RuntimeError, match="leaf"):
        _t(A, requires_grad=True).addmm_(_t(A), _t(A))


def test_stacking_helpers():
    a, b = np.array([1, 2]), np.array([3, 4])
    np.testing.assert_array_equal(torch.row_stack([torch.tensor(a), torch.tensor(b)]).numpy(), np.vstack([a, b]))
    np.testing.assert_array_equal(torch.column_stack([torch.tensor(a), torch.tensor(b)]).numpy(),
                                  np.column_stack([a, b]))
    np.testing.assert_array_equal(torch.column_stack([_t(A), _t(a)]).numpy(), np.column_stack([A, a]))
    np.testing.assert_array_equal(torch.dstack([torch.tensor(a), torch.tensor(b)]).numpy(), np.dstack([a, b]))
    np.testing.assert_array_equal(torch.dstack([_t(A), _t(A)]).numpy(), np.dstack([A, A]))
    assert not hasattr(torch.Tensor, "column_stack") and not hasattr(torch.Tensor, "row_stack")


def test_linalg_vander_is_increasing_and_batched():
    x = np.array([[1.0, 2.0, 3.0], [0.0, -1.0, 0.5]])
    expected = np.stack([np.vander(row, increasing=True) for row in x])
    np.testing.assert_array_equal(torch.linalg.vander(_t(x)).numpy(), expected)
    ints = torch.linalg.vander(torch.tensor([1, 2, 3], dtype=torch.int32), N=4)
    assert ints.dtype == torch.int64
    np.testing.assert_array_equal(ints.numpy(), np.vander([1, 2, 3], 4, increasing=True))
    with pytest.raises(RuntimeError, match="N must be greater than 1"):
        torch.linalg.vander(_t([1.0, 2.0]), N=1)
    with pytest.raises(RuntimeError, match="got Bool"):
        torch.linalg.vander(torch.tensor([True, False]))


def test_linalg_vander_gradient_is_finite_at_zero():
    pytest.importorskip("ember_autograd")
    x = _t([0.0, 2.0], requires_grad=True)
    torch.linalg.vander(x, N=4).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [1.0, 1 + 2 * 2 + 3 * 4])  # d(1 + x + x^2 + x^3)/dx


def test_bits_and_inference_answers():
    x = _t(A)
    assert not x.is_conj() and not torch.is_conj(x) and not x.is_neg() and not torch.is_neg(x)
    assert x.resolve_conj() is x and torch.resolve_neg(x) is x
    assert not torch.is_inference(x) and not x.is_inference()
    assert x.is_same_size(_t(A.T)) and not torch.is_same_size(x, _t([1.0]))
    assert torch.tensor([0.5]).is_nonzero() and not torch.tensor(0).is_nonzero()
    with pytest.raises(RuntimeError):
        torch.ones(2).is_nonzero()
    assert torch.is_signed(x) and not torch.is_signed(torch.tensor([1], dtype=torch.uint8))


def test_memory_formats_are_accepted_and_the_layout_stays_row_major():
    import pickle

    x = torch.ones(2, 3, 4, 5)
    for fmt in (torch.channels_last, torch.contiguous_format, torch.preserve_format):
        assert isinstance(fmt, torch.memory_format)
        y = x.to(memory_format=fmt)
        assert y.is_contiguous() and y.stride() == (60, 20, 5, 1)
    assert x.contiguous(memory_format=torch.channels_last).stride() == (60, 20, 5, 1)
    assert repr(torch.channels_last_3d) == "torch.channels_last_3d"
    assert pickle.loads(pickle.dumps(torch.channels_last)) is torch.channels_last
    assert pickle.loads(pickle.dumps(torch.strided)) is torch.strided  # (layouts failed to unpickle before)


def test_in_place_addmm_gradient_flows_to_both_sides():
    pytest.importorskip("ember_autograd")
    a = torch.ones(2, 2, dtype=torch.float64, requires_grad=True)
    m = _t([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    y = a * 1
    y.addmm_(m, m, beta=2, alpha=3)
    y.sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), np.full((2, 2), 2.0))
    np.testing.assert_array_equal(m.grad.numpy(), [[21.0, 33.0], [27.0, 39.0]])  # PyTorch's values
