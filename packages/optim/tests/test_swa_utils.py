"""swa_utils: SWALR's sequence, the averaging functions, and AveragedModel on a Module."""
import numpy as np
import pytest

import ember_autograd
import ember_tensor as et
import ember_optim
from ember_optim import swa_utils


def test_swalr_anneals_to_swa_lr_then_holds():
    opt = ember_optim.SGD([et.zeros(1, requires_grad=True)], lr=1.0)
    scheduler = swa_utils.SWALR(opt, swa_lr=0.1, anneal_epochs=4, anneal_strategy="linear")
    lrs = [opt.param_groups[0]["lr"]]
    for _ in range(6):
        opt.step()
        scheduler.step()
        lrs.append(scheduler.get_last_lr()[0])
    # Linear from 1.0 to 0.1 over 4 steps: 1 - 0.9 * t/4 (the first value is t = 0).
    assert lrs == pytest.approx([1.0, 0.775, 0.55, 0.325, 0.1, 0.1, 0.1])


def test_swalr_matches_pytorch_cosine():
    torch = pytest.importorskip("torch")
    sequences = []
    for lib, optim in ((et, ember_optim), (torch, torch.optim)):
        opt = optim.SGD([lib.zeros(1, requires_grad=True)], lr=0.5)
        scheduler = optim.swa_utils.SWALR(opt, swa_lr=0.05, anneal_epochs=3)
        seq = []
        for _ in range(5):
            opt.step()
            scheduler.step()
            seq.append(scheduler.get_last_lr()[0])
        sequences.append(seq)
    assert sequences[0] == pytest.approx(sequences[1], rel=1e-14)


@pytest.mark.parametrize("kwargs, message", [
    (dict(anneal_strategy="step"), "anneal_strategy must by one of 'cos' or 'linear', instead got step"),
    (dict(anneal_epochs=-1), "anneal_epochs must be equal or greater than 0, got -1"),
])
def test_swalr_errors(kwargs, message):
    opt = ember_optim.SGD([et.zeros(1, requires_grad=True)], lr=1.0)
    with pytest.raises(ValueError, match=message):
        swa_utils.SWALR(opt, swa_lr=0.1, **kwargs)


def test_average_functions():
    a, b = et.tensor([0.0, 2.0]), et.tensor([4.0, 6.0])
    assert swa_utils.get_swa_avg_fn()(a, b, 1).tolist() == [2.0, 4.0]
    assert swa_utils.get_ema_avg_fn(0.5)(a, b, 3).tolist() == [2.0, 4.0]
    averaged = [a.clone()]
    swa_utils.get_ema_multi_avg_fn(0.75)(averaged, [b], 1)
    assert averaged[0].tolist() == [1.0, 3.0]
    with pytest.raises(ValueError, match="Invalid decay value 2"):
        swa_utils.get_ema_avg_fn(2)


def test_averaged_model_needs_a_module():
    with pytest.raises(TypeError, match="AveragedModel expects a Module"):
        swa_utils.AveragedModel(object())


def test_averaged_model_averages_an_ember_nn_model():
    nn = pytest.importorskip("ember_nn")
    model = nn.Linear(3, 2)
    swa = swa_utils.AveragedModel(model)
    assert isinstance(swa, swa_utils.AveragedModel) and isinstance(swa, nn.Module)
    snapshots = []
    for k in range(3):
        with ember_autograd.no_grad():
            model.weight.add_(1.0)
        snapshots.append(model.weight.detach().numpy().copy())
        swa.update_parameters(model)
    np.testing.assert_allclose(swa.module.weight.detach().numpy(), np.mean(snapshots, 0), rtol=1e-6)
    assert swa.n_averaged.item() == 3
    x = et.randn(4, 3)
    assert swa(x).shape == (4, 2)


def test_update_bn_recomputes_running_statistics():
    nn = pytest.importorskip("ember_nn")
    model = nn.Sequential(nn.Linear(2, 2), nn.BatchNorm1d(2))
    data = [et.randn(8, 2) * 3 + 5 for _ in range(4)]
    swa_utils.update_bn(data, model)
    with ember_autograd.no_grad():
        hidden = model[0](et.cat(data, 0))
    np.testing.assert_allclose(model[1].running_mean.numpy(), hidden.mean(0).numpy(), rtol=1e-4, atol=1e-5)
    assert model[1].momentum == 0.1
