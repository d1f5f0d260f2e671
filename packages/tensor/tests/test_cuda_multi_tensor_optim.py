"""The CUDA fused optimizer steps over many parameters (Numba's simulator): one
multi-tensor kernel launch per compute dtype and kernel capacity (a new launch when the
table fills, and for Adam's host step counters one per distinct count), with the results
of one op call per parameter to the bit and those of the CPU's fused step. Parameters
mix dtypes (float16/bfloat16 share float32's launch), layouts (transposed, 0-d, empty)
and, with AMP, gradients stored back unscaled."""
import numpy as np
import pytest

import ember_tensor as et
from cuda_guard import device_only, kernel_launches, simulator_only

pytestmark = simulator_only

STEPS = 2
SGD_CASES = [
    dict(lr=0.1, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False, maximize=False),
    dict(lr=0.1, momentum=0.9, dampening=0.1, weight_decay=0.01, nesterov=False, maximize=False),
    dict(lr=0.1, momentum=0.9, dampening=0.0, weight_decay=0.0, nesterov=True, maximize=True),
]
ADAM_CASES = [
    dict(lr=0.01, beta1=0.9, beta2=0.999, weight_decay=0.0, eps=1e-8, amsgrad=False, maximize=False),
    dict(lr=0.01, beta1=0.3, beta2=0.9, weight_decay=0.1, eps=1e-6, amsgrad=True, maximize=True),
]
# (parameter count, their dtypes in turn, launches of a step: SGD, Adam with device step
# counters, Adam with host counters that differ every other parameter). One compute dtype;
# float32 with its half types plus float64 (two groups); more parameters than one launch
# holds (21 for SGD, 10 for Adam; the 0-d and empty parameters of `_values` included).
MIXES = [(7, [et.float32], 1, 1, 2),
         (9, [et.float32, et.float64, et.float16, et.bfloat16], 2, 2, 3),
         (25, [et.float64], 2, 3, 4)]
MIX_IDS = ["7-float32", "9-mixed", "25-float64"]
RTOL = {et.float64: 1e-13, et.float32: 1e-6, et.float16: 1e-3, et.bfloat16: 1e-2}


def _values(count, seed):
    """`count` NumPy arrays of assorted shapes (one 0-d, one empty)."""
    rng = np.random.default_rng(seed)
    shapes = [(i % 4 + 1, i % 3 + 2) for i in range(count)]
    shapes[1], shapes[2] = (), (0,)
    return [rng.standard_normal(shape) for shape in shapes]


def _tensors(values, dtypes, device):
    """The values as tensors of `dtypes` in turn, every third 2-d one a transposed view."""
    out = []
    for i, v in enumerate(values):
        dtype = dtypes[i % len(dtypes)]
        if v.ndim == 2 and i % 3 == 0:
            out.append(et.tensor(np.ascontiguousarray(v.T), dtype=dtype, device=device).t())
        else:
            out.append(et.tensor(v, dtype=dtype, device=device))
    return out


def _f64(t):
    t = t.cpu()
    return np.array((t.float() if t.dtype == et.bfloat16 else t).numpy(), dtype=np.float64)


def _run_sgd(count, dtypes, device, case, together, amp=False):
    params = _tensors(_values(count, 0), dtypes, device)
    bufs = _tensors([np.zeros_like(v) for v in _values(count, 0)], dtypes, device) if case["momentum"] else []
    grads, launches = [], []
    for step in range(STEPS):
        step_grads = _tensors(_values(count, step + 1), dtypes, device)
        extra = {}
        if amp:  # gradients scaled by 2, stored back unscaled
            extra = dict(grad_scale=et.tensor(2.0, device=device), found_inf=et.tensor(0.0, device=device))
        with kernel_launches() as names:
            if together:
                et._fused_sgd_(params, step_grads, bufs, is_first_step=step == 0, **case, **extra)
            else:
                for i, p in enumerate(params):
                    et._fused_sgd_([p], [step_grads[i]], bufs[i:i + 1], is_first_step=step == 0, **case, **extra)
        launches.append(sum(name.startswith("multi_sgd") for name in names))
        grads.extend(step_grads)
    return params + bufs + grads, launches


def _run_adam(count, dtypes, device, case, decoupled, together, step_device):
    params = _tensors(_values(count, 0), dtypes, device)
    zeros = [np.zeros_like(v) for v in _values(count, 0)]
    m, v = _tensors(zeros, dtypes, device), _tensors(zeros, dtypes, device)
    vmax = _tensors(zeros, dtypes, device) if case["amsgrad"] else []
    # Host counters differ between parameters (every other one a step ahead); the device
    # ones are read by the kernel and may differ freely.
    steps = [et.tensor(float(i % 2), device=step_device) for i in range(count)]
    op = et._fused_adamw_ if decoupled else et._fused_adam_
    launches = []
    for step in range(STEPS):
        step_grads = _tensors(_values(count, step + 1), dtypes, device)
        for s in steps:
            s.add_(1)
        with kernel_launches() as names:
            if together:
                op(params, step_grads, m, v, vmax, steps, **case)
            else:
                for i, p in enumerate(params):
                    op([p], [step_grads[i]], [m[i]], [v[i]], vmax[i:i + 1], [steps[i]], **case)
        launches.append(sum(name.startswith("multi_adam") for name in names))
    return params + m + v + vmax, launches


def _assert_equal(got, want):
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape and g.is_contiguous() == w.is_contiguous()
        np.testing.assert_array_equal(_f64(g), _f64(w))


def _assert_close(got, cpu):
    for g, c in zip(got, cpu):
        assert g.device.type == "cuda" and c.device.type == "cpu"
        np.testing.assert_allclose(_f64(g), _f64(c), rtol=RTOL[c.dtype], atol=RTOL[c.dtype])


@pytest.mark.parametrize("count, dtypes, expected, _, __", MIXES, ids=MIX_IDS)
@pytest.mark.parametrize("case", SGD_CASES)
def test_sgd_is_one_launch_per_dtype_group(count, dtypes, expected, _, __, case):
    with device_only():
        together, launches = _run_sgd(count, dtypes, "cuda", case, together=True)
    assert launches == [expected] * STEPS
    one_by_one, _ = _run_sgd(count, dtypes, "cuda", case, together=False)
    _assert_equal(together, one_by_one)
    cpu, _ = _run_sgd(count, dtypes, "cpu", case, together=True)
    _assert_close(together, cpu)


def test_sgd_with_amp_unscales_in_the_same_launch():
    count, dtypes = MIXES[1][:2]
    case = SGD_CASES[1]
    with device_only():
        together, launches = _run_sgd(count, dtypes, "cuda", case, together=True, amp=True)
    assert launches == [2] * STEPS  # float32 (with the half types) and float64
    one_by_one, _ = _run_sgd(count, dtypes, "cuda", case, together=False, amp=True)
    _assert_equal(together, one_by_one)  # the gradients too: stored back unscaled
    cpu, _ = _run_sgd(count, dtypes, "cpu", case, together=True, amp=True)
    _assert_close(together, cpu)


@pytest.mark.parametrize("count, dtypes, _, on_device, on_host", MIXES, ids=MIX_IDS)
@pytest.mark.parametrize("case", ADAM_CASES)
@pytest.mark.parametrize("decoupled", [False, True], ids=["adam", "adamw"])
@pytest.mark.parametrize("step_device", ["cuda", "cpu"], ids=["device-step", "host-step"])
def test_adam_is_one_launch_per_dtype_group(count, dtypes, _, on_device, on_host, case, decoupled, step_device):
    with device_only():
        together, launches = _run_adam(count, dtypes, "cuda", case, decoupled, True, step_device)
    # Host counters are host math: parameters whose counts differ need their own launch.
    assert launches == [on_device if step_device == "cuda" else on_host] * STEPS
    one_by_one, _ = _run_adam(count, dtypes, "cuda", case, decoupled, False, step_device)
    _assert_equal(together, one_by_one)
    cpu, _ = _run_adam(count, dtypes, "cpu", case, decoupled, True, "cpu")
    _assert_close(together, cpu)


def test_found_inf_skips_every_parameter_of_the_launch():
    count, dtypes = MIXES[1][:2]
    params = _tensors(_values(count, 0), dtypes, "cuda")
    grads = _tensors(_values(count, 1), dtypes, "cuda")
    m = _tensors([np.zeros_like(v) for v in _values(count, 0)], dtypes, "cuda")
    v = _tensors([np.zeros_like(x) for x in _values(count, 0)], dtypes, "cuda")
    with device_only():
        et._fused_adam_(params, grads, m, v, [], [et.tensor(1.0, device="cuda") for _ in range(count)],
                        **ADAM_CASES[0], grad_scale=et.tensor(2.0, device="cuda"),
                        found_inf=et.tensor(1.0, device="cuda"))
    _assert_equal(params, _tensors(_values(count, 0), dtypes, "cuda"))
    _assert_equal(grads, _tensors(_values(count, 1), dtypes, "cuda"))  # left scaled
