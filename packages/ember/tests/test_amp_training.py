"""Mixed precision with the whole stack, written as scripts write it (``import ember as
torch``): an MLP and the MNIST example's network trained on the digits shipped with
ember-data under ``torch.autocast`` + ``GradScaler`` reach the accuracy of float32
training; nanoGPT's spellings run unchanged."""
import os
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

import ember as torch
from ember_data.datasets import load_digits_arrays

nn, F = torch.nn, torch.nn.functional


def _digits():
    images, labels = load_digits_arrays()
    order = np.random.RandomState(0).permutation(len(images))
    x = ((images / 16.0 - 0.3) / 0.4).astype(np.float32)[:, None]
    return torch.from_numpy(x[order]), torch.from_numpy(labels[order].astype(np.int64))


class Net(nn.Module):
    """The MNIST example's network (conv, conv, pool, dropout, fc, fc, log_softmax) at 8x8."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, 3, 1)
        self.conv2 = nn.Conv2d(8, 16, 3, 1)
        self.dropout = nn.Dropout(0.1)
        self.fc1 = nn.Linear(16 * 2 * 2, 32)
        self.fc2 = nn.Linear(32, 10)

    def forward(self, x):
        x = F.relu(self.conv1(x))
        x = F.relu(self.conv2(x))
        x = F.max_pool2d(x, 2)
        x = self.dropout(torch.flatten(x, 1))
        x = F.relu(self.fc1(x))
        return F.log_softmax(self.fc2(x), dim=1)


def mlp():
    return nn.Sequential(nn.Flatten(), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 10), nn.LogSoftmax(dim=1))


def _fit(make_model, dtype, epochs=3, batch=64):
    """Train on 1400 digits, return the accuracy on the other ~400 (dtype None: float32)."""
    x, y = _digits()
    train_x, train_y, test_x, test_y = x[:1400], y[:1400], x[1400:], y[1400:]
    torch.manual_seed(0)
    model = make_model()
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    device_type = "cpu"
    ptdtype = dtype or torch.float32
    scaler = torch.amp.GradScaler(device_type, enabled=(dtype == torch.float16))
    for _ in range(epochs):
        model.train()
        for start in range(0, len(train_x), batch):
            data, target = train_x[start:start + batch], train_y[start:start + batch]
            optimizer.zero_grad(set_to_none=True)
            with torch.autocast(device_type=device_type, dtype=ptdtype, enabled=dtype is not None):
                output = model(data)
                loss = F.nll_loss(output, target)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
    model.eval()
    with torch.no_grad(), torch.autocast(device_type=device_type, dtype=ptdtype, enabled=dtype is not None):
        accuracy = (model(test_x).argmax(1) == test_y).float().mean().item()
    assert all(p.dtype == torch.float32 for p in model.parameters())
    return accuracy


@pytest.mark.parametrize("make_model", [mlp, Net], ids=["mlp", "mnist_net"])
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=["bf16", "fp16"])
def test_autocast_training_reaches_float32_accuracy(make_model, dtype):
    reference = _fit(make_model, None)
    accuracy = _fit(make_model, dtype)
    assert reference > 0.85
    assert accuracy >= reference - 0.03, (accuracy, reference)


def test_nanogpt_spellings_run_unchanged():
    dtype = "bfloat16"
    device_type = "cpu"
    ptdtype = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}[dtype]
    ctx = torch.amp.autocast(device_type=device_type, dtype=ptdtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # torch.cuda.amp.GradScaler is deprecated, as in PyTorch
        scaler = torch.cuda.amp.GradScaler(enabled=(dtype == "float16"))
    model = nn.Linear(4, 2)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)
    with ctx:
        logits = model(torch.randn(3, 4))
        loss = F.cross_entropy(logits, torch.tensor([0, 1, 0]))
    assert logits.dtype == torch.bfloat16 and loss.dtype == torch.float32
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    scaler.step(optimizer)
    scaler.update()
    optimizer.zero_grad(set_to_none=True)
    assert torch.is_autocast_enabled("cpu") is False and torch.get_autocast_dtype("cpu") == torch.bfloat16


@pytest.mark.parametrize("make_optimizer", [
    lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9, fused=True),
    lambda p: torch.optim.Adam(p, lr=1e-2, fused=True),
    lambda p: torch.optim.AdamW(p, lr=1e-2, fused=True),
    lambda p: torch.optim.Adagrad(p, lr=1e-2, fused=True),
], ids=["sgd", "adam", "adamw", "adagrad"])
def test_fused_optimizers_unscale_and_skip_in_their_kernel(make_optimizer):
    """A fused optimizer takes GradScaler's grad_scale/found_inf: the same steps as unscaling
    first with the plain optimizer, and an injected inf skips the step (and its count)."""
    def run(fused, inject_at=None, steps=3):
        torch.manual_seed(0)
        model = nn.Linear(4, 3)
        optimizer = make_optimizer(model.parameters())
        if not fused:
            optimizer._step_supports_amp_scaling = False
            for group in optimizer.param_groups:
                group["fused"] = None
        scaler = torch.amp.GradScaler("cpu", init_scale=64.0)
        x, y = torch.randn(8, 4), torch.randint(0, 3, (8,))
        for step in range(steps):
            optimizer.zero_grad()
            with torch.autocast("cpu"):
                loss = F.cross_entropy(model(x), y)
            scaler.scale(loss).backward()
            if step == inject_at:
                model.weight.grad[0, 0] = float("inf")
            scaler.step(optimizer)
            scaler.update()
        return model, optimizer, scaler

    fused_model, fused_opt, scaler = run(True)
    assert fused_opt._step_supports_amp_scaling and not hasattr(fused_opt, "grad_scale")
    plain_model, _, _ = run(False)
    for a, b in zip(fused_model.parameters(), plain_model.parameters()):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-5, atol=1e-6)
    skipped_model, skipped_opt, skipped_scaler = run(True, inject_at=2)
    assert skipped_scaler.get_scale() == 32.0
    two_steps_model, _, _ = run(True, steps=2)
    for a, b in zip(skipped_model.parameters(), two_steps_model.parameters()):
        assert np.array_equal(a.detach().numpy(), b.detach().numpy())
    state = skipped_opt.state[skipped_model.weight]
    if "step" in state:
        assert float(state["step"]) == 2.0  # the skipped step does not count


CUDA_SCRIPT = textwrap.dedent("""
    import warnings
    import ember as torch
    nn, F = torch.nn, torch.nn.functional

    class Block(nn.Module):  # a transformer-ish block: linear, attention, layer norm, GELU
        def __init__(self):
            super().__init__()
            self.inp = nn.Linear(8, 16)
            self.norm = nn.LayerNorm(16)
            self.out = nn.Linear(16, 4)

        def forward(self, x):
            h = self.inp(x)
            h = h + F.scaled_dot_product_attention(h, h, h)
            return self.out(F.gelu(self.norm(h))).mean(1)

    torch.manual_seed(0)
    device_type, ptdtype = "cuda", torch.float16
    model = Block().to(device_type)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2, fused=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        scaler = torch.cuda.amp.GradScaler(enabled=(ptdtype == torch.float16))
    x = torch.randn(3, 5, 8, device=device_type)
    y = torch.tensor([0, 1, 3], device=device_type)
    before = [p.detach().clone() for p in model.parameters()]
    for step in range(2):
        optimizer.zero_grad(set_to_none=True)
        with torch.autocast(device_type=device_type, dtype=ptdtype):
            logits = model(x)
            loss = F.cross_entropy(logits, y)
        assert logits.dtype == torch.float16 and loss.dtype == torch.float32, (logits.dtype, loss.dtype)
        scaler.scale(loss).backward()
        assert all(p.grad.dtype == torch.float32 and p.grad.device.type == "cuda" for p in model.parameters())
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(optimizer)
        scaler.update()
    assert scaler.get_scale() == 65536.0
    assert all(not torch.equal(a, b.detach()) for a, b in zip(before, model.parameters()))
    print("ok")
""")


def test_cuda_training_step_under_autocast_and_grad_scaler():
    """The CUDA pattern, on Numba's simulator (or a GPU with NUMBA_ENABLE_CUDASIM=0), in a
    fresh interpreter since the simulator is chosen when numba.cuda first loads."""
    env = dict(os.environ)
    env.setdefault("NUMBA_ENABLE_CUDASIM", "1")
    result = subprocess.run([sys.executable, "-c", CUDA_SCRIPT], capture_output=True, text=True, env=env,
                            timeout=600)
    if "no usable CUDA GPU" in result.stderr:
        pytest.skip("numba-cuda is not installed in this environment")
    assert result.returncode == 0, result.stderr[-4000:]
    assert result.stdout.strip() == "ok"
