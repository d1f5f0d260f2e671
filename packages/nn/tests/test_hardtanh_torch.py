"""hardtanh and relu6 (functional, module and in-place forms) against PyTorch at their
edges: -0.0 and +0.0, the limits themselves, infinities, NaN, on the CPU and on CUDA
(Numba's simulator unless NUMBA_ENABLE_CUDASIM=0), in float32 and float64.

PyTorch's values are clamp's (an input equal to a limit is returned itself, so -0.0 stays
-0.0), its gradient hardtanh_backward's: zero at and beyond the limits.
"""
import math
import os
import sys

import pytest

os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")
if "numba" in sys.modules:  # numba read its config at import: make it see the variable
    from numba.core import config as _numba_config
    _numba_config.reload_config()

import ember_autograd  # noqa: F401, E402 - backward()
import ember_nn as nn  # noqa: E402
import ember_nn.functional as F  # noqa: E402
import ember_tensor as E  # noqa: E402

torch = pytest.importorskip("torch")

nan, inf = math.nan, math.inf
# Every edge once; NaN's gradient is checked on its own below (PyTorch's differs by loop).
EDGES = [-0.0, 0.0, -1.0, 1.0, 6.0, -2.0, 7.0, 0.5, -0.5, inf, -inf, 3.0, -6.0]
DEVICES = ["cpu"] + (["cuda"] if E.cuda.is_available() else [])
DTYPES = ["float32", "float64"]

# id, ember's call, PyTorch's call (each given its library's functional module and nn)
CALLS = [
    ("relu6", lambda F, nn, x: F.relu6(x)),
    ("hardtanh", lambda F, nn, x: F.hardtanh(x)),
    ("hardtanh(-2, 2)", lambda F, nn, x: F.hardtanh(x, -2.0, 2.0)),
    ("hardtanh(-0., 0.)", lambda F, nn, x: F.hardtanh(x, -0.0, 0.0)),
    ("hardtanh(0., 0.)", lambda F, nn, x: F.hardtanh(x, 0.0, 0.0)),
    ("hardtanh(-1, 1) keywords", lambda F, nn, x: F.hardtanh(x, min_val=-1, max_val=1)),
    ("relu6 in place", lambda F, nn, x: F.relu6(x.clone(), inplace=True)),
    ("hardtanh_", lambda F, nn, x: F.hardtanh_(x.clone(), -0.5, 6.0)),
    ("hardtanh in place", lambda F, nn, x: F.hardtanh(x.clone(), 0.0, 1.0, inplace=True)),
    ("nn.ReLU6", lambda F, nn, x: nn.ReLU6()(x)),
    ("nn.ReLU6(inplace)", lambda F, nn, x: nn.ReLU6(inplace=True)(x.clone())),
    ("nn.Hardtanh", lambda F, nn, x: nn.Hardtanh(-0.0, 1.0)(x)),
    ("nn.Hardtanh(inplace)", lambda F, nn, x: nn.Hardtanh(-1.0, 6.0, inplace=True)(x.clone())),
]


def _signed(values):
    # (value, sign) pairs, so that -0.0 and +0.0 compare different
    return [(v, math.copysign(1.0, v)) for v in values]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("call", [c[1] for c in CALLS], ids=[c[0] for c in CALLS])
def test_values_and_gradients_match_pytorch(call, dtype, device):
    x = E.tensor(EDGES, dtype=getattr(E, dtype), device=device).requires_grad_()
    y = call(F, nn, x)
    y.backward(E.arange(1, len(EDGES) + 1, dtype=x.dtype, device=device))
    tx = torch.tensor(EDGES, dtype=getattr(torch, dtype)).requires_grad_()
    ty = call(torch.nn.functional, torch.nn, tx)
    ty.backward(torch.arange(1, len(EDGES) + 1, dtype=tx.dtype))
    assert y.device.type == device and y.dtype == x.dtype
    assert _signed(y.tolist()) == _signed(ty.tolist())
    assert x.grad.tolist() == tx.grad.tolist()
    assert type(y.grad_fn).__name__ == type(ty.grad_fn).__name__ == "HardtanhBackward0"


@pytest.mark.parametrize("device", DEVICES)
def test_nan_stays_nan_and_passes_its_gradient(device):
    # PyTorch's CUDA kernel and its CPU scalar loop test `x <= min || x >= max`, false for
    # NaN; its vectorised CPU loop (16+ float32 elements) zeroes it. ember keeps the first.
    x = E.tensor([nan, 0.5], device=device).requires_grad_()
    y = F.relu6(x)
    y.sum().backward()
    assert math.isnan(y.tolist()[0]) and x.grad.tolist() == [1.0, 1.0]
    tx = torch.tensor([nan, 0.5]).requires_grad_()
    torch.nn.functional.relu6(tx).sum().backward()
    assert tx.grad.tolist() == [1.0, 1.0]


def test_second_derivative_matches_pytorch():
    x = E.tensor([-1.0, 0.0, 0.3, 1.0, 2.0], dtype=E.float64).requires_grad_()
    g, = ember_autograd.grad(F.hardtanh(x * x).sum(), x, create_graph=True)
    gg, = ember_autograd.grad(g.sum(), x)
    tx = torch.tensor([-1.0, 0.0, 0.3, 1.0, 2.0], dtype=torch.float64).requires_grad_()
    tg, = torch.autograd.grad(torch.nn.functional.hardtanh(tx * tx).sum(), tx, create_graph=True)
    tgg, = torch.autograd.grad(tg.sum(), tx)
    assert g.tolist() == pytest.approx(tg.tolist()) and gg.tolist() == pytest.approx(tgg.tolist())


def test_output_changed_in_place_still_backpropagates():
    # The out-of-place form saves its input, as PyTorch's does, not its output.
    x = E.tensor([-2.0, 0.5, 3.0]).requires_grad_()
    y = F.relu6(x)
    y.add_(1.0)
    y.sum().backward()
    assert x.grad.tolist() == [0.0, 1.0, 1.0]


@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8"])
def test_integer_inputs_take_truncated_limits(dtype):
    values = [0, 1, 2, 7, 200 if dtype == "uint8" else -3]
    y = F.hardtanh(E.tensor(values, dtype=getattr(E, dtype)), 0.5, 6.5)
    ty = torch.nn.functional.hardtanh(torch.tensor(values, dtype=getattr(torch, dtype)), 0.5, 6.5)
    assert y.dtype == getattr(E, dtype) and y.tolist() == ty.tolist()
    assert F.relu6(E.tensor(values, dtype=getattr(E, dtype))).tolist() == \
        torch.nn.functional.relu6(torch.tensor(values, dtype=getattr(torch, dtype))).tolist()


@pytest.mark.parametrize("call, error", [
    (lambda F, t: F.hardtanh(t.tensor([True, False])), RuntimeError),
    (lambda F, t: F.hardtanh(t.tensor([1, 2], dtype=t.uint8)), RuntimeError),
    (lambda F, t: F.hardtanh(t.tensor([1.0]), 2.0, 1.0), ValueError),
    (lambda F, t: F.hardtanh(t.tensor([1j])), NotImplementedError),
], ids=["bool", "uint8 with a negative limit", "min above max", "complex"])
def test_errors_match_pytorch(call, error):
    with pytest.raises(error) as theirs:
        call(torch.nn.functional, torch)
    with pytest.raises(error, match=str(theirs.value).split("\n")[0]):
        call(F, E)
