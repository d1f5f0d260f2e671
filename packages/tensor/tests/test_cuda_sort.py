"""Sorting and selection on CUDA tensors (sort, argsort, msort, topk, kthvalue, median,
nanmedian, mode) equal the CPU's results, computed on the device: every CUDA call runs
inside `device_only()`.

Tables of inputs cover every dtype the ops take, 0-d, empty and non-contiguous inputs,
ties, NaN and -0.0, and rows longer than the shared-memory chunk of the bitonic sort
(`_backends.cuda.kernels.sorting.CHUNK`, 16 under the simulator) so that the global stages run too.
"""
import warnings

import numpy as np
import pytest

import ember_tensor as et
from cuda_guard import device_only

pytestmark = pytest.mark.skipif(not et.cuda.is_available(), reason="no CUDA and no simulator")

NAN = float("nan")
DTYPES = [et.float32, et.float64, et.float16, et.bfloat16, et.int64, et.int32, et.int16, et.int8,
          et.uint8, et.bool]


def _values(dtype, shape, seed=0):
    """Small values with many ties (and NaN, -0.0, inf for floats) of `shape`."""
    rng = np.random.default_rng(seed)
    if dtype is et.bool:
        return rng.integers(0, 2, shape).astype(bool)
    arr = rng.integers(0 if dtype is et.uint8 else -4, 5, shape).astype(np.float64)
    if dtype.is_floating_point and arr.size >= 4:
        flat = arr.reshape(-1)
        flat[[1, -1]] = NAN
        flat[2] = -0.0
        flat[3] = np.inf
    return arr


# The simulator runs a Python thread per CUDA thread: every layout for the dtypes with
# their own key kernels, fewer for those that reuse them (after a cast) to keep tests fast.
FULL = (et.float32, et.float64, et.int64)
SHAPES = [("2d", (3, 7)), ("long", (2, 37)), ("0d", ()), ("empty", (0, 3)), ("one", (4, 1))]


def _layouts(dtype):
    """(name, cpu tensor, cuda tensor) cases: contiguous, transposed, 0-d, empty, long rows."""
    cases = []
    for name, shape in SHAPES if dtype in FULL else SHAPES[:1]:
        arr = _values(dtype, shape)
        cases.append((name, et.tensor(arr, dtype=dtype), et.tensor(arr, dtype=dtype).cuda()))
    arr = _values(dtype, (7, 5), seed=1)
    host = et.tensor(np.ascontiguousarray(arr.T), dtype=dtype)
    cases.append(("transposed", host.t(), host.cuda().t()))
    return cases


def _same(expected, got):
    expected = expected if isinstance(expected, tuple) else (expected,)
    got = got if isinstance(got, tuple) else (got,)
    assert len(expected) == len(got)
    for c, g in zip(expected, got):
        assert g.device.type == "cuda"
        assert g.dtype == c.dtype and g.shape == c.shape
        c, g = c.cpu(), g.cpu()
        if c.dtype is et.bfloat16:
            c, g = c.float(), g.float()
        np.testing.assert_array_equal(g.numpy(), c.numpy())  # selection is exact


def _check(fn, cpu, cuda, allow_scalar_reads=False):
    """fn on the CPU tensor and, inside device_only, on the CUDA one: same result or error."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            expected = fn(cpu)
        except Exception as error:
            with pytest.raises(type(error)) as raised:
                with device_only(allow_scalar_reads):
                    fn(cuda)
            # the CPU's kernel names say cpu where CUDA's say cuda ("median_cuda" ...)
            assert str(raised.value) == str(error).replace("_cpu", "_cuda")
            return
        with device_only(allow_scalar_reads):
            got = fn(cuda)
    _same(expected, got)


def _dims(t):
    return [0, -1] if t.dim() else [0]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_sort_argsort_msort(dtype):
    for name, cpu, cuda in _layouts(dtype):
        for dim in _dims(cpu):
            for descending in (False, True):
                _check(lambda x: tuple(x.sort(dim, descending=descending)), cpu, cuda)
                _check(lambda x: x.argsort(dim, descending=descending), cpu, cuda)
        _check(lambda x: et.msort(x), cpu, cuda)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_topk(dtype):
    for name, cpu, cuda in _layouts(dtype):
        if dtype is et.bool:  # PyTorch's topk does not take bool
            continue
        for dim in _dims(cpu):
            size = cpu.shape[dim] if cpu.dim() else 1
            # (k = 0 and k > size: in test_errors_match_the_cpu and the 2-d layout)
            for k in sorted({1, size // 2, size} | ({0, size + 1} if name == "2d" else set())):
                for largest in (True, False):
                    _check(lambda x: tuple(x.topk(k, dim, largest=largest)), cpu, cuda)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_kthvalue_median_nanmedian_mode(dtype):
    for name, cpu, cuda in _layouts(dtype):
        for dim in _dims(cpu):
            size = cpu.shape[dim] if cpu.dim() else 1
            for k in sorted({1, size}):
                if dtype is not et.bool:
                    _check(lambda x: tuple(x.kthvalue(k, dim)), cpu, cuda)
            for keepdim in (False, True):
                _check(lambda x: tuple(x.median(dim, keepdim=keepdim)), cpu, cuda)
                if dtype is not et.bool:
                    _check(lambda x: tuple(x.nanmedian(dim, keepdim=keepdim)), cpu, cuda)
                _check(lambda x: tuple(x.mode(dim, keepdim=keepdim)), cpu, cuda)
        _check(lambda x: x.median(), cpu, cuda)
        if dtype is not et.bool:
            _check(lambda x: x.nanmedian(), cpu, cuda)


def test_errors_match_the_cpu():
    x = et.tensor([[1., 2.], [3., 4.]])
    for fn in (lambda t: t.topk(3), lambda t: t.kthvalue(0), lambda t: t.kthvalue(3, 0),
               lambda t: t.new_empty(2, 0).mode(1), lambda t: t.new_empty(2, 0).kthvalue(1, 1),
               lambda t: t.new_empty(2, 0).nanmedian(1), lambda t: t.new_empty(2, 0).median(1),
               lambda t: t.sort(2), lambda t: t.bool().median()):
        _check(fn, x, x.cuda())


def test_long_rows_take_the_global_stages():
    # 150 elements: padded to 256, sorted in chunks of 16 under the simulator and merged
    # by global stages; many equal values check the tie order (by index).
    arr = np.random.default_rng(3).integers(0, 9, 150).astype(np.float32)
    arr[::37] = NAN
    cpu = et.tensor(arr)
    _check(lambda x: tuple(x.sort(descending=True)), cpu, cpu.cuda())
    _check(lambda x: tuple(x.median(0)), cpu, cpu.cuda())
    _check(lambda x: x.median(), cpu, cpu.cuda())
    _check(lambda x: tuple(x.nanmedian(0)), cpu, cpu.cuda())


def test_sort_out_and_stable_keyword():
    cpu = et.tensor([[2, 1, 2], [0, 0, 1]])
    values, indices = et.empty(0, dtype=et.int64).cuda(), et.empty(0, dtype=et.int64).cuda()
    with device_only():
        et.sort(cpu.cuda(), stable=True, out=(values, indices))
    expected = et.sort(cpu, stable=True)
    _same(tuple(expected), (values, indices))


@pytest.mark.parametrize("dtype", [et.float16, et.bfloat16, et.int8, et.uint8, et.float64], ids=str)
def test_topk_of_few_selects_without_sorting(dtype):
    # k <= 32 of rows longer than the shared chunk: `topk_select` (per-thread candidate
    # lists merged by thread 0) must give the stable sort's first k, ties by index.
    cpu = et.tensor(_values(dtype, (3, 50), seed=5), dtype=dtype)
    cuda = cpu.cuda()
    for k in (1, 7, 32):
        for largest in (True, False):
            _check(lambda x: tuple(x.topk(k, 1, largest=largest)), cpu, cuda)
            _check(lambda x: tuple(x.t().topk(k, 0, largest=largest)), cpu, cuda)
