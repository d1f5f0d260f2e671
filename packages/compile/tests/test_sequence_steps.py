"""Training steps of sequence models compiled with ``compile(model)`` (issue 23's LSTM and
TransformerEncoderLayer rows): captured whole (no graph break) and, over a few SGD steps,
losses, gradients and the updated parameters equal eager ember's bit for bit.

Bit for bit, not to a tolerance, because the compiled step computes with ember's own
kernels in eager's order: the Transformer step is lowered with the ahead-of-time backward
(its derivative rules are eager's formulas, its gradient sums in the engine's order), and
the LSTM step runs its captured graph op by op (the ahead-of-time lowering refuses it: the
layer makes its zero initial state with a factory inside its forward)."""
import copy

import ember_nn as nn
import ember_nn.functional as F
import ember_optim
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


def _steps_match_eager(make, args, loss_of=lambda out: out, steps=3):
    """Train a model and its deep copy side by side, eager and compiled (``loss_of`` its
    output); return the compiled outputs' grad_fn names."""
    torch.manual_seed(0)
    eager = make()
    twin = copy.deepcopy(eager)
    compiled = compile(twin)
    optimizers = [ember_optim.SGD(m.parameters(), lr=0.1, momentum=0.9) for m in (eager, twin)]
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
