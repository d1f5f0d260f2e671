"""Gradients through det, slogdet, inv, solve, solve_triangular and cholesky on CUDA
tensors equal the CPU's.

The forward ops run on the device (ember_tensor's `_backends.cuda.linalg`); the rules are the
same differentiable ops, so the gradient of a CUDA input must equal the CPU input's.
Runs on Numba's CUDA simulator unless NUMBA_ENABLE_CUDASIM=0 is set (tiny shapes: the
simulator runs a Python thread per CUDA thread).
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

rng = np.random.default_rng(0)
MATRICES = rng.standard_normal((2, 3, 3)) + 3 * np.eye(3)
SPD = MATRICES @ np.swapaxes(MATRICES, -1, -2) + np.eye(3)
RHS = rng.standard_normal((2, 3, 2))
SINGULAR = np.array([[1., 2., 3.], [2., 4., 6.], [0., 1., 1.]])

OPS = {  # name: (op of (A, B), A's values)
    "det": (lambda a, b: et.linalg.det(a), MATRICES),
    "det_singular": (lambda a, b: et.linalg.det(a), SINGULAR),
    "slogdet": (lambda a, b: et.linalg.slogdet(a).logabsdet, MATRICES),
    "logdet": (lambda a, b: et.logdet(a @ a.mT), MATRICES),
    "inv": (lambda a, b: et.linalg.inv(a), MATRICES),
    "solve": (lambda a, b: et.linalg.solve(a, b), MATRICES),
    "solve_vector": (lambda a, b: et.linalg.solve(a, b[..., 0]), MATRICES),
    "solve_right": (lambda a, b: et.linalg.solve(a, b.mT, left=False), MATRICES),
    "solve_triangular": (lambda a, b: et.linalg.solve_triangular(a, b, upper=True), MATRICES),
    "solve_triangular_right_unit": (
        lambda a, b: et.linalg.solve_triangular(a, b.mT, upper=False, left=False, unitriangular=True), MATRICES),
    "cholesky": (lambda a, b: et.linalg.cholesky(a), SPD),
    "cholesky_upper": (lambda a, b: et.linalg.cholesky(a, upper=True), SPD),
    "cholesky_solve": (lambda a, b: et.cholesky_solve(b, et.linalg.cholesky(a)), SPD),
}


def _grads(name, device):
    op, values = OPS[name]
    a = et.tensor(values, dtype=et.float64, device=device).requires_grad_()
    b = et.tensor(RHS if values.ndim == 3 else RHS[0], dtype=et.float64, device=device).requires_grad_()
    y = op(a, b)
    weights = et.arange(1, y.numel() + 1, dtype=et.float64, device=device).reshape(y.shape)
    (y * weights).sum().backward()
    grad_b = b.grad.cpu().numpy() if b.grad is not None else None
    return y.detach().cpu().numpy(), a.grad.cpu().numpy(), grad_b, a.grad.device


@pytest.mark.parametrize("name", list(OPS))
def test_backward_on_cuda_matches_cpu(name):
    y_cpu, ga_cpu, gb_cpu, _ = _grads(name, "cpu")
    y_cuda, ga_cuda, gb_cuda, device = _grads(name, "cuda")
    assert device.type == "cuda"
    np.testing.assert_allclose(y_cuda, y_cpu, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(ga_cuda, ga_cpu, rtol=1e-9, atol=1e-10)
    if gb_cpu is None:
        assert gb_cuda is None
    else:
        np.testing.assert_allclose(gb_cuda, gb_cpu, rtol=1e-9, atol=1e-10)
