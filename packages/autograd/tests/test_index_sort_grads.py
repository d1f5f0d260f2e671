"""Gradients of indexing, the index ops, sorting and scans: gradcheck (finite differences
in float64) on contiguous, non-contiguous and 0-d inputs, gradgradcheck where the rule is
itself made of differentiable ops, and exact gradients for repeated indices."""
import numpy as np
import pytest

import ember_autograd  # noqa: F401
import ember_tensor as E
from ember_autograd import gradcheck, gradgradcheck

RNG = np.random.default_rng(0)


def _leaf(shape, transposed=False, distinct=True):
    """A float64 leaf; distinct values keep sort-like ops away from ties (kinks)."""
    n = int(np.prod(shape)) if shape else 1
    values = RNG.permutation(n).astype(np.float64) + RNG.uniform(0.1, 0.4, n) if distinct else RNG.standard_normal(n)
    array = values.reshape(shape)
    if transposed:
        t = E.tensor(np.ascontiguousarray(array.T), dtype=E.float64).t()
        assert not t.is_contiguous()
    else:
        t = E.tensor(array, dtype=E.float64)
    return t.requires_grad_()


IDX = E.tensor([[0, 2, 1], [2, 2, 0]])
MASK = E.tensor([[True, False, True], [False, False, True]])

ONE_INPUT = [
    ("getitem_advanced", lambda t: t[[1, 0, 1], 1:]),
    ("getitem_mask", lambda t: t[MASK]),
    ("gather", lambda t: t.gather(1, IDX)),
    ("index_select", lambda t: t.index_select(1, E.tensor([2, 0, 2]))),
    ("index_fill", lambda t: t.index_fill(1, E.tensor([1]), -1.0)),
    ("scatter_value", lambda t: t.scatter(1, E.tensor([[0], [2]]), 3.0)),
    ("take", lambda t: t.take(E.tensor([[5, 0], [5, 3]]))),
    ("take_along_dim", lambda t: E.take_along_dim(t, E.tensor([[2], [0]]), 1)),
    ("masked_fill", lambda t: t.masked_fill(MASK, 0.5)),
    ("masked_select", lambda t: t.masked_select(MASK)),
    ("sort_values", lambda t: t.sort(1, descending=True).values),
    ("sort_dim0", lambda t: t.sort(0).values),
    ("topk", lambda t: t.topk(2).values),
    ("kthvalue", lambda t: t.kthvalue(2, 1).values),
    ("kthvalue_keepdim", lambda t: t.kthvalue(1, 0, keepdim=True).values),
    ("nanmedian_dim", lambda t: t.nanmedian(1).values),
    ("nanmedian_all", lambda t: t.nanmedian()),
    ("mode", lambda t: t.mode(1).values),
    ("cumsum", lambda t: t.cumsum(1)),
    ("cumsum_dim0", lambda t: t.cumsum(0)),
    ("cumprod", lambda t: t.cumprod(1)),
    ("cummax", lambda t: t.cummax(1).values),
    ("cummin", lambda t: t.cummin(0).values),
    ("logcumsumexp", lambda t: t.logcumsumexp(1)),
    ("diff", lambda t: E.diff(t, n=2, dim=1)),
]


@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("name,fn", ONE_INPUT, ids=[n for n, _ in ONE_INPUT])
def test_gradcheck_one_input(name, fn, transposed):
    shape = (3, 2) if transposed else (2, 3)
    t = _leaf(shape, transposed)
    if transposed:
        t = t.t()  # back to (2, 3) values, now through a non-contiguous view
    assert gradcheck(fn, (t,))


TWO_INPUTS = [
    ("scatter", lambda t, s: t.scatter(1, E.tensor([[0, 1], [2, 0]]), s)),
    ("scatter_add", lambda t, s: t.scatter_add(1, IDX[:, :2], s)),
    ("scatter_reduce_sum", lambda t, s: t.scatter_reduce(1, IDX[:, :2], s, "sum", include_self=False)),
    ("scatter_reduce_mean", lambda t, s: t.scatter_reduce(1, IDX[:, :2], s, "mean")),
    ("scatter_reduce_amax", lambda t, s: t.scatter_reduce(1, IDX[:, :2], s, "amax")),
    ("index_add", lambda t, s: t.index_add(1, E.tensor([2, 2]), s, alpha=2)),
    ("index_copy", lambda t, s: t.index_copy(1, E.tensor([2, 0]), s)),
    ("index_put_accumulate", lambda t, s: t.index_put((E.tensor([1, 1]), E.tensor([0, 0])), s[0], accumulate=True)),
    ("index_put", lambda t, s: t.index_put((E.tensor([1, 0]), E.tensor([2, 2])), s[1])),
    ("setitem_advanced", lambda t, s: _setitem(t, ([0, 1], slice(0, 2)), s)),
    ("put_accumulate", lambda t, s: t.put(E.tensor([0, 0, 5, 1]), s.reshape(-1), accumulate=True)),
    ("masked_scatter", lambda t, s: t.masked_scatter(MASK, s)),
]


def _setitem(t, key, value):
    out = t.clone()
    out[key] = value
    return out


@pytest.mark.parametrize("name,fn", TWO_INPUTS, ids=[n for n, _ in TWO_INPUTS])
def test_gradcheck_two_inputs(name, fn):
    t = _leaf((2, 3))
    s = _leaf((2, 2)) * 10   # different values from t: no ties for amax
    s = s.detach().requires_grad_()
    assert gradcheck(fn, (t, s))


@pytest.mark.parametrize("name,fn", ONE_INPUT, ids=[n for n, _ in ONE_INPUT])
def test_gradgradcheck_one_input(name, fn):
    # Every rule is written with differentiable ops, so second derivatives come free.
    assert gradgradcheck(fn, (_leaf((2, 3)),))


@pytest.mark.parametrize("name,fn", TWO_INPUTS, ids=[n for n, _ in TWO_INPUTS])
def test_gradgradcheck_two_inputs(name, fn):
    s = (_leaf((2, 2)) * 10).detach().requires_grad_()
    assert gradgradcheck(fn, (_leaf((2, 3)), s))


def test_0d_inputs():
    for fn in (lambda t: t.sort().values, lambda t: t.cumsum(0), lambda t: t.cumprod(0),
               lambda t: t.topk(1).values, lambda t: t.gather(0, E.tensor(0)),
               lambda t: t.index_select(0, E.tensor([0]))):
        assert gradcheck(fn, (_leaf(()),))


def test_repeated_indices_accumulate():
    t = E.zeros(4, dtype=E.float64, requires_grad=True)
    t[[1, 1, 3]].sum().backward()
    assert t.grad.tolist() == [0., 2., 0., 1.]
    t.grad = None
    t.index_select(0, E.tensor([0, 0, 0])).sum().backward()
    assert t.grad.tolist() == [3., 0., 0., 0.]


def test_cumprod_with_zeros():
    t = E.tensor([2., 0., 3., 0.5], dtype=E.float64, requires_grad=True)
    assert gradcheck(lambda x: x.cumprod(0), (t,))


@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("zeros", [(), ((0, 0),), ((0, 0), (1, 1))], ids=["no zero", "one zero", "two zeros"])
def test_scatter_reduce_prod(include_self, zeros):
    t = _leaf((2, 3))
    s = _leaf((2, 2)).detach()
    for position in zeros:
        s[position] = 0.0          # zeros in one group (row 0 gets index 0 twice)
    s.requires_grad_()
    index = E.tensor([[0, 0], [1, 1]])
    assert gradcheck(lambda a, b: a.scatter_reduce(1, index, b, "prod", include_self=include_self), (t, s))


@pytest.mark.parametrize("values", [[2., 0., 3., 0.5], [0., 2., 3., 1.5], [2., 3., 0., 0.], [1.5, 2., 3., 0.]])
def test_cumprod_zeros_positions(values):
    rows = E.tensor([values, [1., 2., 0.5, 3.]], dtype=E.float64).requires_grad_()
    assert gradcheck(lambda x: x.cumprod(1), (rows,))
    assert gradcheck(lambda x: x.t().cumprod(0), (rows,))


def test_setitem_gradient_keeps_the_values_extra_leading_ones():
    value = E.ones(1, 1, 4, requires_grad=True)
    target = E.zeros(3, 4)
    target[0] = value * 3
    target.sum().backward()
    assert value.grad.shape == (1, 1, 4) and value.grad.tolist() == [[[3.0] * 4]]
