"""The common functional ops (activations, losses, normalisation, linear, dropout) on CUDA
tensors: forward and backward equal the CPU's and run on the device. The CUDA forward
and backward run inside the tensor tests' `device_only()`, in which copying a CUDA
array to the host fails (one scalar read is allowed: nll_loss's bounds check).

CUDA runs on Numba's simulator unless NUMBA_ENABLE_CUDASIM=0 is set (on a real GPU).
"""
import os
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")
if "numba" in sys.modules:  # numba read its config at import: make it see the variable
    from numba.core import config as _numba_config
    _numba_config.reload_config()

import ember_autograd  # noqa: F401 - backward()
import ember_nn.functional as F
import ember_tensor as et

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tensor" / "tests"))
from cuda_guard import device_only

pytestmark = pytest.mark.skipif(not et.cuda.is_available(), reason="no CUDA and no simulator")

rng = np.random.default_rng(5)
X = rng.standard_normal((4, 3)) * 2
PROBS = rng.uniform(0.05, 0.95, (4, 3))
LABELS = np.array([0, 2, 1, 2])
IMAGES = rng.standard_normal((2, 4, 3, 3))


def _long(a):
    return a.astype(np.int64)


# (name, function of (x, *extras), x values, extras as NumPy arrays).
CASES = [
    ("relu", F.relu, X, ()),
    ("gelu", F.gelu, X, ()),
    ("gelu_tanh", lambda x: F.gelu(x, approximate="tanh"), X, ()),
    ("silu", F.silu, X, ()),
    ("elu", F.elu, X, ()),
    ("leaky_relu", F.leaky_relu, X, ()),
    ("softplus", F.softplus, X, ()),
    ("sigmoid", F.sigmoid, X, ()),
    ("tanh", F.tanh, X, ()),
    ("hardswish", F.hardswish, X, ()),
    ("softmax", lambda x: F.softmax(x, dim=1), X, ()),
    ("softmax_dim0", lambda x: F.softmax(x, dim=0), X, ()),
    ("log_softmax", lambda x: F.log_softmax(x, dim=-1), X, ()),
    ("cross_entropy", F.cross_entropy, X, (_long(LABELS),)),
    ("cross_entropy_weight_ignore", lambda x, t, w: F.cross_entropy(x, t, w, ignore_index=1), X,
     (_long(LABELS), np.array([0.5, 1.0, 2.0]))),
    ("cross_entropy_smoothing", lambda x, t: F.cross_entropy(x, t, label_smoothing=0.1), X, (_long(LABELS),)),
    ("cross_entropy_probabilities", F.cross_entropy, X, (PROBS / PROBS.sum(1, keepdims=True),)),
    ("cross_entropy_spatial", F.cross_entropy, IMAGES, (_long(rng.integers(0, 4, (2, 3, 3))),)),
    ("nll_loss_sum", lambda x, t: F.nll_loss(x, t, reduction="sum"), X, (_long(LABELS),)),
    ("mse_loss", F.mse_loss, X, (PROBS,)),
    ("l1_loss", F.l1_loss, X, (PROBS,)),
    ("smooth_l1_loss", F.smooth_l1_loss, X, (PROBS,)),
    ("huber_loss", F.huber_loss, X, (PROBS,)),
    ("binary_cross_entropy", F.binary_cross_entropy, PROBS, (rng.uniform(0, 1, (4, 3)),)),
    ("binary_cross_entropy_with_logits", F.binary_cross_entropy_with_logits, X, (PROBS,)),
    ("kl_div", lambda x, t: F.kl_div(x, t, reduction="batchmean"), X, (PROBS,)),
    ("multilabel_margin_loss", F.multilabel_margin_loss, X, (_long(np.array([[0, 1, -1], [2, -1, 0], [1, 0, 2],
                                                                              [-1, 0, 0]])),)),
    ("multi_margin_loss", F.multi_margin_loss, X, (_long(LABELS),)),
    ("multilabel_soft_margin_loss", F.multilabel_soft_margin_loss, X, ((PROBS > 0.5).astype(np.float64),)),
    ("poisson_nll_loss", F.poisson_nll_loss, X, (PROBS,)),
    ("gaussian_nll_loss", F.gaussian_nll_loss, X, (PROBS, PROBS + 1)),
    ("triplet_margin_loss", F.triplet_margin_loss, X, (PROBS, 2 * X)),
    ("cosine_embedding_loss", F.cosine_embedding_loss, X, (PROBS, np.array([1.0, -1.0, 1.0, -1.0]))),
    ("linear", F.linear, X, (rng.standard_normal((5, 3)), rng.standard_normal(5))),
    ("layer_norm", lambda x, w, b: F.layer_norm(x, (3,), w, b), X, (rng.uniform(0.5, 2, 3), rng.standard_normal(3))),
    ("group_norm", lambda x, w, b: F.group_norm(x, 2, w, b), IMAGES, (rng.uniform(0.5, 2, 4), rng.standard_normal(4))),
    ("batch_norm_train", lambda x, rm, rv: F.batch_norm(x, rm, rv, training=True), IMAGES,
     (np.zeros(4), np.ones(4))),
    ("batch_norm_eval", lambda x, rm, rv, w: F.batch_norm(x, rm, rv, w), IMAGES,
     (rng.standard_normal(4), rng.uniform(0.5, 2, 4), rng.uniform(0.5, 2, 4))),
    ("dropout_eval", lambda x: F.dropout(x, 0.5, training=False), X, ()),
    ("normalize", F.normalize, X, ()),
]


def _tensors(values, device, requires_grad):
    t = et.tensor(values, dtype=et.int64 if values.dtype == np.int64 else et.float32, device=device)
    return t.requires_grad_() if requires_grad else t


def _run(fn, x_values, extras, device, direction):
    """(output, input gradient) of fn on `device`; the gradient along `direction`."""
    x = _tensors(x_values, device, True)
    args = [_tensors(e, device, False) for e in extras]
    out = fn(x, *args)
    weighted = out * et.tensor(direction, dtype=out.dtype, device=device) if direction is not None else out
    weighted.sum().backward()
    return out, x.grad, args


@pytest.mark.parametrize("name, fn, x_values, extras", CASES, ids=[c[0] for c in CASES])
def test_functional_on_cuda_matches_cpu(name, fn, x_values, extras):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out_cpu, _, _ = _run(fn, x_values, extras, "cpu", None)
        direction = rng.standard_normal(tuple(out_cpu.shape))
        out_cpu, grad_cpu, args_cpu = _run(fn, x_values, extras, "cpu", direction)
        with device_only(allow_scalar_reads=True):
            out_gpu, grad_gpu, args_gpu = _run(fn, x_values, extras, "cuda", direction)
    assert out_gpu.device.type == "cuda" and grad_gpu.device.type == "cuda"
    assert (out_gpu.dtype, out_gpu.shape) == (out_cpu.dtype, out_cpu.shape)
    np.testing.assert_allclose(out_gpu.detach().cpu().numpy(), out_cpu.detach().numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(grad_gpu.cpu().numpy(), grad_cpu.numpy(), rtol=1e-5, atol=1e-5)
    for a, b in zip(args_cpu, args_gpu):  # running statistics updated alike
        np.testing.assert_allclose(b.cpu().numpy(), a.numpy(), rtol=1e-5, atol=1e-6)


def test_dropout_training_on_cuda():
    """dropout's mask comes from the CUDA RNG; the rest of it must stay on the device."""
    x = et.ones(4, 5, device="cuda", requires_grad=True)
    with device_only():
        out = F.dropout(x, 0.5, training=True)
        out.sum().backward()
    kept = out.detach().cpu().numpy() != 0
    np.testing.assert_allclose(out.detach().cpu().numpy()[kept], 2.0)
    np.testing.assert_allclose(x.grad.cpu().numpy(), np.where(kept, 2.0, 0.0))


W = rng.standard_normal((2, 3))
# Second derivatives: the gradient is built with create_graph=True (the norms then take
# their composite backward) and differentiated again, on the device.
DOUBLE_BACKWARD = [
    ("layer_norm", lambda x: F.layer_norm(x, (3,)) * x, X),
    ("batch_norm", lambda x: F.batch_norm(x, None, None, training=True) ** 2, IMAGES),
    ("group_norm", lambda x: F.group_norm(x, 2) ** 3, IMAGES),
    ("cross_entropy", lambda x: F.cross_entropy(x, et.tensor(LABELS, device=x.device)), X),
    ("softmax", lambda x: F.softmax(x, 1) ** 2, X),
    ("log_softmax", lambda x: F.log_softmax(x, 0) ** 2, X),
    ("linear", lambda x: F.linear(x, et.tensor(W, dtype=x.dtype, device=x.device)) ** 2, X),
]


def _grad_and_grad_of_norm(fn, x_values, device):
    x = et.tensor(x_values, device=device).requires_grad_()
    (g,) = ember_autograd.grad(fn(x).sum(), (x,), create_graph=True)
    (gg,) = ember_autograd.grad((g * g).sum(), (x,))
    return g.detach(), gg


@pytest.mark.parametrize("name, fn, x_values", DOUBLE_BACKWARD, ids=[c[0] for c in DOUBLE_BACKWARD])
def test_double_backward_on_cuda_matches_cpu(name, fn, x_values):
    expected = _grad_and_grad_of_norm(fn, x_values, "cpu")
    with device_only(allow_scalar_reads=True):
        got = _grad_and_grad_of_norm(fn, x_values, "cuda")
    for e, g in zip(expected, got):
        assert g.device.type == "cuda"
        np.testing.assert_allclose(g.cpu().numpy(), e.numpy(), rtol=1e-9, atol=1e-9)


EMBEDDING_BAG_CASES = [
    dict(mode="sum"), dict(mode="mean"), dict(mode="max"),
    dict(mode="sum", per_sample_weights=True, include_last_offset=True),
    dict(mode="mean", scale_grad_by_freq=True), dict(mode="sum", sparse=True, per_sample_weights=True),
]


@pytest.mark.parametrize("case", EMBEDDING_BAG_CASES, ids=lambda c: "-".join(f"{k}={v}" for k, v in c.items()))
def test_embedding_bag_on_cuda_matches_cpu(case):
    """embedding_bag of CUDA tensors runs its kernels on the device (one thread per (bag,
    column) forward, atomic scatter-add backward) and gives the CPU's values and gradients
    of the weight and per_sample_weights, padding_idx and empty bags included."""
    case = dict(case)
    rng = np.random.default_rng(3)
    weight = rng.standard_normal((10, 4)).astype(np.float32)
    index = np.array([1, 2, 4, 5, 4, 3, 0, 9])
    offsets = np.array([0, 3, 3, 6] + ([8] if case.get("include_last_offset") else []))
    per_sample = rng.standard_normal(len(index)).astype(np.float32) if case.pop("per_sample_weights", False) else None
    results = {}
    for device in ("cpu", "cuda"):
        w = et.tensor(weight, device=device, requires_grad=True)
        psw = None if per_sample is None else et.tensor(per_sample, device=device, requires_grad=True)
        with device_only(allow_scalar_reads=True):
            out = F.embedding_bag(et.tensor(index, device=device), w, et.tensor(offsets, device=device),
                                  padding_idx=4, per_sample_weights=psw, **case)
            assert out.device.type == device
            out.pow(2).sum().backward()
        grad = w.grad.to_dense() if w.grad.is_sparse else w.grad
        results[device] = (out.detach().cpu().numpy(), grad.cpu().numpy(),
                           None if psw is None else psw.grad.cpu().numpy())
    for got, want in zip(results["cuda"], results["cpu"]):
        if want is not None:
            np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
