"""torch.compile in training loops, with the whole stack (an optimizer is ember-optim's,
which ember-compile's own suite does not install): an optimizer step inside a compiled
function runs (the graph breaks there), and a nanoGPT-style model trains as eager."""
import pytest

import ember as torch
import ember.nn as nn
import ember.nn.functional as F
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
