"""Shared plumbing of the nn ops: operands in their compute dtype, results back as tensors,
argument normalisation.

Half types are computed in float32 and cast back, as the elementwise ops do. A
device-free op takes its operands with `array_of` (the backend array, cast on its
own device by the backend's `storage.astype`), calls its backend family and wraps the
arrays it returns with `tensor_of`.
"""
import numpy as np

from ... import _backends
from ... import _dtype as D
from ..._tensor import Tensor

__all__ = ["array_of", "tensor_of", "compute_np_dtype", "ntuple", "check_float"]

_LOW = (D.float16, D.bfloat16)


def compute_np_dtype(dtype):
    """The NumPy dtype a kernel computes `dtype` in (half types in float32)."""
    return np.float32 if dtype in _LOW else dtype.np


def array_of(t, np_dtype=None):
    """`t`'s array (on its device) in its compute dtype, or `np_dtype`: cast by the backend
    of its device where needed (on the device, never through the host)."""
    want = np.dtype(compute_np_dtype(t._dtype) if np_dtype is None else np_dtype)
    data = t._data
    return data if data.dtype == want else _backends.get(t._device).storage.astype(data, want)


def tensor_of(arr, dtype, device):
    """A tensor of `dtype` on `device` over the array `arr` that an op's backend returned
    (cast back to the storage dtype, made C-contiguous where needed)."""
    storage = _backends.get(device).storage
    if arr.dtype != dtype.np:
        arr = storage.astype(arr, dtype.np)
    return Tensor._wrap(storage.contiguous(arr), dtype, device)


def ntuple(value, n, name="kernel_size"):
    """An int or a sequence as a tuple of `n` ints (PyTorch's _ntuple)."""
    if isinstance(value, (list, tuple)):
        if len(value) == 1 and n > 1:
            return tuple(int(value[0]) for _ in range(n))
        if len(value) != n:
            raise RuntimeError(f"expected {name} to be a single integer value or a list of {n} values "
                               f"to match the convolution dimensions, but got {name}={list(value)}")
        return tuple(int(v) for v in value)
    return (int(value),) * n


def check_float(t, what):
    """PyTorch's error for integer inputs to float-only kernels."""
    if t._dtype.category != D._FLOAT:
        raise RuntimeError(f"\"{what}\" not implemented for '{_type_name(t._dtype)}'")


def _type_name(d):
    return {"int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
            "bool": "Bool", "float16": "Half", "bfloat16": "BFloat16", "float32": "Float",
            "float64": "Double"}[d.name]
