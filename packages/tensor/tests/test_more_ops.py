"""Issue 21's added ops against NumPy: quantiles, nan-reductions and aminmax, index and
combination builders, statistics (cov, corrcoef, cdist, histograms), splits and ravel,
the in-place shape ops, float_power_/xlogy_, and sparse products with dense operands.

Each op that is a composition of device ops also runs on CUDA (Numba's simulator where
there is no GPU) inside `device_only(allow_scalar_reads=True)`, equal to the CPU.
(logaddexp, logaddexp2, xlogy, float_power, signbit, nansum and nanmean are in the op
database: test_ops.py and test_reductions.py.)
"""
import itertools
import math
import warnings

import numpy as np
import pytest

import ember_tensor as torch
from cuda_guard import DEVICES, device_only

NAN = float("nan")


def _rng(seed=0):
    return np.random.default_rng(seed)


def _on(device, *arrays):
    return [torch.tensor(a, device=device) for a in arrays]


def _close(actual, expected, **kw):
    if isinstance(actual, torch.Tensor):
        actual = actual.cpu().numpy()
    np.testing.assert_allclose(actual, expected, equal_nan=True, **kw)


def _guard(device):
    return device_only(allow_scalar_reads=True) if device == "cuda" else warnings.catch_warnings()


# --- quantile, nanquantile ---------------------------------------------------------------------

@pytest.mark.parametrize("interpolation", ["linear", "lower", "higher", "midpoint", "nearest"])
@pytest.mark.parametrize("dim, keepdim", [(None, False), (None, True), (0, False), (1, True), (-1, False)])
def test_quantile_matches_numpy(interpolation, dim, keepdim):
    a = _rng().standard_normal((3, 4, 5))
    q = np.array([0.0, 0.3, 0.5, 1.0])
    got = torch.quantile(torch.tensor(a), torch.tensor(q), dim=dim, keepdim=keepdim, interpolation=interpolation)
    _close(got, np.quantile(a, q, axis=dim, keepdims=keepdim, method=interpolation))
    got = torch.tensor(a).quantile(0.4, dim, keepdim, interpolation=interpolation)
    _close(got, np.quantile(a, 0.4, axis=dim, keepdims=keepdim, method=interpolation))


@pytest.mark.parametrize("dim", [None, 0, 1, 2])
def test_nanquantile_skips_nan_and_quantile_propagates_it(dim):
    a = _rng(1).standard_normal((3, 4, 5))
    a[0, 1, 2] = NAN
    a[1, :, 3] = NAN  # a row of NaN only along dim 1
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        _close(torch.nanquantile(torch.tensor(a), 0.3, dim=dim), np.nanquantile(a, 0.3, axis=dim))
    _close(torch.quantile(torch.tensor(a), 0.3, dim=dim), np.quantile(a, 0.3, axis=dim))


def test_quantile_of_0d_and_float32():
    assert torch.quantile(torch.tensor(2.5), 0.5).item() == 2.5
    x = torch.tensor([1.0, 2.0, 3.0, 4.0])
    assert x.quantile(0.3).dtype is torch.float32
    _close(x.quantile(0.3), 1.9, rtol=1e-6)


@pytest.mark.parametrize("call, error, message", [
    (lambda: torch.quantile(torch.tensor([1, 2]), 0.3), RuntimeError,
     "quantile() input tensor must be either float or double dtype"),
    (lambda: torch.quantile(torch.tensor([1.0, 2.0]), 1.3), RuntimeError,
     "quantile() q must be in the range [0, 1] but got 1.3"),
    (lambda: torch.quantile(torch.tensor([1.0]), 0.3, interpolation="foo"), RuntimeError,
     "quantile() interpolation must be one of linear, lower, higher, midpoint or nearest, but got foo"),
    (lambda: torch.quantile(torch.ones(0), 0.3), RuntimeError, "quantile() input tensor must be non-empty"),
    (lambda: torch.quantile(torch.ones(2, 2), torch.ones(2, 2)), RuntimeError,
     "quantile() q must be a scalar or 1D tensor"),
    (lambda: torch.quantile(torch.ones(2, dtype=torch.float64), torch.tensor(0.5)), RuntimeError,
     "quantile() q tensor must be same dtype as the input tensor"),
    (lambda: torch.nanmean(torch.tensor([1, 2])), RuntimeError,
     "nanmean(): expected input to have floating point or complex dtype but got Long"),
    (lambda: torch.aminmax(torch.ones(0)), RuntimeError,
     "aminmax(): cannot compute aminmax over an empty dimension as the operation has no identity."),
    (lambda: torch.aminmax(torch.ones(2, 0), dim=1), IndexError,
     "aminmax: Expected reduction dim 1 to have non-zero size."),
    (lambda: torch.aminmax(torch.ones(2, 3), dim=(0, 1)), TypeError,
     "aminmax(): argument 'dim' must be int, not tuple"),
])
def test_reduction_errors(call, error, message):
    with pytest.raises(error) as info:
        call()
    assert str(info.value) == message


# --- aminmax -------------------------------------------------------------------------------------

@pytest.mark.parametrize("device", DEVICES)
def test_aminmax(device):
    a = _rng(2).standard_normal((3, 4))
    x, = _on(device, a)
    with _guard(device):
        both = torch.aminmax(x)
        by_dim = x.aminmax(dim=1, keepdim=True)
    assert type(both).__name__ == "aminmax" and both.min is both[0] and both.max is both[1]
    _close(both.min, a.min())
    _close(both.max, a.max())
    _close(by_dim.min, a.min(1, keepdims=True))
    _close(by_dim.max, a.max(1, keepdims=True))
    assert repr(torch.aminmax(torch.tensor([1.0, 2.0]))).startswith("torch.return_types.aminmax(\nmin=tensor(1.)")
    assert torch.aminmax(torch.tensor([True, False])).max.dtype is torch.bool
    assert torch.aminmax(torch.ones(2, 3), keepdim=True).min.shape == (1, 1)


# --- index and combination builders --------------------------------------------------------------

@pytest.mark.parametrize("row, col, offset", [(3, 4, 0), (3, 4, 1), (4, 2, -1), (0, 3, 0), (3, 3, -5), (2, 5, 7)])
def test_triu_tril_indices(row, col, offset):
    assert torch.triu_indices(row, col, offset).tolist() == [list(v) for v in np.triu_indices(row, offset, col)]
    assert torch.tril_indices(row, col, offset).tolist() == [list(v) for v in np.tril_indices(row, offset, col)]
    assert torch.tril_indices(row, col, offset, dtype=torch.int32).dtype is torch.int32


def test_unravel_index_wraps_like_pytorch():
    rows, cols = torch.unravel_index(torch.tensor([[5, 7], [-1, 8]]), (2, 4))
    assert rows.tolist() == [[1, 1], [1, 0]] and cols.tolist() == [[1, 3], [3, 0]]
    assert torch.unravel_index(torch.tensor(3), ()) == ()
    assert [c.item() for c in torch.unravel_index(torch.tensor(3), 4)] == [3]
    idx = np.arange(24)
    got = torch.unravel_index(torch.tensor(idx), (2, 3, 4))
    for g, e in zip(got, np.unravel_index(idx, (2, 3, 4))):
        assert g.tolist() == e.tolist()


@pytest.mark.parametrize("device", DEVICES)
def test_cartesian_prod_combinations_vander(device):
    a, b = _on(device, np.array([1, 2]), np.array([3, 4, 5]))
    with _guard(device):
        prod = torch.cartesian_prod(a, b)
        pairs = torch.combinations(b, 2)
        with_repl = torch.combinations(b, 2, with_replacement=True)
        v = torch.vander(b)
        v_inc = torch.vander(b.double(), 2, increasing=True)
    assert prod.tolist() == [list(p) for p in itertools.product([1, 2], [3, 4, 5])]
    assert pairs.tolist() == [list(p) for p in itertools.combinations([3, 4, 5], 2)]
    assert with_repl.tolist() == [list(p) for p in itertools.combinations_with_replacement([3, 4, 5], 2)]
    assert v.tolist() == np.vander([3, 4, 5]).tolist() and v.dtype is torch.int64
    assert v_inc.tolist() == np.vander([3.0, 4.0, 5.0], 2, increasing=True).tolist()
    assert torch.cartesian_prod(a).tolist() == [1, 2]
    assert torch.combinations(b, 4).shape == (0, 4) and torch.combinations(b, 0).shape == (0,)
    assert torch.combinations(b, 1).shape == (3, 1)
    assert torch.vander(torch.tensor([True])).dtype is torch.int64
    assert torch.vander(torch.tensor([1.0, 2.0]), 0).shape == (2, 0)


@pytest.mark.parametrize("device", DEVICES)
def test_isin(device):
    rng = _rng(3)
    elements = rng.integers(0, 10, (4, 5))
    tests = rng.integers(0, 10, 6)
    e, t = _on(device, elements, tests)
    with _guard(device):
        found = torch.isin(e, t)
        missing = torch.isin(e, t, invert=True)
    assert found.dtype is torch.bool and found.cpu().numpy().tolist() == np.isin(elements, tests).tolist()
    assert missing.cpu().numpy().tolist() == np.isin(elements, tests, invert=True).tolist()
    assert torch.isin(torch.tensor([1, 2, 3]), torch.tensor([2.5, 3.0])).tolist() == [False, False, True]
    assert torch.isin(torch.tensor([1.0, NAN]), torch.tensor([NAN, 1.0])).tolist() == [True, False]
    assert torch.isin(3, torch.arange(5)).item() is True
    assert torch.isin(torch.arange(4), 2).tolist() == [False, False, True, False]
    assert torch.isin(torch.arange(3), torch.tensor([], dtype=torch.int64)).tolist() == [False] * 3


@pytest.mark.parametrize("call, error, message", [
    (lambda: torch.triu_indices(3, 3, dtype=torch.float32), NotImplementedError,
     "\"triu_indices\" not implemented for 'Float'"),
    (lambda: torch.tril_indices(-1, 3), RuntimeError, "row must be non-negative, got-1"),
    (lambda: torch.unravel_index(torch.tensor(1.0), (2, 4)), TypeError,
     "expected 'indices' to be integer dtype, but got torch.float32"),
    (lambda: torch.unravel_index(torch.tensor(3), (2, -4)), ValueError,
     "'shape' cannot have negative values, but got (2, -4)"),
    (lambda: torch.combinations(torch.ones(2, 3)), RuntimeError, "Expect a 1D vector, but got shape [2, 3]"),
    (lambda: torch.combinations(torch.ones(3), -1), RuntimeError, "Expect a non-negative number, but got -1"),
    (lambda: torch.vander(torch.ones(2, 2)), RuntimeError, "x must be a one-dimensional tensor."),
    (lambda: torch.vander(torch.ones(2), -1), RuntimeError, "N must be non-negative."),
    (lambda: torch.cartesian_prod(torch.ones(2, 2)), RuntimeError, "Expect a 1D vector, but got shape [2, 2]"),
    (lambda: torch.isin(torch.tensor([True]), torch.tensor([1])), RuntimeError,
     "Unsupported input type encountered for isin(): Bool"),
])
def test_builder_errors(call, error, message):
    with pytest.raises(error) as info:
        call()
    assert str(info.value) == message


# --- cov, corrcoef, cdist, histograms ------------------------------------------------------------

@pytest.mark.parametrize("device", DEVICES)
def test_cov_corrcoef(device):
    rng = _rng(4)
    a = rng.standard_normal((3, 6))
    fw, aw = rng.integers(0, 3, 6), rng.random(6)
    x, f, w = _on(device, a, fw, aw)
    with _guard(device):
        plain = torch.cov(x)
        weighted = [torch.cov(x, correction=c, fweights=f, aweights=w) for c in (0, 1, 2)]
        corr = x.corrcoef()
    _close(plain, np.cov(a), rtol=1e-12)
    for c, got in zip((0, 1, 2), weighted):
        _close(got, np.cov(a, ddof=c, fweights=fw, aweights=aw), rtol=1e-12)
    _close(corr, np.corrcoef(a), rtol=1e-12)
    assert torch.cov(torch.arange(6).reshape(2, 3)).dtype is torch.float32
    _close(torch.cov(torch.tensor([1.0, 2.0])), 0.5)
    with pytest.warns(UserWarning, match="degrees of freedom is <= 0"):
        assert math.isnan(torch.cov(torch.tensor([1.0])).item())


@pytest.mark.parametrize("call, message", [
    (lambda: torch.cov(torch.ones(2, 2, 2)),
     "cov(): expected input to have two or fewer dimensions but got an input with 3 dimensions"),
    (lambda: torch.cov(torch.ones(2, 5), fweights=torch.ones(5)),
     "cov(): expected fweights to have integral dtype but got fweights with Float dtype"),
    (lambda: torch.cov(torch.ones(2, 5), fweights=torch.tensor([1, -2, 1, 1, 1])),
     "cov(): fweights cannot be negative"),
    (lambda: torch.cdist(torch.ones(2, 3), torch.ones(4, 2)),
     "X1 and X2 must have the same number of columns. X1: 3 X2: 2"),
    (lambda: torch.cdist(torch.ones(3), torch.ones(4, 3)), "cdist only supports at least 2D tensors, X1 got: 1D"),
    (lambda: torch.cdist(torch.ones(2, 3), torch.ones(4, 3), p=-1), "cdist only supports non-negative p values"),
    (lambda: torch.cdist(torch.ones(2, 3, dtype=torch.int64), torch.ones(4, 3, dtype=torch.int64)),
     "cdist only supports floating-point dtypes, X1 got: Long"),
])
def test_statistics_errors(call, message):
    with pytest.raises(RuntimeError) as info:
        call()
    assert str(info.value) == message


def _ref_cdist(a, b, p):
    d = np.abs(a[..., :, None, :] - b[..., None, :, :])
    if p == 0:
        return (d != 0).sum(-1).astype(a.dtype)
    if math.isinf(p):
        return d.max(-1)
    return (d ** p).sum(-1) ** (1 / p)


@pytest.mark.parametrize("p", [0, 1, 2, 3, 0.5, math.inf])
@pytest.mark.parametrize("mode", ["use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist",
                                  "donot_use_mm_for_euclid_dist"])
def test_cdist(p, mode):
    rng = _rng(5)
    a, b = rng.standard_normal((2, 4, 3)), rng.standard_normal((30, 3))
    _close(torch.cdist(torch.tensor(a), torch.tensor(b), p=p, compute_mode=mode), _ref_cdist(a, b, p), rtol=1e-10)


@pytest.mark.parametrize("device", DEVICES)
def test_cdist_on_each_device(device):
    a, b = _rng(6).standard_normal((3, 2)), _rng(7).standard_normal((2, 4, 2))
    x, y = _on(device, a, b)
    with _guard(device):
        by_mm = torch.cdist(x, x, compute_mode="use_mm_for_euclid_dist")
        direct = torch.cdist(x, y, p=1)
    _close(by_mm, _ref_cdist(a, a, 2), atol=1e-6)  # |a|^2 - 2ab + |b|^2 rounds, as PyTorch's
    _close(direct, _ref_cdist(a, b, 1), rtol=1e-12)


@pytest.mark.parametrize("device", DEVICES)
def test_histogram(device):
    v = _rng(7).standard_normal(100)
    x, = _on(device, v)
    with _guard(device):
        hist, edges = torch.histogram(x, 7)
        ranged = x.histogram(4, range=(-1.0, 1.0), weight=x.abs(), density=True)
    h, e = np.histogram(v, 7)
    _close(hist, h)
    _close(edges, e, rtol=1e-12)
    h, e = np.histogram(v, 4, range=(-1, 1), weights=np.abs(v), density=True)
    _close(ranged.hist, h, rtol=1e-12)
    _close(ranged.bin_edges, e, rtol=1e-12)
    by_edges = torch.histogram(torch.tensor([1.0, 2.0, 1.0]), torch.tensor([0.0, 1.0, 2.0, 3.0]),
                               weight=torch.tensor([1.0, 2.0, 4.0]))
    assert by_edges.hist.tolist() == [0.0, 5.0, 2.0]
    assert type(by_edges).__name__ == "histogram"
    with pytest.raises(NotImplementedError, match="\"histogramdd\" not implemented for 'Long'"):
        torch.histogram(torch.tensor([1, 2]))


@pytest.mark.parametrize("device", DEVICES)
def test_histogramdd(device):
    pts = _rng(8).standard_normal((50, 3))
    x, = _on(device, pts)
    with _guard(device):
        hist, edges = torch.histogramdd(x, bins=[3, 4, 2])
        dense = torch.histogramdd(x, bins=2, range=[-1.0, 1.0] * 3, density=True)
    h, e = np.histogramdd(pts, bins=[3, 4, 2])
    _close(hist, h)
    for got, want in zip(edges, e):
        _close(got, want, rtol=1e-12)
    h, _ = np.histogramdd(pts, bins=2, range=[(-1, 1)] * 3, density=True)
    _close(dense.hist, h, rtol=1e-12)


# --- splits, ravel, in-place shape ops ----------------------------------------------------------

def test_hsplit_vsplit_dsplit_ravel():
    a = np.arange(24).reshape(2, 4, 3)
    x = torch.tensor(a)
    for ours, numpy_fn, sections in [(torch.hsplit, np.hsplit, 2), (torch.vsplit, np.vsplit, [1]),
                                     (torch.dsplit, np.dsplit, 3), (torch.hsplit, np.hsplit, [1, 3])]:
        got = ours(x, sections)
        want = numpy_fn(a, sections)
        assert [g.tolist() for g in got] == [w.tolist() for w in want]
    assert [p.tolist() for p in torch.hsplit(torch.arange(3), [1])] == [[0], [1, 2]]
    assert x.hsplit(2)[0]._storage is x._storage  # views
    t = x.transpose(0, 2)
    assert t.ravel().tolist() == a.transpose(2, 1, 0).ravel().tolist()
    assert x.ravel()._storage is x._storage


@pytest.mark.parametrize("call, message", [
    (lambda: torch.vsplit(torch.ones(3), 1),
     "torch.vsplit requires a tensor with at least 2 dimension, but got a tensor with 1 dimensions!"),
    (lambda: torch.dsplit(torch.ones(2, 2), 2),
     "torch.dsplit requires a tensor with at least 3 dimension, but got a tensor with 2 dimensions!"),
    (lambda: torch.hsplit(torch.tensor(1.0), 1),
     "torch.hsplit requires a tensor with at least 1 dimension, but got a tensor with 0 dimensions!"),
    (lambda: torch.hsplit(torch.ones(3, 4), 3), "torch.hsplit attempted to split along dimension 1, but the size "
     "of the dimension 4 is not divisible by the split_size 3!"),
    (lambda: torch.hsplit(torch.ones(4, 2), -1), "number of sections must be larger than 0, got -1"),
    (lambda: torch.ones(3, 2, 2).t_(), "t_() expects a tensor with <= 2 dimensions, but self is 3D"),
    (lambda: torch.ones(2, requires_grad=True).resize_(3), "cannot resize variables that require grad"),
    (lambda: torch.ones(2).float_power_(2),
     "the base given to float_power_ has dtype Float but the operation's result requires dtype Double"),
    (lambda: torch.ones(2, dtype=torch.int64).xlogy_(2.0),
     "result type Float can't be cast to the desired output type Long"),
])
def test_shape_and_inplace_errors(call, message):
    with pytest.raises(RuntimeError) as info:
        call()
    assert str(info.value) == message


@pytest.mark.parametrize("device", DEVICES)
def test_inplace_shape_ops_change_the_tensor_not_its_storage(device):
    a = np.arange(6.0).reshape(2, 3)
    x, = _on(device, a)
    other = x.view(6)
    with _guard(device):
        assert x.unsqueeze_(0) is x and x.shape == (1, 2, 3)
        assert x.squeeze_().shape == (2, 3)
        x.unsqueeze_(-1).squeeze_(-1)
        x.t_()
    assert x.cpu().numpy().tolist() == a.T.tolist() and x.stride() == (1, 3)
    assert x.transpose_(0, 1).shape == (2, 3) and x.swapdims_(0, 1).shape == (3, 2)
    assert x.swapaxes_(1, 0).shape == (2, 3)
    x.as_strided_((3, 2), (1, 3))
    assert x.cpu().numpy().tolist() == a.T.tolist()
    x.mul_(2)  # still the same storage
    assert other.cpu().numpy().tolist() == (2 * a).ravel().tolist()


def test_resize_():
    x = torch.arange(6)
    assert x.resize_(2, 2) is x and x.tolist() == [[0, 1], [2, 3]] and x.is_contiguous()
    x.resize_(6)
    assert x.tolist() == list(range(6))  # shrinking kept the storage's elements
    y = torch.arange(3.0)
    y.resize_(2, 3)
    assert y.shape == (2, 3) and y[0].tolist() == [0.0, 1.0, 2.0]
    assert torch.ones(0).resize_(0).shape == (0,)


def test_float_power_and_xlogy_inplace():
    x = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64)
    assert x.float_power_(2) is x and x.tolist() == [1.0, 4.0, 9.0]
    y = torch.tensor([0.0, 2.0, 3.0])
    y.xlogy_(torch.tensor([0.0, math.e, 1.0]))
    _close(y, [0.0, 2.0, 0.0], atol=1e-6)
    assert torch.float_power(2, torch.tensor([2.0, 3.0])).tolist() == [4.0, 8.0]


# --- sparse products -------------------------------------------------------------------------------

@pytest.mark.parametrize("device", DEVICES)
def test_sparse_products_with_dense_operands(device):
    rng = _rng(9)
    dense_s = np.where(rng.random((4, 5)) < 0.4, rng.standard_normal((4, 5)), 0.0)
    s = torch.tensor(dense_s, device=device).to_sparse()
    right, left = rng.standard_normal((5, 3)), rng.standard_normal((2, 4))
    vec5, vec4 = rng.standard_normal(5), rng.standard_normal(4)
    r, lt, v5, v4 = _on(device, right, left, vec5, vec4)
    batched = torch.tensor(rng.standard_normal((2, 3, 4)), device=device)
    with _guard(device):
        results = {
            "s @ d": s @ r, "mm": torch.mm(s, r), "matmul": torch.matmul(s, r), "s.mm": s.mm(r),
            "spmm": torch.spmm(s, r), "d @ s": lt @ s, "mm(d, s)": torch.mm(lt, s), "d.mm(s)": lt.mm(s),
            "spmm(d, s)": torch.spmm(lt, s), "s @ v": s @ v5, "v @ s": v4 @ s, "batched @ s": batched @ s,
            "sparse.mm(d, s)": torch.sparse.mm(lt, s),
        }
    s_right, left_s = dense_s @ right, left @ dense_s
    expected = {
        "s @ d": s_right, "mm": s_right, "matmul": s_right, "s.mm": s_right, "spmm": s_right,
        "d @ s": left_s, "mm(d, s)": left_s, "d.mm(s)": left_s, "spmm(d, s)": left_s, "sparse.mm(d, s)": left_s,
        "s @ v": dense_s @ vec5, "v @ s": vec4 @ dense_s, "batched @ s": batched.cpu().numpy() @ dense_s,
    }
    for name, got in results.items():
        assert not got.is_sparse, name
        _close(got, expected[name], rtol=1e-12, atol=1e-12, err_msg=name)
    product = s @ s.t()
    assert product.is_sparse
    _close(product.to_dense(), dense_s @ dense_s.T, rtol=1e-12, atol=1e-12)


def test_sparse_product_errors_are_pytorchs():
    s = torch.sparse_coo_tensor([[0, 1, 1], [2, 0, 2]], [3.0, 4.0, 5.0], (2, 3))
    with pytest.raises(RuntimeError, match=r"addmm: Argument #3 \(dense\): Expected dim 0 size 3, got 4"):
        torch.mm(s, torch.ones(4, 2))
    with pytest.raises(RuntimeError, match=r"addmm: Argument #3 \(dense\): Expected dim 0 size 2, got 3"):
        torch.ones(4, 3) @ s


# --- the docstrings' examples -----------------------------------------------------------------------

def test_docstring_examples_run():
    import doctest

    from ember_tensor._ops import combinatorics, quantiles, statistics, view_splits, views, views_inplace
    from ember_tensor._ops.elementwise import logs_powers
    import ember_tensor.sparse as sparse_module

    functions = [getattr(m, name) for m in (logs_powers, quantiles, statistics, combinatorics, views_inplace)
                 for name in m.__all__]
    functions += [views.ravel, view_splits.hsplit, torch.nansum, torch.nanmean, torch.aminmax,
                  sparse_module.matmul_with_sparse, sparse_module.spmm]
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    parser = doctest.DocTestParser()
    # `float` and `int` must stay Python's: vars(torch) would shadow them with dtypes.
    namespace = {"torch": torch, "tensor": torch.tensor, "nansum": torch.nansum, "nanmean": torch.nanmean,
                 "aminmax": torch.aminmax}
    for fn in functions:
        test = parser.get_doctest(fn.__doc__ or "", dict(namespace), fn.__name__, None, 0)
        runner.run(test)
    assert runner.summarize(verbose=False).failed == 0
