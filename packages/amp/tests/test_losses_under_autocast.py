"""The losses on PyTorch's float32 lists under autocast: result and gradient dtypes against
PyTorch's CPU autocast (the test-only oracle), the CUDA lists on the simulator, and
binary_cross_entropy refused under CUDA autocast with PyTorch's message."""
import glob
import os
import sys

import numpy as np
import pytest

os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")
if "numba" in sys.modules:  # numba read its config at import: make it see the variable
    from numba.core import config as _numba_config
    _numba_config.reload_config()

import ember_amp  # noqa: E402
import ember_tensor as et  # noqa: E402
import _functional as EF  # noqa: E402
from _oplist_cases import LOSS_CASES  # noqa: E402

_EMBER = {"bfloat16": et.bfloat16, "float16": et.float16, "float32": et.float32}


def _values(specs, seed=0):
    rng = np.random.default_rng(seed)
    out = []
    for spec in specs:
        if isinstance(spec, str):  # "i:n:classes": int64 targets
            _, n, classes = spec.split(":")
            out.append(rng.integers(0, int(classes), int(n)))
        else:
            out.append(rng.standard_normal(spec).astype(np.float32))
    return out


def _leaves(lib, values, dtype, **where):
    """The values as `lib` tensors: floats in `dtype`, integers as they are; the first (the
    loss's input) requires grad."""
    tensors = [lib.tensor(v, **where) if v.dtype.kind == "i" else lib.tensor(v, **where).to(dtype)
               for v in values]
    tensors[0].requires_grad_()
    return tensors


@pytest.mark.parametrize("region", ["bfloat16", "float16"])
@pytest.mark.parametrize("name, specs, fn", LOSS_CASES, ids=[c[0] for c in LOSS_CASES])
def test_loss_and_gradient_dtypes_match_pytorch_cpu_autocast(name, specs, fn, region):
    torch = pytest.importorskip("torch")
    values = _values(specs)
    theirs = _leaves(torch, values, getattr(torch, region))
    with torch.autocast("cpu", dtype=getattr(torch, region)):
        expected = fn(torch, torch.nn.functional, *theirs)
    expected.backward()
    ours = _leaves(et, values, _EMBER[region])
    with ember_amp.autocast("cpu", dtype=_EMBER[region]):
        got = fn(et, EF, *ours)
    got.backward()
    assert got.dtype.name == str(expected.dtype).replace("torch.", "") == "float32"  # the float32 list
    np.testing.assert_allclose(got.detach().numpy(), expected.detach().float().numpy(), rtol=2e-2, atol=2e-2)
    grad, their_grad = ours[0].grad, theirs[0].grad
    assert grad.dtype.name == str(their_grad.dtype).replace("torch.", "") == region
    np.testing.assert_allclose(grad.float().numpy(), their_grad.float().numpy(), rtol=5e-2, atol=2e-2)


@pytest.mark.parametrize("label_smoothing", [0.0, 0.1])
def test_cross_entropy_runs_whole_in_float32_on_the_cpu(label_smoothing):
    """PyTorch's CPU list names cross_entropy_loss: its log_softmax runs in float32 too, so
    the loss of bfloat16 logits equals the float32 loss of the same (bfloat16) values."""
    logits, targets = _values([(16, 7), "i:16:7"], seed=3)
    logits = logits * 4
    x = et.tensor(logits).to(et.bfloat16)
    with ember_amp.autocast("cpu", dtype=et.bfloat16):
        got = EF.cross_entropy(x, et.tensor(targets), label_smoothing)
    expected = EF.cross_entropy(x.float(), et.tensor(targets), label_smoothing)
    assert got.dtype == et.float32 and got.item() == expected.item()
    torch = pytest.importorskip("torch")
    theirs = torch.tensor(logits).to(torch.bfloat16)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        their_loss = torch.nn.functional.cross_entropy(theirs, torch.tensor(targets), label_smoothing=label_smoothing)
    np.testing.assert_allclose(got.item(), their_loss.item(), rtol=1e-6)


@pytest.mark.parametrize("name, specs, fn", LOSS_CASES, ids=[c[0] for c in LOSS_CASES])
def test_losses_outside_autocast_keep_their_input_dtype(name, specs, fn):
    """Outside a region nothing is cast: bfloat16 in, bfloat16 out (as PyTorch)."""
    ours = _leaves(et, _values(specs), et.bfloat16)
    assert fn(et, EF, *ours).dtype == et.bfloat16


def _pytorch_bce_message():
    """PyTorch's refusal, read from its own library (CPU PyTorch cannot enter CUDA autocast)."""
    torch = pytest.importorskip("torch")
    libs = glob.glob(os.path.join(os.path.dirname(torch.__file__), "lib", "libtorch_cpu.*"))
    if not libs:
        pytest.skip("no libtorch_cpu to read PyTorch's message from")
    with open(libs[0], "rb") as f:
        data = f.read()
    start = data.find(b"torch.nn.functional.binary_cross_entropy and torch.nn.BCELoss are unsafe")
    if start < 0:
        pytest.skip("PyTorch's message is not in its library")
    return data[start:data.index(b"\0", start)].decode()


cuda = pytest.mark.skipif(not et.cuda.is_available(), reason="no CUDA and no simulator")


@cuda
@pytest.mark.parametrize("name, specs, fn", [c for c in LOSS_CASES if c[0] != "binary_cross_entropy"],
                         ids=[c[0] for c in LOSS_CASES if c[0] != "binary_cross_entropy"])
def test_cuda_float32_list_losses(name, specs, fn):
    """PyTorch's CUDA float32 list names every one of these: float16 in, float32 out, and
    the gradients come back in float16."""
    values = _values(specs)
    ours = _leaves(et, values, et.float16, device="cuda")
    with ember_amp.autocast("cuda"):
        got = fn(et, EF, *ours)
    assert got.dtype == et.float32 and got.device.type == "cuda"
    got.backward()
    assert ours[0].grad.dtype == et.float16
    reference = fn(et, EF, *_leaves(et, values, et.float32))
    np.testing.assert_allclose(got.detach().cpu().numpy(), reference.detach().numpy(), rtol=2e-2, atol=2e-2)


@cuda
def test_binary_cross_entropy_is_refused_under_cuda_autocast():
    message = _pytorch_bce_message()
    x = et.rand(4, device="cuda", dtype=et.float16)
    with ember_amp.autocast("cuda"), pytest.raises(RuntimeError) as caught:
        EF.binary_cross_entropy(x, x)
    assert str(caught.value) == message
    with ember_amp.autocast("cuda", enabled=False):
        assert EF.binary_cross_entropy(x, x).dtype == et.float16  # allowed outside a region
    with ember_amp.autocast("cpu"):
        assert EF.binary_cross_entropy(x, x).dtype == et.float16  # a CPU region leaves CUDA ops alone


CUDA_FLOAT32_FUNCTIONS = [
    ("softplus", lambda x, y: EF.softplus(x)),
    ("cosine_similarity", lambda x, y: EF.cosine_similarity(x, y)),
    ("pdist", lambda x, y: EF.pdist(x)),
    ("dist", lambda x, y: et.dist(x, y)),
]


@cuda
@pytest.mark.parametrize("name, fn", CUDA_FLOAT32_FUNCTIONS, ids=[c[0] for c in CUDA_FLOAT32_FUNCTIONS])
def test_cuda_float32_list_functions(name, fn):
    """softplus, cosine_similarity, pdist and dist are on CUDA's float32 list (ops of their
    own, as ATen's): float16 in, float32 out, the gradient back in float16; outside a
    region, and on the CPU whose lists do not name them, they keep float16."""
    x, y = (et.tensor(v, device="cuda").to(et.float16).requires_grad_() for v in _values([(5, 4), (5, 4)]))
    with ember_amp.autocast("cuda"):
        got = fn(x, y)
    assert got.dtype == et.float32
    got.sum().backward()
    assert x.grad.dtype == et.float16
    assert fn(x.detach(), y.detach()).dtype == et.float16
    cpu_x, cpu_y = x.detach().cpu(), y.detach().cpu()
    with ember_amp.autocast("cpu", dtype=et.float16):
        assert fn(cpu_x, cpu_y).dtype == et.float16
