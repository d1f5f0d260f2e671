"""Cold start: a fresh process importing the library and running a first training step, with
the compile cache warm and (for ember) empty.

The headline (issue 13): ``import ember`` plus the first training step of the slides' MNIST
net with a warm cache must beat ``import torch`` plus the same step; with an empty cache
(every kernel compiled by Numba) it must stay under 30 s. Issue 24: with an empty cache it
should be no slower than PyTorch's; the row after ``python -m ember.precompile`` (the
optional install step) shows what filling the cache ahead of time gives.
"""
import os
import subprocess
import sys
import tempfile
import time

_IMPORT = {"ember": "import ember", "torch": "import torch"}
# A typical elementwise/reduction mix of a training step, for the compile-time figure.
_STEP = {
    "ember": "import ember_tensor as t",
    "torch": "import torch as t",
}
_STEP_BODY = """
x = t.rand(64, 32); w = t.rand(32, 16)
y = (x @ w).relu(); z = y.sigmoid() * 2.0 + y.exp() - 1.0
s = (z * z).sum() + z.mean() + z.amax()
"""


_MNIST_STEP = """
import {lib} as torch
nn, F = torch.nn, torch.nn.functional

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
        x = F.relu(self.fc1(x.view(-1, 320)))
        x = F.dropout(x, training=self.training)
        return F.log_softmax(self.fc2(x), dim=1)

model = Net()
optimizer = torch.optim.Adadelta(model.parameters(), lr=1.0)
x, y = torch.randn(64, 1, 28, 28), torch.randint(0, 10, (64,))
optimizer.zero_grad()
F.nll_loss(model(x), y).backward()
optimizer.step()
"""


def _time_process(code, env=None):
    t = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True, env=env)
    return time.perf_counter() - t


def measure(libs, repeats=3):
    """{name: {lib: seconds}} for import-only and first-step runs, warm and empty cache."""
    results = {}
    for lib in libs:
        results.setdefault("import (fresh process)", {})[lib] = min(
            _time_process(_IMPORT[lib]) for _ in range(repeats))
        step = _STEP[lib] + _STEP_BODY
        _time_process(step)  # make sure the cache is warm
        results.setdefault("import + first step (warm cache)", {})[lib] = min(
            _time_process(step) for _ in range(repeats))
        if lib == "ember":
            with tempfile.TemporaryDirectory() as cache:
                env = dict(os.environ, EMBER_CACHE_DIR=cache)
                results.setdefault("import + first step (empty cache)", {})[lib] = _time_process(step, env)
        mnist = _MNIST_STEP.format(lib=lib)
        _time_process(mnist)
        results.setdefault("import + MNIST-net training step (warm cache)", {})[lib] = min(
            _time_process(mnist) for _ in range(repeats))
        if lib == "ember":
            with tempfile.TemporaryDirectory() as cache:
                # Both caches empty: ember's generated kernels and Numba's own (cache=True) ones.
                env = dict(os.environ, EMBER_CACHE_DIR=cache, NUMBA_CACHE_DIR=cache)
                results.setdefault("import + MNIST-net training step (empty cache)", {})[lib] = _time_process(
                    mnist, env)
            with tempfile.TemporaryDirectory() as cache:
                # The optional install step (issue 24): `python -m ember.precompile` first.
                env = dict(os.environ, EMBER_CACHE_DIR=cache, NUMBA_CACHE_DIR=cache)
                subprocess.run([sys.executable, "-m", "ember.precompile"], check=True, env=env,
                               stderr=subprocess.DEVNULL)
                results.setdefault("import + MNIST-net training step (after ember.precompile)", {})[lib] = (
                    _time_process(mnist, env))
    return results
