"""Gradients through sorting, selection and scans on CUDA tensors equal the CPU's.

The forward ops run on the device (ember_tensor's `_backends.cuda.sorting` / `_backends.cuda.scans`); the
rules are the same differentiable ops, so the gradient of a CUDA input must equal the
CPU input's. Runs on Numba's CUDA simulator unless NUMBA_ENABLE_CUDASIM=0 is set (tiny
shapes: the simulator runs a Python thread per CUDA thread).
"""
import os
import sys

os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")
if "numba" in sys.modules:  # numba read its config at import: make it see the variable
    from numba.core import config as _numba_config
    _numba_config.reload_config()

import numpy as np  # noqa: E402
import pytest  # noqa: E402

import ember_autograd  # noqa: E402,F401 - installs the rules
import ember_tensor as et  # noqa: E402

pytestmark = pytest.mark.skipif(not et.cuda.is_available(), reason="no CUDA and no simulator")

# Ties and a repeated maximum: the rules must route gradients to the indices the
# forward chose, which the device must choose exactly as the CPU does.
VALUES = np.array([[3., 1., 2., 1., 5.], [0., 5., 5., -2., 1.], [4., 4., 4., 4., 4.]])

OPS = {
    "sort": lambda x: x.sort(1, descending=True).values,
    "sort_dim0": lambda x: x.sort(0).values,
    "topk": lambda x: x.topk(2, 1).values,
    "topk_smallest": lambda x: x.topk(2, 0, largest=False).values,
    "kthvalue": lambda x: x.kthvalue(2, 1).values,
    "median_dim": lambda x: x.median(1).values,
    "median_all": lambda x: x.median(),
    "nanmedian": lambda x: x.nanmedian(0).values,
    "mode": lambda x: x.mode(1).values,
    "cumsum": lambda x: x.cumsum(1),
    "cumprod": lambda x: x.cumprod(0),
    "cummax": lambda x: x.cummax(1).values,
    "cummin": lambda x: x.cummin(0).values,
    "logcumsumexp": lambda x: et.logcumsumexp(x, 1),
    "msort": lambda x: et.msort(x),
}


def _grad(op, device, transposed):
    base = et.tensor(VALUES.T.copy() if transposed else VALUES, dtype=et.float64, device=device)
    x = (base.t() if transposed else base).detach().requires_grad_()
    y = op(x)
    weights = et.arange(1, y.numel() + 1, dtype=et.float64, device=device).reshape(y.shape)
    (y * weights).sum().backward()
    return y.detach().cpu().numpy(), x.grad.cpu().numpy(), x.grad.device


@pytest.mark.parametrize("name", list(OPS))
@pytest.mark.parametrize("transposed", [False, True], ids=["contiguous", "transposed"])
def test_backward_on_cuda_matches_cpu(name, transposed):
    op = OPS[name]
    y_cpu, g_cpu, _ = _grad(op, "cpu", transposed)
    y_cuda, g_cuda, device = _grad(op, "cuda", transposed)
    assert device.type == "cuda"
    np.testing.assert_allclose(y_cuda, y_cpu, rtol=1e-12)
    np.testing.assert_allclose(g_cuda, g_cpu, rtol=1e-12, atol=1e-12)
