"""Training on a CUDA device, written as PyTorch code: an MNIST-style conv net and an MLP
take the same steps on the GPU as on the CPU, and on the GPU nothing is computed on the
host (every device-to-host copy inside a step fails, except one-element reads such as
the class-index bounds flag of the losses).

Runs in a fresh interpreter on Numba's CUDA simulator (NUMBA_ENABLE_CUDASIM=1), or on a
real GPU with NUMBA_ENABLE_CUDASIM=0 set in the environment.
"""
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

GUARD = Path(__file__).resolve().parents[2] / "tensor" / "tests"

SCRIPT = textwrap.dedent("""
    import contextlib
    import copy
    import sys
    import numpy as np
    import ember as torch
    import ember.nn as nn
    import ember.nn.functional as F
    import ember.optim as optim

    sys.path.insert(0, GUARD)
    from cuda_guard import device_only

    assert torch.cuda.is_available()

    class Net(nn.Module):  # the MNIST example's network, at 10x10 inputs
        def __init__(self, dropout):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 4, 3, 1)
            self.conv2 = nn.Conv2d(4, 8, 3, 1)
            self.dropout = nn.Dropout(0.25 if dropout else 0.0)
            self.fc1 = nn.Linear(8 * 3 * 3, 16)
            self.fc2 = nn.Linear(16, 10)

        def forward(self, x):
            x = F.relu(self.conv1(x))
            x = F.relu(self.conv2(x))
            x = F.max_pool2d(x, 2)
            x = self.dropout(torch.flatten(x, 1))
            x = F.relu(self.fc1(x))
            return F.log_softmax(self.fc2(x), dim=1)

    def mlp():
        return nn.Sequential(nn.Flatten(), nn.Linear(100, 32), nn.ReLU(), nn.LayerNorm(32),
                             nn.Linear(32, 10))

    torch.manual_seed(0)
    data = torch.randn(6, 1, 10, 10)
    target = torch.randint(0, 10, (6,))

    def train(model, make_optimizer, loss_fn, device, steps=2):
        model = model.to(device)
        optimizer = make_optimizer(model.parameters())
        x, y = data.to(device), target.to(device)
        losses = []
        for _ in range(steps):
            # One-element reads are allowed: ember checks class indices with one flag
            # where PyTorch's kernels assert on the device.
            with device_only(allow_scalar_reads=True) if device == "cuda" else contextlib.nullcontext():
                optimizer.zero_grad()
                loss = loss_fn(model(x), y)
                loss.backward()
                optimizer.step()
            losses.append(loss.item())
        return losses, model

    cases = [
        ("conv net, SGD momentum", lambda: Net(dropout=False), lambda p: optim.SGD(p, lr=0.1, momentum=0.9),
         F.nll_loss),
        ("MLP, Adam", mlp, lambda p: optim.Adam(p, lr=1e-2), F.cross_entropy),
        ("MLP, fused AdamW", mlp, lambda p: optim.AdamW(p, lr=1e-2, fused=True), F.cross_entropy),
    ]
    for name, make, make_optimizer, loss_fn in cases:
        torch.manual_seed(1)
        model = make()
        cpu_losses, cpu_model = train(copy.deepcopy(model), make_optimizer, loss_fn, "cpu")
        gpu_losses, gpu_model = train(copy.deepcopy(model), make_optimizer, loss_fn, "cuda")
        np.testing.assert_allclose(gpu_losses, cpu_losses, rtol=1e-4, err_msg=name)
        for (key, c), g in zip(cpu_model.state_dict().items(), gpu_model.state_dict().values()):
            assert g.device.type == "cuda", key
            np.testing.assert_allclose(g.cpu().numpy(), c.numpy(), rtol=1e-4, atol=1e-5, err_msg=name + key)

    # With dropout the GPU draws its own random numbers: the step runs on the device.
    losses, _ = train(Net(dropout=True), lambda p: optim.SGD(p, lr=0.1), F.nll_loss, "cuda", steps=1)
    assert np.isfinite(losses[0])
    print("ok")
""")


def test_training_steps_on_cuda_match_the_cpu_and_stay_on_the_device():
    env = dict(os.environ)
    env.setdefault("NUMBA_ENABLE_CUDASIM", "1")
    script = f"GUARD = {str(GUARD)!r}\n" + SCRIPT
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=600)
    if "no usable CUDA GPU" in result.stderr:
        pytest.skip("numba-cuda is not installed in this environment")
    assert result.returncode == 0, result.stderr[-4000:]
    assert result.stdout.strip() == "ok"
