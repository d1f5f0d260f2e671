"""Backward passes PyTorch 2.13 refuses under ``use_deterministic_algorithms(True)`` on
CUDA (its atomic-add backward kernels): the forward runs, the backward raises PyTorch's
RuntimeError naming its kernel, word for word (or warns once with warn_only), and runs
with the switch off; CPU tensors and the forms PyTorch keeps are not alerted.

CUDA runs on Numba's simulator unless NUMBA_ENABLE_CUDASIM=0 is set.
"""
import os
import sys
import warnings

import pytest

os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")
if "numba" in sys.modules:  # numba read its config at import: make it see the variable
    from numba.core import config as _numba_config
    _numba_config.reload_config()

import ember_autograd  # noqa: E402,F401 - backward()
import ember_nn.functional as F  # noqa: E402
import ember_tensor as et  # noqa: E402

cuda = pytest.mark.skipif(not et.cuda.is_available(), reason="no CUDA and no simulator")

# PyTorch's alertNotDeterministic texts (torch 2.13, aten/src/ATen/Context.cpp).
ERROR = ("{} does not have a deterministic implementation, but you set 'torch.use_deterministic_algorithms(True)'. "
         "You can turn off determinism just for this operation, or you can use the 'warn_only=True' option, if "
         "that's acceptable for your application. You can also file an issue at "
         "https://github.com/pytorch/pytorch/issues to help us prioritize adding deterministic support for this "
         "operation.")
WARNING = ("{} does not have a deterministic implementation, but you set "
           "'torch.use_deterministic_algorithms(True, warn_only=True)'. You can file an issue at "
           "https://github.com/pytorch/pytorch/issues to help us prioritize adding deterministic support for this "
           "operation.")


@pytest.fixture(autouse=True)
def restore():
    yield
    et.use_deterministic_algorithms(False)


def _ctc(x):
    targets = et.tensor([[1, 2], [2, 2]], device=x.device)
    return F.ctc_loss(x.log_softmax(2), targets, [4, 4], [2, 2])


def _embedding_bag(w):
    return F.embedding_bag(et.tensor([[0, 2], [1, 1]], device=w.device), w, mode="max")


def _grid(nd):
    def sample(x):
        grid = et.linspace(-0.9, 0.9, 2 * nd, device=x.device).reshape((1,) + (1,) * (nd - 1) + (2, nd))
        return F.grid_sample(x, grid, align_corners=False)
    return sample


# (PyTorch's kernel name, input shape, the op). The names are those of PyTorch's sources
# and test_torch.py's test_nondeterministic_alert_* (see the README).
REFUSED_IN_BACKWARD = [
    ("avg_pool3d_backward_cuda", (1, 1, 3, 3, 3), lambda x: F.avg_pool3d(x, 2)),
    ("adaptive_avg_pool2d_backward_cuda", (1, 1, 5), lambda x: F.adaptive_avg_pool1d(x, 3)),
    ("adaptive_avg_pool2d_backward_cuda", (1, 2, 5, 5), lambda x: F.adaptive_avg_pool2d(x, 3)),
    ("adaptive_avg_pool3d_backward_cuda", (2, 3, 3, 3), lambda x: F.adaptive_avg_pool3d(x, 2)),
    ("adaptive_avg_pool2d_backward_cuda", (1, 1, 4, 4), lambda x: F.interpolate(x, size=3, mode="area")),
    ("adaptive_max_pool2d_backward_cuda", (1, 2, 5, 5), lambda x: F.adaptive_max_pool2d(x, 3)),
    ("adaptive_max_pool2d_backward_cuda", (1, 1, 5), lambda x: F.adaptive_max_pool1d(x, 2)),
    ("fractional_max_pool2d_backward_cuda", (1, 1, 4, 4), lambda x: F.fractional_max_pool2d(x, 2, output_size=2)),
    ("fractional_max_pool3d_backward_cuda", (1, 1, 4, 4, 4),
     lambda x: F.fractional_max_pool3d(x, 2, output_size=2)),
    ("upsample_linear1d_backward_out_cuda", (1, 2, 4),
     lambda x: F.interpolate(x, size=6, mode="linear", align_corners=False)),
    ("upsample_bilinear2d_backward_out_cuda", (1, 1, 3, 3),
     lambda x: F.interpolate(x, size=5, mode="bilinear", align_corners=False)),
    ("upsample_bicubic2d_backward_out_cuda", (1, 1, 3, 3),
     lambda x: F.interpolate(x, scale_factor=2, mode="bicubic", align_corners=True)),
    ("upsample_trilinear3d_backward_out_cuda", (1, 1, 2, 2, 2),
     lambda x: F.interpolate(x, size=3, mode="trilinear", align_corners=False)),
    ("reflection_pad1d_backward_out_cuda", (2, 3, 4), lambda x: F.pad(x, (1, 2), mode="reflect")),
    ("reflection_pad2d_backward_cuda", (1, 3, 4), lambda x: F.pad(x, (1, 2, 2, 1), mode="reflect")),
    ("reflection_pad3d_backward_out_cuda", (1, 1, 3, 3, 3), lambda x: F.pad(x, (1, 1, 0, 1, 2, 0), mode="reflect")),
    ("replication_pad1d_backward_cuda", (2, 3, 4), lambda x: F.pad(x, (1, 2), mode="replicate")),
    ("replication_pad2d_backward_cuda", (1, 1, 3, 3), lambda x: F.pad(x, (1, 0, 2, 1), mode="replicate")),
    ("replication_pad3d_backward_cuda", (1, 2, 2, 2), lambda x: F.pad(x, (1, 1, 1, 1, 1, 1), mode="replicate")),
    ("max_pool3d_with_indices_backward_cuda", (1, 1, 3, 3, 3), lambda x: F.max_pool3d(x, 2, stride=1)),
    ("grid_sampler_2d_backward_cuda", (1, 1, 3, 3), _grid(2)),
    ("grid_sampler_3d_backward_cuda", (1, 1, 2, 3, 3), _grid(3)),
    ("ctc_loss_backward_gpu", (4, 2, 3), _ctc),
    ("embedding_bag_backward_cuda_max", (3, 2), _embedding_bag),
]
_IDS = [f"{name}-{i}" for i, (name, _, _) in enumerate(REFUSED_IN_BACKWARD)]


def _leaf(shape, device):
    n = 1
    for s in shape:
        n *= s
    values = et.arange(n, dtype=et.float32).reshape(shape).sin()  # distinct values: no ties in max pools
    return values.to(device).requires_grad_()


def _backward(call, shape, device):
    x = _leaf(shape, device)
    call(x).sum().backward()
    return x.grad.cpu().reshape(-1).tolist()


@cuda
@pytest.mark.parametrize("name, shape, call", REFUSED_IN_BACKWARD, ids=_IDS)
def test_cuda_backward_raises_and_warns_when_it_runs(name, shape, call):
    expected = _backward(call, shape, "cuda")  # the switch off: the backward runs
    assert expected == pytest.approx(_backward(call, shape, "cpu"), abs=1e-5)

    x = _leaf(shape, "cuda")
    y = call(x).sum()  # the forward before the switch: a native kernel's backward in PyTorch
    et.use_deterministic_algorithms(True)
    with pytest.raises(RuntimeError) as error:
        y.backward(retain_graph=True)
    assert str(error.value) == ERROR.format(name)

    et.use_deterministic_algorithms(True, warn_only=True)
    x.grad = None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        y.backward()
    assert [str(w.message) for w in caught] == [WARNING.format(name)]
    assert caught[0].category is UserWarning
    assert x.grad.cpu().reshape(-1).tolist() == pytest.approx(expected, abs=1e-6)


@pytest.mark.parametrize("name, shape, call", REFUSED_IN_BACKWARD, ids=_IDS)
def test_cpu_backward_is_not_alerted(name, shape, call):
    expected = _backward(call, shape, "cpu")
    et.use_deterministic_algorithms(True)
    assert _backward(call, shape, "cpu") == expected


KEPT_UNDER_THE_SWITCH = [
    # PyTorch 2.13's functional takes decompositions with deterministic backward passes
    # when the switch is on at the forward.
    ((1, 1, 3, 3), lambda x: F.interpolate(x, size=5, mode="bilinear", align_corners=False)),
    ((1, 1, 2, 2, 2), lambda x: F.interpolate(x, size=3, mode="trilinear", align_corners=True)),
    ((1, 1, 3, 3), lambda x: F.pad(x, (1, 0, 2, 1), mode="replicate")),
    ((1, 1, 3, 3, 3), lambda x: F.max_pool3d(x, 2, stride=1)),
    # Global average pooling is a mean in PyTorch; the 1-d/2-d pools' backward passes gather.
    ((1, 2, 4, 4), lambda x: F.adaptive_avg_pool2d(x, 1)),
    ((1, 1, 4, 4), lambda x: F.avg_pool2d(x, 2)),
    ((1, 1, 4, 4), lambda x: F.max_pool2d(x, 2)),
    ((1, 1, 4), lambda x: F.pad(x, (1, 1), mode="circular")),
    ((1, 1, 4, 4), lambda x: F.interpolate(x, size=6, mode="nearest")),
]


@cuda
@pytest.mark.parametrize("shape, call", KEPT_UNDER_THE_SWITCH)
def test_cuda_forms_pytorch_keeps_are_not_alerted(shape, call):
    expected = _backward(call, shape, "cpu")
    et.use_deterministic_algorithms(True)
    assert _backward(call, shape, "cuda") == pytest.approx(expected, abs=1e-5)


@cuda
def test_forward_under_the_switch_runs_and_the_backward_alerts():
    et.use_deterministic_algorithms(True)
    x = _leaf((1, 1, 3), "cuda")
    y = F.pad(x, (1, 1), mode="reflect")  # the forward has a deterministic kernel
    assert y.shape == (1, 1, 5) and y.requires_grad
    assert F.pad(x.detach(), (1, 1), mode="reflect").cpu().tolist() == y.detach().cpu().tolist()
    with pytest.raises(RuntimeError, match="^reflection_pad1d_backward_out_cuda does not have"):
        y.sum().backward()


def test_marked_results_have_pytorchs_node_names():
    torch = pytest.importorskip("torch")
    calls = [
        lambda F, lib: F.pad(lib.ones(1, 1, 3, 3, requires_grad=True), (1, 1, 1, 1), mode="reflect"),
        lambda F, lib: F.interpolate(lib.ones(1, 1, 3, requires_grad=True), size=5, mode="linear"),
        lambda F, lib: F.adaptive_avg_pool2d(lib.ones(1, 1, 4, 4, requires_grad=True), 3),
        lambda F, lib: F.avg_pool3d(lib.ones(1, 1, 2, 2, 2, requires_grad=True), 2),
        lambda F, lib: F.max_pool3d(lib.ones(1, 1, 2, 2, 2, requires_grad=True), 2),
        lambda F, lib: F.grid_sample(lib.ones(1, 1, 3, 3, requires_grad=True), lib.zeros(1, 2, 2, 2),
                                     align_corners=False),
    ]
    for call in calls:
        assert call(F, et).grad_fn.name() == call(torch.nn.functional, torch).grad_fn.name()
