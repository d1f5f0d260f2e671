"""Models: torchvision's state_dict keys and shapes (committed lists), outputs, and the
same logits as torchvision from the same weights (committed fixtures; live torchvision
where it is installed)."""
import gzip
import io
import json
from pathlib import Path

import numpy as np
import pytest

import ember_autograd
import ember_tensor as torch
import ember_vision as torchvision
from seeded_weights import seeded_input, seeded_state_dict
from torchvision_oracle import import_torchvision, torchvision_available

DATA = Path(__file__).parent / "data"
with gzip.open(DATA / "state_dict_shapes.json.gz", "rt") as _f:
    SHAPES = json.loads(_f.read())
SEGMENTATION = ["fcn_resnet50", "fcn_resnet101", "deeplabv3_resnet50", "deeplabv3_resnet101",
                "deeplabv3_mobilenet_v3_large", "lraspp_mobilenet_v3_large"]
needs_torchvision = pytest.mark.skipif(not torchvision_available(), reason="torchvision (test-only oracle) not installed")


def build(name, **kwargs):
    # GoogLeNet warns without the argument (VGG's is only its initialisation).
    if name.startswith("vgg") or name in ("googlenet", "inception_v3"):
        kwargs.setdefault("init_weights", False)
    if name in SEGMENTATION:  # their backbones default to ImageNet weights, from the network
        kwargs.setdefault("weights_backbone", None)
    return torchvision.models.get_model(name, **kwargs)


def test_every_listed_model_is_provided():
    assert sorted(SHAPES) == torchvision.models.list_models()


@pytest.fixture
def no_random_init(monkeypatch):
    """Skip the random initialisation of weights while building: the state_dict's keys and
    shapes do not depend on it, and filling VGG's or ViT-H's hundreds of millions of weights
    would dominate the suite's time."""
    import ember_nn.init
    for name in dir(ember_nn.init):
        if name.endswith("_") and not name.startswith("_"):
            monkeypatch.setattr(ember_nn.init, name, lambda tensor, *args, **kwargs: tensor)


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_state_dict_keys_and_shapes_are_torchvisions(name, no_random_init):
    model = build(name)
    got = [[key, list(value.shape)] for key, value in model.state_dict().items()]
    assert got == SHAPES[name]


def _ember_state_dict(arrays):
    return {key: torch.from_numpy(np.ascontiguousarray(value)) for key, value in arrays.items()}


def test_resnet18_seeded_weights_give_torchvisions_logits():
    # Expected logits were computed by torchvision 0.28 from the same NumPy-seeded weights.
    model = torchvision.models.resnet18().eval()
    model.load_state_dict(_ember_state_dict(seeded_state_dict(SHAPES["resnet18"])), strict=True)
    with ember_autograd.no_grad():
        logits = model(torch.from_numpy(seeded_input((2, 3, 64, 64)))).numpy()
    expected = np.load(DATA / "resnet18_seeded_logits.npy")
    np.testing.assert_allclose(logits, expected, rtol=1e-4, atol=1e-3)


def test_checkpoint_written_by_torchvision_loads_strictly_and_matches():
    # A ShuffleNetV2 built by torchvision with random weights, saved with torch.save.
    state_dict = torch.load(DATA / "shufflenet_tiny_torchvision.pth")
    model = torchvision.models.ShuffleNetV2([1, 1, 1], [8, 16, 32, 64, 128], num_classes=10).eval()
    model.load_state_dict(state_dict, strict=True)
    with ember_autograd.no_grad():
        logits = model(torch.from_numpy(seeded_input((2, 3, 32, 32)))).numpy()
    np.testing.assert_allclose(logits, np.load(DATA / "shufflenet_tiny_logits.npy"), rtol=1e-4, atol=1e-5)


def test_strict_loading_reports_torchvision_key_mismatches():
    state_dict = build("resnet18").state_dict()
    state_dict["fc.extra"] = state_dict.pop("fc.bias")
    with pytest.raises(RuntimeError, match="fc.bias"):
        build("resnet18").load_state_dict(state_dict, strict=True)


# name, builder kwargs, input shape: small inputs keep the suite fast.
LIVE_CASES = [
    ("resnet18", {}, (2, 3, 64, 64)),
    ("mobilenet_v3_small", {}, (2, 3, 64, 64)),
    ("mobilenet_v2", {}, (1, 3, 64, 64)),
    ("efficientnet_b0", {}, (1, 3, 64, 64)),
    ("shufflenet_v2_x1_0", {}, (1, 3, 64, 64)),
    ("squeezenet1_1", {}, (1, 3, 64, 64)),
    ("googlenet", {"init_weights": False}, (1, 3, 64, 64)),
    ("densenet121", {}, (1, 3, 32, 32)),
    ("convnext_tiny", {}, (1, 3, 64, 64)),
    ("regnet_y_400mf", {}, (1, 3, 64, 64)),
    ("mnasnet0_5", {}, (1, 3, 64, 64)),
    ("swin_t", {}, (1, 3, 64, 64)),
    ("swin_v2_t", {}, (1, 3, 64, 64)),
    ("efficientnet_v2_s", {}, (1, 3, 64, 64)),
    ("inception_v3", {"init_weights": False, "aux_logits": False}, (1, 3, 96, 96)),
    ("vit_small", {}, (2, 3, 32, 32)),
    ("maxvit_small", {}, (1, 3, 32, 32)),
    ("fcn_resnet50", {"weights_backbone": None, "aux_loss": True}, (1, 3, 32, 32)),
    ("deeplabv3_mobilenet_v3_large", {"weights_backbone": None, "aux_loss": True}, (1, 3, 64, 64)),
    ("lraspp_mobilenet_v3_large", {"weights_backbone": None}, (1, 3, 64, 64)),
]


SMALL_MODELS = {  # full-size ViT and MaxViT need 224px inputs: the same classes, made small
    "vit_small": lambda lib: lib.models.VisionTransformer(image_size=32, patch_size=16, num_layers=2, num_heads=2,
                                                          hidden_dim=16, mlp_dim=32, num_classes=10),
    "maxvit_small": lambda lib: lib.models.MaxVit(input_size=(32, 32), stem_channels=8, partition_size=2,
                                                  block_channels=[8, 16, 32], block_layers=[1, 1, 1], head_dim=4,
                                                  stochastic_depth_prob=0.0, num_classes=10),
}


@needs_torchvision
@pytest.mark.parametrize("name, kwargs, shape", LIVE_CASES, ids=[c[0] for c in LIVE_CASES])
def test_torchvision_state_dict_loads_strictly_and_gives_the_same_logits(name, kwargs, shape, tmp_path):
    import torch as real_torch
    tv = import_torchvision()
    real_torch.manual_seed(0)
    reference = (SMALL_MODELS[name](tv) if name in SMALL_MODELS else tv.models.get_model(name, **kwargs)).eval()
    if name == "vit_small":  # its head starts at zero: give it weights that show up in the logits
        real_torch.nn.init.normal_(reference.heads.head.weight)
    path = tmp_path / f"{name}.pth"
    real_torch.save(reference.state_dict(), path)  # a file written by PyTorch, read by ember
    model = (SMALL_MODELS[name](torchvision) if name in SMALL_MODELS else build(name, **kwargs)).eval()
    model.load_state_dict(torch.load(path), strict=True)
    x = seeded_input(shape)
    with real_torch.no_grad():
        expected = reference(real_torch.from_numpy(x))
    expected = expected if isinstance(expected, dict) else expected.numpy()
    with ember_autograd.no_grad():
        got = model(torch.from_numpy(x))
    if isinstance(expected, dict):  # segmentation: {"out": ..., "aux": ...}
        assert list(got) == list(expected)
        got = np.concatenate([got[k].numpy() for k in got])
        expected = np.concatenate([v.numpy() for v in expected.values()])
    else:
        got = got.numpy()
    assert got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=1e-3, atol=1e-4 * max(1.0, np.abs(expected).max()))


def test_googlenet_training_returns_auxiliary_outputs():
    model = build("googlenet", init_weights=False, num_classes=7).train()
    out = model(torch.randn(2, 3, 64, 64))
    assert isinstance(out, torchvision.models.GoogLeNetOutputs)
    assert [tuple(o.shape) for o in out] == [(2, 7)] * 3


def test_resnet_zero_init_residual_makes_blocks_start_as_identity():
    model = torchvision.models.resnet18(zero_init_residual=True)
    assert float(model.layer1[0].bn2.weight.abs().sum()) == 0.0
    assert float(model.layer1[0].bn1.weight.sum()) == 64.0


def test_builders_reject_a_weights_enum_of_another_model():
    with pytest.raises(TypeError, match="expected ResNet18_Weights"):
        torchvision.models.resnet18(weights=torchvision.models.ResNet34_Weights.DEFAULT)


def test_backward_through_resnet18_reaches_every_parameter():
    model = torchvision.models.resnet18(num_classes=4)
    loss = model(torch.randn(2, 3, 32, 32)).sum()
    loss.backward()
    assert all(p.grad is not None for p in model.parameters())
    buffer = io.BytesIO()
    torch.save(model.state_dict(), buffer)
    assert buffer.tell() > 0


@needs_torchvision
def test_gradient_norm_penalty_through_resnet18_matches_pytorch():
    # The 0.2 release notes' double backward: grad of the loss with create_graph=True, then
    # backward through the norm of those gradients (eval mode: BatchNorm on running
    # statistics keeps float32 well conditioned).
    import torch as real_torch
    tv = import_torchvision()
    real_torch.manual_seed(0)
    reference = tv.models.resnet18(num_classes=10).eval()
    model = torchvision.models.resnet18(num_classes=10).eval()
    model.load_state_dict(_ember_state_dict({k: v.numpy() for k, v in reference.state_dict().items()}))
    x = seeded_input((2, 3, 32, 32))

    def penalty(tensors, functional, autograd, net, inp):
        loss = functional.nll_loss(net(inp), tensors.zeros(2).long())
        grads = autograd.grad(loss, list(net.parameters()), create_graph=True)
        norm = 0
        for g in grads:
            norm = norm + g.pow(2).sum()
        norm = norm.sqrt()
        norm.backward()
        return float(norm.detach())

    expected_input = real_torch.from_numpy(x).requires_grad_()
    got_input = torch.from_numpy(x.copy()).requires_grad_()
    import ember_nn.functional
    np.testing.assert_allclose(penalty(torch, ember_nn.functional, ember_autograd, model, got_input),
                               penalty(real_torch, real_torch.nn.functional, real_torch.autograd, reference,
                                       expected_input), rtol=1e-5)
    np.testing.assert_allclose(got_input.grad.numpy(), expected_input.grad.numpy(), rtol=1e-4,
                               atol=1e-5 * float(expected_input.grad.abs().max()))
    np.testing.assert_allclose(model.conv1.weight.grad.numpy(), reference.conv1.weight.grad.numpy(), rtol=1e-4,
                               atol=1e-5 * float(reference.conv1.weight.grad.abs().max()))


def test_mnasnet_takes_a_version_1_checkpoint_with_the_old_stem():
    # torchvision's first MNASNet kept a 32/16-channel stem for every width multiplier.
    from ember_vision.models import mnasnet
    old = torchvision.models.mnasnet0_5(num_classes=4)
    for index, layer in enumerate(torchvision.models.mnasnet1_0().layers[:8]):  # the 32/16-channel stem
        old.layers[index] = layer
    old.layers[8] = mnasnet._stack(16, 16, 3, 2, 3, 3, mnasnet._BN_MOMENTUM)  # fed by 16 channels, 0.5x's 16 out
    state_dict = old.state_dict()
    model = torchvision.models.mnasnet0_5(num_classes=4)
    with pytest.warns(UserWarning, match="previous version"):
        model.use_v1_stem_if_needed(state_dict)
    model.load_state_dict(state_dict, strict=True)
    assert model.layers[0].out_channels == 32
