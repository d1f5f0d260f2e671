"""Whole training steps (forward, ``loss.backward()``, an optimizer's in-place update)
compiled as one function are recorded as one program and replayed, giving eager's loss,
parameters, gradients and optimizer state bit for bit; what the program cannot see makes
the call run eagerly (see ember_compile.whole_step).

ember-optim stands above ember-compile, so these tests bring their own optimizers, written
as ember-optim's are read by the compiler: ``param_groups`` and ``state``, in-place ember
ops under no_grad (the meta-package's suite runs ember-optim's own, tests/test_compile_training.py).
"""
import math
import warnings

import pytest

import ember_autograd
import ember_compile
import ember_nn as nn
import ember_nn.functional as F
import ember_tensor as torch
from ember_compile import Unsupported, compile, explain


@pytest.fixture(autouse=True)
def whole_step(monkeypatch):
    """The replay is opt-in (config.whole_step): these tests switch it on."""
    monkeypatch.setattr(ember_compile.config, "whole_step", True)


class MomentumSGD:
    """SGD with momentum: ``buf = momentum * buf + grad; p -= lr * buf``."""

    def __init__(self, params, lr=0.1, momentum=0.9):
        self.param_groups = [{"params": list(params), "lr": lr, "momentum": momentum}]
        self.state = {}

    def zero_grad(self, set_to_none=True):
        for p in self.param_groups[0]["params"]:
            if p.grad is not None:
                if set_to_none:
                    p.grad = None
                else:
                    p.grad.zero_()

    def step(self):
        with ember_autograd.no_grad():
            for group in self.param_groups:
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    if group["momentum"] == 0:  # no state at all
                        p.add_(p.grad, alpha=-group["lr"])
                        continue
                    state = self.state.setdefault(p, {})
                    if "momentum_buffer" not in state:  # a factory: the first step is not recorded
                        state["momentum_buffer"] = torch.zeros_like(p)
                    buf = state["momentum_buffer"]
                    buf.mul_(group["momentum"]).add_(p.grad)
                    p.add_(buf, alpha=-group["lr"])


class TensorStepAdamW(MomentumSGD):
    """AdamW whose step counter is a 0-d tensor and whose bias corrections are ops."""

    def __init__(self, params, lr=1e-2, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2):
        self.param_groups = [{"params": list(params), "lr": lr, "betas": betas, "eps": eps,
                              "weight_decay": weight_decay}]
        self.state = {}

    def step(self):
        with ember_autograd.no_grad():
            for group in self.param_groups:
                (b1, b2), lr = group["betas"], group["lr"]
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    state = self.state.setdefault(p, {})
                    if not state:
                        state.update(step=torch.zeros(()), exp_avg=torch.zeros_like(p),
                                     exp_avg_sq=torch.zeros_like(p))
                    state["step"].add_(1)
                    p.mul_(1 - lr * group["weight_decay"])
                    state["exp_avg"].mul_(b1).add_(p.grad, alpha=1 - b1)
                    state["exp_avg_sq"].mul_(b2).addcmul_(p.grad, p.grad, value=1 - b2)
                    bias1 = 1 - torch.exp(state["step"] * math.log(b1))
                    bias2 = 1 - torch.exp(state["step"] * math.log(b2))
                    denom = (state["exp_avg_sq"] / bias2).sqrt().add_(group["eps"])
                    p.addcdiv_(state["exp_avg"] / bias1, denom, value=-lr)


class PythonStepAdam(TensorStepAdamW):
    """Adam with a Python step counter in its state: the program would not advance it."""

    def step(self):
        with ember_autograd.no_grad():
            for group in self.param_groups:
                (b1, b2), lr = group["betas"], group["lr"]
                for p in group["params"]:
                    state = self.state.setdefault(p, {"step": 0})
                    if "exp_avg" not in state:
                        state.update(exp_avg=torch.zeros_like(p), exp_avg_sq=torch.zeros_like(p))
                    state["step"] += 1
                    state["exp_avg"].mul_(b1).add_(p.grad, alpha=1 - b1)
                    state["exp_avg_sq"].mul_(b2).addcmul_(p.grad, p.grad, value=1 - b2)
                    denom = (state["exp_avg_sq"] / (1 - b2 ** state["step"])).sqrt().add_(group["eps"])
                    p.addcdiv_(state["exp_avg"], denom, value=-lr / (1 - b1 ** state["step"]))


def _mlp():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(6, 12), nn.ReLU(), nn.Linear(12, 3))


def standard(model, opt):
    def step(x, y):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss
    return step


def accumulating(model, opt):  # no zero_grad: gradients add up over the calls
    def step(x, y):
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss
    return step


def zeroing_in_place(model, opt):
    def step(x, y):
        opt.zero_grad(set_to_none=False)
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss
    return step


def zero_grad_last(model, opt):
    def step(x, y):
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad()
        return loss, model(x).detach()
    return step


def reads_loss(model, opt):  # .item() in the step: a value the program would freeze
    def step(x, y):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss.item()
    return step


def dropout(model, opt):  # a random draw: not replayed
    def step(x, y):
        opt.zero_grad()
        loss = F.cross_entropy(F.dropout(model(x), 0.5), y)
        loss.backward()
        opt.step()
        return loss
    return step


def engine_by_name(model, opt):  # autograd.backward(loss): not the recorded Tensor.backward
    calls = torch.zeros(())

    def step(x, y):
        calls.add_(1)  # an in-place op on a real tensor: fx breaks here, a training step
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        ember_autograd.backward(loss)
        opt.step()
        return loss
    return step


def masked(model, opt):  # a data-dependent shape: rows picked by their values
    def step(x, y):
        opt.zero_grad()
        keep = x[:, 0] > 0
        loss = F.cross_entropy(model(x[keep]), y[keep])
        loss.backward()
        opt.step()
        return loss
    return step


def _equal(a, b):
    if isinstance(a, torch.Tensor):  # NaN where NaN (a mean over no rows)
        return isinstance(b, torch.Tensor) and a.shape == b.shape and torch.equal(a.isnan(), b.isnan()) and \
            torch.equal(torch.where(a.isnan(), 0.0, a), torch.where(b.isnan(), 0.0, b))
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b))
    return a == b


def _same_state(opt_a, opt_b, params_a, params_b):
    for pa, pb in zip(params_a, params_b):
        sa, sb = opt_a.state.get(pa, {}), opt_b.state.get(pb, {})
        assert sa.keys() == sb.keys()
        for k in sa:
            assert _equal(sa[k], sb[k]), k


CASES = [  # (optimizer, step function, replays expected)
    (MomentumSGD, standard, True),
    (lambda params: MomentumSGD(params, momentum=0.0), standard, True),
    (MomentumSGD, accumulating, True),
    (MomentumSGD, zeroing_in_place, True),
    (MomentumSGD, zero_grad_last, True),
    (MomentumSGD, masked, None),  # replayed while the count of kept rows repeats, else eager
    (TensorStepAdamW, standard, True),
    (TensorStepAdamW, accumulating, True),
    (PythonStepAdam, standard, False),
    (MomentumSGD, reads_loss, False),
    (MomentumSGD, dropout, False),
    (MomentumSGD, engine_by_name, False),
]


@pytest.mark.parametrize("ahead_of_time", [True, False], ids=["forward-as-one-node", "forward-op-by-op"])
@pytest.mark.parametrize("optimizer, make_step, replays", CASES,
                         ids=[f"{getattr(o, '__name__', 'plain SGD')}-{s.__name__}" for o, s, _ in CASES])
def test_replayed_steps_equal_eager_bit_for_bit(optimizer, make_step, replays, ahead_of_time, monkeypatch):
    """Both replays: the forward lowered with its backward from the derivative table (one
    CompiledFunctionBackward node), and op by op with eager's per-op graph."""
    monkeypatch.setattr(ember_compile.config, "ahead_of_time_backward", ahead_of_time)
    eager_model, compiled_model = _mlp(), _mlp()
    eager_opt, compiled_opt = optimizer(eager_model.parameters()), optimizer(compiled_model.parameters())
    eager_step = make_step(eager_model, eager_opt)
    compiled_step = compile(make_step(compiled_model, compiled_opt))
    torch.manual_seed(1)
    batches = [(torch.randn(5, 6), torch.randint(0, 3, (5,))) for _ in range(7)]
    for i, (x, y) in enumerate(batches):
        if i == 4:  # a learning-rate change between steps (what a scheduler does)
            for opt in (eager_opt, compiled_opt):
                opt.param_groups[0]["lr"] *= 0.5
        torch.manual_seed(100 + i)
        expected = eager_step(x, y)
        torch.manual_seed(100 + i)
        got = compiled_step(x, y)
        assert _equal(got, expected), i
        for pe, pc in zip(eager_model.parameters(), compiled_model.parameters()):
            assert torch.equal(pe, pc), i
            assert (pe.grad is None) == (pc.grad is None), i
            if pe.grad is not None:
                assert torch.equal(pe.grad, pc.grad), i
        _same_state(eager_opt, compiled_opt, list(eager_model.parameters()), list(compiled_model.parameters()))
    entries = compiled_step._ember_compiled_function.whole_steps
    if replays is False:  # eager: refused by the recording
        (entry,) = entries
        assert entry.replays == 0 and entry.programs and all(isinstance(p, str) for p in entry.programs.values())
        return
    (entry,) = entries
    # First step: the state is made by factories (refused); second: recorded; then replays
    # (the learning-rate change records once more).
    if replays is None:
        assert entry.replays + entry.abandoned >= 3
    else:
        assert entry.replays >= 3
    lowered = [p.forward is not None for p in entry.programs.values() if not isinstance(p, str)]
    assert all(lowered) if ahead_of_time else not any(lowered)
    loss = got[0] if isinstance(got, tuple) else got
    if replays:
        assert loss.grad_fn.name() == ("CompiledFunctionBackward" if ahead_of_time else "NllLossBackward0")


def test_a_replaced_optimizer_state_is_read_again():
    """``opt.state`` holding new tensors (a loaded checkpoint) is another world: recorded
    anew, never updating the old tensors."""
    models, opts = [_mlp(), _mlp()], []
    for m in models:
        opts.append(MomentumSGD(m.parameters()))
    eager_step, compiled_step = standard(models[0], opts[0]), compile(standard(models[1], opts[1]))
    x, y = torch.randn(4, 6), torch.randint(0, 3, (4,))
    for i in range(6):
        if i == 3:
            for opt in opts:
                for state in opt.state.values():
                    state["momentum_buffer"] = state["momentum_buffer"] * 0.5
        assert torch.equal(eager_step(x, y), compiled_step(x, y))
        for pe, pc in zip(models[0].parameters(), models[1].parameters()):
            assert torch.equal(pe, pc)
    (entry,) = compiled_step._ember_compiled_function.whole_steps
    assert entry.replays == 3  # call 0 is refused (factories), 1 and 3 (new buffers) record, 2, 4, 5 replay


def test_hyperparameters_guard_the_program():
    """The recorded update holds the learning rate as a constant: a program per value."""
    model = _mlp()
    opt = MomentumSGD(model.parameters())
    step = compile(standard(model, opt))
    x, y = torch.randn(4, 6), torch.randint(0, 3, (4,))
    for lr in (0.1, 0.1, 0.1, 0.05, 0.05, 0.1):
        opt.param_groups[0]["lr"] = lr
        step(x, y)
    (entry,) = step._ember_compiled_function.whole_steps
    programs = [p for p in entry.programs.values() if not isinstance(p, str)]
    assert len(programs) == 2 and entry.replays == 3


class Trainer:
    """Holds the optimizer: the function reads it through an attribute, where the guards do
    not look for hyperparameters."""

    def __init__(self, opt):
        self.opt = opt


@pytest.mark.parametrize("momentum", [0.0, 0.9], ids=["no-state", "momentum"])
def test_an_optimizer_the_guards_cannot_see_runs_eagerly(momentum):
    """An update of parameters by an optimizer reached through an attribute is refused: a
    learning-rate change would otherwise be frozen out of the replays."""
    models = [_mlp(), _mlp()]
    trainers = [Trainer(MomentumSGD(m.parameters(), momentum=momentum)) for m in models]

    def make(model, trainer):
        def step(x, y):
            trainer.opt.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            trainer.opt.step()
            return loss
        return step
    eager_step, compiled_step = make(models[0], trainers[0]), compile(make(models[1], trainers[1]))
    x, y = torch.randn(4, 6), torch.randint(0, 3, (4,))
    for i in range(5):
        for trainer in trainers:
            trainer.opt.param_groups[0]["lr"] = 0.1 / (i + 1)
        assert torch.equal(eager_step(x, y), compiled_step(x, y))
        for pe, pc in zip(models[0].parameters(), models[1].parameters()):
            assert torch.equal(pe, pc)
    (entry,) = compiled_step._ember_compiled_function.whole_steps
    assert entry.replays == 0


def test_fullgraph_raises_and_explain_reports_the_break():
    model = _mlp()
    opt = MomentumSGD(model.parameters())
    x, y = torch.randn(4, 6), torch.randint(0, 3, (4,))
    with pytest.raises(Unsupported, match="backward pass|in-place op"):
        compile(standard(model, opt), fullgraph=True)(x, y)
    out = explain(standard(model, opt))(x, y)
    assert out.graph_count == 0 and out.graph_break_count == 1
    assert "backward pass" in out.break_reasons[0].reason or "in-place op" in out.break_reasons[0].reason


def test_switched_off_runs_eagerly(monkeypatch):
    monkeypatch.setattr(ember_compile.config, "whole_step", False)
    model = _mlp()
    opt = MomentumSGD(model.parameters())
    step = compile(standard(model, opt))
    x, y = torch.randn(4, 6), torch.randint(0, 3, (4,))
    for _ in range(3):
        step(x, y)
    assert step._ember_compiled_function.whole_steps == []


def test_a_module_hook_runs_eagerly():
    """A replay would not run a hook's Python code: while one is registered, calls are eager."""
    model = _mlp()
    opt = MomentumSGD(model.parameters())
    step = compile(standard(model, opt))
    x, y = torch.randn(4, 6), torch.randint(0, 3, (4,))
    for _ in range(3):
        step(x, y)
    seen = []
    model[0].register_forward_hook(lambda *a: seen.append(1))
    step(x, y)
    assert seen == [1]


def test_the_program_limit_warns_and_runs_eagerly(monkeypatch):
    monkeypatch.setattr(ember_compile.config, "cache_size_limit", 2)
    model = _mlp()
    opt = MomentumSGD(model.parameters())
    step = compile(standard(model, opt))
    x, y = torch.randn(4, 6), torch.randint(0, 3, (4,))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for lr in (0.1, 0.2, 0.3, 0.4):
            opt.param_groups[0]["lr"] = lr
            step(x, y)
    assert any("cache_size_limit" in str(w.message) for w in caught)
