"""Custom kernels: a fused ``ember.kernel`` against the same expression in built-in ops.

swish(x) = x * sigmoid(x) written with built-in ops reads and writes several 1e7-element
temporaries; as one kernel it reads x once and writes the result once. The ember column
is the fused kernel; the torch column is PyTorch's ``x * torch.sigmoid(x)`` (what a user
writes without a custom kernel); a second row times ember's own built-in composition.
"""
import math

from ._harness import Workload

N = 10_000_000
_SWISH = None


def _swish_kernel():
    global _SWISH
    if _SWISH is None:
        import ember_tensor as et

        @et.kernel
        def swish(x):
            return x / (1.0 + math.exp(-x))

        _SWISH = swish
    return _SWISH


def _fused(lib):
    if lib == "ember":
        import ember_tensor as et

        x, swish = et.rand(N), _swish_kernel()
        return lambda: swish(x)
    import torch

    x = torch.rand(N)
    return lambda: x * torch.sigmoid(x)


def _composed(lib):
    if lib == "ember":
        import ember_tensor as t
    else:
        import torch as t
    x = t.rand(N)
    return lambda: x * t.sigmoid(x)


WORKLOADS = [
    Workload("swish 1e7 f32: ember.kernel (fused) vs torch x*sigmoid(x)", _fused, group="custom", work=8 * N,
             unit="B"),
    Workload("swish 1e7 f32: built-in ops x*sigmoid(x)", _composed, group="custom", work=8 * N, unit="B"),
]
