"""The compiler's training-step rows (`compile_steps` indexes and reports them): the MLP
(``compile(model)``, and the whole step function compiled), the LSTM and the
TransformerEncoderLayer steps, and the guarded traces' rows (a branch and a loop on a
tensor's value)."""
from ._compile_variants import _compiled_whole_step, _compiled_with_guarded_traces, _run_as
from .nn_training import BATCH, _libs, _mlp


def _mlp_setup(compiled):
    """`compiled`: False (eager), True (``compile(model)``), "torch.compile" (PyTorch's
    inductor on the model), or "whole step": ember compiles the step function itself
    (forward, backward and the SGD update recorded as one program, `whole_step`; PyTorch's
    column runs eagerly)."""
    def setup(lib):
        t, nn, F, optim = _libs(lib)
        t.manual_seed(0)
        model = _mlp(nn)
        whole = compiled == "whole step"
        run_model = model if whole else _run_as(model, compiled, lib)
        optimizer = optim.SGD(model.parameters(), lr=0.01, momentum=0.5)
        data, target = t.randn(BATCH, 1, 28, 28), t.randint(0, 10, (BATCH,))

        def step():
            optimizer.zero_grad()
            loss = F.cross_entropy(run_model(data), target)
            loss.backward()
            optimizer.step()
            return loss
        if whole and lib == "ember":
            step = _compiled_whole_step(step)
        for _ in range(3):  # a whole step records at its second call (the first makes the momentum buffers)
            step()
        return step
    return setup


LSTM_SIZE, LSTM_SEQ, LSTM_BATCH = 256, 35, 20


class _LSTMModel:
    """An LSTM 256-256 over (seq 35, batch 20, 256) with a 10-way linear head on every step
    and the cross entropy in its forward (the language-model step's shape)."""

    def __new__(cls, nn, F):
        class LSTMModel(nn.Module):
            def __init__(self):
                super().__init__()
                self.lstm = nn.LSTM(LSTM_SIZE, LSTM_SIZE)
                self.head = nn.Linear(LSTM_SIZE, 10)

            def forward(self, x, y):
                out, _ = self.lstm(x)
                return F.cross_entropy(self.head(out).reshape(-1, 10), y.reshape(-1))
        return LSTMModel()


def _lstm_setup(compiled):
    def setup(lib):
        t, nn, F, optim = _libs(lib)
        t.manual_seed(0)
        model = _LSTMModel(nn, F)
        run_model = _run_as(model, compiled, lib)
        optimizer = optim.SGD(model.parameters(), lr=0.1)
        x, y = t.randn(LSTM_SEQ, LSTM_BATCH, LSTM_SIZE), t.randint(0, 10, (LSTM_SEQ, LSTM_BATCH))

        def step():
            optimizer.zero_grad()
            run_model(x, y).backward()
            optimizer.step()
        step()
        return step
    return setup


def _transformer_setup(compiled):
    def setup(lib):
        t, nn, F, optim = _libs(lib)
        t.manual_seed(0)
        layer = nn.TransformerEncoderLayer(128, 4, dim_feedforward=256, dropout=0.0, batch_first=True)
        run_layer = _run_as(layer, compiled, lib)
        optimizer = optim.AdamW(layer.parameters(), lr=1e-3)
        x = t.randn(16, 64, 128)

        def step():
            optimizer.zero_grad()
            run_layer(x).pow(2).mean().backward()
            optimizer.step()
        step()
        return step
    return setup


class _BranchyMLP:
    """A module class per library: forward branches on the loss's value."""

    def __new__(cls, nn, F):
        class BranchyMLP(nn.Module):
            def __init__(self):
                super().__init__()
                self.body = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(),
                                          nn.Linear(64, 1))

            def forward(self, x, y):
                loss = F.mse_loss(self.body(x), y)
                if loss > 1.0:  # Python control flow on a tensor's value
                    loss = loss * 0.5
                return loss
        return BranchyMLP()


def _branchy_setup(compiled):
    def setup(lib):
        t, nn, F, optim = _libs(lib)
        t.manual_seed(0)
        model = _BranchyMLP(nn, F)
        run_model = _compiled_with_guarded_traces(model) if compiled and lib == "ember" else model
        optimizer = optim.SGD(model.parameters(), lr=1e-3)
        x = t.randn(32, 32)
        targets = [t.zeros(32, 1), t.full((32, 1), 3.0)]  # alternate: both branches
        turn = [0]

        def step():
            turn[0] ^= 1
            optimizer.zero_grad()
            loss = run_model(x, targets[turn[0]])
            loss.backward()
            optimizer.step()
        step()
        step()
        return step
    return setup


def _halve(x):
    while x.norm() > 1:
        x = x / 2
    return x


def _halve_setup(compiled):
    def setup(lib):
        t = _libs(lib)[0]
        fn = _compiled_with_guarded_traces(_halve) if compiled and lib == "ember" else _halve
        inputs = [t.full((16,), 2.0), t.full((16,), 20.0), t.full((16,), 200.0)]  # 4, 7, 10 rounds
        turn = [0]

        def call():
            turn[0] = (turn[0] + 1) % 3
            return fn(inputs[turn[0]])
        for _ in range(3):
            call()
        return call
    return setup


def _chain_with_a_break(t, x, y):
    """The 20-op chain of `compile_kernels`, with a graph break between its halves: Python
    reads a tensor's value (the sign of a sum) and picks the second half's constant."""
    for _ in range(3):
        x = t.relu(x * y + 0.5) - 0.25
    shift = 0.25 if x.sum() > 0 else -0.25
    for _ in range(2):
        x = t.relu(x * y + 0.5) - shift
    return x


def _chain_with_a_break_setup(compiled, size=8):
    def setup(lib):
        t = _libs(lib)[0]
        x, y = t.randn(size), t.randn(size)
        fn = (lambda x, y: _chain_with_a_break(t, x, y))
        fn = _compiled_with_guarded_traces(fn) if compiled and lib == "ember" else fn
        for _ in range(3):
            fn(x, y)
        return lambda: fn(x, y)
    return setup
