"""Training steps of sequence models compiled with ``compile(model)`` (issue 23's LSTM and
TransformerEncoderLayer rows): captured whole (no graph break) and, over a few SGD steps,
losses, gradients and the updated parameters equal eager ember's bit for bit.

Bit for bit, not to a tolerance, because the compiled step computes with ember's own
kernels in eager's order: the Transformer step is lowered with the ahead-of-time backward
(its derivative rules are eager's formulas, its gradient sums in the engine's order), and
the LSTM step runs its captured graph op by op (the ahead-of-time lowering refuses a
recurrent layer: eagerly its fused ops run inside an autograd.Function, under the
lowering's trace its composition would)."""
import copy

import ember_autograd
import ember_nn as nn
import ember_nn.functional as F
import ember_tensor as torch
from ember_compile import compile, explain


class _LSTMModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(8, 12)
        self.head = nn.Linear(12, 5)

    def forward(self, x, y):
        out, _ = self.lstm(x)
        return F.cross_entropy(self.head(out).reshape(-1, 5), y.reshape(-1))


def _encoder_layer():
    return nn.TransformerEncoderLayer(16, 4, dim_feedforward=32, dropout=0.0, batch_first=True)


class _MomentumSGD:
    """SGD with momentum 0.9, lr 0.1 (ember-optim stands above this package: its tox env
    has no optimizers), the same update for both models."""

    def __init__(self, params):
        self.params, self.buffers = list(params), {}

    def zero_grad(self):
        for p in self.params:
            p.grad = None

    def step(self):
        with ember_autograd.no_grad():
            for i, p in enumerate(self.params):
                buf = self.buffers.get(i)
                buf = p.grad.clone() if buf is None else buf.mul_(0.9).add_(p.grad)
                self.buffers[i] = buf
                p.sub_(buf * 0.1)


def _steps_match_eager(make, args, loss_of=lambda out: out, steps=3):
    """Train a model and its deep copy side by side, eager and compiled (``loss_of`` its
    output); return the compiled outputs' grad_fn names."""
    torch.manual_seed(0)
    eager = make()
    twin = copy.deepcopy(eager)
    compiled = compile(twin)
    optimizers = [_MomentumSGD(m.parameters()) for m in (eager, twin)]
    names = []
    for _ in range(steps):
        losses, grads = [], []
        for run, model, optimizer in zip((eager, compiled), (eager, twin), optimizers):
            optimizer.zero_grad()
            out = run(*args)
            loss = loss_of(out)
            loss.backward()
            losses.append(loss)
            grads.append([p.grad.clone() for p in model.parameters()])
            optimizer.step()
        names.append(out.grad_fn.name())
        assert torch.equal(losses[0], losses[1])
        assert all(torch.equal(a, b) for a, b in zip(*grads))
    assert all(torch.equal(a, b) for a, b in zip(eager.parameters(), twin.parameters()))
    return names


def test_lstm_step_is_one_graph_and_equals_eager_bit_for_bit():
    torch.manual_seed(1)
    args = (torch.randn(5, 3, 8), torch.randint(0, 5, (5, 3)))
    out = explain(_LSTMModel())(*args)
    assert (out.graph_count, out.graph_break_count) == (1, 0)
    _steps_match_eager(_LSTMModel, args)


def test_transformer_encoder_layer_step_is_one_node_and_equals_eager_bit_for_bit():
    # The layer compiled itself: its forward is traced (it calls ``self.activation``, F.relu
    # held as an attribute), not called as one leaf module.
    torch.manual_seed(1)
    x = torch.randn(2, 6, 16)
    out = explain(_encoder_layer())(x)
    assert (out.graph_count, out.graph_break_count) == (1, 0)
    assert _steps_match_eager(_encoder_layer, (x,), lambda out: out.pow(2).mean()) == \
        ["CompiledFunctionBackward"] * 3


def _plans(compiled):
    return [p for joint in compiled._compiled_function.joints if joint is not None for p in joint.plans.values()]


class _LSTMWithState(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(8, 8)

    def forward(self, x, h, c):
        return self.lstm(x, (h, c))[0]


def test_lstm_given_its_state_is_not_lowered_and_equals_eager_bit_for_bit():
    # Given (h0, c0) no factory stops the lowering; the recurrent layer does.
    torch.manual_seed(0)
    args = (torch.randn(4, 3, 8), torch.zeros(1, 3, 8), torch.zeros(1, 3, 8))
    grad = torch.randn(4, 3, 8)
    eager = _LSTMWithState()
    twin = copy.deepcopy(eager)
    compiled = compile(twin)
    out, compiled_out = eager(*args), compiled(*args)
    assert torch.equal(out, compiled_out)
    (reason,) = _plans(compiled)
    assert "recurrent layer" in reason
    out.backward(grad)  # the eager graph saved x before the compiled call's lowering run
    compiled_out.backward(grad)
    assert all(torch.equal(a.grad, b.grad) for a, b in zip(eager.parameters(), twin.parameters()))


class _StraightThrough(ember_autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x.round()

    @staticmethod
    def backward(ctx, grad):
        return grad  # not round's derivative (zero): the Function's own backward


class _Quantized(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        return _StraightThrough.apply(self.fc(x)).sum()


def test_a_custom_autograd_function_breaks_the_graph_and_keeps_its_backward():
    # Traced through, its forward's ops would be recorded under no_grad and its backward lost.
    torch.manual_seed(0)
    model = _Quantized()
    x = torch.randn(3, 4)
    out = explain(model)(x)
    assert out.graph_break_count == 1 and "custom autograd.Function" in out.break_reasons[0].reason
    compiled = compile(model)
    compiled(x).backward()
    compiled_grads = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    model(x).backward()
    assert all(torch.equal(a, p.grad) for a, p in zip(compiled_grads, model.parameters()))
    assert model.fc.bias.grad.abs().sum() > 0  # the straight-through gradient, not round's zero
