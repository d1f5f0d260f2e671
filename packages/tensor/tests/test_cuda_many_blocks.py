"""Indexing and index ops on CUDA tensors compute on the device and match the CPU: x[key],
x[key] = v, index_put_, masks, nonzero, flip/roll/repeat_interleave, gradients, many
blocks, a second GPU (the along-a-dim ops are in test_cuda_index_ops, which shares the
harness below).

Every case runs an op on CPU tensors, then on the same tensors moved to CUDA inside
`device_only()` (any device-to-host copy of more than one value fails: a bounds check
or a data-sized result may read one value, as PyTorch synchronises there too), and
compares dtype, shape and values. Inputs: contiguous, non-contiguous, 0-d and empty,
every dtype the op takes; errors must be the CPU's (type and message). Runs on Numba's
CUDA simulator (conftest.py), so shapes stay tiny.
"""
import warnings

import numpy as np
import pytest
from hypothesis import given, settings

import ember_tensor as et
from cuda_guard import device_only, run_on_simulated_devices
from test_indexing import _build_key, _torch_key

pytestmark = pytest.mark.skipif(not et.cuda.is_available(), reason="no CUDA and no simulator")

CUDA0 = et.device("cuda", 0)
ALL_DTYPES = [et.float32, et.float64, et.float16, et.bfloat16, et.int64, et.int32, et.int16, et.int8,
              et.uint8, et.bool]
ADD_DTYPES = [et.float32, et.float64, et.float16, et.bfloat16, et.int64, et.int32, et.int8, et.uint8]
TOL = {et.float16: 1e-3, et.bfloat16: 1e-2}


def _to_cuda(x):
    if isinstance(x, et.Tensor):
        return x.cuda()
    if isinstance(x, tuple):
        return tuple(_to_cuda(v) for v in x)
    if isinstance(x, list) and any(isinstance(v, et.Tensor) for v in x):
        return [_to_cuda(v) for v in x]
    return x


def _host(t):
    return (t.float() if t.dtype is et.bfloat16 else t).cpu().numpy()


def _same(expected, got, tol=None):
    if isinstance(expected, tuple):
        assert isinstance(got, tuple) and len(got) == len(expected)
        for e, g in zip(expected, got):
            _same(e, g, tol)
        return
    assert got.device == CUDA0
    assert got.dtype == expected.dtype
    assert got.shape == expected.shape
    if expected.dtype.is_floating_point:
        tol = tol or TOL.get(expected.dtype, 1e-6)
        np.testing.assert_allclose(_host(got), _host(expected), rtol=tol, atol=tol, equal_nan=True)
    else:
        np.testing.assert_array_equal(_host(got), _host(expected))


def check(fn, *args, reads=True, tol=None):
    """fn(*args) on the CPU equals fn on the args moved to CUDA, computed on the device
    (floats within `tol`, by default a per-dtype rounding tolerance)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = fn(*args)
        moved = [_to_cuda(a) for a in args]
        with device_only(allow_scalar_reads=reads):
            got = fn(*moved)
    _same(expected, got, tol)
    return got


def check_error(fn, *args):
    """fn raises the same error (type and message) on CPU and CUDA tensors."""
    with pytest.raises(Exception) as cpu_error:
        fn(*args)
    with pytest.raises(cpu_error.type) as cuda_error:
        with device_only(allow_scalar_reads=True):
            fn(*[_to_cuda(a) for a in args])
    assert str(cuda_error.value) == str(cpu_error.value)


def _typed(values, dtype):
    arr = np.asarray(values)
    if dtype is et.bool:
        return et.tensor(arr % 2 == 1)
    if dtype is et.uint8:
        return et.tensor(np.abs(arr) % 200, dtype=dtype)
    return et.tensor(arr, dtype=dtype)


def _layouts(arr, dtype=et.float32):
    """The values of 2-d `arr` as a contiguous tensor and as a non-contiguous (transposed) view."""
    contiguous = _typed(arr, dtype)
    strided = _typed(np.ascontiguousarray(np.asarray(arr).T), dtype).t()
    return [contiguous, strided]


X = np.arange(12.).reshape(3, 4) - 5
A = np.arange(2 * 3 * 4 * 5).reshape(2, 3, 4, 5)
MASK = np.array([True, False, True])

# --- x[key] --------------------------------------------------------------------------------

GET_KEYS = [
    (1,), (slice(None, None, 2),), ([1, 0],), ([[0, 1], [1, 0]],), (slice(None), [2, 0, 2]),
    ([0, 1], [2, 0]), ([0, 1], slice(None), [3, 1]), (slice(None), [0, 2], [1, 3]),
    (slice(None), [[0], [2]], [1, 3]), (Ellipsis, [0, 4]), (None, [1, 0], None, [2, 2]),
    (slice(None), MASK), (A[:, :, 0, 0] > 5,), (A > 60,), ([0, 1], [True, False, True], [1, 2]),
    ([-1, -2],), (slice(None), []), (0, slice(None), [0, 1]), ((True,)), ((False,)),
    (A < 0,), ([[1, 0]],), (et.tensor([0, 1], dtype=et.uint8),), (et.tensor([1, 0], dtype=et.int32),),
]


def _key(key):
    return tuple(et.tensor(k) if isinstance(k, np.ndarray) else k for k in key)


@pytest.mark.parametrize("key", GET_KEYS, ids=[str(i) for i in range(len(GET_KEYS))])
def test_getitem(key):
    x = et.tensor(A)
    check(lambda t, k: t[k], x, _key(key))
    check(lambda t: t[key], x)                                    # list and array keys, uploaded
    base = et.tensor(np.ascontiguousarray(A.transpose(3, 2, 1, 0))).permute(3, 2, 1, 0)
    check(lambda t, k: t[k], base, _key(key))                     # a non-contiguous input


@settings(max_examples=40, deadline=None)
@given(_torch_key())
def test_hypothesis_keys(case):
    """Random keys (ints, slices, lists, tensors, masks, None, ...): CUDA == CPU, errors included."""
    shape, key = case
    x = et.tensor(np.arange(int(np.prod(shape))).reshape(shape))
    try:
        x[_build_key(key, et)]
    except (IndexError, ValueError, RuntimeError):
        check_error(lambda t, k: t[k], x, _build_key(key, et))
        return
    check(lambda t, k: t[k], x, _build_key(key, et))
    check(lambda t, k: _set(t, k, -1), x, _build_key(key, et))  # one value: repeats agree


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_getitem_dtypes(dtype):
    for x in _layouts(X, dtype):
        check(lambda t, i: t[i], x, et.tensor([2, 0, -1]))
        check(lambda t, m: t[m], x, et.tensor(X > 0))
        check(lambda t, i, j: t[i, j], x, et.tensor([[0], [2]]), et.tensor([3, 1]))
        check(lambda t, i: t[:, i], x, et.tensor([], dtype=et.int64))


def test_getitem_0d_and_empty():
    check(lambda t, m: t[m], et.tensor(5.), et.tensor(True))
    check(lambda t: t[None][[0, 0]], et.tensor(5.))
    check(lambda t, i: t[i], et.zeros(0, 3), et.tensor([], dtype=et.int64))
    check(lambda t, m: t[m], et.zeros(0, 3), et.zeros(0, 3, dtype=et.bool))
    check(lambda t, i: t[i], et.zeros(3, 0), et.tensor([2, 0]))


GET_ERRORS = [
    lambda x, i: x[i],
    lambda x, i: x[[1], i],
    lambda x, i: x[:, i],
    lambda x, i: x[i.float()],
    lambda x, i: x[[0, 1], i],
]


@pytest.mark.parametrize("fn", GET_ERRORS, ids=[str(i) for i in range(len(GET_ERRORS))])
def test_getitem_errors(fn):
    check_error(fn, et.arange(12).reshape(3, 4), et.tensor([0, 7, 5]))
    check_error(fn, et.arange(12).reshape(3, 4), et.tensor([-9]))
    check_error(lambda x, m: x[m], et.arange(12).reshape(3, 4), et.tensor([True, False]))


# --- x[key] = value, index_put_ -------------------------------------------------------------

SET_CASES = [
    ((1,), 7), ((slice(None), [0, 2]), 7), ((slice(None), [0, 2]), np.array([[1, 2]] * 3)),
    (([0, 2], [1, 3]), np.array([10, 20])), (([[0], [2]], [1, 3]), np.array([1, 2])),
    ((np.arange(12).reshape(3, 4) % 3 == 0,), -1), ((MASK,), np.array([9, 8, 7, 6])),
    ((slice(1, None), [3, 0]), np.array([[5], [6]])), ((np.array([0, 2]),), np.array([[[1, 2, 3, 4]]])),
]


def _set(x, key, value):
    x = x.clone()
    x[key] = value
    return x


@pytest.mark.parametrize("key,value", SET_CASES, ids=[str(i) for i in range(len(SET_CASES))])
def test_setitem(key, value):
    value = et.tensor(value) if isinstance(value, np.ndarray) else value
    for x in _layouts(np.arange(12).reshape(3, 4)):
        check(_set, x, _key(key), value)


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_setitem_dtypes_and_value_casts(dtype):
    for x in _layouts(X, dtype):
        check(_set, x, (et.tensor([2, 0]),), et.tensor([1.5, -2.5, 3.0, 0.0]))  # a float value, cast
        check(_set, x, (et.tensor(X > 0),), 1)
        check(lambda t: _set(t, (slice(None), [1, 3]), 0), x)
        check(_set, x, et.tensor(X > 0), 7)                           # x[mask] = number
        check(_set, x, et.tensor(X > 0), _typed(np.arange(6), dtype))   # one value per True
        check(_set, x, et.tensor(X < 0), _typed([3], dtype))             # broadcast value
        check_error(_set, x, et.tensor(X > 0), et.ones(2))
    check_error(_set, _typed(X, dtype), (et.tensor([0, 1]),), et.ones(3))


@pytest.mark.parametrize("dtype", ADD_DTYPES + [et.bool], ids=str)
def test_index_put_accumulate_repeats(dtype):
    def put(x, i, j, v):
        return x.clone().index_put_((i, j), v, accumulate=True)
    for x in _layouts(X, dtype):
        values = _typed([1, 2, 3, 4, 5], dtype)
        check(put, x, et.tensor([0, 0, 2, 0, 1]), et.tensor([1, 1, 3, 1, 0]), values)
        check(lambda t, i, v: t.clone().index_put_((i,), v, accumulate=True), x, et.tensor([1, 1]),
              _typed([[1, 2, 3, 4]], dtype))
        check(lambda t, v: t.clone().index_put_((None, et.tensor([3, 3]).to(t.device)), v, accumulate=True),
              x, _typed([7], dtype))
    check(lambda t, i, v: t.clone().index_put_((i,), v), et.zeros(5), et.tensor([4, 1]), et.tensor([1., 2.]))


# --- masks and data-sized results -----------------------------------------------------------

@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_nonzero_argwhere_where(dtype):
    for x in _layouts(np.array([[0, 1, 0, 2], [3, 0, 0, 0], [0, 0, 4, 5]]), dtype):
        check(lambda t: t.nonzero(), x)
        check(lambda t: t.nonzero(as_tuple=True), x)
        check(lambda t: et.argwhere(t), x)
        check(lambda t: et.where(t != 0), x)
    check(lambda t: t.nonzero(), _typed(3, dtype))
    check(lambda t: t.nonzero(as_tuple=True), _typed(0, dtype))
    check(lambda t: t.nonzero(), et.zeros(0, 2, dtype=dtype))
    check(lambda t: t.nonzero(), et.zeros(2, 3, dtype=dtype))
    check(lambda t: et.nonzero(t), et.tensor([float("nan"), 0., -0.]).to(dtype) if dtype.is_floating_point
          else _typed([1, 0, 1], dtype))


@pytest.mark.parametrize("dtype", [et.float32, et.float16, et.bfloat16, et.int64, et.int8, et.bool], ids=str)
def test_masked_ops(dtype):
    mask = et.tensor(X > 0)
    for x in _layouts(X, dtype):
        check(lambda t, m: t.masked_select(m), x, mask)
        check(lambda t, m: t.masked_select(m), x, mask[0])                 # broadcast mask
        check(lambda t, m: t.masked_fill(m, 1), x, mask)
        check(lambda t, m, s: t.masked_scatter(m, s), x, mask, _typed(np.arange(20), dtype))
        check(lambda t, m, s: t.masked_scatter(m, s), x, mask[:, :1], _typed(np.arange(20), dtype))
    check(lambda t, m: t.masked_select(m), et.tensor(2.), et.tensor(True))
    check_error(lambda t, m, s: t.masked_scatter(m, s), et.tensor(X), mask, et.ones(2))
    check_error(lambda t, m: t.masked_select(m), et.tensor(X), mask.int())


# --- shape ops that move elements -----------------------------------------------------------

@pytest.mark.parametrize("dtype", [et.float32, et.float16, et.bfloat16, et.int64, et.int8, et.bool], ids=str)
def test_flip_roll_rot90_triangles(dtype):
    for x in _layouts(X, dtype):
        check(lambda t: t.flip(0), x)
        check(lambda t: t.flip(0, 1), x)
        check(lambda t: t.flip(-1), x)
        check(lambda t: et.fliplr(t), x)
        check(lambda t: et.rot90(t, 1), x)
        check(lambda t: t.roll(1, 0), x)
        check(lambda t: t.roll((2, -1), (1, 0)), x)
        check(lambda t: t.roll(5), x)
        check(lambda t: t.tril(), x)
        check(lambda t: t.triu(1), x)
    x3 = _typed(A[:, :, :2, :3], dtype).permute(2, 0, 3, 1)
    check(lambda t: t.flip(0, 2), x3)
    check(lambda t: t.flip(()), _typed(7, dtype))
    check(lambda t: t.flip(0), et.zeros(0, 2, dtype=dtype))
    check_error(lambda t: t.flip(0, 0), _typed(X, dtype))
    check(lambda t: et.diag(t, 1), _typed(X, dtype))
    check(lambda t: et.diag(t[0], -1), _typed(X, dtype))
    check(lambda t: et.diag_embed(t), _typed(X, dtype))
    check(lambda t: et.cat([t, t.flip(0)], 1), _typed(X, dtype))
    check(lambda t: et.stack([t[0], t[2]]), _typed(X, dtype))


def test_scans_over_uneven_chunks():
    rng = np.random.default_rng(0)
    flags = et.tensor(rng.random((7, 14)) < 0.3)                 # 98 elements: 9 chunks, the last short
    check(lambda t: t.nonzero(), flags)
    check(lambda t: t.t().nonzero(as_tuple=True), flags)
    counts = et.tensor(rng.integers(0, 4, 61))
    check(lambda c: et.repeat_interleave(c), counts)
    check(lambda c: et.repeat_interleave(c), et.tensor([0, 0, 40, 0]))  # one long run


def test_repeat_interleave():
    counts = et.tensor([2, 0, 3])
    check(lambda c: et.repeat_interleave(c), counts)
    check(lambda c: et.repeat_interleave(c, output_size=5), counts)
    check(lambda c: et.repeat_interleave(c), et.tensor([], dtype=et.int64))
    for x in _layouts(X[:, :3]):
        check(lambda t, c: t.repeat_interleave(c, dim=0), x, counts)
        check(lambda t, c: t.repeat_interleave(c, dim=1), x, counts.int())
        check(lambda t: t.repeat_interleave(2, dim=1), x)
        check(lambda t: t.repeat_interleave(2), x)
    check_error(lambda c: et.repeat_interleave(c), et.tensor([1, -1]))
    check_error(lambda t, c: t.repeat_interleave(c, dim=0), et.tensor(X), counts[:2])
    check_error(lambda c: et.repeat_interleave(c), et.tensor([1., 2.]))


# --- gradients through index ops on CUDA ----------------------------------------------------------

# x[index]'s gradient goes through ember_autograd's `_rules/_scatter._IndexAddFlat`, which
# still adds on the host (not this package's code): only its values are compared.
HOST_RULE_CASES = [
    lambda x: x[et.tensor([2, 0, 2]).to(x.device)],
    lambda x: x[x > 0],
]
GRAD_CASES = [
    lambda x: x.gather(1, et.tensor([[0, 0], [3, 1], [2, 2]]).to(x.device)),
    lambda x: x.index_select(1, et.tensor([3, 3, 0]).to(x.device)),
    lambda x: x.take(et.tensor([0, 0, 11]).to(x.device)),
    lambda x: x.masked_select(et.tensor(X > 0).to(x.device)),
    lambda x: x.flip(1),
    lambda x: x.scatter_add(0, et.tensor([[0, 1, 0, 2]]).to(x.device), x[:1] * 2),
    lambda x: x.index_put((et.tensor([1, 1]).to(x.device),), x[0] * 3, accumulate=True),
]


@pytest.mark.parametrize("fn,on_device", [(fn, True) for fn in GRAD_CASES] + [(fn, False) for fn in HOST_RULE_CASES],
                         ids=[str(i) for i in range(len(GRAD_CASES) + len(HOST_RULE_CASES))])
def test_backward_matches_cpu(fn, on_device):
    pytest.importorskip("ember_autograd")

    def grad_of(device):
        x = et.tensor(X, device=device, requires_grad=True)
        out = fn(x)
        weights = et.arange(out.numel(), dtype=et.float32, device=device).reshape(out.shape) % 5
        (out * weights).sum().backward()
        return x.grad

    expected = grad_of("cpu")
    if on_device:
        with device_only(allow_scalar_reads=True):
            got = grad_of("cuda")
    else:
        got = grad_of("cuda")
    _same(expected, got)


# --- many blocks (a real GPU) ----------------------------------------------------------------

def _many_blocks_cases(n):
    """Index ops at size n (many blocks and chunks on a GPU: atomics under contention,
    long scans) compared with the CPU."""
    rng = np.random.default_rng(1)
    x = et.tensor(rng.standard_normal(n).astype(np.float32))
    idx = et.tensor(rng.integers(0, 64, n))                          # heavy repeats
    check(lambda t: t.nonzero(), x > 0.5)
    check(lambda t: t[t > 0], x)
    # thousands of float32 adds per bin, in another order than the CPU's: rounding differs
    check(lambda t, i: t.new_zeros(64).index_put_((i,), t, accumulate=True), x, idx, tol=1e-2)
    check(lambda i: i.new_zeros(64).scatter_add(0, i, i), idx)
    check(lambda t, i: t.new_zeros(64).scatter_reduce(0, i, t, "amax", include_self=False), x, idx)
    check(lambda t, i: t.gather(0, i), x, idx)
    check(lambda t: t.flip(0), x)
    check(lambda c: et.repeat_interleave(c), idx[:n // 64])


def test_many_blocks_code_path_on_the_simulator():
    _many_blocks_cases(300)


@pytest.mark.gpu
def test_many_blocks_on_a_real_gpu():
    _many_blocks_cases(1 << 20)


# --- a second GPU ------------------------------------------------------------------------------

SECOND_DEVICE_SCRIPT = """
    import numpy as np
    import ember_tensor as torch

    x = torch.arange(12.).reshape(3, 4)
    idx, mask = torch.tensor([2, 0, 2]), x > 4
    x1, idx1, mask1 = x.to("cuda:1"), idx.to("cuda:1"), mask.to("cuda:1")
    before = torch.cuda.memory_allocated(0)
    results = [x1[idx1], x1[:, idx1], x1[mask1], x1.gather(1, idx1.reshape(3, 1)), x1.flip(0),
               x1.scatter_add(0, idx1.reshape(3, 1).expand(3, 4), x1), x1.nonzero(),
               x1.index_put((idx1,), x1[0], accumulate=True), x1.masked_select(mask1),
               torch.repeat_interleave(idx1)]
    expected = [x[idx], x[:, idx], x[mask], x.gather(1, idx.reshape(3, 1)), x.flip(0),
                x.scatter_add(0, idx.reshape(3, 1).expand(3, 4), x), x.nonzero(),
                x.index_put((idx,), x[0], accumulate=True), x.masked_select(mask),
                torch.repeat_interleave(idx)]
    assert all(r.device == torch.device("cuda:1") for r in results)
    assert torch.cuda.current_device() == 0 and torch.cuda.memory_allocated(0) == before
    for r, e in zip(results, expected):
        np.testing.assert_array_equal(r.cpu().numpy(), e.numpy())
    print("ok")
"""


def test_ops_on_a_second_device_allocate_and_run_there():
    if "simulator" not in et.cuda.get_device_name().lower():
        pytest.skip("simulates two devices on Numba's CUDA simulator")
    run_on_simulated_devices(SECOND_DEVICE_SCRIPT, devices=2)
