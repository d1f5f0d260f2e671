"""Issue 21's second batch of cheap names against NumPy and PyTorch's literal results:
select/slice/diagonal_scatter, Tensor.sum_to_size, heaviside, trapezoid/trapz/
cumulative_trapezoid, torch.fill/fill_/zero_, linalg.tensorinv/tensorsolve.

Each is a composition of device ops, so each runs on CUDA too (Numba's simulator where
there is no GPU), equal to the CPU.
"""
import warnings

import numpy as np
import pytest

import ember_tensor as torch
from cuda_guard import DEVICES, device_only

NAN = float("nan")


def _close(actual, expected, **kw):
    np.testing.assert_allclose(actual.cpu().numpy(), expected, equal_nan=True, **kw)


def _guard(device):
    return device_only(allow_scalar_reads=True) if device == "cuda" else warnings.catch_warnings()


# --- select_scatter, slice_scatter, diagonal_scatter ---------------------------------------------

def _scatter_cases():
    base = np.arange(24.0).reshape(2, 3, 4)

    def select(a, s):
        a[:, 1] = s
        return a

    def sliced(a, s):
        a[..., 1::2] = s
        return a

    def diag(a, s):
        for b in range(2):
            for i in range(3):
                a[b, i, i + 1] = s[b, i]
        return a

    return [
        ("select", lambda x, s: torch.select_scatter(x, s, 1, -2), (2, 4), select),
        ("slice", lambda x, s: torch.slice_scatter(x, s, -1, 1, None, 2), (2, 3, 2), sliced),
        ("diagonal", lambda x, s: torch.diagonal_scatter(x, s, 1, 1, 2), (2, 3), diag),
        ("method", lambda x, s: x.select_scatter(s, 1, 1), (2, 4), select),
    ], base


@pytest.mark.parametrize("device", DEVICES)
def test_view_scatters_write_src_into_a_copy(device):
    cases, base = _scatter_cases()
    for name, fn, src_shape, reference in cases:
        src = -np.arange(np.prod(src_shape), dtype=float).reshape(src_shape) - 1
        x = torch.tensor(base, device=device).transpose(0, 1).transpose(0, 1)  # non-contiguous route
        with _guard(device):
            got = fn(x, torch.tensor(src, device=device))
        _close(got, reference(base.copy(), src), err_msg=name)
        _close(x, base, err_msg=name)  # input untouched


def test_view_scatters_cast_src_and_check_its_shape():
    x = torch.zeros(3, 4)
    assert torch.select_scatter(x, torch.ones(4, dtype=torch.int64), 0, 0).dtype == torch.float32
    assert torch.select_scatter(x.long(), torch.ones(4), 0, 0).dtype == torch.int64
    with pytest.raises(RuntimeError, match=r"expected src to have a size equal to the slice of self. "
                                           r"src size = \[3\], slice size = \[4\]"):
        torch.select_scatter(x, torch.ones(3), 0, 0)
    with pytest.raises(RuntimeError, match=r"src size = \[2, 4\], slice size = \[3, 4\]"):
        torch.slice_scatter(x, torch.ones(2, 4), 0, 0, 3)
    with pytest.raises(RuntimeError, match=r"src size = \[4\], slice size = \[3\]"):
        torch.diagonal_scatter(x, torch.ones(4))
    with pytest.raises(IndexError, match=r"select\(\): index 5 out of range for tensor of size \[3, 4\] at dimension 0"):
        torch.select_scatter(x, torch.ones(4), 0, 5)
    with pytest.raises(IndexError, match="select\\(\\) cannot be applied to a 0-dim tensor."):
        torch.select_scatter(torch.tensor(1.0), torch.tensor(2.0), 0, 0)
    with pytest.raises(RuntimeError, match="slice step must be positive"):
        torch.slice_scatter(x, torch.ones(3, 2), 1, 0, None, 0)
    with pytest.raises(RuntimeError, match="diagonal dimensions cannot be identical 1, 1"):
        torch.diagonal_scatter(x, torch.ones(3), 0, 1, 1)


# --- sum_to_size -----------------------------------------------------------------------------------

@pytest.mark.parametrize("device", DEVICES)
def test_sum_to_size_inverts_expand(device):
    a = np.arange(24).reshape(2, 3, 4)
    x = torch.tensor(a, device=device)
    cases = [((1, 4), a.sum((0, 1)).reshape(1, 4)), ((3, 1), a.sum((0, 2)).reshape(3, 1)),
             (torch.Size([2, 1, 4]), a.sum(1, keepdims=True)), ((4,), a.sum((0, 1))), ((), a.sum())]
    with _guard(device):
        results = [x.sum_to_size(*size) if isinstance(size, tuple) else x.sum_to_size(size) for size, _ in cases]
    for got, (size, expected) in zip(results, cases):
        assert got.dtype == torch.int64
        _close(got, expected, err_msg=str(size))
    assert x.sum_to_size(2, 3, 4) is x
    assert torch.tensor([True, False]).sum_to_size(1).tolist() == [1]


def test_sum_to_size_errors_are_pytorchs():
    x = torch.zeros(3, 4)
    with pytest.raises(RuntimeError, match=r"size \{\[2, 4\]\} is not expandable to size \{\[3, 4\]\}."):
        x.sum_to_size(2, 4)
    with pytest.raises(RuntimeError, match=r"size \{\[5, 3, 4\]\} is not expandable to size \{\[3, 4\]\}."):
        x.sum_to_size((5, 3, 4))
    assert not hasattr(torch, "sum_to_size")  # a Tensor method only, as in PyTorch


# --- heaviside -------------------------------------------------------------------------------------

@pytest.mark.parametrize("device", DEVICES)
def test_heaviside(device):
    a = np.array([[-2.0, 0.0, 3.0, NAN], [0.0, -0.0, 1e-30, -1e-30]])
    values = np.array([0.5, 7.0, -1.0, 2.0])
    x, v = torch.tensor(a, device=device), torch.tensor(values, device=device)
    with _guard(device):
        got = torch.heaviside(x, v)
        ints = torch.heaviside(torch.tensor([1, 0, 255], dtype=torch.uint8, device=device),
                               torch.tensor([7], dtype=torch.uint8, device=device))
        y = x.clone()
        y.heaviside_(v)
    _close(got, np.heaviside(np.nan_to_num(a, nan=-1.0), values))  # NaN counts as negative, as PyTorch
    _close(y, got.cpu().numpy())
    assert ints.dtype == torch.uint8 and ints.tolist() == [1, 7, 1]


def test_heaviside_errors_are_pytorchs():
    with pytest.raises(RuntimeError, match="heaviside is not yet implemented for tensors with different dtypes."):
        torch.heaviside(torch.tensor([1, 0]), torch.tensor(0.5))
    with pytest.raises(TypeError, match="heaviside\\(\\): argument 'values' \\(position 2\\) must be Tensor, not float"):
        torch.heaviside(torch.tensor([1.0]), 0.5)
    assert not hasattr(torch, "heaviside_")  # a Tensor method only, as in PyTorch


# --- trapezoid, trapz, cumulative_trapezoid --------------------------------------------------------

def _cumulative_trapezoid(y, x=None, dx=1.0, axis=-1):
    y = np.moveaxis(y, axis, -1)
    steps = dx if x is None else np.diff(np.moveaxis(x, axis, -1) if np.ndim(x) > 1 else x)
    return np.moveaxis(np.cumsum(steps * (y[..., 1:] + y[..., :-1]) / 2, -1), -1, axis)


@pytest.mark.parametrize("device", DEVICES)
def test_trapezoid_matches_numpy(device):
    rng = np.random.default_rng(0)
    y, x1, x2 = rng.standard_normal((3, 5)), np.sort(rng.standard_normal(5)), np.sort(rng.standard_normal((3, 5)), 1)
    ty, tx1, tx2 = (torch.tensor(a, device=device) for a in (y, x1, x2))
    with _guard(device):
        pairs = [
            (torch.trapezoid(ty), np.trapezoid(y)),
            (torch.trapezoid(ty, dx=0.5, dim=0), np.trapezoid(y, dx=0.5, axis=0)),
            (torch.trapezoid(ty, tx1), np.trapezoid(y, x1)),
            (torch.trapezoid(ty, tx2), np.trapezoid(y, x2)),
            (torch.trapz(ty, tx1), np.trapezoid(y, x1)),
            (torch.trapz(ty, dx=2.0), np.trapezoid(y, dx=2.0)),
            (torch.cumulative_trapezoid(ty), _cumulative_trapezoid(y)),
            (torch.cumulative_trapezoid(ty, dx=0.5, dim=0), _cumulative_trapezoid(y, dx=0.5, axis=0)),
            (torch.cumulative_trapezoid(ty, tx1), _cumulative_trapezoid(y, x1)),
            (torch.cumulative_trapezoid(ty, tx2), _cumulative_trapezoid(y, x2)),
        ]
    for i, (got, expected) in enumerate(pairs):
        _close(got, expected, rtol=1e-12, err_msg=str(i))


def test_trapezoid_dtypes_and_edges_are_pytorchs():
    # literal results of PyTorch 2.13
    assert torch.trapezoid(torch.arange(5)).dtype == torch.float32
    assert torch.trapezoid(torch.arange(5)).item() == 8.0
    assert torch.trapezoid(torch.arange(5), dx=2).item() == 16.0
    assert torch.trapezoid(torch.arange(5), torch.arange(5)).dtype == torch.float32
    assert torch.cumulative_trapezoid(torch.arange(5)).tolist() == [0.5, 2.0, 4.5, 8.0]
    assert torch.trapezoid(torch.ones(3, 0)).tolist() == [0.0, 0.0, 0.0]
    assert torch.trapezoid(torch.ones(3, 1)).tolist() == [0.0, 0.0, 0.0]
    assert tuple(torch.cumulative_trapezoid(torch.ones(3, 0)).shape) == (3, 0)
    assert tuple(torch.cumulative_trapezoid(torch.ones(3, 1)).shape) == (3, 0)
    with pytest.raises(RuntimeError, match="trapezoid: There must be one `x` value for each sample point"):
        torch.trapezoid(torch.ones(3, 5), torch.arange(4.0))
    with pytest.raises(RuntimeError, match="trapezoid: received a bool input for `y`, but bool is not supported"):
        torch.trapezoid(torch.tensor([True, True]))
    with pytest.raises(RuntimeError, match="cumulative_trapezoid: received a bool input for `y`"):
        torch.cumulative_trapezoid(torch.tensor([True, True]))
    with pytest.raises(IndexError, match="Dimension specified as -1 but tensor has no dimensions"):
        torch.trapezoid(torch.tensor(1.0))
    with pytest.raises(TypeError, match="invalid combination of arguments"):
        torch.trapezoid(torch.ones(5), torch.ones(5), dx=1)


# --- fill, fill_, zero_ ----------------------------------------------------------------------------

@pytest.mark.parametrize("device", DEVICES)
def test_fill_and_zero_at_the_top_level(device):
    x = torch.zeros(2, 3, dtype=torch.int64, device=device)
    with _guard(device):
        filled = torch.fill(x, 2.7)
        from_tensor = torch.fill(x.float(), torch.tensor(3.0))
        assert torch.fill_(x, 5) is x
    assert filled.tolist() == [[2] * 3] * 2  # cast as PyTorch casts
    assert from_tensor.tolist() == [[3.0] * 3] * 2
    assert x.tolist() == [[5] * 3] * 2
    with _guard(device):
        assert torch.zero_(x) is x
    assert x.tolist() == [[0] * 3] * 2
    with pytest.raises(RuntimeError, match="fill_ only supports 0-dimension value tensor but got tensor with 1 dimensions."):
        torch.fill(torch.zeros(2), torch.ones(2))
    assert not hasattr(torch.Tensor, "fill")  # torch.fill is not a method, as in PyTorch


# --- linalg.tensorinv, linalg.tensorsolve ----------------------------------------------------------

@pytest.mark.parametrize("device", DEVICES)
def test_tensorinv_tensorsolve_match_numpy(device):
    rng = np.random.default_rng(3)
    a, a_first, b = rng.standard_normal((2, 3, 6)), rng.standard_normal((6, 2, 3)), rng.standard_normal((2, 3))
    ta, ta_first, tb = (torch.tensor(m, device=device) for m in (a, a_first, b))
    with _guard(device):
        results = [torch.linalg.tensorinv(ta_first, ind=1), torch.linalg.tensorinv(ta.reshape(6, 6), ind=1),
                   torch.linalg.tensorsolve(ta, tb), torch.linalg.tensorsolve(ta_first, tb, dims=(0,))]
    expected = [np.linalg.tensorinv(a_first, ind=1), np.linalg.tensorinv(a.reshape(6, 6), ind=1),
                np.linalg.tensorsolve(a, b), np.linalg.tensorsolve(a_first, b, axes=(0,))]
    for i, (got, want) in enumerate(zip(results, expected)):
        _close(got, want, rtol=1e-9, atol=1e-12, err_msg=str(i))


def test_tensorinv_tensorsolve_errors_are_pytorchs():
    with pytest.raises(RuntimeError, match=r"requirement prod\(self.shape\[ind:\]\) == prod\(self.shape\[:ind\]\), "
                                           r"but got 4 != 6"):
        torch.linalg.tensorinv(torch.ones(2, 3, 4))
    with pytest.raises(RuntimeError, match="Expected a strictly positive integer for 'ind', but got 0"):
        torch.linalg.tensorinv(torch.ones(4, 4), ind=0)
    with pytest.raises(RuntimeError, match=r"prod\(self.shape\[other.ndim:\]\) == prod\(self.shape\[:other.ndim\]\), "
                                           r"but got 5 != 6"):
        torch.linalg.tensorsolve(torch.ones(2, 3, 5), torch.ones(2, 3))


# --- to_sparse_coo ---------------------------------------------------------------------------------

@pytest.mark.parametrize("device", DEVICES)
def test_to_sparse_coo_is_to_sparse(device):
    dense = torch.tensor([[0.0, 2.0, 0.0], [3.0, 0.0, 4.0]], device=device)
    s = dense.to_sparse_coo()
    assert s.is_sparse and s.layout == torch.sparse_coo and s._nnz() == 3
    assert s.to_sparse_coo() is s
    assert s.to_dense().tolist() == dense.tolist()


# --- index_reduce ----------------------------------------------------------------------------------

def _index_reduce_reference(base, dim, index, source, reduce, include_self):
    out = np.moveaxis(base.astype(float).copy(), dim, 0)
    src = np.moveaxis(source, dim, 0)
    fn = {"prod": np.prod, "mean": np.mean, "amax": np.max, "amin": np.min}[reduce]
    for row in set(index.tolist()):
        picked = [src[i] for i in range(len(index)) if index[i] == row]
        stack = ([out[row]] if include_self else []) + picked
        out[row] = fn(np.stack(stack), axis=0)
    return np.moveaxis(out, 0, dim)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("reduce", ["prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_index_reduce_matches_numpy(device, reduce, include_self):
    rng = np.random.default_rng(5)
    base, source = rng.standard_normal((4, 3)), rng.standard_normal((4, 5))
    index = np.array([2, 0, 2, 2, 0])
    x, src, idx = torch.tensor(base, device=device), torch.tensor(source, device=device), torch.tensor(index, device=device)
    with _guard(device):
        got = torch.index_reduce(x, -1, idx, src, reduce, include_self=include_self)
        in_place = x.t().contiguous().index_reduce_(0, idx, src.t(), reduce, include_self=include_self)
    expected = _index_reduce_reference(base, 1, index, source, reduce, include_self)
    _close(got, expected, rtol=1e-12)
    _close(in_place.t(), expected, rtol=1e-12)
    _close(x, base)  # the out-of-place form leaves its input alone


def test_index_reduce_dtypes_and_errors_are_pytorchs():
    x, src, idx = torch.ones(3, 4), torch.arange(8.0).reshape(2, 4), torch.tensor([0, 2])
    # literal result of PyTorch 2.13: integer mean rounds down
    assert torch.tensor([1, 2, 3]).index_reduce(0, torch.tensor([0, 0]), torch.tensor([4, 5]), "mean").tolist() == [3, 2, 3]
    with pytest.raises(RuntimeError, match="Expected reduce to be one of prod, mean, amax or amin but got sum."):
        x.index_reduce(0, idx, src, "sum")
    with pytest.raises(RuntimeError, match=r"Number of indices \(3\) should be equal to source.size\(dim\): \(2\)"):
        x.index_reduce(0, torch.tensor([0, 2, 1]), src, "mean")
    with pytest.raises(RuntimeError, match=r"index_reduce_\(\): Expected dtype int32/int64 for index"):
        x.index_reduce(0, idx.float(), src, "mean")
    with pytest.raises(IndexError, match="index out of range in self"):
        x.index_reduce(0, torch.tensor([0, 5]), src, "mean")
    with pytest.raises(RuntimeError, match=r"self \(Float\) and source \(Double\) must have the same scalar type"):
        x.index_reduce(0, idx, src.double(), "mean")
    with pytest.raises(RuntimeError, match=r"excluding the specified dimension. Got self.shape = \[3, 4\] "
                                           r"source.shape = \[2, 3\]"):
        x.index_reduce(0, idx, torch.ones(2, 3), "mean")
    with pytest.raises(IndexError, match=r"Index is supposed to be a vector, but got dim: 2 with type: Long "
                                         r"and size: \[1, 2\]"):
        x.index_reduce(0, torch.tensor([[0, 2]]), src, "mean")


# --- top-level spellings: detach_, get_device, split_with_sizes, typename ---------------------------

def test_top_level_spellings_of_methods():
    x = torch.arange(5.0)
    assert torch.detach_(x) is x and torch.get_device(x) == -1
    assert [t.tolist() for t in torch.split_with_sizes(x, [2, 3])] == [[0.0, 1.0], [2.0, 3.0, 4.0]]
    assert [t.tolist() for t in x.split_with_sizes([1, 4], dim=0)] == [[0.0], [1.0, 2.0, 3.0, 4.0]]
    with pytest.raises(RuntimeError, match=r"split_with_sizes expects split_sizes to sum exactly to 5 \(input tensor's "
                                           r"size at dimension 0\), but got split_sizes=\[2, 2\]"):
        torch.split_with_sizes(x, [2, 2])
    with pytest.raises(RuntimeError, match=r"only non-negative entries, but got split_sizes=\[2, -1, 4\]"):
        torch.split_with_sizes(x, [2, -1, 4])
    with pytest.raises(TypeError, match="must be tuple of ints, not int"):
        torch.split_with_sizes(x, 2)
    assert torch.typename(x) == "torch.FloatTensor" and torch.typename(x.bool()) == "torch.BoolTensor"
    assert torch.typename(3) == "int" and torch.typename(torch.Size) == "ember_tensor._size.Size"
    assert not hasattr(torch.Tensor, "typename")


# --- rsub, ldexp, sinc -----------------------------------------------------------------------------

@pytest.mark.parametrize("device", DEVICES)
def test_rsub_ldexp_sinc_match_numpy(device):
    a = np.array([[0.0, 0.5, -1.5], [2.0, 1e-3, -3.0]])
    e = np.array([[3, -1, 0], [2, 5, -4]])
    x, k = torch.tensor(a, device=device), torch.tensor(e, device=device)
    with _guard(device):
        results = [torch.rsub(x, 2.0, alpha=3), torch.rsub(x, x.t().t() * 2), torch.ldexp(x, k), torch.sinc(x),
                   x.clone().sinc_(), x.clone().ldexp_(k)]
    expected = [2.0 - 3 * a, a, np.ldexp(a, e), np.sinc(a), np.sinc(a), np.ldexp(a, e)]
    for i, (got, want) in enumerate(zip(results, expected)):
        _close(got, want, rtol=1e-12, atol=1e-15, err_msg=str(i))


def test_rsub_ldexp_sinc_dtypes_are_pytorchs():
    # literal results of PyTorch 2.13
    assert torch.rsub(torch.tensor([1, 2]), torch.tensor([5, 5]), alpha=2).tolist() == [3, 1]
    assert torch.rsub(torch.tensor([1, 2]), 5.5).dtype == torch.float32
    assert torch.ldexp(torch.tensor([1, 2]), torch.tensor([3, 4])).dtype == torch.float32
    assert torch.ldexp(torch.tensor([1.0], dtype=torch.float16), torch.tensor([3])).dtype == torch.float16
    assert torch.sinc(torch.tensor([0, 1])).dtype == torch.float32
    # PyTorch gives ±2.78e-08 (pi rounded to float32); ember's kernel computes in float64:
    # both are zero to float32's precision.
    np.testing.assert_allclose(torch.sinc(torch.tensor([1.0, 2.0])).numpy(), [-2.7828e-08, 2.7828e-08], atol=1e-7)
    with pytest.raises(RuntimeError, match="Subtraction, the `-` operator, with two bool tensors is not supported"):
        torch.rsub(torch.tensor([True]), torch.tensor([True]))
    with pytest.raises(TypeError, match="ldexp\\(\\): argument 'other' \\(position 2\\) must be Tensor, not int"):
        torch.ldexp(torch.tensor([1.0]), 3)
    assert not hasattr(torch.Tensor, "rsub")  # a function only, as in PyTorch


# --- the docstrings' examples ----------------------------------------------------------------------

def test_docstring_examples_run():
    import doctest

    from ember_tensor._ops import integration, view_scatters
    from ember_tensor._ops.elementwise import integer

    functions = [getattr(m, name) for m in (view_scatters, integration, integer) for name in m.__all__]
    functions += [torch.Tensor.sum_to_size, torch.Tensor.to_sparse_coo, torch.linalg.tensorinv,
                  torch.linalg.tensorsolve, torch.split_with_sizes, torch.ldexp, torch.sinc, torch.heaviside]
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    parser = doctest.DocTestParser()
    namespace = {"torch": torch, "tensor": torch.tensor}  # `float`/`int` stay Python's
    examples = 0
    for fn in functions:
        test = parser.get_doctest(fn.__doc__ or "", dict(namespace), getattr(fn, "__name__", repr(fn)), None, 0)
        examples += len(test.examples)
        runner.run(test)
    assert examples >= 15 and runner.summarize(verbose=False).failed == 0
