"""What the indexing and index-op tests share when they take the device as a parameter:
inputs of every dtype in two layouts (`typed`, `layouts`), and `check_on(device, call,
*args)`, which holds a call on the CPU to PyTorch's CPU (where PyTorch is installed: the
test-only oracle) and on CUDA to the CPU, computed on the device (`cuda_guard`).

A call is written once for both libraries: it takes every tensor as an argument (an index
made inside it would sit on the CPU) and uses the names the two share, a function through
`lib_of(t)` (ember_tensor or torch, whichever `t` belongs to).
"""
import warnings

import numpy as np
import pytest

import ember_tensor as et
from cuda_guard import matches_the_cpu

__all__ = ["ALL_DTYPES", "ADD_DTYPES", "SIGNED", "typed", "layouts", "assigned", "check_on", "lib_of"]

ALL_DTYPES = [et.float32, et.float64, et.float16, et.bfloat16, et.int64, et.int32, et.int16, et.int8,
              et.uint8, et.bool]
# The dtypes the accumulating ops (index_put_ and scatter with accumulate, index_add) take on both devices.
ADD_DTYPES = [et.float32, et.float64, et.float16, et.bfloat16, et.int64, et.int32, et.int8, et.uint8]
SIGNED = np.arange(12.).reshape(3, 4) - 5
_TOL = {et.float16: 1e-3, et.bfloat16: 1e-2}


def typed(values, dtype):
    """`values` as a tensor of `dtype`: odd values are True for bool, |values| % 200 for uint8."""
    arr = np.asarray(values)
    if dtype is et.bool:
        return et.tensor(arr % 2 == 1)
    if dtype is et.uint8:
        return et.tensor(np.abs(arr) % 200, dtype=dtype)
    return et.tensor(arr, dtype=dtype)


def layouts(arr, dtype=et.float32):
    """The values of 2-d `arr` as a contiguous tensor and as a non-contiguous (transposed) view."""
    contiguous = typed(arr, dtype)
    strided = typed(np.ascontiguousarray(np.asarray(arr).T), dtype).t()
    return [contiguous, strided]


def assigned(x, key, value):
    """A copy of `x` with x[key] = value: setitem as a call that returns its result."""
    x = x.clone()
    x[key] = value
    return x


def lib_of(t):
    """The library whose tensor `t` is: ember_tensor or torch (the oracle)."""
    return et if isinstance(t, et.Tensor) else __import__("torch")


def _as_torch(x, torch):
    if isinstance(x, (tuple, list)):
        return type(x)(_as_torch(v, torch) for v in x)
    if not isinstance(x, et.Tensor):
        return x
    values = x.float().numpy() if x.dtype is et.bfloat16 else x.numpy()
    return torch.tensor(values).to(getattr(torch, str(x.dtype).split(".")[-1]))  # PyTorch's result needs no layout


def _host(t):
    return t.float().numpy() if str(t.dtype).endswith("bfloat16") else t.numpy()


def _same_as_torch(got, want, what):
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want), what
        for g, w in zip(got, want):
            _same_as_torch(g, w, what)
        return
    assert str(got.dtype) == str(want.dtype), f"{what}: {got.dtype} != {want.dtype}"
    assert tuple(got.shape) == tuple(want.shape), f"{what}: {tuple(got.shape)} != {tuple(want.shape)}"
    if got.dtype.is_floating_point:
        tol = _TOL.get(got.dtype, 1e-6)
        np.testing.assert_allclose(_host(got), _host(want), rtol=tol, atol=tol, equal_nan=True, err_msg=what)
    else:
        np.testing.assert_array_equal(_host(got), _host(want), err_msg=what)


def check_on(device, call, *args, what="", tol=None, oracle=None):
    """call(*args) on `device`: on the CPU PyTorch's result (dtype, shape, values) or error
    type where PyTorch is installed; on CUDA the CPU's, word for word for an error.
    `oracle` is the call PyTorch runs where ember's differs on purpose (x[i] = v casts a
    value of another dtype, as PyTorch did before 2.x; PyTorch now raises).

    >>> check_on("cpu", lambda x, i: x[i], et.arange(4), et.tensor([3, 0]))
    """
    what = what or getattr(call, "__name__", "call")
    if device != "cpu":
        matches_the_cpu(call, args, what, reads_a_flag=True, tol=tol or 1e-6)
        return
    torch = pytest.importorskip("torch")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            want = (oracle or call)(*_as_torch(args, torch))
        except Exception as error:  # PyTorch raises: so must ember, an exception of the same kind
            with pytest.raises((type(error), RuntimeError, IndexError, ValueError)):
                call(*args)
            return
        got = call(*args)
    _same_as_torch(tuple(got) if isinstance(got, (tuple, list)) else got,
                   tuple(want) if isinstance(want, (tuple, list)) else want, what)
