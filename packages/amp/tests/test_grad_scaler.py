"""GradScaler: training under autocast reaches float32's accuracy, an injected inf skips
exactly one step and backs the scale off, growth after the interval, state_dict round
trip (also through ember's save/load), the fused-optimizer protocol, and PyTorch's errors."""
import io
import pickle

import numpy as np
import pytest

import ember_amp
import ember_autograd
import ember_tensor as et
import _functional as F


def _blobs(n=256, seed=0):
    """Three separable Gaussian blobs in 8 dimensions."""
    rng = np.random.default_rng(seed)
    centers = rng.standard_normal((3, 8)).astype(np.float32) * 3
    labels = rng.integers(0, 3, n)
    points = centers[labels] + rng.standard_normal((n, 8)).astype(np.float32)
    return et.tensor(points), et.tensor(labels)


class _MLP:
    """8 -> 32 -> 3 with a ReLU, its float32 parameters initialised as nn.Linear's are."""

    def __init__(self, seed=0):
        et.manual_seed(seed)
        self.params = [(et.rand(32, 8) * 2 - 1) / 8 ** 0.5, (et.rand(32) * 2 - 1) / 8 ** 0.5,
                       (et.rand(3, 32) * 2 - 1) / 32 ** 0.5, (et.rand(3) * 2 - 1) / 32 ** 0.5]
        for p in self.params:
            p.requires_grad_()

    def parameters(self):
        return iter(self.params)

    def __call__(self, x):
        w1, b1, w2, b2 = self.params
        return F.linear(F.relu(F.linear(x, w1, b1)), w2, b2)


def _mlp(seed=0):
    return _MLP(seed)


def _train(amp, steps=60, dtype=et.bfloat16):
    x, y = _blobs()
    model = _mlp()
    opt = F.SGD(model.parameters(), lr=0.5)
    scaler = ember_amp.GradScaler("cpu", enabled=amp, init_scale=2.0**10)
    for _ in range(steps):
        opt.zero_grad()
        with ember_amp.autocast(device_type="cpu", dtype=dtype, enabled=amp):
            loss = F.cross_entropy(model(x), y)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
    with ember_autograd.no_grad():
        accuracy = (model(x).argmax(1) == y).float().mean().item()
    return accuracy, model, scaler


@pytest.mark.parametrize("dtype", [et.bfloat16, et.float16], ids=["bf16", "fp16"])
def test_mlp_under_autocast_reaches_float32_accuracy(dtype):
    reference, _, _ = _train(amp=False)
    accuracy, model, scaler = _train(amp=True, dtype=dtype)
    assert reference > 0.95
    assert accuracy >= reference - 0.02
    assert all(p.dtype == et.float32 for p in model.parameters())
    assert scaler.get_scale() == 2.0**10  # no inf, fewer clean steps than the growth interval


def _one_step(model, opt, scaler, x, y, inject_inf=False):
    opt.zero_grad()
    with ember_amp.autocast("cpu"):
        loss = F.cross_entropy(model(x), y)
    scaler.scale(loss).backward()
    if inject_inf:
        with ember_autograd.no_grad():
            next(model.parameters()).grad[0, 0] = float("inf")
    result = scaler.step(opt)
    scaler.update()
    return result


def test_injected_inf_skips_exactly_one_step_and_backs_off():
    x, y = _blobs(64)
    model = _mlp()
    opt = F.SGD(model.parameters(), lr=0.1)
    scaler = ember_amp.GradScaler("cpu", init_scale=1024.0, growth_interval=3)
    _one_step(model, opt, scaler, x, y)
    before = [p.detach().clone() for p in model.parameters()]
    _one_step(model, opt, scaler, x, y, inject_inf=True)
    assert all(np.array_equal(b.numpy(), p.detach().numpy()) for b, p in zip(before, model.parameters()))
    assert scaler.get_scale() == 512.0
    assert scaler._get_growth_tracker() == 0
    _one_step(model, opt, scaler, x, y)
    assert not all(np.array_equal(b.numpy(), p.detach().numpy()) for b, p in zip(before, model.parameters()))
    assert scaler.get_scale() == 512.0 and scaler._get_growth_tracker() == 1
    _one_step(model, opt, scaler, x, y)
    _one_step(model, opt, scaler, x, y)  # the third clean step in a row grows the scale
    assert scaler.get_scale() == 1024.0 and scaler._get_growth_tracker() == 0


def test_unscale_divides_gradients_once():
    w = et.ones(3, requires_grad=True)
    opt = F.SGD([w], lr=1.0)
    scaler = ember_amp.GradScaler("cpu", init_scale=8.0)
    scaler.scale((w * 2).sum()).backward()
    assert w.grad.tolist() == [16.0, 16.0, 16.0]
    scaler.unscale_(opt)
    assert w.grad.tolist() == [2.0, 2.0, 2.0]
    with pytest.raises(RuntimeError, match=r"unscale_\(\) has already been called on this optimizer"):
        scaler.unscale_(opt)
    scaler.step(opt)  # no second unscale
    assert w.detach().tolist() == [-1.0, -1.0, -1.0]
    with pytest.raises(RuntimeError, match=r"step\(\) has already been called since the last update\(\)"):
        scaler.step(opt)
    with pytest.raises(RuntimeError, match=r"unscale_\(\) is being called after step\(\)"):
        scaler.unscale_(opt)
    scaler.update()


def test_nan_anywhere_in_any_gradient_is_found():
    a, b = et.ones(4, requires_grad=True), et.ones(2, 2, requires_grad=True)
    opt = F.SGD([a, b], lr=1.0)
    scaler = ember_amp.GradScaler("cpu", init_scale=2.0)
    scaler.scale(a.sum() + b.sum()).backward()
    b.grad[1, 1] = float("nan")
    assert scaler.step(opt) is None
    assert a.detach().tolist() == [1.0] * 4
    scaler.update()
    assert scaler.get_scale() == 1.0


def test_state_dict_round_trip():
    _, _, scaler = _train(amp=True, steps=3)
    scaler.update(new_scale=256.0)
    state = scaler.state_dict()
    assert state == {"scale": 256.0, "growth_factor": 2.0, "backoff_factor": 0.5, "growth_interval": 2000,
                     "_growth_tracker": 3}  # update(new_scale) leaves the tracker, as in PyTorch
    buffer = io.BytesIO()
    et.save(state, buffer)
    buffer.seek(0)
    fresh = ember_amp.GradScaler("cpu", init_scale=1.0, growth_interval=7)
    fresh.load_state_dict(et.load(buffer))
    assert fresh.state_dict() == state
    assert fresh.get_scale() == 256.0 and fresh.get_growth_interval() == 2000
    clone = pickle.loads(pickle.dumps(scaler))
    assert clone.state_dict() == state


def test_disabled_scaler_is_a_pass_through():
    scaler = ember_amp.GradScaler("cpu", enabled=False)
    loss = et.tensor(3.0)
    assert scaler.scale(loss) is loss
    assert scaler.get_scale() == 1.0 and scaler.state_dict() == {} and not scaler.is_enabled()
    fresh = ember_amp.GradScaler("cpu")
    with pytest.raises(RuntimeError, match="The source state dict is empty"):
        fresh.load_state_dict({})


def test_invalid_factors():
    with pytest.raises(AssertionError, match="The growth factor must be > 1.0."):
        ember_amp.GradScaler("cpu", growth_factor=1.0)
    with pytest.raises(AssertionError, match="The backoff factor must be < 1.0."):
        ember_amp.GradScaler("cpu", backoff_factor=1.0)


def test_step_before_scale_and_closure():
    scaler = ember_amp.GradScaler("cpu")
    opt = F.SGD([et.ones(1, requires_grad=True)], lr=1.0)
    with pytest.raises(AssertionError, match="Attempted step but _scale is None"):
        scaler.step(opt)
    scaler.scale(et.tensor(1.0))
    with pytest.raises(RuntimeError, match="Closure use is not currently supported"):
        scaler.step(opt, closure=lambda: None)


def test_scale_of_iterables():
    scaler = ember_amp.GradScaler("cpu", init_scale=4.0)
    out = scaler.scale([et.tensor(1.0), (et.tensor(2.0),)])
    assert out[0].item() == 4.0 and out[1][0].item() == 8.0
    with pytest.raises(ValueError, match="outputs must be a Tensor or an iterable of Tensors"):
        scaler.scale([1.0])


class _FusedLike:
    """An optimizer that, like PyTorch's fused ones, reads grad_scale/found_inf itself."""

    _step_supports_amp_scaling = True

    def __init__(self, params):
        self.param_groups = [{"params": list(params)}]
        self.seen = []

    def step(self):
        self.seen.append((self.grad_scale.item(), self.found_inf.item()))


def test_fused_optimizer_gets_grad_scale_and_found_inf():
    w = et.ones(2, requires_grad=True)
    opt = _FusedLike([w])
    scaler = ember_amp.GradScaler("cpu", init_scale=16.0)
    scaler.scale(w.sum()).backward()
    scaler.step(opt)
    scaler.update()
    assert opt.seen == [(16.0, 0.0)]
    assert w.grad.tolist() == [16.0, 16.0]  # the optimizer unscales, not the scaler
    assert not hasattr(opt, "grad_scale") and not hasattr(opt, "found_inf")
    w.grad = None
    scaler.scale(w.sum()).backward()
    w.grad[0] = float("inf")
    scaler.step(opt)
    scaler.update()
    assert opt.seen[-1] == (16.0, 1.0)
    assert scaler.get_scale() == 8.0


def test_cuda_scaler_without_cuda_warns_and_disables(monkeypatch):
    monkeypatch.setattr(et.cuda, "is_available", lambda: False)
    with pytest.warns(UserWarning, match="torch.cuda.amp.GradScaler is enabled, but CUDA is not available"):
        scaler = ember_amp.GradScaler("cuda")
    assert not scaler.is_enabled()


def test_state_dict_moves_between_ember_and_pytorch(tmp_path):
    torch = pytest.importorskip("torch")
    scaler = ember_amp.GradScaler("cpu", init_scale=512.0, growth_interval=7)
    path = tmp_path / "scaler.pt"
    et.save({"scaler": scaler.state_dict()}, path)
    theirs = torch.amp.GradScaler("cpu")
    theirs.load_state_dict(torch.load(path)["scaler"])
    assert theirs.state_dict() == scaler.state_dict()
    torch.save({"scaler": theirs.state_dict()}, path)
    ours = ember_amp.GradScaler("cpu")
    ours.load_state_dict(et.load(path)["scaler"])
    assert ours.state_dict() == theirs.state_dict()
