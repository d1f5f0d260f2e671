"""Forward AD through nn modules: the JVP of a small MLP and its loss equals PyTorch's."""
import numpy as np
import pytest

import ember_autograd
import ember_nn as nn
import ember_tensor as et
from ember_autograd import forward_ad as fw

torch = pytest.importorskip("torch")
tfw = torch.autograd.forward_ad


def _mlp(lib_nn, weights):
    model = lib_nn.Sequential(lib_nn.Linear(4, 5), lib_nn.Tanh(), lib_nn.Linear(5, 2))
    for p, w in zip(model.parameters(), weights):
        with (torch.no_grad() if lib_nn is torch.nn else ember_autograd.no_grad()):
            p.copy_(w)
    return model


def test_mlp_jvp_matches_torch():
    rng = np.random.default_rng(1)
    shapes = [(5, 4), (5,), (2, 5), (2,)]
    weights = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    x, v, target = (rng.standard_normal(s).astype(np.float32) for s in [(3, 4), (3, 4), (3, 2)])
    results = []
    for lib, lib_nn, fwad in ((et, nn, fw), (torch, torch.nn, tfw)):
        model = _mlp(lib_nn, [lib.tensor(w) for w in weights])
        with fwad.dual_level():
            y = model(fwad.make_dual(lib.tensor(x), lib.tensor(v)))
            loss = lib_nn.MSELoss()(y, lib.tensor(target))
            results.append([np.asarray(fwad.unpack_dual(o).tangent.tolist()) for o in (y, loss)])
    for ours, theirs in zip(*results):
        np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6)


def test_parameter_tangent_gives_directional_derivative():
    # A dual parameter (swapped in with a dual weight): d loss along a weight direction.
    rng = np.random.default_rng(2)
    w, dw, x = (rng.standard_normal(s) for s in [(2, 3), (2, 3), (4, 3)])
    results = []
    for lib, lib_nn, fwad in ((et, nn, fw), (torch, torch.nn, tfw)):
        with fwad.dual_level():
            weight = fwad.make_dual(lib.tensor(w), lib.tensor(dw))
            out = lib_nn.functional.linear(lib.tensor(x), weight).relu().sum()
            results.append(fwad.unpack_dual(out).tangent.item())
    assert results[0] == pytest.approx(results[1], rel=1e-10)
