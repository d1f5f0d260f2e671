"""Complex parameters, stepped as PyTorch steps them: as their real view
(``view_as_real``), so that each real and imaginary part is a coordinate of its own with
its own adaptive moments (Adam's second moment of a complex gradient is g_re² and g_im²,
not g² or |g|²). Checked two ways: against the same optimizer on the real view as a
parameter of its own, and against PyTorch where it is installed."""
import numpy as np
import pytest

import ember_tensor as torch
import ember_optim as optim

CASES = [
    ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01)),
    ("Adam", dict(lr=0.1, weight_decay=0.01)),
    ("Adam", dict(lr=0.1, amsgrad=True, maximize=True)),
    ("AdamW", dict(lr=0.1)),
    ("Adamax", dict(lr=0.1, weight_decay=0.01)),
    ("Adadelta", dict(lr=1.0, weight_decay=0.01)),
    ("Adagrad", dict(lr=0.1, lr_decay=0.01, weight_decay=0.01)),
    ("ASGD", dict(lr=0.1, t0=1)),
    ("NAdam", dict(lr=0.1, weight_decay=0.01)),
    ("RAdam", dict(lr=0.1, weight_decay=0.01)),
    ("RMSprop", dict(lr=0.01, momentum=0.5, centered=True, weight_decay=0.01)),
    ("Rprop", dict(lr=0.1)),
]
STEPS = 7


def _start():
    rng = np.random.default_rng(0)
    return (rng.standard_normal((3, 4)) + 1j * rng.standard_normal((3, 4))).astype(np.complex64)


def _loss(lib, z):
    # A real loss of a complex parameter whose gradient differs between the parts.
    return (z.real ** 2 * 3 + z.imag ** 4 + (z * z).real).sum()


def _run(lib, optim_lib, name, options, as_real):
    start = lib.tensor(_start())
    param = lib.view_as_real(start).clone().requires_grad_() if as_real else start.clone().requires_grad_()
    opt = getattr(optim_lib, name)([param], **options)
    for _ in range(STEPS):
        opt.zero_grad()
        z = lib.view_as_complex(param) if as_real else param
        _loss(lib, z).backward()
        opt.step()
    value = lib.view_as_complex(param) if as_real else param
    return value.detach().numpy()


@pytest.mark.parametrize("name, options", CASES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CASES)])
def test_a_complex_parameter_steps_as_its_real_view(name, options):
    complex_run = _run(torch, optim, name, options, as_real=False)
    real_run = _run(torch, optim, name, options, as_real=True)
    assert complex_run.dtype == np.complex64
    np.testing.assert_allclose(complex_run, real_run, rtol=1e-6, atol=1e-6)
    assert not np.allclose(complex_run, _start())  # it did step


@pytest.mark.parametrize("name, options", CASES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CASES)])
def test_complex_steps_equal_pytorchs(name, options):
    real_torch = pytest.importorskip("torch")
    expected = _run(real_torch, real_torch.optim, name, options, as_real=False)
    np.testing.assert_allclose(_run(torch, optim, name, options, as_real=False), expected, rtol=2e-5, atol=2e-5)


def _run_lbfgs(lib, optim_lib, line_search, as_real):
    start = lib.tensor(_start())
    param = lib.view_as_real(start).clone().requires_grad_() if as_real else start.clone().requires_grad_()
    opt = optim_lib.LBFGS([param], lr=0.5, max_iter=5, history_size=3, line_search_fn=line_search)

    def closure():
        opt.zero_grad()
        loss = _loss(lib, lib.view_as_complex(param) if as_real else param)
        loss.backward()
        return loss
    losses = [float(opt.step(closure)) for _ in range(3)]
    value = lib.view_as_complex(param) if as_real else param
    return losses, value.detach().numpy()


@pytest.mark.parametrize("line_search", [None, "strong_wolfe"])
def test_lbfgs_treats_a_complex_parameter_as_two_real_coordinates(line_search):
    losses, value = _run_lbfgs(torch, optim, line_search, as_real=False)
    real_losses, real_value = _run_lbfgs(torch, optim, line_search, as_real=True)
    np.testing.assert_allclose(losses, real_losses, rtol=1e-5)
    np.testing.assert_allclose(value, real_value, rtol=1e-5, atol=1e-6)
    assert losses[-1] < losses[0]
    real_torch = pytest.importorskip("torch")
    torch_losses, torch_value = _run_lbfgs(real_torch, real_torch.optim, line_search, as_real=False)
    np.testing.assert_allclose(losses, torch_losses, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(value, torch_value, rtol=1e-4, atol=1e-4)
