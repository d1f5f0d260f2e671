"""Shared plumbing of the LAPACK-backed linear-algebra ops.

Factorizations run in the device's `linalg` backend family (NumPy's LAPACK on the CPU,
device kernels on CUDA), whose arrays `wrap_array` wraps; those with no device kernels
(qr, svd, eigh, pinv, matrix_rank, lstsq) run on the CPU backend over host copies and
come back through `host` / `wrap`. Ops above never branch on the device. This module also
holds PyTorch's argument checks and error wording.
"""

import numpy as np

from ... import _backends
from ... import _dtype as D
from ..._device import CPU
from ..._tensor import Tensor
from .._iter import type_name

__all__ = ["LinAlgError", "host_linalg", "host", "wrap", "wrap_array", "check_float", "check_matrix",
           "check_square", "batch_prefix"]


class LinAlgError(RuntimeError):
    """A linear-algebra routine failed on its input (singular or not positive-definite)."""


LinAlgError.__module__ = "torch.linalg"


def host_linalg():
    """The CPU backend's linalg family: the functions no device kernel computes yet run
    there, on host copies, for tensors of every device (`_backends._families.GAPS`)."""
    return _backends.get(CPU).linalg


def host(t):
    """`t`'s values as a NumPy array on the host (no copy on the CPU)."""
    return np.asarray(t._host_numpy())


def wrap(array, like, dtype=None):
    """A new tensor holding host `array` on `like`'s device, with `dtype` (default: like's)."""
    dtype = like._dtype if dtype is None else dtype
    array = _backends.get(like._device).storage.adopt(np.array(array, dtype=dtype.np, order="C"))
    return Tensor._wrap(array, dtype, like._device)


def wrap_array(array, like, dtype=None):
    """A tensor on `like`'s device over `array`, a result of its device's backend (cast to
    `dtype`, default like's, and made C-contiguous by that backend)."""
    dtype = like._dtype if dtype is None else dtype
    storage = _backends.get(like._device).storage
    if array.dtype != dtype.np:
        array = storage.astype(array, dtype.np)
    return Tensor._wrap(storage.contiguous(array), dtype, like._device)


def check_float(t, name):
    """PyTorch's dtype errors: LAPACK routines take float32/float64/complex64/complex128 only."""
    if t._dtype.category not in (D._FLOAT, D._COMPLEX):
        raise RuntimeError(
            f"{name}: Expected a floating point or complex tensor as input. Got {type_name(t._dtype)}")
    if t._dtype in (D.float16, D.bfloat16, D.complex32):
        raise RuntimeError(f"{name}: Low precision dtypes not supported. Got {type_name(t._dtype)}")


def check_matrix(t, name, arg="A"):
    """At least 2 dims, float32/float64/complex64/complex128."""
    if t.dim() < 2:
        raise RuntimeError(f"{name}: The input tensor {arg} must have at least 2 dimensions.")
    check_float(t, name)


def check_square(t, name, arg="A"):
    """Batches of square float32/float64/complex64/complex128 matrices."""
    check_matrix(t, name, arg)
    m, n = t.shape[-2], t.shape[-1]
    if m != n:
        raise RuntimeError(f"{name}: {arg} must be batches of square matrices, but they are {m} by {n} matrices")


def batch_prefix(index, batch_shape):
    """PyTorch's "(Batch element i): " prefix for an error in one matrix of a batch."""
    return f"(Batch element {index}): " if batch_shape else ""
