"""Index ops along a dim on CUDA tensors compute on the device and match the CPU:
gather, take_along_dim, scatter/scatter_add/scatter_reduce, index_select/add/copy/fill,
take and put_, with their bounds errors. Same harness as `test_cuda_index` (each CUDA
call inside `device_only()`, one value may be read back), whose helpers it uses.
"""
import numpy as np
import pytest

import ember_tensor as et
from test_cuda_index import ADD_DTYPES, ALL_DTYPES, X, _layouts, _set, _typed, check, check_error

pytestmark = pytest.mark.skipif(not et.cuda.is_available(), reason="no CUDA and no simulator")


# --- along a dim -----------------------------------------------------------------------------

GATHER = [(0, [[0, 2, 1, 0]]), (1, [[3, 0], [1, 1], [2, 0]]), (1, [[3], [0], [2]]), (-1, [[0, 0, 0, 3]]),
          (0, [[2, 1, 0, 0], [0, 0, 1, 2]])]


@pytest.mark.parametrize("dim,idx", GATHER)
def test_gather_and_take_along_dim(dim, idx):
    for x in _layouts(X):
        check(lambda t, i: t.gather(dim, i), x, et.tensor(idx))
        check(lambda t, i: et.take_along_dim(t, i, dim), x, et.tensor(idx))
    check(lambda t, i: t.gather(0, i), et.tensor(5.), et.tensor(0))
    check(lambda t, i: t.gather(1, i), et.tensor(X), et.zeros(3, 0, dtype=et.int64))


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_gather_scatter_dtypes(dtype):
    idx = et.tensor([[0, 1, 2, 0], [2, 2, 0, 1]])
    for x in _layouts(X, dtype):
        check(lambda t, i: t.gather(0, i), x, idx)
        check(lambda t, i, s: t.scatter(0, i, s), x, et.tensor([[0, 1, 2, 0]]), _typed(X * 2, dtype))
        check(lambda t, i: t.scatter(1, i, 1), x, et.tensor([[3], [0], [1]]))
    check(lambda t, i: et.take_along_dim(t, i), _typed(X, dtype), et.tensor([11, 0, 3]))


SCATTER_REDUCE = ["sum", "prod", "mean", "amax", "amin"]


@pytest.mark.parametrize("reduce", SCATTER_REDUCE)
@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("dtype", [et.float32, et.float64, et.float16, et.int64, et.int32, et.int8],
                         ids=str)
def test_scatter_reduce(reduce, include_self, dtype):
    idx = et.tensor([[0, 1, 0, 2], [0, 0, 2, 2], [1, 1, 1, 1]])
    src = _typed(np.arange(1, 13).reshape(3, 4) % 5 + 1, dtype)
    for x in _layouts(X, dtype):
        check(lambda t, i, s: t.scatter_reduce(0, i, s, reduce, include_self=include_self), x, idx, src)
        check(lambda t, i, s: t.scatter_reduce(1, i, s, reduce, include_self=include_self), x, idx, src)


@pytest.mark.parametrize("reduce", ["amax", "amin", "sum", "mean", "prod"])
def test_scatter_reduce_nan_and_1d(reduce):
    nan = float("nan")
    x = et.tensor([1., nan, 3., 4., -2.])
    src = et.tensor([nan, 5., 2., -1., 7., 0.5])
    idx = et.tensor([0, 2, 2, 3, 3, 4])
    for include_self in (True, False):
        check(lambda t, i, s: t.scatter_reduce(0, i, s, reduce, include_self=include_self), x, idx, src)
        check(lambda t, i, s: t.scatter_reduce(0, i, s, reduce, include_self=include_self), x[::2], idx[:3] % 3,
              src[1::2])


@pytest.mark.parametrize("reduce", [None, "add", "multiply"])
def test_scatter_reduce_argument_and_scatter_add(reduce):
    idx = et.tensor([[0, 0, 0, 0], [2, 2, 2, 2]])
    for dtype in ADD_DTYPES:
        for x in _layouts(X, dtype):
            src = _typed(np.ones((2, 4)), dtype)
            if reduce is None:
                check(lambda t, i, s: t.clone().scatter_add_(0, i, s), x, idx, src)
            else:
                check(lambda t, i: t.scatter(0, i, 3, reduce=reduce), x, idx)
    check(lambda t, i, s: t.scatter_add(0, i, s), et.tensor(2.), et.tensor(0), et.tensor(5.))
    check(lambda t, i, s: t.scatter_add(0, i, s), et.zeros(3), et.tensor([], dtype=et.int64), et.zeros(0))


INDEX_DIM_OPS = [
    lambda x, i: x.index_select(0, i),
    lambda x, i: x.index_select(1, i.int()),
    lambda x, i: x.index_add(1, i, x[:, :3], alpha=2),
    lambda x, i: x.index_add(1, i.int(), x[:, :3]),
    # no repeated index: which copy lands is undefined then (on PyTorch's GPU too)
    lambda x, i: x.index_copy(1, et.tensor([2, 0, 1]).to(x.device), x[:, :3].flip(1)),
    lambda x, i: x.index_fill(1, i, -1),
    lambda x, i: x.index_fill(0, i[:2], et.tensor(1).to(x.device)),
]


@pytest.mark.parametrize("fn", INDEX_DIM_OPS, ids=[str(i) for i in range(len(INDEX_DIM_OPS))])
@pytest.mark.parametrize("dtype", [et.float32, et.float16, et.bfloat16, et.int64, et.int8, et.bool], ids=str)
def test_index_dim_ops(fn, dtype):
    if dtype is et.bool and fn is INDEX_DIM_OPS[2]:
        return  # alpha on bool is refused on both devices
    for x in _layouts(X, dtype):
        check(fn, x, et.tensor([2, 0, 2]))
    check(lambda x, i: x.index_select(0, i), et.tensor(3.), et.tensor([0]))
    check(lambda x, i: x.index_fill(0, i, 2.), et.tensor(3.), et.tensor([0]))


def test_non_contiguous_and_0d_indices():
    idx = et.tensor([[0, 2, 1], [3, 0, 0], [1, 1, 2], [2, 3, 0]])       # .t() is (3, 4), strided
    for x in _layouts(X):
        check(lambda t, i: t.gather(0, i.t()[:, :4] % 3), x, idx)
        check(lambda t, i: t.scatter_add(1, i.t(), t), x, idx)
        check(lambda t, i: t[i[::2, 0]], x, idx)
        check(lambda t, i: t[:, i[:, 1]], x, idx)
        check(lambda t, i: t.index_select(1, i), x, et.tensor(2))
        check(lambda t, i: t.take(i), x, et.tensor(7))
        check(lambda t, i: t.index_add(0, i, t[:1]), x, et.tensor([1]))


def test_views_of_more_dims_than_a_kernel_tuple():
    """Past 8 non-mergeable dims the offsets come from an outer sum of two halves."""
    base = np.arange(2 ** 10).reshape((2,) * 10)
    x = et.tensor(base).permute(9, 7, 5, 3, 1, 8, 6, 4, 2, 0)             # no two dims merge
    idx = et.tensor(np.ones((2,) * 10, dtype=np.int64))[..., :1]
    check(lambda t: t.flip(0, 3, 9), x)
    check(lambda t, i: t[i[0, 0, 0, 0, 0, 0, 0, 0, 0]], x, idx)
    check(lambda t, i: t[:, :, :, :, :, :, :, :, :, i[0, 0, 0, 0, 0, 0, 0, 0, 0]], x, idx)
    check(lambda t, i: t.gather(9, i), x, idx)
    check(lambda t, i: t.scatter_add(9, i, t), x, idx)
    check(lambda t: t[t > 500], x)
    check(lambda t: _set(t, t > 500, 0), x)


def test_take_and_put():
    for x in _layouts(X):
        check(lambda t, i: t.take(i), x, et.tensor([[11, 0], [-1, 5]]))
        check(lambda t, i, s: t.clone().put_(i, s), x, et.tensor([1, -2, 4]), et.tensor([9., 8., 7.]))
        check(lambda t, i, s: t.put(i, s, accumulate=True), x, et.tensor([1, 1, 4]), et.tensor([9., 8., 7.]))
    check(lambda t, i: t.take(i), et.tensor(5.), et.tensor(0))
    check(lambda t, i: t.take(i), et.tensor(X), et.zeros(0, dtype=et.int64))


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


@pytest.mark.parametrize("fn", DIM_ERRORS, ids=[str(i) for i in range(len(DIM_ERRORS))])
def test_index_bound_errors(fn):
    check_error(fn, et.tensor(X), et.tensor([1, 5, -7]))
    check_error(fn, et.tensor(X), et.tensor([0, -9, 1]))
