"""The optimizers on CUDA parameters (Numba's CUDA simulator) take the fused ops' device
path: the same result as the CPU's fused path, with nothing read back to the host
(`device_only()` from the tensor package's tests), for ``fused=True`` and the default;
Adagrad's fused op is CPU-only, as in PyTorch."""
import importlib.util
import os
import pathlib
import sys

import numpy as np
import pytest

# numba.cuda reads this when first imported: run CUDA on the simulator unless told not to.
os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")
if "numba" in sys.modules:
    from numba.core import config as _numba_config
    _numba_config.reload_config()

import ember_tensor as et  # noqa: E402
import ember_optim as optim  # noqa: E402

pytestmark = pytest.mark.skipif(not et.cuda.is_available(), reason="no CUDA and no simulator")


def _device_only():
    """`cuda_guard.device_only` of packages/tensor/tests (loaded by path: not a package)."""
    path = pathlib.Path(__file__).resolve().parents[2] / "tensor" / "tests" / "cuda_guard.py"
    spec = importlib.util.spec_from_file_location("_ember_cuda_guard", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.device_only()


CASES = [
    ("SGD", dict(lr=0.1)),
    ("SGD", dict(lr=0.1, momentum=0.9, dampening=0.1, weight_decay=0.01)),
    ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True, maximize=True)),
    ("Adam", dict(lr=0.01)),
    ("Adam", dict(lr=0.01, amsgrad=True, weight_decay=0.1, maximize=True)),
    ("AdamW", dict(lr=0.01)),
    ("AdamW", dict(lr=0.01, amsgrad=True, weight_decay=0.05)),
]
IDS = [f"{name}-{'-'.join(kw)}" for name, kw in CASES]
SHAPES = [(2, 3), (4,), ()]
STEPS = 3


def _train(name, kwargs, device, fused, dtype=et.float32):
    rng = np.random.default_rng(0)
    params = [et.tensor(rng.standard_normal(s), dtype=dtype, device=device).requires_grad_()
              for s in SHAPES]
    grads = [[et.tensor(rng.standard_normal(s), dtype=dtype, device=device) for s in SHAPES]
             for _ in range(STEPS)]
    opt = getattr(optim, name)(params, fused=fused, **kwargs)
    for step_grads in grads:
        for p, g in zip(params, step_grads):
            p.grad = g
        opt.step()
    return params, opt


def _values(t):
    t = t.detach().cpu()
    return (t.float() if t.dtype == et.bfloat16 else t).numpy().astype(np.float64)


@pytest.mark.parametrize("fused", [True, None], ids=["fused", "default"])
@pytest.mark.parametrize("name, kwargs", CASES, ids=IDS)
def test_cuda_step_equals_cpu_on_the_device(name, kwargs, fused):
    # The CPU run takes the same option: its fused kernel (test_optimizers.py checks that
    # against the plain-op form and the published rules).
    expected, cpu_opt = _train(name, kwargs, "cpu", fused=fused)
    with _device_only():
        got, opt = _train(name, kwargs, "cuda", fused=fused)
    for e, g in zip(expected, got):
        assert g.device.type == "cuda"
        np.testing.assert_allclose(_values(g), _values(e), rtol=1e-5, atol=1e-6)
    for p_cpu, p_cuda in zip(cpu_opt.state, opt.state):
        for key, value in cpu_opt.state[p_cpu].items():
            np.testing.assert_allclose(_values(opt.state[p_cuda][key]), _values(value),
                                       rtol=1e-5, atol=1e-6, err_msg=key)


def test_fused_adam_keeps_its_step_on_the_device():
    params, opt = _train("Adam", dict(lr=0.01), "cuda", fused=True)
    assert all(s["step"].device.type == "cuda" and s["step"].dtype == et.float32
               for s in opt.state.values())
    _, default = _train("Adam", dict(lr=0.01), "cuda", fused=None)
    assert all(s["step"].device.type == "cpu" for s in default.state.values())


@pytest.mark.parametrize("dtype", [et.float16, et.bfloat16])
def test_half_parameters_are_fused_in_float32(dtype):
    expected, _ = _train("AdamW", dict(lr=0.01), "cpu", fused=True, dtype=dtype)
    with _device_only():
        got, _ = _train("AdamW", dict(lr=0.01), "cuda", fused=True, dtype=dtype)
    for e, g in zip(expected, got):
        assert g.dtype == dtype
        np.testing.assert_allclose(_values(g), _values(e), rtol=1e-2, atol=1e-2)


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW"])
@pytest.mark.parametrize("options, message", [
    (dict(differentiable=True), "`fused` does not support `differentiable`"),
    (dict(foreach=True), "`fused` and `foreach` cannot be `True` together."),
])
def test_fused_option_conflicts(name, options, message):
    p = et.zeros(2, device="cuda", requires_grad=True)
    with pytest.raises(RuntimeError, match=message):
        getattr(optim, name)([p], lr=0.1, fused=True, **options)


def test_fused_adagrad_is_cpu_only_as_in_pytorch():
    p = et.zeros(2, device="cuda", requires_grad=True)
    p.grad = et.ones(2, device="cuda")
    with pytest.raises(RuntimeError, match=r"`fused=True` requires all the params to be floating point "
                                           r"Tensors of supported devices: \['cpu'\] but torch.float32 and cuda"):
        optim.Adagrad([p], fused=True).step()
    default, _ = _train("Adagrad", dict(lr=0.1), "cuda", fused=None)  # plain ops, on the device
    expected, _ = _train("Adagrad", dict(lr=0.1), "cpu", fused=None)
    for e, g in zip(expected, default):
        np.testing.assert_allclose(_values(g), _values(e), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("dtype", [et.float32, et.float64])
def test_fused_adagrad_equals_the_plain_form_on_the_cpu(dtype):
    kwargs = dict(lr=0.1, lr_decay=0.01, weight_decay=0.1, initial_accumulator_value=0.1, maximize=True)
    expected, plain = _train("Adagrad", kwargs, "cpu", fused=False, dtype=dtype)
    got, fused = _train("Adagrad", kwargs, "cpu", fused=True, dtype=dtype)
    tol = dict(rtol=1e-5, atol=1e-6) if dtype == et.float32 else dict(rtol=1e-12, atol=1e-14)
    for e, g in zip(expected, got):
        np.testing.assert_allclose(_values(g), _values(e), **tol)
    for p_plain, p_fused in zip(plain.state, fused.state):
        assert fused.state[p_fused]["step"].item() == plain.state[p_plain]["step"].item() == 3
