"""Index ops against NumPy references (tables), on contiguous, non-contiguous and 0-d
inputs, with PyTorch's errors; exact PyTorch outputs where NumPy has no counterpart.

The tests taking `device` hold the CPU to the reference (or to PyTorch, `index_cases`)
and CUDA (Numba's simulator in CI) to the CPU, computed on the device (`cuda_guard`).
Masks and nonzero are test_masked_ops.py's, gradients test_index_gradients.py's.
"""
import numpy as np
import pytest

import ember_tensor as torch
from cuda_guard import DEVICES, cpu_result
from index_cases import ADD_DTYPES, ALL_DTYPES, SIGNED, assigned, check_on, layouts, typed

X = np.arange(12.).reshape(3, 4)


def _inputs(arr):
    """The same values as a contiguous tensor and as a non-contiguous view."""
    contiguous = torch.tensor(arr)
    strided = torch.tensor(np.ascontiguousarray(arr.T)).t()
    assert not strided.is_contiguous() or arr.ndim < 2
    return [contiguous, strided]


def _np_gather(a, dim, idx):
    return np.take_along_axis(a[tuple(slice(0, n) if d != dim else slice(None) for d, n in enumerate(idx.shape))],
                              idx, axis=dim)


GATHER = [(0, np.array([[0, 2, 1, 0]])), (1, np.array([[3, 0], [1, 1], [2, 0]])), (1, np.array([[3], [0], [2]])),
          (0, np.array([[2], [1], [0], [0]])), (-1, np.array([[0, 0, 0, 3]])), (0, np.array([[2, 1, 0, 0], [0, 0, 1, 2]]))]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dim,idx", GATHER)
def test_gather(dim, idx, device):
    """gather and take_along_dim of both layouts, a 0-d input and an empty index."""
    if dim == 0 and idx.shape[0] > 3:
        idx = idx[:3]
    for x in _inputs(X):
        got = cpu_result(device, lambda t, i: torch.gather(t, dim, i), x, torch.tensor(idx))
        np.testing.assert_array_equal(got.numpy(), _np_gather(X, dim, idx))
        got = cpu_result(device, lambda t, i: torch.take_along_dim(t, i, dim), x, torch.tensor(idx))
        np.testing.assert_array_equal(got.numpy(), np.take_along_axis(X, idx, dim))
    assert cpu_result(device, lambda t, i: torch.gather(t, 0, i), torch.tensor(5.), torch.tensor(0)).item() == 5.
    empty = cpu_result(device, lambda t, i: t.gather(1, i), torch.tensor(X), torch.zeros(3, 0, dtype=torch.int64))
    assert tuple(empty.shape) == (3, 0)


def test_index_select_and_take():
    idx = np.array([2, 0, 2])
    for x in _inputs(X):
        np.testing.assert_array_equal(x.index_select(0, torch.tensor(idx)).numpy(), X[idx])
        np.testing.assert_array_equal(x.index_select(1, torch.tensor(idx, dtype=torch.int32)).numpy(), X[:, idx])
        np.testing.assert_array_equal(x.take(torch.tensor([[11, 0], [-1, 5]])).numpy(), X.reshape(-1)[[[11, 0], [-1, 5]]])
    assert torch.tensor(5.).index_select(0, torch.tensor([0])).shape == ()
    assert torch.tensor(5.).take(torch.tensor(0)).item() == 5.


def _np_scatter(a, dim, idx, src, combine):
    out = a.copy()
    for pos in np.ndindex(*idx.shape):
        target = list(pos)
        target[dim] = idx[pos]
        s = src[pos] if isinstance(src, np.ndarray) else src
        out[tuple(target)] = combine(out[tuple(target)], s)
    return out


SCATTER_COMBINE = {None: lambda a, b: b, "add": np.add, "multiply": np.multiply}


@pytest.mark.parametrize("reduce", [None, "add", "multiply"])
@pytest.mark.parametrize("dim,idx", [(0, np.array([[0, 1, 2, 0]])), (1, np.array([[3, 3], [0, 1], [2, 2]]))])
def test_scatter(reduce, dim, idx):
    src = np.arange(1., 13.).reshape(3, 4) * 10
    for x in _inputs(X):
        got = x.scatter(dim, torch.tensor(idx), torch.tensor(src), reduce=reduce)
        np.testing.assert_array_equal(got.numpy(), _np_scatter(X, dim, idx, src, SCATTER_COMBINE[reduce]))
        got = x.scatter(dim, torch.tensor(idx), 2., reduce=reduce)
        np.testing.assert_array_equal(got.numpy(), _np_scatter(X, dim, idx, 2., SCATTER_COMBINE[reduce]))


def test_scatter_add_inplace_non_contiguous():
    x = torch.tensor(np.ascontiguousarray(X.T)).t()
    idx = np.array([[0, 0, 0, 0], [2, 2, 2, 2]])
    src = np.ones((2, 4))
    x.scatter_add_(0, torch.tensor(idx), torch.tensor(src))
    np.testing.assert_array_equal(x.numpy(), _np_scatter(X, 0, idx, src, np.add))


SCATTER_REDUCE = [("sum", True, [[7, 1, 2], [3, 4, 5]]), ("sum", False, [[7, 1, 2], [3, 4, 5]]),
                  ("prod", True, [[0, 1, 2], [3, 4, 5]]), ("prod", False, [[12, 1, 2], [3, 4, 5]]),
                  ("mean", True, [[7 / 3, 1, 2], [3, 4, 5]]), ("mean", False, [[3.5, 1, 2], [3, 4, 5]]),
                  ("amax", True, [[4, 1, 2], [3, 4, 5]]), ("amin", False, [[3, 1, 2], [3, 4, 5]]),
                  ("amin", True, [[0, 1, 2], [3, 4, 5]])]


@pytest.mark.parametrize("reduce,include_self,expected", SCATTER_REDUCE)
def test_scatter_reduce_matches_pytorch(reduce, include_self, expected):
    x = torch.arange(6.).reshape(2, 3)
    got = x.scatter_reduce(1, torch.tensor([[0, 0]]), torch.tensor([[3., 4.]]), reduce, include_self=include_self)
    np.testing.assert_allclose(got.numpy(), expected)


def test_scatter_reduce_int_mean_floors():
    x = torch.arange(6).reshape(2, 3)
    got = x.scatter_reduce(1, torch.tensor([[0, 0]]), torch.tensor([[5, 8]]), reduce="mean")
    assert got.tolist() == [[4, 1, 2], [3, 4, 5]]


def test_index_add_copy_fill():
    idx = np.array([2, 0, 2])
    src = np.arange(9.).reshape(3, 3)
    for x in _inputs(X):
        ref = X.copy()
        np.add.at(ref, (slice(None), idx), 2 * src)
        np.testing.assert_array_equal(x.index_add(1, torch.tensor(idx), torch.tensor(src), alpha=2).numpy(), ref)
        ref = X.copy()
        ref[:, [1, 3]] = src[:, :2]
        np.testing.assert_array_equal(x.index_copy(1, torch.tensor([1, 3]), torch.tensor(src[:, :2])).numpy(), ref)
        ref = X.copy()
        ref[[0, 2]] = -1
        np.testing.assert_array_equal(x.index_fill(0, torch.tensor([0, 2]), -1.).numpy(), ref)
    # index_fill, take and put count negative indices from the end, like PyTorch
    assert torch.tensor(X).index_fill(1, torch.tensor([-1]), 0.)[:, 3].tolist() == [0., 0., 0.]
    assert torch.tensor(X).take(torch.tensor([-1])).tolist() == [11.]
    y = torch.zeros(4)
    y.index_add_(0, torch.tensor([1, 1, 3]), torch.tensor([1., 2., 3.]))
    assert y.tolist() == [0, 3, 0, 3]
    assert torch.tensor(1.).index_fill(0, torch.tensor(0), 7.).item() == 7.


def test_take_along_dim():
    idx = np.array([[0], [3], [1]])
    for x in _inputs(X):
        np.testing.assert_array_equal(torch.take_along_dim(x, torch.tensor(idx), 1).numpy(),
                                      np.take_along_axis(X, idx, 1))
        np.testing.assert_array_equal(x.take_along_dim(torch.tensor([[11, 0]])).numpy(), [11., 0.])
    # index broadcast against the input outside `dim`
    np.testing.assert_array_equal(torch.take_along_dim(torch.tensor(X), torch.tensor([[1, 0]]), 1).numpy(),
                                  np.take_along_axis(X, np.broadcast_to([[1, 0]], (3, 2)), 1))


def test_dtypes_move_exactly():
    for dtype in (torch.float16, torch.bfloat16, torch.int8, torch.bool):
        x = torch.tensor([[1, 0], [1, 1]]).to(dtype)
        got = x.gather(1, torch.tensor([[1, 1], [0, 1]]))
        assert got.dtype == dtype and got.tolist() == torch.tensor([[0, 0], [1, 1]]).to(dtype).tolist()
        s = torch.zeros(2, 2, dtype=dtype).scatter(1, torch.tensor([[1], [0]]), x)
        assert s.dtype == dtype and s.tolist() == torch.tensor([[0, 1], [1, 0]]).to(dtype).tolist()
    h = torch.zeros(3, dtype=torch.float16).scatter_add(0, torch.tensor([0, 0]), torch.ones(2, dtype=torch.float16))
    assert h.tolist() == [2., 0., 0.]


ERRORS = [
    (lambda x: x.gather(1, torch.tensor([[0, 1, 4]])), RuntimeError, "index 4 is out of bounds for dimension 1 with size 4"),
    (lambda x: x.gather(1, torch.tensor([[-1]])), RuntimeError, "index -1 is out of bounds for dimension 1 with size 4"),
    (lambda x: x.scatter(1, torch.tensor([[-1]]), 1.), RuntimeError, "index -1 is out of bounds for dimension 1"),
    (lambda x: x.index_select(1, torch.tensor([-1])), RuntimeError, "INDICES element is out of DATA bounds, id=-1 axis_dim=4"),
    (lambda x: x.index_add(1, torch.tensor([-1]), torch.ones(3, 1).double()), RuntimeError,
     "index -1 is out of bounds for dimension 1 with size 4"),
    (lambda x: x.gather(1, torch.tensor([0])), RuntimeError, "Index tensor must have the same number of dimensions"),
    (lambda x: x.gather(1, torch.tensor([[0.]])), RuntimeError, r"gather\(\): Expected dtype int32/int64 for index"),
    (lambda x: x.index_select(1, torch.tensor([[0]])), IndexError, "Index is supposed to be a vector"),
    (lambda x: x.index_select(1, torch.tensor([0.])), RuntimeError, "Expected dtype int32 or int64 for index"),
    (lambda x: x.take(torch.tensor([12])), IndexError, "out of range: tried to access index 12 on a tensor of 12"),
    (lambda x: x.scatter(1, torch.tensor([[4]]), 1.), RuntimeError, "index 4 is out of bounds for dimension 1"),
    (lambda x: x.scatter(1, torch.tensor([[0]]), torch.ones(1, 1).double(), reduce="sum"), RuntimeError,
     "reduce argument must be either add or multiply"),
    (lambda x: x.scatter_reduce(1, torch.tensor([[0]]), torch.ones(1, 1).double(), "add"), RuntimeError,
     "reduce argument must be either sum, prod, mean, amax or amin, got add"),
    (lambda x: x.scatter_add(1, torch.tensor([[0, 0]]), torch.ones(1, 1).double()), RuntimeError,
     r"Expected index \[1, 2\] to be no larger than self \[3, 4\] apart from dimension 1"),
    (lambda x: x.index_add(1, torch.tensor([0, 0]), torch.ones(3, 3)), RuntimeError,
     r"Number of indices \(2\) should be equal to source.size\(dim\): \(3\), for dim: 1"),
    (lambda x: x.index_copy(1, torch.tensor([0, 9]), torch.ones(3, 2)), IndexError,
     r"index_copy_\(\): index 9 is out of bounds for dimension 1 with size 4"),
    (lambda x: x.index_fill(1, torch.tensor([9]), 2.), IndexError, "index 9 is out of bounds for dimension 1"),
    (lambda x: x.masked_fill(torch.tensor([1, 0, 1, 0]), 2.), RuntimeError, "only supports boolean masks"),
    (lambda x: x.masked_fill(torch.tensor([True] * 4), torch.ones(2)), RuntimeError, "0-dimensional value tensor"),
    (lambda x: x.masked_select(torch.tensor([1, 0, 1, 0])), RuntimeError, "expected BoolTensor for mask"),
    (lambda x: x.masked_scatter(torch.tensor([True] * 4), torch.ones(3, dtype=torch.float64)), RuntimeError,
     "Number of elements of source < number of ones in mask"),
    (lambda x: x.put_(torch.tensor([1, 2]), torch.ones(1)), IndexError,
     "Expected source and index to have the same number of elements"),
]


@pytest.mark.parametrize("fn,error,message", ERRORS, ids=[m[:30] for _, _, m in ERRORS])
def test_errors(fn, error, message):
    x = torch.tensor(X)
    before = x.clone()
    with pytest.raises(error, match=message):
        fn(x)
    assert torch.equal(x, before)  # nothing written before the error


def test_matches_pytorch_on_random_cases():
    ref = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    a = rng.standard_normal((4, 5, 3))
    for dim in range(3):
        shape = list(a.shape)
        shape[dim] = 2
        i = rng.integers(0, a.shape[dim], shape)
        s = rng.standard_normal(shape)
        for reduce in ("sum", "prod", "mean", "amax", "amin"):
            for include_self in (True, False):
                want = ref.tensor(a).scatter_reduce(dim, ref.tensor(i), ref.tensor(s), reduce,
                                                    include_self=include_self)
                got = torch.tensor(a).scatter_reduce(dim, torch.tensor(i), torch.tensor(s), reduce,
                                                     include_self=include_self)
                np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12)
        np.testing.assert_array_equal(torch.tensor(a).gather(dim, torch.tensor(i)).numpy(),
                                      ref.tensor(a).gather(dim, ref.tensor(i)).numpy())


# --- every dtype, layout and path, on every device ------------------------------------------


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_gather_and_scatter_move_every_dtype(dtype, device):
    """gather, scatter of a tensor and of a number, and a flat take_along_dim keep every dtype's values."""
    idx, row = torch.tensor([[0, 1, 2, 0], [2, 2, 0, 1]]), torch.tensor([[0, 1, 2, 0]])
    for x in layouts(SIGNED, dtype):
        check_on(device, lambda t, i: t.gather(0, i), x, idx)
        check_on(device, lambda t, i, s: t.scatter(0, i, s), x, row, typed(SIGNED * 2, dtype))
        check_on(device, lambda t, i: t.scatter(1, i, 1), x, torch.tensor([[3], [0], [1]]))
    check_on(device, lambda t, i: t.take_along_dim(i), typed(SIGNED, dtype), torch.tensor([11, 0, 3]))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.int64, torch.int32, torch.int8],
                         ids=str)
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce_every_reduction(include_self, dtype, device):
    """scatter_reduce with each reduction along both dims of both layouts (repeated targets)."""
    idx = torch.tensor([[0, 1, 0, 2], [0, 0, 2, 2], [1, 1, 1, 1]])
    src = typed(np.arange(1, 13).reshape(3, 4) % 5 + 1, dtype)
    for reduce in ("sum", "prod", "mean", "amax", "amin"):
        for x in layouts(SIGNED, dtype):
            for dim in (0, 1):
                check_on(device, lambda t, i, s: t.scatter_reduce(dim, i, s, reduce, include_self=include_self),
                         x, idx, src, what=f"{reduce}, dim {dim}")


@pytest.mark.parametrize("device", DEVICES)
def test_scatter_reduce_of_nan_and_1d_strided(device):
    """NaN propagates through every reduction; 1-d inputs, strided ones too."""
    nan = float("nan")
    x, src = torch.tensor([1., nan, 3., 4., -2.]), torch.tensor([nan, 5., 2., -1., 7., 0.5])
    idx = torch.tensor([0, 2, 2, 3, 3, 4])
    for reduce in ("amax", "amin", "sum", "mean", "prod"):
        for include_self in (True, False):
            def call(t, i, s):
                return t.scatter_reduce(0, i, s, reduce, include_self=include_self)
            check_on(device, call, x, idx, src, what=reduce)
            check_on(device, call, x[::2], idx[:3] % 3, src[1::2], what=f"{reduce}, strided")


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("reduce", [None, "add", "multiply"])
def test_scatter_add_and_the_reduce_argument_for_every_dtype(reduce, device):
    """scatter_add_ (reduce None) and scatter(reduce=) into repeated targets, every accumulating dtype; 0-d and empty."""
    idx = torch.tensor([[0, 0, 0, 0], [2, 2, 2, 2]])
    for dtype in ADD_DTYPES:
        for x in layouts(SIGNED, dtype):
            if reduce is None:
                check_on(device, lambda t, i, s: t.clone().scatter_add_(0, i, s), x, idx, typed(np.ones((2, 4)), dtype))
            else:
                check_on(device, lambda t, i: t.scatter(0, i, 3, reduce=reduce), x, idx)
    check_on(device, lambda t, i, s: t.scatter_add(0, i, s), torch.tensor(2.), torch.tensor(0), torch.tensor(5.))
    check_on(device, lambda t, i, s: t.scatter_add(0, i, s), torch.zeros(3), torch.tensor([], dtype=torch.int64),
             torch.zeros(0))


INDEX_DIM_OPS = {  # (x, a repeated index, a permutation)
    "index_select": lambda x, i, r: x.index_select(0, i),
    "index_select int32": lambda x, i, r: x.index_select(1, i.int()),
    "index_add alpha": lambda x, i, r: x.index_add(1, i, x[:, :3], alpha=2),
    "index_add int32": lambda x, i, r: x.index_add(1, i.int(), x[:, :3]),
    # no repeated index: which copy lands is undefined then (on PyTorch's GPU too)
    "index_copy": lambda x, i, r: x.index_copy(1, r, x[:, :3].flip(1)),
    "index_fill": lambda x, i, r: x.index_fill(1, i, -1),
    "index_fill 0-d tensor": lambda x, i, r: x.index_fill(0, i[:2], r[2]),
}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16, torch.int64, torch.int8, torch.bool],
                         ids=str)
def test_index_dim_ops_for_every_dtype(dtype, device):
    """index_select/add/copy/fill with repeated int64 and int32 indices, both layouts; 0-d inputs."""
    for name, fn in INDEX_DIM_OPS.items():
        if dtype is torch.bool and name == "index_add alpha":
            continue  # alpha on bool is refused on both devices
        for x in layouts(SIGNED, dtype):
            check_on(device, fn, x, torch.tensor([2, 0, 2]), torch.tensor([2, 0, 1]), what=name)
    check_on(device, lambda x, i: x.index_select(0, i), torch.tensor(3.), torch.tensor([0]))
    check_on(device, lambda x, i: x.index_fill(0, i, 2.), torch.tensor(3.), torch.tensor([0]))


@pytest.mark.parametrize("device", DEVICES)
def test_non_contiguous_and_0d_indices(device):
    """Strided and 0-d index tensors in gather, scatter_add, x[i], index_select, take and index_add."""
    idx = torch.tensor([[0, 2, 1], [3, 0, 0], [1, 1, 2], [2, 3, 0]])       # .t() is (3, 4), strided
    for x in layouts(SIGNED):
        check_on(device, lambda t, i: t.gather(0, i.t()[:, :4] % 3), x, idx)
        check_on(device, lambda t, i: t.scatter_add(1, i.t(), t), x, idx)
        check_on(device, lambda t, i: t[i[::2, 0]], x, idx)
        check_on(device, lambda t, i: t[:, i[:, 1]], x, idx)
        check_on(device, lambda t, i: t.index_select(1, i), x, torch.tensor(2))
        check_on(device, lambda t, i: t.take(i), x, torch.tensor(7))
        check_on(device, lambda t, i: t.index_add(0, i, t[:1]), x, torch.tensor([1]))


@pytest.mark.parametrize("device", DEVICES)
def test_views_of_more_dims_than_a_kernel_tuple(device):
    """Past 8 non-mergeable dims the offsets come from an outer sum of two halves."""
    x = torch.tensor(np.arange(2 ** 10).reshape((2,) * 10)).permute(9, 7, 5, 3, 1, 8, 6, 4, 2, 0)  # no two dims merge
    idx = torch.tensor(np.ones((2,) * 10, dtype=np.int64))[..., :1]
    check_on(device, lambda t: t.flip(0, 3, 9), x)
    check_on(device, lambda t, i: t[i[0, 0, 0, 0, 0, 0, 0, 0, 0]], x, idx)
    check_on(device, lambda t, i: t[:, :, :, :, :, :, :, :, :, i[0, 0, 0, 0, 0, 0, 0, 0, 0]], x, idx)
    check_on(device, lambda t, i: t.gather(9, i), x, idx)
    check_on(device, lambda t, i: t.scatter_add(9, i, t), x, idx)
    check_on(device, lambda t: t[t > 500], x)
    check_on(device, lambda t: assigned(t, t > 500, 0), x)


@pytest.mark.parametrize("device", DEVICES)
def test_take_and_put(device):
    """take with a 2-d and negative index, put_ and put(accumulate=True) with repeats; 0-d and empty."""
    for x in layouts(SIGNED):
        check_on(device, lambda t, i: t.take(i), x, torch.tensor([[11, 0], [-1, 5]]))
        check_on(device, lambda t, i, s: t.clone().put_(i, s), x, torch.tensor([1, -2, 4]), torch.tensor([9., 8., 7.]))
        check_on(device, lambda t, i, s: t.put(i, s, accumulate=True), x, torch.tensor([1, 1, 4]),
                 torch.tensor([9., 8., 7.]))
    check_on(device, lambda t, i: t.take(i), torch.tensor(5.), torch.tensor(0))
    check_on(device, lambda t, i: t.take(i), torch.tensor(SIGNED), torch.zeros(0, dtype=torch.int64))


DIM_ERRORS = [
    lambda x, i: x.gather(1, i.reshape(1, -1)),
    lambda x, i: x.scatter(1, i.reshape(1, -1), 1.),
    lambda x, i: x.scatter_add(1, i.reshape(1, -1), x),
    lambda x, i: x.scatter_reduce(1, i.reshape(1, -1), x, "amax"),
    lambda x, i: x.index_select(1, i),
    lambda x, i: x.index_add(1, i, x[:, :3]),
    lambda x, i: x.index_copy(1, i, x[:, :3]),
    lambda x, i: x.index_fill(1, i, 0.),
    lambda x, i: x.take(i * 3),
    lambda x, i: x.clone().put_(i * 3, x[0, :3]),
    lambda x, i: x.index_put_((i,), x[0, 0], accumulate=True),
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("fn", DIM_ERRORS, ids=[str(i) for i in range(len(DIM_ERRORS))])
def test_index_bound_errors(fn, device):
    """An index past either end raises (on CUDA the CPU's error, word for word, from one flag read back)."""
    for index in ([1, 5, -7], [0, -9, 1]):
        with pytest.raises((RuntimeError, IndexError)):
            cpu_result(device, fn, torch.tensor(SIGNED), torch.tensor(index))


CUDA_CASES = [
    ("advanced getitem", lambda x: x[[0, 2], 1:]),
    ("mask getitem", lambda x: x[x > 5]),
    ("setitem", lambda x: _assigned(x, ([0, 1], [1, 2]), 100.)),
    ("index_put accumulate", lambda x: x.index_put((_on(x, [0, 0]),), _on(x, [1., 2., 3., 4.]), accumulate=True)),
    ("gather", lambda x: x.gather(1, _on(x, [[0], [3], [1]]))),
    ("scatter_add", lambda x: x.scatter_add(0, _on(x, [[0, 0, 2, 1]]), x[:1])),
    ("scatter_reduce", lambda x: x.scatter_reduce(1, _on(x, [[0, 0]] * 3), x[:, :2], "amax")),
    ("index_select", lambda x: x.index_select(1, _on(x, [3, 0]))),
    ("index_add", lambda x: x.index_add(0, _on(x, [2, 2]), x[:2])),
    ("masked_fill", lambda x: x.masked_fill(x > 5, 0.)),
    ("masked_scatter", lambda x: x.masked_scatter(x > 5, x.reshape(-1))),
    ("take/put", lambda x: x.put(_on(x, [0, 11]), x.take(_on(x, [5, 6])))),
    ("nonzero", lambda x: (x > 5).nonzero()),
    ("sort", lambda x: x.sort(1, descending=True).indices),
    ("topk", lambda x: x.topk(2, dim=0).values),
    ("cumsum", lambda x: x.cumsum(1)),
    ("cummax", lambda x: x.cummax(0).indices),
    ("unique", lambda x: torch.unique(x.long() % 3)),
]


def _on(x, values):
    t = torch.tensor(values)
    return (t.to(x.dtype) if t.is_floating_point() else t).to(x.device)


def _assigned(x, key, value):
    x = x.clone()
    x[key] = value
    return x


@pytest.mark.parametrize("name,fn", CUDA_CASES, ids=[n for n, _ in CUDA_CASES])
def test_cuda_matches_cpu(name, fn):
    """On CUDA (the simulator in CI) the ops give the CPU's results, on the device."""
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device or simulator")
    cpu = torch.tensor(X)
    want = fn(cpu)
    got = fn(cpu.to("cuda"))
    assert got.device.type == "cuda"
    np.testing.assert_array_equal(got.cpu().numpy(), want.numpy())


def test_docstring_examples_run():
    """The examples in the docstrings of the indexing, index, sorting and scan ops."""
    import builtins
    import doctest

    from ember_tensor._ops import index_ops, indexing, masked, scans, sorting
    # ember's names, except those that would hide Python's own (float, int, bool, ...)
    namespace = {k: v for k, v in vars(torch).items() if k not in vars(builtins)}
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    examples = 0
    parser = doctest.DocTestParser()
    for module in (indexing, index_ops, masked, sorting, scans):
        for name in module.__all__:
            doc = getattr(module, name).__doc__ or ""
            test = parser.get_doctest(doc, dict(namespace), f"{module.__name__}.{name}", None, 0)
            examples += len(test.examples)
            runner.run(test)
    assert examples > 30 and runner.failures == 0


def test_cuda_index_on_another_device_is_refused():
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device or simulator")
    x = torch.tensor(X).to("cuda")
    for fn in (lambda: x.gather(1, torch.tensor([[0], [1], [2]])), lambda: x.index_select(0, torch.tensor([0])),
               lambda: x.scatter_add(0, torch.tensor([[0, 0, 0, 0]]).to("cuda"), torch.ones(1, 4, dtype=torch.float64))):
        with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
            fn()
