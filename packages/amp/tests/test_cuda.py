"""CUDA autocast against PyTorch's documented CUDA op lists (no CUDA PyTorch to compare
with here), and a GradScaler training step on CUDA tensors.

CUDA runs on Numba's simulator unless NUMBA_ENABLE_CUDASIM=0 is set (on a real GPU).
"""
import os
import sys

import numpy as np
import pytest

os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")
if "numba" in sys.modules:  # numba read its config at import: make it see the variable
    from numba.core import config as _numba_config
    _numba_config.reload_config()

import ember_amp  # noqa: E402
import ember_autograd  # noqa: E402
import ember_tensor as et  # noqa: E402
import _functional as F  # noqa: E402

pytestmark = pytest.mark.skipif(not et.cuda.is_available(), reason="no CUDA and no simulator")

H, FP32 = et.float16, et.float32


def _t(*shape, dtype=FP32):
    return et.randn(*shape).to(device="cuda", dtype=dtype)


# (name, fn, input dtype, expected output dtype in a float16 region): PyTorch's CUDA lists.
CASES = [
    # lower_precision_fp
    ("mm", lambda d: et.mm(_t(3, 4, dtype=d), _t(4, 5)), FP32, H),
    ("matmul", lambda d: _t(2, 3, 4, dtype=d) @ _t(4, 5), FP32, H),
    ("bmm", lambda d: et.bmm(_t(2, 3, 4, dtype=d), _t(2, 4, 5)), FP32, H),
    ("addmm", lambda d: et.addmm(_t(3, 5, dtype=d), _t(3, 4), _t(4, 5)), FP32, H),
    ("baddbmm", lambda d: et.baddbmm(_t(2, 3, 5, dtype=d), _t(2, 3, 4), _t(2, 4, 5)), FP32, H),
    ("mv", lambda d: et.mv(_t(3, 4, dtype=d), _t(4)), FP32, H),
    ("linear", lambda d: F.linear(_t(3, 4, dtype=d), _t(5, 4), _t(5)), FP32, H),
    ("conv2d", lambda d: F.conv2d(_t(1, 2, 4, 4, dtype=d), _t(3, 2, 3, 3), _t(3)), FP32, H),
    # fp32
    ("exp", lambda d: et.exp(_t(3, dtype=d)), H, FP32),
    ("log", lambda d: et.log(_t(3, dtype=d).abs() + 1), H, FP32),
    ("pow", lambda d: _t(3, dtype=d) ** 2, H, FP32),
    ("rsqrt", lambda d: et.rsqrt(_t(3, dtype=d).abs() + 1), H, FP32),
    ("layer_norm", lambda d: F.layer_norm(_t(2, 4, dtype=d), (4,)), H, FP32),
    ("nll_loss", lambda d: F.nll_loss(_t(4, 3, dtype=d), et.tensor([0, 1, 2, 0], device="cuda")), H, FP32),
    ("logsumexp", lambda d: et.logsumexp(_t(3, 4, dtype=d), 1), H, FP32),
    # fp32_set_opt_dtype / fp32_append_dtype
    ("softmax", lambda d: F.softmax(_t(3, 4, dtype=d), 1), H, FP32),
    ("log_softmax", lambda d: F.log_softmax(_t(3, 4, dtype=d), 1), H, FP32),
    ("softmax_positional_none", lambda d: et.softmax(_t(3, 4, dtype=d), 1, None), H, FP32),
    ("softmax_positional_dtype", lambda d: et.softmax(_t(3, 4, dtype=d), 1, H), H, H),
    ("sum", lambda d: _t(3, 4, dtype=d).sum(), H, FP32),
    ("sum_dim", lambda d: _t(3, 4, dtype=d).sum(1), H, FP32),
    ("sum_explicit_dtype", lambda d: _t(3, 4, dtype=d).sum(dtype=H), H, H),
    ("cumsum", lambda d: et.cumsum(_t(3, 4, dtype=d), 1), H, FP32),
    ("prod", lambda d: _t(3, dtype=d).prod(), H, FP32),
    ("norm", lambda d: et.norm(_t(3, 4, dtype=d)), H, FP32),
    ("linalg_vector_norm", lambda d: et.linalg.vector_norm(_t(3, dtype=d)), H, FP32),
    # promote
    ("addcmul_same", lambda d: et.addcmul(_t(3, dtype=d), _t(3, dtype=d), _t(3, dtype=d)), H, H),
    ("addcmul_mixed", lambda d: et.addcmul(_t(3, dtype=d), _t(3), _t(3, dtype=d)), H, FP32),
    ("atan2_mixed", lambda d: et.atan2(_t(3, dtype=d), _t(3)), H, FP32),
    ("dot_mixed", lambda d: et.dot(_t(3, dtype=d), _t(3)), H, FP32),
    # on no list: the op's own dtype rules
    ("relu", lambda d: et.relu(_t(3, dtype=d)), H, H),
    ("add", lambda d: _t(3, dtype=d) + _t(3, dtype=d), H, H),
    ("mean", lambda d: _t(3, 4, dtype=d).mean(), H, H),
]


@pytest.mark.parametrize("name, fn, in_dtype, expected", CASES, ids=[c[0] for c in CASES])
def test_cuda_op_lists(name, fn, in_dtype, expected):
    with ember_amp.autocast("cuda"):
        out = fn(in_dtype)
    assert out.dtype == expected
    assert out.device.type == "cuda"


def test_bfloat16_region_on_cuda():
    with ember_amp.autocast(device_type="cuda", dtype=et.bfloat16):
        assert (_t(2, 3) @ _t(3, 2)).dtype == et.bfloat16
        assert _t(3, dtype=et.bfloat16).exp().dtype == FP32


def test_cpu_tensors_are_untouched_by_a_cuda_region():
    with ember_amp.autocast("cuda"):
        assert et.mm(et.ones(2, 2), et.ones(2, 2)).dtype == FP32
        assert ember_amp.is_autocast_enabled() and not ember_amp.is_autocast_enabled("cpu")


def test_lower_precision_result_is_close():
    a, b = _t(4, 8), _t(8, 3)
    with ember_amp.autocast("cuda"):
        out = a @ b
    np.testing.assert_allclose(out.float().cpu().numpy(), (a @ b).cpu().numpy(), rtol=1e-2, atol=1e-2)


def test_deprecated_cuda_spellings():
    with pytest.warns(FutureWarning, match=r"torch.cuda.amp.autocast\(args...\)` is deprecated"):
        region = ember_amp.cuda_amp.autocast()
    with region:
        assert (_t(2, 2) @ _t(2, 2)).dtype == H
    with pytest.warns(FutureWarning, match=r"torch.cuda.amp.GradScaler\(args...\)` is deprecated"):
        assert ember_amp.cuda_amp.GradScaler().is_enabled()


def test_grad_scaler_training_steps_on_cuda():
    et.manual_seed(0)
    w = _t(3, 4).requires_grad_()
    b = et.zeros(3, device="cuda", requires_grad=True)
    x, y = _t(8, 4), et.tensor([0, 1, 2, 0, 1, 2, 0, 1], device="cuda")
    opt = F.SGD([w, b], lr=0.1)
    scaler = ember_amp.GradScaler("cuda", init_scale=256.0)
    losses = []
    for step in range(4):
        opt.zero_grad()
        with ember_amp.autocast(device_type="cuda", dtype=H):
            logits = F.linear(x, w, b)
            loss = F.cross_entropy(logits, y)
        assert logits.dtype == H and loss.dtype == FP32
        scaler.scale(loss).backward()
        assert w.grad.dtype == FP32 and w.grad.device.type == "cuda"
        if step == 1:
            with ember_autograd.no_grad():
                w.grad[0, 0] = float("inf")
            before = w.detach().clone()
        scaler.step(opt)
        scaler.update()
        if step == 1:
            assert np.array_equal(before.cpu().numpy(), w.detach().cpu().numpy())
            assert scaler.get_scale() == 128.0
        losses.append(loss.item())
    assert losses[-1] < losses[0]


def test_grad_scaler_unscales_with_one_launch_per_dtype():
    """unscale_ over a model's gradients: one check-and-unscale kernel launch per dtype
    group (PyTorch's multi-tensor apply), not one per gradient; inf in any is found."""
    if os.environ.get("NUMBA_ENABLE_CUDASIM") != "1":
        pytest.skip("counts launches on Numba's CUDA simulator")
    from numba.cuda.simulator import kernel

    params = [_t(4, 3).requires_grad_(), _t(3).requires_grad_(), _t(2, 2).requires_grad_(),
              _t(5, dtype=et.float64).requires_grad_()]
    for p in params:
        p.grad = et.ones_like(p) * 8
    params[1].grad[2] = float("nan")
    scaler = ember_amp.GradScaler("cuda", init_scale=8.0)
    opt = F.SGD(params, lr=0.1)
    scaler.scale(et.ones(1, device="cuda"))  # makes the scale, as the loss's scale() does
    launched = []
    original = kernel.FakeCUDAKernel.__call__

    def recording(self, *args):
        launched.append(self.fn.__name__)
        return original(self, *args)

    kernel.FakeCUDAKernel.__call__ = recording
    try:
        scaler.unscale_(opt)
    finally:
        kernel.FakeCUDAKernel.__call__ = original
    assert sorted(n for n in launched if "check_and_unscale" in n) == [
        "multi_check_and_unscale_float32", "multi_check_and_unscale_float64"]
    assert sum(v.item() for v in scaler._found_inf_per_device(opt).values()) == 1.0
    assert params[0].grad.cpu().tolist() == [[1.0] * 3] * 4 and params[3].grad.cpu().tolist() == [1.0] * 5
