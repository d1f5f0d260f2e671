"""Every scheduler's learning-rate sequence against a hand-computed one (and PyTorch's, when
installed), the step-order warning, and state_dict round trips."""
import math
import pickle
import warnings

import pytest

import ember_tensor as et
import ember_optim

C = math.cos
PI = math.pi

# (name, factory(optim module, sched module, optimizer), metrics or None, expected lr after
#  construction followed by the lr after each of the next steps)
CASES = [
    ("StepLR", lambda o, s, opt: s.StepLR(opt, step_size=2, gamma=0.5), None, [1, 1, 0.5, 0.5, 0.25, 0.25]),
    ("MultiStepLR", lambda o, s, opt: s.MultiStepLR(opt, milestones=[2, 4, 4], gamma=0.1), None,
     [1, 1, 0.1, 0.1, 0.001, 0.001]),
    ("ConstantLR", lambda o, s, opt: s.ConstantLR(opt, factor=0.5, total_iters=3), None, [0.5, 0.5, 0.5, 1, 1]),
    ("LinearLR", lambda o, s, opt: s.LinearLR(opt, start_factor=0.25, total_iters=3), None,
     [0.25, 0.5, 0.75, 1, 1]),
    ("ExponentialLR", lambda o, s, opt: s.ExponentialLR(opt, gamma=0.5), None, [1, 0.5, 0.25, 0.125]),
    ("PolynomialLR", lambda o, s, opt: s.PolynomialLR(opt, total_iters=4, power=2), None,
     [1, 0.5625, 0.25, 0.0625, 0, 0]),
    ("CosineAnnealingLR", lambda o, s, opt: s.CosineAnnealingLR(opt, T_max=4, eta_min=0.0), None,
     [1, (1 + C(PI / 4)) / 2, 0.5, (1 + C(3 * PI / 4)) / 2, 0, (1 + C(3 * PI / 4)) / 2, 0.5]),
    ("CosineAnnealingWarmRestarts", lambda o, s, opt: s.CosineAnnealingWarmRestarts(opt, T_0=2, T_mult=2), None,
     [1, 0.5, 1, (1 + C(PI / 4)) / 2, 0.5, (1 + C(3 * PI / 4)) / 2, 1]),
    ("LambdaLR", lambda o, s, opt: s.LambdaLR(opt, lambda epoch: 1 / (epoch + 1)), None, [1, 1 / 2, 1 / 3, 1 / 4]),
    ("MultiplicativeLR", lambda o, s, opt: s.MultiplicativeLR(opt, lambda epoch: 0.9), None, [1, 0.9, 0.81, 0.729]),
    ("CyclicLR", lambda o, s, opt: s.CyclicLR(opt, 0.1, 1.0, step_size_up=2, cycle_momentum=False), None,
     [0.1, 0.55, 1.0, 0.55, 0.1, 0.55]),
    ("CyclicLR-triangular2", lambda o, s, opt: s.CyclicLR(opt, 0.1, 1.0, step_size_up=2, mode="triangular2"),
     None, [0.1, 0.55, 1.0, 0.55, 0.1, 0.325, 0.55]),
    ("OneCycleLR", lambda o, s, opt: s.OneCycleLR(opt, max_lr=1.0, total_steps=10, anneal_strategy="linear"), None,
     [0.04, 0.52, 1.0] + [1.0 + (4e-6 - 1.0) * k / 7 for k in range(1, 8)]),
    ("SequentialLR", lambda o, s, opt: s.SequentialLR(
        opt, [s.ConstantLR(opt, factor=0.1, total_iters=2), s.ExponentialLR(opt, gamma=0.9)], milestones=[2]),
     None, [0.1, 0.1, 1.0, 0.9, 0.81]),
    ("ChainedScheduler", lambda o, s, opt: s.ChainedScheduler(
        [s.ConstantLR(opt, factor=0.1, total_iters=2), s.ExponentialLR(opt, gamma=0.9)]),
     None, [0.1, 0.09, 0.81, 0.729]),
    ("ReduceLROnPlateau", lambda o, s, opt: s.ReduceLROnPlateau(opt, factor=0.5, patience=1, cooldown=1, min_lr=0.2),
     [1.0, 1.0, 1.0, 1.0, 1.0, 0.5, 0.5, 0.5], [1, 1, 1, 0.5, 0.5, 0.5, 0.5, 0.5, 0.25]),
]


def _lr_sequence(optim_module, tensor_module, factory, metrics, steps):
    w = tensor_module.zeros(1, requires_grad=True)
    opt = optim_module.SGD([w], lr=1.0, momentum=0.9)
    scheduler = factory(optim_module, optim_module.lr_scheduler, opt)
    lrs = [opt.param_groups[0]["lr"]]
    for i in range(steps):
        opt.step()
        if metrics is None:
            scheduler.step()
        else:
            scheduler.step(metrics[i])
        lrs.append(scheduler.get_last_lr()[0])
        assert lrs[-1] == opt.param_groups[0]["lr"]
    return lrs


@pytest.mark.parametrize("name, factory, metrics, expected", CASES, ids=[c[0] for c in CASES])
def test_sequence_matches_hand_computed(name, factory, metrics, expected):
    got = _lr_sequence(ember_optim, et, factory, metrics, len(expected) - 1)
    assert got == pytest.approx(expected, rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("name, factory, metrics, expected", CASES, ids=[c[0] for c in CASES])
def test_sequence_matches_pytorch(name, factory, metrics, expected):
    torch = pytest.importorskip("torch")
    steps = len(expected) + 3
    metrics = None if metrics is None else metrics + [0.5] * 4
    ours = _lr_sequence(ember_optim, et, factory, metrics, steps - 4) if name == "OneCycleLR" else \
        _lr_sequence(ember_optim, et, factory, metrics, steps)
    theirs = _lr_sequence(torch.optim, torch, factory, metrics, len(ours) - 1)
    assert ours == pytest.approx(theirs, rel=1e-14, abs=1e-15)


def test_warns_when_scheduler_steps_before_optimizer():
    opt = ember_optim.SGD([et.zeros(1, requires_grad=True)], lr=1.0)
    scheduler = ember_optim.lr_scheduler.StepLR(opt, 1)
    with pytest.warns(UserWarning, match=r"Detected call of `lr_scheduler.step\(\)` before `optimizer.step\(\)`"):
        scheduler.step()


def test_no_warning_in_the_right_order():
    opt = ember_optim.SGD([et.zeros(1, requires_grad=True)], lr=1.0)
    scheduler = ember_optim.lr_scheduler.StepLR(opt, 1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        opt.step()
        scheduler.step()


def test_cyclic_momentum_moves_opposite_to_the_rate():
    opt = ember_optim.Adam([et.zeros(1, requires_grad=True)], lr=1.0)
    scheduler = ember_optim.lr_scheduler.OneCycleLR(opt, max_lr=1.0, total_steps=10)
    assert opt.param_groups[0]["betas"][0] == pytest.approx(0.95)
    for _ in range(2):  # step 2 is the peak of the rate: the trough of the momentum
        opt.step()
        scheduler.step()
    assert opt.param_groups[0]["betas"][0] == pytest.approx(0.85)


def test_state_dict_round_trip_resumes_the_schedule():
    def build():
        opt = ember_optim.SGD([et.zeros(1, requires_grad=True)], lr=1.0)
        return opt, ember_optim.lr_scheduler.CosineAnnealingLR(opt, T_max=5)

    opt, scheduler = build()
    for _ in range(2):
        opt.step()
        scheduler.step()
    saved = pickle.loads(pickle.dumps((opt.state_dict(), scheduler.state_dict())))
    expected = []
    for _ in range(3):
        opt.step()
        scheduler.step()
        expected.append(scheduler.get_last_lr()[0])
    opt2, scheduler2 = build()
    opt2.load_state_dict(saved[0])
    scheduler2.load_state_dict(saved[1])
    got = []
    for _ in range(3):
        opt2.step()
        scheduler2.step()
        got.append(scheduler2.get_last_lr()[0])
    assert got == expected


@pytest.mark.parametrize("build, error, message", [
    (lambda s, opt: s.StepLR(object(), 1), TypeError, "object is not an Optimizer"),
    (lambda s, opt: s.ConstantLR(opt, factor=2), ValueError, "Constant multiplicative factor expected to be between 0 and 1."),
    (lambda s, opt: s.LinearLR(opt, start_factor=0), ValueError, "Starting multiplicative factor expected"),
    (lambda s, opt: s.ReduceLROnPlateau(opt, factor=1.0), ValueError, "Factor should be < 1.0."),
    (lambda s, opt: s.ReduceLROnPlateau(opt, mode="up"), ValueError, "mode up is unknown!"),
    (lambda s, opt: s.CosineAnnealingWarmRestarts(opt, T_0=0), ValueError, "Expected positive integer T_0, but got 0"),
    (lambda s, opt: s.OneCycleLR(opt, max_lr=1.0), ValueError, "You must define either total_steps OR (epochs AND steps_per_epoch)"),
    (lambda s, opt: s.SequentialLR(opt, [s.StepLR(opt, 1)], milestones=[1]), ValueError,
     "Sequential Schedulers expects number of schedulers provided to be one more than the number of milestone points"),
    (lambda s, opt: s.StepLR(opt, 1, last_epoch=3), KeyError, "param 'initial_lr' is not specified in param_groups[0]"),
])
def test_bad_arguments_raise_pytorch_errors(build, error, message):
    opt = ember_optim.SGD([et.zeros(1, requires_grad=True)], lr=1.0, momentum=0.9)
    with pytest.raises(error) as info:
        build(ember_optim.lr_scheduler, opt)
    assert message in str(info.value)
