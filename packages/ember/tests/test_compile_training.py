"""torch.compile in training loops, with the whole stack (an optimizer is ember-optim's,
which ember-compile's own suite does not install): an optimizer step inside a compiled
function runs (the graph breaks there), and a nanoGPT-style model trains as eager."""
import pytest

import ember as torch
import ember.nn as nn
import ember.nn.functional as F
import ember_compile
from ember_compile import compile


def test_an_optimizer_step_inside_a_compiled_function_runs():
    model = nn.Linear(3, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)

    def step(x):
        loss = model(x).sum()
        loss.backward()
        opt.step()
        opt.zero_grad()
        return loss

    torch.manual_seed(0)
    x = torch.randn(4, 3)
    before = model.weight.detach().clone()
    cf = compile(step)
    cf(x)
    cf(x)  # the optimizer step really ran, twice
    assert not torch.equal(model.weight, before)
    expected = before.clone()
    for _ in range(2):
        expected = expected - 0.1 * x.sum(0, keepdim=True)
    assert torch.allclose(model.weight, expected)


class TinyGPT(nn.Module):
    """nanoGPT's shape in small: embeddings, a residual MLP block with LayerNorm and GELU,
    dropout, a tied head and cross-entropy when targets are given."""

    def __init__(self, vocab=11, dim=8, block=6):
        super().__init__()
        self.wte = nn.Embedding(vocab, dim)
        self.wpe = nn.Embedding(block, dim)
        self.ln = nn.LayerNorm(dim)
        self.fc = nn.Linear(dim, 4 * dim)
        self.proj = nn.Linear(4 * dim, dim)
        self.drop = nn.Dropout(0.1)
        self.head = nn.Linear(dim, vocab, bias=False)
        self.head.weight = self.wte.weight

    def forward(self, idx, targets=None):
        pos = torch.arange(0, idx.size(1))
        x = self.drop(self.wte(idx) + self.wpe(pos))
        x = x + self.proj(F.gelu(self.fc(self.ln(x)))) * 0.5
        logits = self.head(self.ln(x))
        if targets is None:
            return logits, None
        loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))
        return logits, loss


def _train(compiled):
    torch.manual_seed(0)
    model = TinyGPT()
    run = compile(model) if compiled else model
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
    losses = []
    for _ in range(4):
        idx = torch.randint(0, 11, (3, 6))
        _, loss = run(idx, idx.roll(1, 1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses, [p.detach().clone() for p in model.parameters()]


def test_a_nanogpt_style_training_loop_trains_as_eager():
    eager_losses, eager_params = _train(False)
    compiled_losses, compiled_params = _train(True)
    assert compiled_losses == pytest.approx(eager_losses, rel=1e-5)
    for a, b in zip(compiled_params, eager_params):
        assert torch.allclose(a, b, rtol=1e-5, atol=1e-6)


def test_module_compile_through_ember():
    """``import ember`` wires ember-nn's Module.compile to ember.compile: in a fresh process
    where nothing imported ember-compile, it loads on the call."""
    import subprocess
    import sys
    program = ("import sys, ember as torch\n"
               "model = torch.nn.Linear(3, 2); x = torch.randn(4, 3); expected = model(x)\n"
               "assert 'ember_compile' not in sys.modules\n"
               "assert model.compile() is None and torch.equal(model(x), expected)\n"
               "compiled = model._compiled_call_impl._compiled_function\n"
               "assert compiled.graph_modules and not compiled.breaks\n"
               "print('ok')\n")
    result = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=300)
    assert result.stdout.strip() == "ok", result.stderr[-3000:]


# -- whole training steps (ember_compile.whole_step) with ember-optim's optimizers ------------

@pytest.fixture
def whole_step(monkeypatch):
    """The replay is opt-in (config.whole_step): switched on for these tests."""
    monkeypatch.setattr(ember_compile.config, "whole_step", True)


def _whole_step_twins(make_optimizer, schedule):
    """An eager and a compiled copy of one training step; the compiled one's entry."""
    pairs = []
    for _ in range(2):
        torch.manual_seed(0)
        model = nn.Sequential(nn.Flatten(), nn.Linear(12, 16), nn.ReLU(), nn.Linear(16, 4))
        opt = make_optimizer(model.parameters())
        scheduler = torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5) if schedule else None

        pairs.append((model, opt, scheduler, _training_step(model, opt)))
    return pairs


def _training_step(model, opt):
    def step(x, y):  # reads the model and the optimizer from its closure
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss
    return step


WHOLE_STEP_OPTIMIZERS = {
    "sgd-momentum": lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9),
    "sgd-nesterov-wd": lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9, nesterov=True, weight_decay=1e-2),
    "adam": lambda p: torch.optim.Adam(p, lr=1e-2),
    "adamw-amsgrad": lambda p: torch.optim.AdamW(p, lr=1e-2, amsgrad=True),
    "adam-unfused": lambda p: torch.optim.Adam(p, lr=1e-2, fused=False),  # reads its step with item(): eager
}


@pytest.mark.parametrize("schedule", [False, True], ids=["constant-lr", "StepLR"])
@pytest.mark.parametrize("name", list(WHOLE_STEP_OPTIMIZERS))
def test_whole_step_with_ember_optim_equals_eager_bit_for_bit(name, schedule, whole_step):
    (eager_model, eager_opt, eager_sched, eager_step), (model, opt, sched, step) = \
        _whole_step_twins(WHOLE_STEP_OPTIMIZERS[name], schedule)
    compiled = compile(step)
    torch.manual_seed(1)
    for i in range(7):
        x, y = torch.randn(3, 2, 6), torch.randint(0, 4, (3,))
        assert torch.equal(eager_step(x, y), compiled(x, y)), i
        for scheduler in (eager_sched, sched):
            if scheduler is not None:
                scheduler.step()
        for pe, pc in zip(eager_model.parameters(), model.parameters()):
            assert torch.equal(pe, pc) and torch.equal(pe.grad, pc.grad), i
        for pe, pc in zip(eager_model.parameters(), model.parameters()):
            for key, value in eager_opt.state[pe].items():
                assert torch.equal(torch.as_tensor(value), torch.as_tensor(opt.state[pc][key])), (i, key)
    (entry,) = compiled._ember_compiled_function.whole_steps
    assert (entry.replays == 0) if name == "adam-unfused" else entry.replays >= 2


def test_a_compiled_model_inside_a_whole_step_runs_eagerly(whole_step):
    """The model's own compiled node is a custom autograd.Function: not replayed as ops."""
    (eager_model, _, _, eager_step), (model, opt, _, _) = \
        _whole_step_twins(WHOLE_STEP_OPTIMIZERS["sgd-momentum"], False)
    run_model = compile(model)

    def step(x, y):
        opt.zero_grad()
        loss = F.cross_entropy(run_model(x), y)
        loss.backward()
        opt.step()
        return loss
    compiled = compile(step)
    for _ in range(4):
        x, y = torch.randn(3, 2, 6), torch.randint(0, 4, (3,))
        assert torch.equal(eager_step(x, y), compiled(x, y))
        for pe, pc in zip(eager_model.parameters(), model.parameters()):
            assert torch.equal(pe, pc)
    (entry,) = compiled._ember_compiled_function.whole_steps
    assert entry.replays == 0
