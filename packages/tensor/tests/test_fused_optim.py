"""The fused optimizer ops (`_fused_sgd_`, `_fused_adam_`, `_fused_adamw_`, and the CPU-only
`_fused_adagrad_`): the CPU op
against a float64 NumPy statement of the update over several steps, CUDA (Numba's
simulator) against the CPU inside `device_only()` (nothing read back to the host), AMP's
grad_scale/found_inf, and PyTorch's errors. Cases cover 0-d, empty and non-contiguous
tensors and every floating dtype."""
import doctest
import os
import subprocess
import sys

import numpy as np
import pytest

import ember_tensor as et
from cuda_guard import device_only

STEPS = 3

SGD_CASES = [
    dict(lr=0.1, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False, maximize=False),
    dict(lr=0.1, momentum=0.9, dampening=0.1, weight_decay=0.01, nesterov=False, maximize=False),
    dict(lr=0.1, momentum=0.9, dampening=0.0, weight_decay=0.0, nesterov=True, maximize=True),
    dict(lr=0.05, momentum=0.0, dampening=0.0, weight_decay=0.1, nesterov=False, maximize=True),
]
ADAM_CASES = [
    dict(lr=0.01, beta1=0.9, beta2=0.999, weight_decay=0.0, eps=1e-8, amsgrad=False, maximize=False),
    dict(lr=0.01, beta1=0.9, beta2=0.999, weight_decay=0.1, eps=1e-8, amsgrad=True, maximize=True),
    # 1 - beta1 = 0.7 >= 0.5: lerp's other formula
    dict(lr=0.01, beta1=0.3, beta2=0.9, weight_decay=0.05, eps=1e-6, amsgrad=False, maximize=False),
]
ADAGRAD_CASES = [
    dict(lr=0.1, lr_decay=0.0, weight_decay=0.0, eps=1e-10, maximize=False),
    dict(lr=0.1, lr_decay=0.01, weight_decay=0.1, eps=1e-6, maximize=True),
]
DECOUPLED = [False, True]  # _fused_adam_ / _fused_adamw_
# (shape, layout): "c" contiguous, "t" a transposed (non-contiguous) parameter and buffers
LAYOUTS = [((3, 4), "c"), ((4, 3), "t"), ((), "c"), ((0,), "c"), ((5,), "c")]
TOL = {et.float64: (1e-12, 1e-14), et.float32: (1e-5, 1e-6), et.float16: (1e-2, 1e-3),
       et.bfloat16: (4e-2, 1e-2)}


def _tensor(values, dtype, layout, device="cpu"):
    if layout == "t":  # the same values, held in a transposed view
        return et.tensor(np.ascontiguousarray(values.T), dtype=dtype, device=device).t()
    return et.tensor(values, dtype=dtype, device=device)


def _problem(shape, seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal(shape), [rng.standard_normal(shape) for _ in range(STEPS)]


def _as_f64(t):
    t = t.cpu()
    return np.array((t.float() if t.dtype == et.bfloat16 else t).numpy(), dtype=np.float64)


# --- float64 NumPy statements of the updates (PyTorch's documented rules) --------------------

def _sgd_reference(p, grads, lr, momentum, dampening, weight_decay, nesterov, maximize):
    buf = None
    for g in grads:
        g = -g if maximize else g
        g = g + weight_decay * p
        if momentum:
            buf = g.copy() if buf is None else momentum * buf + (1 - dampening) * g
            g = g + momentum * buf if nesterov else buf
        p = p - lr * g
    return p


def _adam_reference(p, grads, lr, beta1, beta2, weight_decay, eps, amsgrad, maximize, decoupled):
    m, v, vmax = np.zeros_like(p), np.zeros_like(p), np.zeros_like(p)
    for t, g in enumerate(grads, 1):
        g = -g if maximize else g
        if decoupled:
            p = p * (1 - lr * weight_decay)
        else:
            g = g + weight_decay * p
        m = beta1 * m + (1 - beta1) * g
        v = beta2 * v + (1 - beta2) * g * g
        vmax = np.maximum(vmax, v)
        denom = np.sqrt(vmax if amsgrad else v) / np.sqrt(1 - beta2 ** t) + eps
        p = p - lr / (1 - beta1 ** t) * m / denom
    return p


def _adagrad_reference(p, grads, lr, lr_decay, weight_decay, eps, maximize):
    state_sum = np.zeros_like(p)
    for t, g in enumerate(grads, 1):
        g = -g if maximize else g
        g = g + weight_decay * p
        state_sum = state_sum + g * g
        p = p - lr / (1 + (t - 1) * lr_decay) * g / (np.sqrt(state_sum) + eps)
    return p


# --- running the ops ----------------------------------------------------------------------

def _run_sgd(init, grads, dtype, layout, device, case):
    p = _tensor(init, dtype, layout, device)
    bufs = [_tensor(np.zeros_like(init), dtype, layout, device)] if case["momentum"] else []
    for step, g in enumerate(grads):
        et._fused_sgd_([p], [_tensor(g, dtype, layout, device)], bufs, is_first_step=step == 0, **case)
    return p, bufs


def _run_adam(init, grads, dtype, layout, device, case, decoupled, step_device):
    p = _tensor(init, dtype, layout, device)
    m, v, vmax = (_tensor(np.zeros_like(init), dtype, layout, device) for _ in range(3))
    step = et.tensor(0.0, device=step_device)
    op = et._fused_adamw_ if decoupled else et._fused_adam_
    for g in grads:
        step.add_(1)
        op([p], [_tensor(g, dtype, layout, device)], [m], [v], [vmax] if case["amsgrad"] else [],
           [step], **case)
    return p, [m, v] + ([vmax] if case["amsgrad"] else [])


def _run_adagrad(init, grads, dtype, layout, case):
    p = _tensor(init, dtype, layout)
    state_sum = _tensor(np.zeros_like(init), dtype, layout)
    step = et.tensor(0.0)
    for g in grads:
        step.add_(1)
        et._fused_adagrad_([p], [_tensor(g, dtype, layout)], [state_sum], [step], **case)
    return p


def _assert_close(got, want, dtype):
    rtol, atol = TOL[dtype]
    np.testing.assert_allclose(_as_f64(got), want, rtol=rtol, atol=atol)


@pytest.mark.parametrize("case", SGD_CASES)
@pytest.mark.parametrize("shape, layout", LAYOUTS)
@pytest.mark.parametrize("dtype", [et.float64, et.float32, et.float16, et.bfloat16])
def test_cpu_sgd_matches_the_rule(case, shape, layout, dtype):
    init, grads = _problem(shape)
    p, _ = _run_sgd(init, grads, dtype, layout, "cpu", case)
    assert p.shape == shape and p.dtype == dtype
    # half types round every stored value: start the reference from the rounded inputs
    init, grads = _as_f64(_tensor(init, dtype, "c")), [_as_f64(_tensor(g, dtype, "c")) for g in grads]
    _assert_close(p, _sgd_reference(init, grads, **case), dtype)


@pytest.mark.parametrize("case", ADAM_CASES)
@pytest.mark.parametrize("decoupled", DECOUPLED, ids=["adam", "adamw"])
@pytest.mark.parametrize("shape, layout", LAYOUTS)
@pytest.mark.parametrize("dtype", [et.float64, et.float32, et.float16, et.bfloat16])
def test_cpu_adam_matches_the_rule(case, decoupled, shape, layout, dtype):
    init, grads = _problem(shape)
    p, _ = _run_adam(init, grads, dtype, layout, "cpu", case, decoupled, "cpu")
    assert p.shape == shape and p.dtype == dtype
    init, grads = _as_f64(_tensor(init, dtype, "c")), [_as_f64(_tensor(g, dtype, "c")) for g in grads]
    tol_dtype = et.float16 if dtype == et.float32 else dtype  # eps-sized denominators amplify rounding
    _assert_close(p, _adam_reference(init, grads, **case, decoupled=decoupled), tol_dtype)


@pytest.mark.parametrize("case", ADAGRAD_CASES)
@pytest.mark.parametrize("shape, layout", LAYOUTS)
@pytest.mark.parametrize("dtype", [et.float64, et.float32, et.float16, et.bfloat16])
def test_cpu_adagrad_matches_the_rule(case, shape, layout, dtype):
    init, grads = _problem(shape)
    p = _run_adagrad(init, grads, dtype, layout, case)
    assert p.shape == shape and p.dtype == dtype
    init, grads = _as_f64(_tensor(init, dtype, "c")), [_as_f64(_tensor(g, dtype, "c")) for g in grads]
    _assert_close(p, _adagrad_reference(init, grads, **case), dtype)


@pytest.mark.parametrize("run", ["sgd", "adam", "adagrad"])
def test_cpu_parallel_kernels_match_the_rule(run, monkeypatch):
    # A low threshold so that the 400-element tensor runs the prange variants of the kernels.
    from ember_tensor._backends.cpu.kernels import fused_optim
    monkeypatch.setattr(fused_optim, "PARALLEL_THRESHOLD", 256)
    init, grads = _problem((20, 20))
    if run == "sgd":
        p, _ = _run_sgd(init, grads, et.float64, "c", "cpu", SGD_CASES[1])
        want = _sgd_reference(init, grads, **SGD_CASES[1])
    elif run == "adam":
        p, _ = _run_adam(init, grads, et.float64, "c", "cpu", ADAM_CASES[1], False, "cpu")
        want = _adam_reference(init, grads, **ADAM_CASES[1], decoupled=False)
    else:
        p = _run_adagrad(init, grads, et.float64, "c", ADAGRAD_CASES[1])
        want = _adagrad_reference(init, grads, **ADAGRAD_CASES[1])
    _assert_close(p, want, et.float64)


# --- CUDA == CPU, with no value read back to the host -------------------------------------

needs_cuda = pytest.mark.skipif(not et.cuda.is_available(), reason="no CUDA and no simulator")
CUDA_LAYOUTS = [((2, 3), "c"), ((3, 2), "t"), ((), "c"), ((0,), "c")]


def _assert_same(cpu_tensors, cuda_tensors, dtype):
    rtol = {et.float64: 1e-13, et.float32: 1e-6, et.float16: 1e-3, et.bfloat16: 1e-2}[dtype]
    for c, g in zip(cpu_tensors, cuda_tensors):
        assert g.device.type == "cuda" and g.dtype == c.dtype and g.shape == c.shape
        np.testing.assert_allclose(_as_f64(g), _as_f64(c), rtol=rtol, atol=rtol)


@needs_cuda
@pytest.mark.parametrize("case", SGD_CASES)
@pytest.mark.parametrize("shape, layout", CUDA_LAYOUTS)
@pytest.mark.parametrize("dtype", [et.float64, et.float32, et.float16, et.bfloat16])
def test_cuda_sgd_equals_cpu_on_the_device(case, shape, layout, dtype):
    init, grads = _problem(shape, seed=1)
    cpu = _run_sgd(init, grads, dtype, layout, "cpu", case)
    with device_only():
        cuda = _run_sgd(init, grads, dtype, layout, "cuda", case)
    _assert_same([cpu[0]] + cpu[1], [cuda[0]] + cuda[1], dtype)


@needs_cuda
@pytest.mark.parametrize("case", ADAM_CASES)
@pytest.mark.parametrize("decoupled", DECOUPLED, ids=["adam", "adamw"])
@pytest.mark.parametrize("step_device", ["cuda", "cpu"], ids=["device-step", "host-step"])
@pytest.mark.parametrize("shape, layout", CUDA_LAYOUTS)
@pytest.mark.parametrize("dtype", [et.float64, et.float32, et.float16, et.bfloat16])
def test_cuda_adam_equals_cpu_on_the_device(case, decoupled, step_device, shape, layout, dtype):
    init, grads = _problem(shape, seed=2)
    cpu = _run_adam(init, grads, dtype, layout, "cpu", case, decoupled, "cpu")
    with device_only():
        cuda = _run_adam(init, grads, dtype, layout, "cuda", case, decoupled, step_device)
    _assert_same([cpu[0]] + cpu[1], [cuda[0]] + cuda[1], dtype)


# --- AMP: grad_scale and found_inf --------------------------------------------------------

DEVICES = ["cpu", pytest.param("cuda", marks=needs_cuda)]
SGD_PLAIN = dict(weight_decay=0.0, momentum=0.0, lr=0.5, dampening=0.0, nesterov=False,
                 maximize=False, is_first_step=False)
ADAM_PLAIN = dict(lr=0.1, beta1=0.9, beta2=0.999, weight_decay=0.0, eps=1e-8, amsgrad=False,
                  maximize=False)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("found, expected_p, expected_g", [
    (None, [0.0, -1.0], [2.0, 4.0]),  # gradients divided by 2 and stored back unscaled
    (0.0, [0.0, -1.0], [2.0, 4.0]),
    (1.0, [1.0, 1.0], [4.0, 8.0]),    # an inf/nan was found: nothing moves
    (2.0, [0.0, -1.0], [2.0, 4.0]),   # only exactly 1 skips (PyTorch's test)
])
def test_sgd_grad_scale_and_found_inf(device, found, expected_p, expected_g):
    p, g = et.ones(2, device=device), et.tensor([4.0, 8.0], device=device)
    amp = dict(grad_scale=et.tensor(2.0, device=device),
               found_inf=None if found is None else et.tensor(found, device=device))
    with device_only() if device == "cuda" else _nothing():
        et._fused_sgd_([p], [g], [], **SGD_PLAIN, **amp)
    np.testing.assert_allclose(_as_f64(p), expected_p)
    np.testing.assert_allclose(_as_f64(g), expected_g)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("found", [0.0, 1.0])
def test_adam_grad_scale_and_found_inf(device, found):
    def run(dev, amp):
        p, g = et.tensor([1.0, -2.0], device=dev), et.tensor([0.5, 3.0], device=dev)
        m, v, step = et.zeros(2, device=dev), et.zeros(2, device=dev), et.tensor(1.0, device=dev)
        et._fused_adam_([p], [g], [m], [v], [], [step], **ADAM_PLAIN, **amp)
        return p, g
    expected_p, _ = run("cpu", {})  # the unscaled gradient, no AMP
    with device_only() if device == "cuda" else _nothing():
        p, g = run(device, dict(grad_scale=et.tensor(4.0, device=device),
                                found_inf=et.tensor(found, device=device)))
    if found == 1.0:
        np.testing.assert_allclose(_as_f64(p), [1.0, -2.0])
        np.testing.assert_allclose(_as_f64(g), [0.5, 3.0])  # still scaled: left alone
    else:
        np.testing.assert_allclose(_as_f64(p), _as_f64(expected_p), rtol=1e-6)
        np.testing.assert_allclose(_as_f64(g), [0.125, 0.75])


@pytest.mark.parametrize("found", [None, 0.0, 1.0])
def test_adagrad_grad_scale_and_found_inf(found):
    p, g, s = et.ones(2), et.tensor([4.0, -8.0]), et.zeros(2)
    amp = dict(grad_scale=et.tensor(2.0), found_inf=None if found is None else et.tensor(found))
    et._fused_adagrad_([p], [g], [s], [et.tensor(1.0)], **ADAGRAD_CASES[0], **amp)
    if found == 1.0:
        np.testing.assert_allclose(p.numpy(), [1.0, 1.0])
        np.testing.assert_allclose(g.numpy(), [4.0, -8.0])
    else:  # the unscaled gradient (2, -4) is stored back; sqrt(g * g) = |g|
        np.testing.assert_allclose(p.numpy(), [0.9, 1.1], rtol=1e-6)
        np.testing.assert_allclose(g.numpy(), [2.0, -4.0])


@needs_cuda
def test_adagrad_has_no_cuda_kernel_as_in_pytorch():
    p = et.ones(2, device="cuda")
    with pytest.raises(NotImplementedError, match="Could not run 'aten::_fused_adagrad_' with arguments "
                                                  "from the 'CUDA' backend"):
        et._fused_adagrad_([p], [et.ones(2, device="cuda")], [et.zeros(2, device="cuda")],
                           [et.tensor(1.0)], **ADAGRAD_CASES[0])


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def test_step_bumps_the_version_of_what_it_writes():
    p, g, m, v = et.ones(2), et.ones(2), et.zeros(2), et.zeros(2)
    before = [t._storage.version for t in (p, g, m, v)]
    et._fused_adam_([p], [g], [m], [v], [], [et.tensor(1.0)], **ADAM_PLAIN)
    after = [t._storage.version for t in (p, g, m, v)]
    assert [b - a for a, b in zip(before, after)] == [1, 0, 1, 1]


def test_empty_lists_do_nothing():
    et._fused_sgd_([], [], [], **SGD_PLAIN)
    et._fused_adamw_([], [], [], [], [], [], **ADAM_PLAIN)


# --- errors (PyTorch's type and wording) ----------------------------------------------------

_IMPROVE = r"\.  \(Could this error message be improved\?"


def _adam_args(p=None, g=None, m=None, v=None, vmax=None, steps=None):
    p = et.ones(3) if p is None else p
    return ([p], [et.ones(3) if g is None else g], [et.zeros(3) if m is None else m],
            [et.zeros(3) if v is None else v], [] if vmax is None else vmax,
            [et.tensor(1.0)] if steps is None else steps)


ERRORS = [
    (lambda: et._fused_adam_([et.ones(3)], [], [et.zeros(3)], [et.zeros(3)], [], [et.tensor(1.0)],
                             **ADAM_PLAIN),
     RuntimeError, "Expected grads.size\\(\\) == n_tensors to be true, but got false" + _IMPROVE),
    (lambda: et._fused_adam_(*_adam_args(steps=[]), **ADAM_PLAIN),
     RuntimeError, "Expected state_steps.size\\(\\) == n_tensors"),
    (lambda: et._fused_adam_(*_adam_args(), **dict(ADAM_PLAIN, amsgrad=True)),
     RuntimeError, "Expected max_exp_avg_sqs.size\\(\\) == n_tensors"),
    (lambda: et._fused_adam_(*_adam_args(g=et.ones(3, dtype=et.float64)), **ADAM_PLAIN),
     RuntimeError, "expected scalar type Float but found Double"),
    (lambda: et._fused_adam_(*_adam_args(p=et.ones(3, dtype=et.int64)), **ADAM_PLAIN),
     NotImplementedError, "\"fused_adam_kernel\" not implemented for 'Long'"),
    (lambda: et._fused_adam_(*_adam_args(m=et.zeros(4)), **ADAM_PLAIN),
     RuntimeError, r"exp_avgs has shape \[4\] but its parameter has shape \[3\]"),
    (lambda: et._fused_adam_(*_adam_args(steps=[et.tensor([1.0, 2.0])]), **ADAM_PLAIN),
     RuntimeError, "a Tensor with 2 elements cannot be converted to Scalar"),
    (lambda: et._fused_adam_(*_adam_args(), grad_scale=et.tensor(1.0, dtype=et.float64), **ADAM_PLAIN),
     RuntimeError, "expected scalar type Float but found Double"),
    (lambda: et._fused_sgd_([et.ones(3)], [et.ones(3)], [et.zeros(3)], **SGD_PLAIN),
     RuntimeError, "Expected momentum_buffer_list.empty\\(\\) to be true, but got false"),
    (lambda: et._fused_sgd_([et.ones(3)], [et.ones(3)], [], **dict(SGD_PLAIN, momentum=0.9)),
     RuntimeError, "Expected momentum_buffer_list.size\\(\\) == n_tensors"),
    (lambda: et._fused_sgd_([et.ones(3, dtype=et.int64)], [et.ones(3, dtype=et.int64)], [], **SGD_PLAIN),
     NotImplementedError, "\"fused_sgd_kernel\" not implemented for 'Long'"),
    (lambda: et._fused_sgd_([et.ones(3)], [et.ones(3, dtype=et.float16)], [], **SGD_PLAIN),
     RuntimeError, "expected scalar type Float but found Half"),
    (lambda: et._fused_adagrad_([et.ones(3)], [et.ones(3)], [], [et.tensor(1.0)], **ADAGRAD_CASES[0]),
     RuntimeError, "Expected state_sums.size\\(\\) == n_tensors"),
    (lambda: et._fused_adagrad_([et.ones(3, dtype=et.int64)], [et.ones(3, dtype=et.int64)],
                                [et.ones(3, dtype=et.int64)], [et.tensor(1.0)], **ADAGRAD_CASES[0]),
     NotImplementedError, "\"fused_adagrad_kernel\" not implemented for 'Long'"),
]


@pytest.mark.parametrize("call, error, message", ERRORS)
def test_errors(call, error, message):
    with pytest.raises(error, match=message):
        call()


@needs_cuda
def test_tensors_on_two_devices_are_refused():
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device, but found at "
                                           "least two devices, cuda:0 and cpu!"):
        et._fused_sgd_([et.ones(3, device="cuda")], [et.ones(3)], [], **SGD_PLAIN)


def test_errors_match_pytorch():
    torch = pytest.importorskip("torch")
    p = torch.ones(3)
    with pytest.raises(RuntimeError, match="expected scalar type Float but found Double"):
        torch._fused_adam_([p], [torch.ones(3, dtype=torch.float64)], [torch.zeros(3)], [torch.zeros(3)],
                           [], [torch.tensor(1.0)], **ADAM_PLAIN)
    with pytest.raises(RuntimeError, match="Expected momentum_buffer_list.empty"):
        torch._fused_sgd_([p], [p.clone()], [p.clone()], **SGD_PLAIN)


@pytest.mark.parametrize("decoupled", DECOUPLED, ids=["adam", "adamw"])
def test_cpu_matches_pytorch(decoupled):
    torch = pytest.importorskip("torch")
    init, grads = _problem((3, 4), seed=5)
    case = ADAM_CASES[1]
    p, state = _run_adam(init, grads, et.float32, "c", "cpu", case, decoupled, "cpu")
    tp = torch.tensor(init, dtype=torch.float32)
    tm, tv, tvmax = (torch.zeros(3, 4) for _ in range(3))
    step = torch.tensor(0.0)
    op = torch._fused_adamw_ if decoupled else torch._fused_adam_
    for g in grads:
        step += 1
        op([tp], [torch.tensor(g, dtype=torch.float32)], [tm], [tv], [tvmax], [step], **case)
    for ours, theirs in zip([p] + state, [tp, tm, tv, tvmax]):
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-5, atol=1e-6)


def test_docstring_examples_run():
    from ember_tensor._ops import fused_optim
    namespace = {"__name__": "doctest"}
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    parser = doctest.DocTestParser()
    examples = 0
    for name in fused_optim.__all__:
        test = parser.get_doctest(getattr(fused_optim, name).__doc__, dict(namespace), name, None, 0)
        examples += len(test.examples)
        runner.run(test)
    assert examples >= 12 and runner.failures == 0


# Counts the functions Numba compiles (a kernel loaded from the on-disk cache compiles none)
# while a fused Adam and SGD step run on the CPU.
_COUNT_FUSED_COMPILES = """
import numpy as np
import numba.core.compiler as compiler
count = [0]
original = compiler.compile_extra
def counting(*args, **kwargs):
    count[0] += 1
    return original(*args, **kwargs)
compiler.compile_extra = counting
from ember_tensor._backends.cpu.kernels import fused_optim
p, g, m, v = (np.full(8, x, np.float32) for x in (1.0, 0.5, 0.0, 0.0))
fused_optim.adam_update(p, g, m, v, p, step=1, lr=0.1, beta1=0.9, beta2=0.999, eps=1e-8,
                        weight_decay=0.0, decoupled_weight_decay=False, amsgrad=False, maximize=False)
fused_optim.sgd_update(p, g, None, lr=0.1, weight_decay=0.0, momentum=0.0, dampening=0.0,
                       nesterov=False, maximize=False, first_step=True)
print(count[0])
"""


def test_fused_loops_load_from_the_disk_cache_in_a_later_process(tmp_path):
    # The loops inline optim_steps.py; they are generated into ember's kernel cache so that
    # Numba's on-disk cache applies (they used to compile in every process).
    env = dict(os.environ, EMBER_CACHE_DIR=str(tmp_path), NUMBA_CACHE_DIR=str(tmp_path))
    counts = [int(subprocess.run([sys.executable, "-c", _COUNT_FUSED_COMPILES], env=env, check=True,
                                 capture_output=True, text=True, timeout=300).stdout) for _ in range(2)]
    assert counts[0] > 0 and counts[1] == 0


def test_fused_loops_serial_and_parallel_are_functions_of_their_own():
    # Numba's disk cache keys on the function, not on the parallel flag (test_kernel_twins.py).
    from ember_tensor._backends.cpu.kernels import fused_optim
    modules = [fused_optim._loop_module(loop) for loop in ("sgd", "adagrad", "check_and_unscale")]
    modules.append(fused_optim._adam_module(True, False, True))
    for module in modules:
        assert module.serial.py_func is not module.parallel.py_func
        assert module.parallel.targetoptions["parallel"] is True
        assert module.serial.targetoptions.get("parallel") is not True
