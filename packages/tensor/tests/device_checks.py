"""`same_on(device, call, *args)`: one check of a call, written once, for every device of
the `device` parameter (cuda_guard.DEVICES).

On the CPU a call on narrow dtypes (float16, int8, bool ...) must give what it gives for
its operands widened to float64 or int64, cast back: each dtype's kernels agree with the
wide ones, which the NumPy-reference tests check. On CUDA it must give the CPU's result,
computed on the device (`cuda_guard.matches_the_cpu`). An expected error is the same
type on both, word for word alike. `raises_on` pins an error's exact message.
"""
import contextlib
import re

import numpy as np
import pytest

import ember_tensor as et
from cuda_guard import device_only, matches_the_cpu, on_cuda

__all__ = ["same_on", "raises_on", "widened"]

# How far a narrow floating result may lie from the wide result rounded to its dtype.
WIDE_TOL = {et.float16: 2e-3, et.bfloat16: 2e-2, et.float32: 1e-6, et.float64: 1e-12}


def widened(x):
    """`x` in the widest dtype of its kind: float64 for a floating one, int64 for another
    (bool included); anything but a tensor as it is."""
    if not isinstance(x, et.Tensor):
        return x
    return x.double() if x.dtype.is_floating_point else x.long()


def _guarded(device, scalar_reads):
    """device_only() on CUDA (single elements readable when `scalar_reads`); nothing on the CPU."""
    return device_only(allow_scalar_reads=scalar_reads) if device != "cpu" else contextlib.nullcontext()


def _as_on_cuda(message):
    """A CPU error as CUDA words it: PyTorch's dtype errors name the device's kernel
    ("median_cpu", "median_cuda")."""
    return re.sub(r'"(\w+)_cpu"', r'"\1_cuda"', message)


def same_on(device, call, *args, tol=1e-6, raises=None, scalar_reads=False):
    """call(*args) on `device` (args are CPU tensors or other values).

    On the CPU: the result equals call on the widened args cast back to its dtypes (args
    already wide: the call runs), or raises `raises`. On CUDA (args moved with their strides): the CPU's result within
    `tol` inside device_only (single elements may be read back when `scalar_reads`), or
    the CPU's error word for word, the kernel named for CUDA."""
    if raises is not None:
        with pytest.raises(raises) as on_the_cpu:
            call(*args)
        if device != "cpu":
            moved = [on_cuda(a) if isinstance(a, et.Tensor) else a for a in args]
            with _guarded(device, scalar_reads), pytest.raises(raises) as on_cuda_too:
                call(*moved)
            assert str(on_cuda_too.value) == _as_on_cuda(str(on_the_cpu.value))
        return
    if device != "cpu":
        shapes = [tuple(a.shape) for a in args if isinstance(a, et.Tensor)]
        matches_the_cpu(call, list(args), f"{[a.dtype for a in args if isinstance(a, et.Tensor)]}, shapes {shapes}",
                        reads_a_flag=scalar_reads, tol=tol)
        return
    wide_args = [widened(a) for a in args]
    if all(not isinstance(a, et.Tensor) or w.dtype is a.dtype for a, w in zip(args, wide_args)):
        call(*args)  # already wide: the NumPy-reference tests hold these dtypes
        return
    got, wide = call(*args), call(*wide_args)
    got, wide = (got, wide) if isinstance(got, tuple) else ((got,), (wide,))
    assert len(got) == len(wide)
    for g, w in zip(got, wide):
        w = w.to(g.dtype)
        assert g.shape == w.shape, f"{tuple(g.shape)} != {tuple(w.shape)}"
        tol = WIDE_TOL.get(g.dtype, 0)
        np.testing.assert_allclose(widened(g).numpy(), widened(w).numpy(), rtol=tol, atol=tol, equal_nan=True)


def raises_on(device, call, x, exc, message):
    """call(x on `device`) raises `exc` with exactly `message`, whose "{dev}" is the
    device type, without copying a CUDA operand to the host."""
    x = on_cuda(x) if device != "cpu" else x
    with _guarded(device, False), pytest.raises(exc) as raised:
        call(x)
    assert str(raised.value) == message.format(dev=device)
