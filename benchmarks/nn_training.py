"""ember-nn training steps side by side with PyTorch: an MLP 784-512-512-10 and the
slides' MNIST conv net (conv 5x5 x2, dropout2d, max_pool2d, linear x2, log_softmax), one
SGD step each (forward, loss, backward, update) at batch 64.

Run: ``python -m benchmarks.nn_training`` (from the repository root, packages on PYTHONPATH).
Issue 6's targets: the MLP step within 1.25x of PyTorch's time, the conv net within 1.5x.
"""
import importlib.util

from ._harness import Workload, fmt_time, run

BATCH = 64


def _libs(name):
    """(tensor module, nn module, functional module, optim module) of `name`."""
    if name == "ember":
        import ember_autograd  # noqa: F401  (installs the recording wrapper)
        import ember_nn
        import ember_optim
        import ember_tensor
        return ember_tensor, ember_nn, ember_nn.functional, ember_optim
    import torch
    return torch, torch.nn, torch.nn.functional, torch.optim


def _mlp(nn):
    return nn.Sequential(nn.Flatten(), nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                         nn.Linear(512, 10))


def _conv_net(nn, F):
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 10, kernel_size=5)
            self.conv2 = nn.Conv2d(10, 20, kernel_size=5)
            self.conv2_drop = nn.Dropout2d()
            self.fc1 = nn.Linear(320, 50)
            self.fc2 = nn.Linear(50, 10)

        def forward(self, x):
            x = F.relu(F.max_pool2d(self.conv1(x), 2))
            x = F.relu(F.max_pool2d(self.conv2_drop(self.conv2(x)), 2))
            x = x.view(-1, 320)
            x = F.relu(self.fc1(x))
            x = F.dropout(x, training=self.training)
            return F.log_softmax(self.fc2(x), dim=1)
    return Net()


def _training_step(make_model, loss_name):
    def setup(lib):
        t, nn, F, optim = _libs(lib)
        t.manual_seed(0)
        model = make_model(nn, F)
        optimizer = optim.SGD(model.parameters(), lr=0.01, momentum=0.5)
        data = t.randn(BATCH, 1, 28, 28)
        target = t.randint(0, 10, (BATCH,))
        loss_fn = getattr(F, loss_name)

        def step():
            optimizer.zero_grad()
            loss = loss_fn(model(data), target)
            loss.backward()
            optimizer.step()
        return step
    return setup


WORKLOADS = [
    Workload(f"nn: MLP 784-512-512-10 SGD step, batch {BATCH}",
             _training_step(lambda nn, F: _mlp(nn), "cross_entropy"), group="nn", repeats=7,
             work=3 * 2 * BATCH * (784 * 512 + 512 * 512 + 512 * 10), unit="FLOP"),
    Workload(f"nn: MNIST conv net SGD step, batch {BATCH}", _training_step(_conv_net, "nll_loss"), group="nn",
             repeats=7),
]


def main():
    available = ["ember"] + (["torch"] if importlib.util.find_spec("torch") else [])
    print("| workload | ember | torch | ember/torch |")
    print("|---|---|---|---|")
    for w in WORKLOADS:
        res = run(w, available)
        e, tch = res.get("ember"), res.get("torch")
        ratio = f"{e[0] / tch[0]:.2f}" if e and tch else "–"
        cells = [f"{fmt_time(r[0])} ({fmt_time(r[1])}–{fmt_time(r[2])})" if r else "–" for r in (e, tch)]
        print(f"| {w.name} | {cells[0]} | {cells[1]} | {ratio} |")


if __name__ == "__main__":
    main()
