"""cross_entropy of (N, C) float32/float64 logits at class indices runs as one op,
`nn_ops.cross_entropy_rows` (log-sum-exp and the target's loss in the passes that read a
row; the backward in one pass): its values and gradients are log_softmax's then
nll_loss's bit for bit, on every device, and the other cases keep the composite."""
import numpy as np
import pytest

import ember_tensor as E
from cuda_guard import DEVICES
from ember_tensor import nn_ops as K

RNG = np.random.default_rng(31)


def _logits(n, c, dtype):
    x = (RNG.standard_normal((n, c)) * 4).astype(dtype)
    if n > 7:
        x[3, 1] = np.nan  # a NaN row
        x[5] = -np.inf  # a row of -inf
        x[6, 2] = np.inf
    return x


def _composite(x, t, w, reduction, ignore_index):
    return K.nll_loss(K.log_softmax(x, 1), t, w, reduction, ignore_index)


def _composite_backward(g, x, t, w, reduction, ignore_index):
    logp = K.log_softmax(x, 1)
    return K.log_softmax_backward(K.nll_loss_backward(g, logp, t, w, reduction, ignore_index), logp, 1)


# Shapes by device: the CUDA simulator runs a kernel a thread at a time (small ones only).
CASES = [pytest.param(device.values[0], n, c, marks=device.marks, id=f"{device.values[0]}-{n}x{c}")
         for device in DEVICES for n, c in [(40, 7), (300, 1000), (0, 5)]
         if device.values[0] == "cpu" or n * c <= 1000]


@pytest.mark.parametrize("device, n, c", CASES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weighted", [False, True])
def test_rows_equal_log_softmax_then_nll_loss_bit_for_bit(device, n, c, dtype, reduction, weighted):
    x = E.tensor(_logits(n, c, dtype), device=device)
    target = RNG.integers(0, c, n)
    if n > 9:
        target[9] = -100  # ignored
    t = E.tensor(target, device=device)
    w = E.tensor(RNG.random(c).astype(dtype), device=device) if weighted else None
    loss, saved = K.cross_entropy_rows(x, t, w, reduction, -100)
    np.testing.assert_array_equal(loss.cpu().numpy(), _composite(x, t, w, reduction, -100).cpu().numpy())
    g = E.tensor(RNG.standard_normal(n if reduction == "none" else ()).astype(dtype), device=device)
    got = K.cross_entropy_rows_backward(g, x, t, w, saved, reduction, -100)
    np.testing.assert_array_equal(got.cpu().numpy(), _composite_backward(g, x, t, w, reduction, -100).cpu().numpy())


def test_errors_are_nll_losss():
    x = E.randn(4, 3)
    with pytest.raises(IndexError, match="Target 7 is out of bounds."):
        K.cross_entropy_loss(x, E.tensor([0, 7, 1, 2]))
    with pytest.raises(RuntimeError, match="expected target dtype to be Long or Byte, but got Float"):
        K.cross_entropy_rows(x, E.zeros(4), None, "mean", -100)
    with pytest.raises(ValueError, match=r"Expected input batch_size \(4\) to match target batch_size \(3\)"):
        K.cross_entropy_loss(x, E.tensor([0, 1, 2]))
