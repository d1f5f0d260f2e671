"""Gradients of issue 21's added ops: gradcheck (and gradgradcheck where the op is made of
twice-differentiable parts) in float64, the in-place shape ops' histories, and the
products of sparse COO matrices with dense operands."""
import math

import numpy as np
import pytest

import ember_autograd
import ember_tensor as E

gradcheck = ember_autograd.gradcheck
gradgradcheck = ember_autograd.gradgradcheck


def sample(shape, low=-2.0, high=2.0, seed=0):
    """A float64 leaf requiring grad with well-separated values (no ties, away from 0)."""
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape)) if shape else 1
    while True:
        values = rng.uniform(low, high, n)
        if np.diff(np.sort(values)).min(initial=1.0) > 0.05 and (np.abs(values).min() > 0.1 or low >= 0):
            break
    return E.tensor(values.reshape(shape), dtype=E.float64).requires_grad_()


POS = dict(low=0.2, high=2.0)

# (id, function, [(shape, sample kwargs), ...], check second order). Second order is
# skipped where the op picks elements (sort, max, abs): its second derivative is zero
# almost everywhere, and finite differences across a kink say otherwise.
OPS = [
    ("logaddexp", E.logaddexp, [((3, 4), {}), ((4,), {})], True),
    ("logaddexp2", E.logaddexp2, [((3,), {}), ((3,), {})], True),
    ("xlogy", E.xlogy, [((3,), {}), ((3,), POS)], True),
    ("float_power", E.float_power, [((3,), POS), ((3,), {})], True),
    ("float_power_number", lambda x: E.float_power(x, 2.5), [((3,), POS)], True),
    ("nansum", lambda x: E.nansum(x, 1), [((3, 4), {})], True),
    ("nanmean", lambda x: E.nanmean(x, 0, keepdim=True), [((3, 4), {})], True),
    ("aminmax_min", lambda x: E.aminmax(x, dim=1).min, [((3, 4), {})], False),
    ("aminmax_max", lambda x: E.aminmax(x).max, [((3, 4), {})], False),
    ("quantile", lambda x: E.quantile(x, 0.3, dim=1), [((3, 5), {})], False),
    ("quantile_q_tensor", lambda x: E.quantile(x, E.tensor([0.2, 0.7], dtype=E.float64)), [((6,), {})], False),
    ("nanquantile", lambda x: E.nanquantile(x, 0.6, dim=0, interpolation="midpoint"), [((4, 3), {})], False),
    ("cov", lambda x: E.cov(x), [((3, 5), {})], True),
    ("cov_weighted", lambda x, w: E.cov(x, aweights=w), [((2, 4), {}), ((4,), POS)], True),
    ("corrcoef", E.corrcoef, [((3, 5), {})], True),
    ("cdist_2", E.cdist, [((3, 2), {}), ((4, 2), {})], True),
    ("cdist_2_mm", lambda a, b: E.cdist(a, b, compute_mode="use_mm_for_euclid_dist"), [((3, 2), {}), ((4, 2), {})],
     True),
    ("cdist_1", lambda a, b: E.cdist(a, b, p=1), [((3, 2), {}), ((4, 2), {})], False),
    ("cdist_3", lambda a, b: E.cdist(a, b, p=3), [((2, 3, 2), {}), ((4, 2), {})], False),
    ("cdist_inf", lambda a, b: E.cdist(a, b, p=math.inf), [((3, 2), {}), ((4, 2), {})], False),
    ("cartesian_prod", E.cartesian_prod, [((2,), {}), ((3,), {})], True),
    ("combinations", lambda x: E.combinations(x, 2, with_replacement=True), [((4,), {})], True),
    ("vander", lambda x: E.vander(x, 4), [((3,), {})], True),
    ("ravel", lambda x: x.t().ravel(), [((3, 4), {})], True),
    ("hsplit", lambda x: E.hsplit(x, 2)[1], [((3, 4), {})], True),
    ("vsplit", lambda x: E.vsplit(x, [1])[1], [((3, 4), {})], True),
    ("dsplit", lambda x: E.dsplit(x, 2)[0], [((2, 2, 4), {})], True),
    ("select_scatter", lambda x, s: E.select_scatter(x, s, 1, -1), [((3, 4), {}), ((3,), {})], True),
    ("slice_scatter", lambda x, s: E.slice_scatter(x, s, 0, 1, None, 2), [((5, 2), {}), ((2, 2), {})], True),
    ("diagonal_scatter", lambda x, s: E.diagonal_scatter(x, s, -1), [((3, 3), {}), ((2,), {})], True),
    ("sum_to_size", lambda x: x.sum_to_size(3, 1), [((2, 3, 4), {})], True),
    ("trapezoid_dx", lambda y: E.trapezoid(y, dx=0.5), [((3, 4), {})], True),
    ("trapezoid_x", lambda y, x: E.trapezoid(y, x, dim=0), [((4, 2), {}), ((4, 2), {})], True),
    ("trapz_x_1d", E.trapz, [((2, 4), {}), ((4,), {})], True),
    ("cumulative_trapezoid", lambda y: E.cumulative_trapezoid(y, dim=0), [((4, 3), {})], True),
    ("cumulative_trapezoid_x", E.cumulative_trapezoid, [((2, 4), {}), ((4,), {})], True),
    ("fill", lambda x, v: E.fill(x, v), [((2, 3), {}), ((), {})], True),
    ("index_reduce_prod", lambda x, s: E.index_reduce(x, 0, E.tensor([1, 0, 1]), s, "prod"),
     [((3, 2), {}), ((3, 2), {})], True),
    ("index_reduce_mean", lambda x, s: E.index_reduce(x, 1, E.tensor([0, 0, 2]), s, "mean", include_self=False),
     [((2, 3), {}), ((2, 3), {})], True),
    ("index_reduce_amax", lambda x, s: E.index_reduce(x, 0, E.tensor([2, 0]), s, "amax"), [((3, 2), {}), ((2, 2), {})],
     False),
    ("rsub", lambda x, y: E.rsub(x, y, alpha=2), [((3,), {}), ((3,), {})], True),
    ("ldexp", lambda x: E.ldexp(x, E.tensor([2, -1, 0])), [((3,), {})], True),
    ("sinc", E.sinc, [((4,), {})], True),
    ("tensorinv", lambda a: E.linalg.tensorinv(a + 3 * E.eye(4, dtype=E.float64).reshape(4, 2, 2), ind=1),
     [((4, 2, 2), {})], True),
    ("tensorsolve", lambda a, b: E.linalg.tensorsolve(a + 3 * E.eye(4, dtype=E.float64).reshape(2, 2, 4), b),
     [((2, 2, 4), {}), ((2, 2), {})], True),
]


@pytest.mark.parametrize("name, fn, specs, second", OPS, ids=[op[0] for op in OPS])
def test_gradcheck(name, fn, specs, second):
    inputs = tuple(sample(shape, seed=i, **kw) for i, (shape, kw) in enumerate(specs))
    assert gradcheck(fn, inputs)
    if second:
        assert gradgradcheck(fn, inputs)


def test_nan_positions_get_no_gradient():
    x = E.tensor([1.0, float("nan"), 3.0], requires_grad=True)
    E.nansum(x).backward()
    assert x.grad.tolist() == [1.0, 0.0, 1.0]
    x.grad = None
    E.nanmean(x).backward()
    assert x.grad.tolist() == [0.5, 0.0, 0.5]


def test_cdist_of_equal_points_has_a_finite_gradient():
    x = E.tensor([[0.0, 1.0], [2.0, 3.0]], dtype=E.float64, requires_grad=True)
    for mode in ("use_mm_for_euclid_dist", "donot_use_mm_for_euclid_dist"):
        x.grad = None
        E.cdist(x, x, compute_mode=mode).sum().backward()
        assert not bool(x.grad.isnan().any()), mode


# --- in-place shape ops ----------------------------------------------------------------------------

INPLACE = [
    ("unsqueeze_", lambda t: t.unsqueeze_(1), "UnsqueezeBackward1"),
    ("squeeze_", lambda t: t.unsqueeze(0).squeeze_(), "SqueezeBackward3"),
    ("squeeze_dim", lambda t: t.unsqueeze(0).squeeze_(0), "SqueezeBackward4"),
    ("squeeze_dims", lambda t: t.unsqueeze(0).squeeze_((0,)), "SqueezeBackward5"),
    ("transpose_", lambda t: t.transpose_(0, 1), "TransposeBackward1"),
    ("swapdims_", lambda t: t.swapdims_(1, 0), "TransposeBackward1"),
    ("t_", lambda t: t.t_(), "TBackward1"),
    ("as_strided_", lambda t: t.as_strided_((3, 2), (1, 3)), "AsStridedBackward1"),
]


@pytest.mark.parametrize("name, change, node", INPLACE, ids=[c[0] for c in INPLACE])
def test_inplace_shape_op_gradients(name, change, node):
    def fn(x):
        changed = change(x * 1.0)
        return changed * E.arange(6.0, dtype=E.float64).reshape(changed.shape)
    x = sample((2, 3))
    assert type(change(x * 1.0).grad_fn).__name__ == node
    assert gradcheck(fn, (x,))
    assert gradgradcheck(fn, (x,))


def test_inplace_shape_op_refuses_a_leaf_and_leaves_a_base_alone():
    x = E.ones(2, 3, requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place"):
        x.unsqueeze_(0)
    with pytest.raises(RuntimeError, match="cannot resize variables that require grad"):
        x.resize_(6)
    with ember_autograd.no_grad():
        x.unsqueeze_(0)
    assert x.shape == (1, 2, 3)
    base = E.ones(2, 3, requires_grad=True) * 1.0
    before = base.grad_fn
    view = base[0]
    view.unsqueeze_(0)
    assert base.grad_fn is before and type(view.grad_fn).__name__ == "UnsqueezeBackward1"
    assert view.shape == (1, 3)


# --- sparse products with dense operands -----------------------------------------------------------

def _sparse_leaf():
    s = E.sparse_coo_tensor([[0, 1, 1], [2, 0, 2]], [3.0, 4.0, 5.0], (2, 3), dtype=E.float64)
    return s.requires_grad_()


def test_dense_at_sparse_gradients_match_the_dense_product():
    rng = np.random.default_rng(0)
    d = E.tensor(rng.standard_normal((4, 2)), requires_grad=True)
    s = _sparse_leaf()
    out = d @ s
    assert type(out.grad_fn).__name__ == "MmBackward0"
    weights = E.tensor(rng.standard_normal((4, 3)))
    (out * weights).sum().backward()
    dense = s.detach().to_dense()
    np.testing.assert_allclose(d.grad.numpy(), (weights @ dense.t()).numpy())
    # A sparse operand of mm/matmul gets a dense gradient, as in PyTorch (torch.sparse.mm
    # keeps it sparse).
    assert not s.grad.is_sparse
    np.testing.assert_allclose(s.grad.numpy(), (d.detach().t() @ weights).numpy())


@pytest.mark.parametrize("product", [
    lambda s, d: s @ d, lambda s, d: E.mm(s, d), lambda s, d: E.spmm(s, d), lambda s, d: s.matmul(d),
], ids=["matmul_operator", "mm", "spmm", "method"])
def test_sparse_at_dense_gradients(product):
    rng = np.random.default_rng(1)
    s = _sparse_leaf()
    d = E.tensor(rng.standard_normal((3, 2)), requires_grad=True)
    weights = E.tensor(rng.standard_normal((2, 2)))
    (product(s, d) * weights).sum().backward()
    dense = s.detach().to_dense()
    np.testing.assert_allclose(d.grad.numpy(), (dense.t() @ weights).numpy())
    np.testing.assert_allclose(s.grad.to_dense().numpy(), (weights @ d.detach().t()).numpy())


def test_sparse_vector_products_gradcheck():
    s = _sparse_leaf().detach()
    assert gradcheck(lambda v: s @ v, (sample((3,)),))
    assert gradcheck(lambda v: v @ s, (sample((2,)),))
    assert gradcheck(lambda m: m @ s, (sample((2, 4, 2)),))


def test_heaviside_has_no_derivative_like_pytorch():
    # PyTorch's result requires grad, and its backward raises.
    x = E.tensor([-1.0, 0.0, 2.0], requires_grad=True)
    y = E.heaviside(x, E.tensor(0.5))
    assert y.requires_grad and type(y.grad_fn).__name__ == "NotImplemented"
    with pytest.raises(RuntimeError, match="derivative for aten::heaviside is not implemented"):
        y.sum().backward()


def test_sinc_has_gradient_zero_at_zero():
    x = E.tensor([0.0, 0.5], dtype=E.float64, requires_grad=True)
    E.sinc(x).sum().backward()
    assert x.grad.tolist()[0] == 0.0
    assert abs(x.grad.tolist()[1] - (-4 / math.pi)) < 1e-12  # d/dx sin(pi x)/(pi x) at 1/2
