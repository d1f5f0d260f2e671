"""nn.utils: gradient clipping, parameter vectors, weight/spectral norm (hook and
parametrization forms), parametrize, conv-bn fusion; nn.parallel's scatter/gather/replicate
and DataParallel without GPUs."""
import math

import numpy as np
import pytest

import ember_autograd
import ember_tensor as torch
import ember_nn as nn
from ember_nn import Parameter, functional as F
from ember_nn.parallel import gather, replicate, scatter
from ember_nn.utils import parametrize


def arr(t):
    return np.array(t.detach(), dtype=np.float64)


def params_with_grads(*grads):
    params = []
    for g in grads:
        p = Parameter(torch.zeros(*np.shape(g)))
        p.grad = torch.tensor(g, dtype=torch.float32)
        params.append(p)
    return params


# -- clipping ---------------------------------------------------------------------------------

@pytest.mark.parametrize("norm_type, total", [
    (2.0, math.sqrt(9 + 16 + 144)), (1, 3 + 4 + 12), (float("inf"), 12.0), ("inf", 12.0),
])
def test_clip_grad_norm_returns_total_norm_and_scales(norm_type, total):
    params = params_with_grads([3.0, 4.0], [[12.0]])
    result = nn.utils.clip_grad_norm_(params, max_norm=1.0, norm_type=float(norm_type))
    assert result.dim() == 0 and result.item() == pytest.approx(total, rel=1e-6)
    scale = 1.0 / (total + 1e-6)
    np.testing.assert_allclose(arr(params[0].grad), [3 * scale, 4 * scale], rtol=1e-5)
    np.testing.assert_allclose(arr(params[1].grad), [[12 * scale]], rtol=1e-5)


def test_clip_grad_norm_leaves_small_gradients_alone_and_skips_missing():
    params = params_with_grads([0.3, 0.4])
    params.append(Parameter(torch.zeros(2)))  # no grad
    total = nn.utils.clip_grad_norm_(iter(params), max_norm=10.0)
    assert total.item() == pytest.approx(0.5)
    np.testing.assert_allclose(arr(params[0].grad), [0.3, 0.4], rtol=1e-6)
    single = params_with_grads([6.0, 8.0])[0]
    nn.utils.clip_grad_norm_(single, 5.0)
    np.testing.assert_allclose(arr(single.grad), [3.0, 4.0], rtol=1e-5)


def test_clip_grad_norm_nonfinite():
    params = params_with_grads([float("inf"), 1.0])
    with pytest.raises(RuntimeError, match="The total norm of order 2.0 for gradients from `parameters` is non-finite"):
        nn.utils.clip_grad_norm_(params, 1.0, error_if_nonfinite=True)
    total = nn.utils.clip_grad_norm_(params, 1.0, foreach=True)  # foreach is accepted and ignored
    assert math.isinf(total.item())


def test_clip_grad_norm_of_nothing_is_zero():
    with pytest.warns(UserWarning, match="`parameters` is an empty generator"):
        assert nn.utils.clip_grad_norm_((p for p in []), 1.0).item() == 0.0


def test_clip_grad_value_clamps_in_place_including_strided_grads():
    p = Parameter(torch.zeros(2, 3))
    p.grad = torch.tensor([[-5.0, 0.5, 2.0], [1.0, -0.2, 9.0]]).t().contiguous().t()
    nn.utils.clip_grad_value_([p], 1.0)
    np.testing.assert_allclose(arr(p.grad), [[-1.0, 0.5, 1.0], [1.0, -0.2, 1.0]])


# -- parameter vectors ---------------------------------------------------------------------------------

def test_parameters_to_vector_and_back():
    m = nn.Sequential(nn.Linear(3, 2), nn.Linear(2, 1))
    vec = nn.utils.parameters_to_vector(m.parameters())
    assert vec.shape == (6 + 2 + 2 + 1,)
    np.testing.assert_allclose(arr(vec[:6]), arr(m[0].weight).reshape(-1))
    new = torch.arange(11, dtype=torch.float32)
    nn.utils.vector_to_parameters(new, m.parameters())
    assert m[0].weight.tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]] and m[1].bias.tolist() == [10.0]
    assert isinstance(m[0].weight, Parameter)
    with pytest.raises(TypeError, match="expected torch.Tensor, but got: list"):
        nn.utils.vector_to_parameters([1.0], m.parameters())


# -- weight norm and spectral norm -------------------------------------------------------------------

def test_weight_norm_splits_and_recomputes_the_weight():
    m = nn.Linear(4, 3)
    original = arr(m.weight)
    nn.utils.weight_norm(m)
    assert [n for n, _ in m.named_parameters()] == ["bias", "weight_g", "weight_v"]
    assert m.weight_g.shape == (3, 1)
    np.testing.assert_allclose(arr(m.weight_g)[:, 0], np.linalg.norm(original, axis=1), rtol=1e-6)
    np.testing.assert_allclose(arr(m.weight), original, rtol=1e-5)
    with ember_autograd.no_grad():
        m.weight_g.mul_(2)
    m._forward_pre_hooks[next(iter(m._forward_pre_hooks))](m, ())  # what a forward runs first
    np.testing.assert_allclose(arr(m.weight), 2 * original, rtol=1e-5)
    with pytest.raises(RuntimeError, match="Cannot register two weight_norm hooks on the same parameter weight"):
        nn.utils.weight_norm(m)
    nn.utils.remove_weight_norm(m)
    assert [n for n, _ in m.named_parameters()] == ["bias", "weight"]
    np.testing.assert_allclose(arr(m.weight), 2 * original, rtol=1e-5)
    with pytest.raises(ValueError, match="weight_norm of 'weight' not found in"):
        nn.utils.remove_weight_norm(m)


def test_weight_norm_dim_none_uses_the_whole_tensor():
    m = nn.utils.weight_norm(nn.Linear(4, 3), dim=None)
    assert m.weight_g.dim() == 0


def top_singular_value(matrix):
    return np.linalg.svd(matrix, compute_uv=False)[0]


def test_spectral_norm_hook_divides_by_the_top_singular_value():
    torch.manual_seed(0)
    m = nn.Linear(5, 4)
    original = arr(m.weight)
    nn.utils.spectral_norm(m, n_power_iterations=1)
    assert {"weight_orig"} == {n for n, _ in m.named_parameters()} - {"bias"}
    assert {"weight_u", "weight_v"} == {n for n, _ in m.named_buffers()}
    hook = next(iter(m._forward_pre_hooks.values()))
    for _ in range(50):  # power iteration converges over forwards
        hook(m, ())
    np.testing.assert_allclose(arr(m.weight), original / top_singular_value(original), rtol=1e-3)
    nn.utils.remove_spectral_norm(m)
    assert isinstance(m.weight, Parameter) and "weight_orig" not in m._parameters


def test_spectral_norm_parametrization():
    torch.manual_seed(0)
    m = nn.Linear(5, 4)
    original = arr(m.weight)
    nn.utils.parametrizations.spectral_norm(m)
    assert type(m).__name__ == "ParametrizedLinear" and isinstance(m, nn.Linear)
    assert "parametrizations.weight.original" in m.state_dict()
    for _ in range(20):
        weight = m.weight
    np.testing.assert_allclose(arr(weight), original / top_singular_value(original), rtol=1e-3)
    m.eval()
    np.testing.assert_allclose(np.linalg.svd(arr(m.weight), compute_uv=False)[0], 1.0, rtol=1e-3)


def test_weight_norm_parametrization_round_trip():
    m = nn.Linear(4, 3)
    original = arr(m.weight)
    nn.utils.parametrizations.weight_norm(m)
    keys = list(m.state_dict())
    assert "parametrizations.weight.original0" in keys and "parametrizations.weight.original1" in keys
    np.testing.assert_allclose(arr(m.weight), original, rtol=1e-5)
    parametrize.remove_parametrizations(m, "weight")
    assert type(m) is nn.Linear and isinstance(m.weight, Parameter)
    np.testing.assert_allclose(arr(m.weight), original, rtol=1e-5)


@pytest.mark.parametrize("shape, orthogonal_map", [
    ((4, 3), None), ((3, 5), None), ((3, 3), None), ((3, 3), "cayley"), ((5, 3), "matrix_exp"),
    ((3, 3), "householder"), ((2, 4), "cayley"),
])
def test_orthogonal_parametrization_stays_orthogonal_while_training(shape, orthogonal_map):
    torch.manual_seed(0)
    m = nn.utils.parametrizations.orthogonal(nn.Linear(shape[1], shape[0]), orthogonal_map=orthogonal_map)
    small = min(shape)

    def gram_error():
        w = arr(m.weight)
        gram = w @ w.T if shape[0] == small else w.T @ w
        return np.abs(gram - np.eye(small)).max()

    assert gram_error() < 1e-5
    original = m.parametrizations.weight.original
    for _ in range(3):
        m.zero_grad()
        (m(torch.randn(4, shape[1])) ** 2).sum().backward()
        with ember_autograd.no_grad():
            original.sub_(0.1 * original.grad)
    assert gram_error() < 1e-5
    assert np.abs(arr(original)).max() > 0  # the parameters moved


def test_orthogonal_square_weight_matches_pytorch():
    real = pytest.importorskip("torch")
    m = nn.Linear(3, 3)
    reference = real.nn.Linear(3, 3)
    reference.load_state_dict({k: real.from_numpy(arr(v).astype(np.float32)) for k, v in m.state_dict().items()})
    nn.utils.parametrizations.orthogonal(m)
    real.nn.utils.parametrizations.orthogonal(reference)
    np.testing.assert_allclose(arr(m.weight), reference.weight.detach().numpy(), atol=1e-5)


@pytest.mark.parametrize("make, error, message", [
    (lambda: nn.utils.parametrizations.orthogonal(nn.Linear(3, 3), name="bias"), ValueError,
     "Expected a matrix or batch of matrices. Got a tensor of 1 dimensions."),
    (lambda: nn.utils.parametrizations.orthogonal(nn.Linear(3, 3), orthogonal_map="qr"), ValueError,
     'orthogonal_map has to be one of "matrix_exp", "cayley", "householder". Got: qr'),
    (lambda: nn.utils.parametrizations.orthogonal(nn.Linear(3, 3), use_trivialization=False), NotImplementedError,
     "It is not possible to assign to the matrix exponential"),
])
def test_orthogonal_errors(make, error, message):
    with pytest.raises(error, match=message):
        make()


# -- parametrize ------------------------------------------------------------------------------------

class Symmetric(nn.Module):
    def forward(self, x):
        return x.triu() + x.triu(1).transpose(0, 1) if hasattr(x, "triu") else symmetric_numpy(x)


def symmetric_numpy(x):
    a = np.array(x.detach())
    sym = np.triu(a) + np.triu(a, 1).T
    return torch.tensor(sym)


class Double(nn.Module):
    def forward(self, x):
        return x * 2

    def right_inverse(self, x):
        return x / 2


def test_register_and_remove_parametrization():
    m = nn.Linear(3, 3)
    original = arr(m.weight)
    weight_param = m.weight
    parametrize.register_parametrization(m, "weight", Double())
    assert parametrize.is_parametrized(m) and parametrize.is_parametrized(m, "weight")
    assert not parametrize.is_parametrized(m, "bias")
    assert m.parametrizations.weight.original is weight_param  # the same Parameter object
    np.testing.assert_allclose(arr(m.weight), original, rtol=1e-6)  # right_inverse then forward
    np.testing.assert_allclose(arr(m.parametrizations.weight.original), original / 2, rtol=1e-6)
    m.weight = torch.ones(3, 3)  # assignment goes through right_inverse
    np.testing.assert_allclose(arr(m.parametrizations.weight.original), np.full((3, 3), 0.5))
    parametrize.register_parametrization(m, "weight", Double())  # chained
    np.testing.assert_allclose(arr(m.weight), np.full((3, 3), 2.0))
    parametrize.remove_parametrizations(m, "weight", leave_parametrized=False)
    assert type(m) is nn.Linear and not hasattr(m, "parametrizations")
    np.testing.assert_allclose(arr(m.weight), np.full((3, 3), 0.5))
    with pytest.raises(ValueError, match="does not have a parametrization on weight"):
        parametrize.remove_parametrizations(m, "weight")


# -- fusion ------------------------------------------------------------------------------------------

def test_fuse_conv_bn_weights_match_numpy():
    conv = nn.Conv2d(2, 3, 1).eval()
    bn = nn.BatchNorm2d(3).eval()
    with ember_autograd.no_grad():
        bn.running_mean.copy_(torch.tensor([0.5, -1.0, 2.0]))
        bn.running_var.copy_(torch.tensor([4.0, 0.25, 1.0]))
        bn.weight.copy_(torch.tensor([1.0, 2.0, -1.0]))
        bn.bias.copy_(torch.tensor([0.0, 1.0, 3.0]))
    fused = nn.utils.fuse_conv_bn_eval(conv, bn)
    scale = arr(bn.weight) / np.sqrt(arr(bn.running_var) + bn.eps)
    np.testing.assert_allclose(arr(fused.weight), arr(conv.weight) * scale[:, None, None, None], rtol=1e-6)
    np.testing.assert_allclose(arr(fused.bias), (arr(conv.bias) - arr(bn.running_mean)) * scale + arr(bn.bias),
                               rtol=1e-6)
    assert fused is not conv and isinstance(fused.weight, Parameter)
    with pytest.raises(AssertionError, match="Fusion only for eval!"):
        nn.utils.fuse_conv_bn_eval(conv.train(), bn)


def test_fuse_linear_bn_without_bias():
    linear = nn.Linear(2, 3, bias=False).eval()
    bn = nn.BatchNorm1d(3).eval()
    fused = nn.utils.fuse_linear_bn_eval(linear, bn)
    np.testing.assert_allclose(arr(fused.weight), arr(linear.weight) / np.sqrt(1 + bn.eps), rtol=1e-6)
    np.testing.assert_allclose(arr(fused.bias), np.zeros(3), atol=1e-7)


# -- parallel -------------------------------------------------------------------------------------------

def test_scatter_and_gather_split_and_join_along_dim():
    x = torch.arange(10, dtype=torch.float32).reshape(5, 2)
    parts = scatter((x, "tag", {"y": x}), ["cpu", "cpu"])
    assert len(parts) == 2
    assert parts[0][0].tolist() == [[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]] and parts[1][0].shape == (2, 2)
    assert parts[0][1] == "tag" and parts[1][2]["y"].shape == (2, 2)
    joined = gather([p[0] for p in parts], -1)
    assert joined.tolist() == x.tolist()
    assert gather([(p[0], {"k": p[0]}) for p in parts], "cpu")[1]["k"].shape == (5, 2)


def test_replicate_shares_structure_and_copies_parameters():
    model = nn.Sequential(nn.Linear(2, 2), nn.ReLU())
    replicas = replicate(model, ["cpu", "cpu"])
    assert len(replicas) == 2 and replicas[0] is not model
    assert replicas[0][0].weight.tolist() == model[0].weight.tolist()
    assert replicas[0][0] is not model[0] and model[0]._parameters["weight"] is model[0].weight


@pytest.mark.skipif(not hasattr(F, "linear"), reason="ember_nn.functional has no linear yet")
def test_data_parallel_without_gpus_runs_the_module(monkeypatch):
    # No GPU, whatever this machine has (other test files turn the CUDA simulator on).
    import sys
    module = sys.modules["ember_nn.parallel.data_parallel"]  # the package's name is a function
    monkeypatch.setattr(module, "_cuda_device_count", lambda: 0)
    model = nn.Linear(4, 2)
    wrapped = nn.DataParallel(model)
    x = torch.ones(3, 4)
    assert wrapped.module is model and wrapped.device_ids == []
    assert wrapped(x).tolist() == model(x).tolist()
    assert [n for n, _ in wrapped.named_parameters()] == ["module.weight", "module.bias"]


def test_replicas_on_scattered_batches_give_the_unsplit_gradients():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
    x = torch.randn(5, 3)
    model(x).sum().backward()
    expected = [arr(p.grad) for p in model.parameters()]
    model.zero_grad()
    devices = ["cpu", "cpu"]
    parts = scatter((x,), devices)
    outputs = [replica(*part) for replica, part in zip(replicate(model, devices), parts)]
    gather(outputs, "cpu").sum().backward()
    for p, grad in zip(model.parameters(), expected):
        np.testing.assert_allclose(arr(p.grad), grad, rtol=1e-5, atol=1e-6)


# -- stateless -------------------------------------------------------------------------------------------

def test_functional_call_replaces_for_one_call_and_differentiates():
    model = nn.Sequential(nn.Linear(2, 2), nn.ReLU(), nn.Linear(2, 1))
    before = {k: arr(v) for k, v in model.state_dict().items()}
    weight = torch.ones(1, 2, requires_grad=True)
    out = nn.utils.stateless.functional_call(model, {"2.weight": weight, "2.bias": torch.zeros(1)},
                                             (torch.ones(3, 2),))
    hidden = np.maximum(np.ones((3, 2)) @ before["0.weight"].T + before["0.bias"], 0)
    np.testing.assert_allclose(arr(out), hidden.sum(1, keepdims=True), rtol=1e-5)
    out.sum().backward()
    np.testing.assert_allclose(arr(weight.grad), hidden.sum(0, keepdims=True), rtol=1e-5)
    assert all(np.array_equal(arr(v), before[k]) for k, v in model.state_dict().items())  # restored
    assert isinstance(model[2].weight, Parameter)


def test_functional_call_ties_shared_weights_and_checks_strictly():
    shared = nn.Linear(2, 2, bias=False)
    model = nn.Sequential(shared, shared)
    out = nn.utils.stateless.functional_call(model, {"0.weight": torch.eye(2) * 2}, torch.ones(1, 2))
    assert out.tolist() == [[4.0, 4.0]]  # 1.weight is the same tensor: replaced too
    with pytest.raises(RuntimeError, match="Missing key\\(s\\): '1.weight'"):
        nn.utils.stateless.functional_call(model, {"0.weight": torch.eye(2)}, torch.ones(1, 2), tie_weights=False,
                                           strict=True)
