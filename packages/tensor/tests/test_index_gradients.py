"""Gradients through index ops (gather, index_select, take, masked_select, flip, scatter_add,
index_put, x[index], x[mask]): PyTorch's on the CPU (where installed), the CPU's on CUDA
(Numba's simulator in CI), computed on the device where ember's rule runs there.
"""
import contextlib

import numpy as np
import pytest

import ember_tensor as torch
from cuda_guard import DEVICES, device_only, same_as_cpu
from index_cases import SIGNED


# (name, call on x and an index, the index, whether the gradient is computed on the device:
# x[index]'s goes through ember_autograd's _rules/_scatter._IndexAddFlat, which still adds on
# the host, outside this package; only its values are compared).
GRAD_CASES = [
    ("gather", lambda x, i: x.gather(1, i), [[0, 0], [3, 1], [2, 2]], True),
    ("index_select", lambda x, i: x.index_select(1, i), [3, 3, 0], True),
    ("take", lambda x, i: x.take(i), [0, 0, 11], True),
    ("masked_select", lambda x, m: x.masked_select(m), SIGNED > 0, True),
    ("flip", lambda x, i: x.flip(1), [0], True),
    ("scatter_add", lambda x, i: x.scatter_add(0, i, x[:1] * 2), [[0, 1, 0, 2]], True),
    ("index_put", lambda x, i: x.index_put((i,), x[0] * 3, accumulate=True), [1, 1], True),
    ("getitem", lambda x, i: x[i], [2, 0, 2], False),
    ("getitem mask", lambda x, i: x[x > 0], [0], False),
]


def _gradient(lib, call, index, device="cpu"):
    """x.grad of sum(call(x, index) * weights) for x = SIGNED in float64 (float32 weights), made by `lib` on `device`."""
    x = lib.tensor(SIGNED, device=device, requires_grad=True)
    out = call(x, lib.tensor(index, device=device))
    weights = lib.arange(out.numel(), dtype=lib.float32, device=device).reshape(out.shape) % 5
    (out * weights).sum().backward()
    return x.grad


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name,call,index,on_device", GRAD_CASES, ids=[c[0] for c in GRAD_CASES])
def test_gradients_through_index_ops(name, call, index, on_device, device):
    """The input's gradient through each index op: PyTorch's on the CPU (where installed),
    the CPU's on CUDA, computed there (repeats add up)."""
    pytest.importorskip("ember_autograd")
    got = _gradient(torch, call, index)
    if device == "cpu":
        reference = pytest.importorskip("torch")
        want = _gradient(reference, call, index).numpy()
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-6)
        return
    with device_only(allow_scalar_reads=True) if on_device else contextlib.nullcontext():
        on_cuda = _gradient(torch, call, index, device)
    same_as_cpu(got, on_cuda)
