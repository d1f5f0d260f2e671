"""Weights enums, the legacy ``pretrained=True``, and loading through the hub cache
(``$TORCH_HOME/hub/checkpoints``), with a clear error when offline."""
import urllib.error
import urllib.request
import warnings

import pytest

import ember_tensor as torch
import ember_vision as torchvision
from ember_vision.models import ResNet18_Weights, ResNet50_Weights, VGG16_Weights, get_weight


def test_enum_members_carry_torchvisions_url_transforms_and_meta():
    w = ResNet18_Weights.DEFAULT
    assert w is ResNet18_Weights.IMAGENET1K_V1
    assert w.url == "https://download.pytorch.org/models/resnet18-f37072fd.pth"
    assert len(w.meta["categories"]) == 1000 and w.meta["categories"][0] == "tench"
    assert w.meta["num_params"] == 11689512
    preprocess = w.transforms()
    assert preprocess.crop_size == [224] and preprocess.resize_size == [256]
    assert ResNet50_Weights.DEFAULT is ResNet50_Weights.IMAGENET1K_V2
    assert ResNet50_Weights.DEFAULT.transforms().resize_size == [232]
    assert VGG16_Weights.IMAGENET1K_FEATURES.meta["categories"] is None
    assert repr(w) == "ResNet18_Weights.IMAGENET1K_V1"


def test_weights_resolve_by_name():
    assert ResNet18_Weights.verify("IMAGENET1K_V1") is ResNet18_Weights.IMAGENET1K_V1
    assert ResNet18_Weights.verify("ResNet18_Weights.DEFAULT") is ResNet18_Weights.IMAGENET1K_V1
    assert get_weight("ResNet50_Weights.IMAGENET1K_V2") is ResNet50_Weights.IMAGENET1K_V2
    assert torchvision.models.get_model_weights("resnet18") is ResNet18_Weights


def test_transforms_preset_gives_a_normalised_224_crop():
    x = torch.randint(0, 256, (3, 300, 260), dtype=torch.uint8)
    out = ResNet18_Weights.DEFAULT.transforms()(x)
    assert tuple(out.shape) == (3, 224, 224) and out.dtype == torch.float32


@pytest.fixture
def hub(tmp_path, monkeypatch):
    """An empty TORCH_HOME, and no network."""
    monkeypatch.setenv("TORCH_HOME", str(tmp_path))

    def offline(*args, **kwargs):
        raise urllib.error.URLError("no network")
    monkeypatch.setattr(urllib.request, "urlopen", offline)
    return tmp_path / "hub" / "checkpoints"


def test_weights_load_from_the_hub_cache(hub):
    source = torchvision.models.resnet18()
    hub.mkdir(parents=True)
    torch.save(source.state_dict(), hub / "resnet18-f37072fd.pth")
    model = torchvision.models.resnet18(weights=ResNet18_Weights.DEFAULT)
    for key, value in source.state_dict().items():
        assert torch.equal(model.state_dict()[key], value), key


def test_legacy_pretrained_true_warns_and_loads_the_same_file(hub):
    source = torchvision.models.squeezenet1_1()
    hub.mkdir(parents=True)
    torch.save(source.state_dict(), hub / "squeezenet1_1-b8a52dc0.pth")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = torchvision.models.squeezenet1_1(pretrained=True)
    messages = [str(w.message) for w in caught]
    assert any("The parameter 'pretrained' is deprecated" in m for m in messages)
    assert any("equivalent to passing `weights=SqueezeNet1_1_Weights.IMAGENET1K_V1`" in m for m in messages)
    assert torch.equal(model.classifier[1].weight, source.classifier[1].weight)


def test_pretrained_false_builds_random_weights_without_a_warning(hub):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = torchvision.models.squeezenet1_1(pretrained=False)
    assert model.classifier[1].out_channels == 1000


def test_offline_error_names_the_url_and_where_to_put_the_file(hub):
    with pytest.raises(RuntimeError) as info:
        torchvision.models.resnet18(weights="DEFAULT")
    message = str(info.value)
    assert "https://download.pytorch.org/models/resnet18-f37072fd.pth" in message
    assert str(hub / "resnet18-f37072fd.pth") in message
    assert not list(hub.glob("*"))  # no partial file left behind


def test_weights_fix_num_classes():
    with pytest.raises(ValueError, match="num_classes"):
        torchvision.models.resnet18(weights=ResNet18_Weights.DEFAULT, num_classes=10)


def test_pretrained_true_without_legacy_weights_is_refused():
    with pytest.raises(ValueError, match="No weights available for model vit_h_14"):
        torchvision.models.vit_h_14(pretrained=True)


def test_missing_checkpoint_is_downloaded_with_its_hash_checked(tmp_path, monkeypatch):
    # A file:// URL stands in for the network: the real download path, hash check included.
    import hashlib
    from ember_tensor import hub as _hub
    monkeypatch.setenv("TORCH_HOME", str(tmp_path / "home"))
    source = torchvision.models.squeezenet1_1(num_classes=3)
    payload = tmp_path / "payload.pth"
    torch.save(source.state_dict(), payload)
    digest = hashlib.sha256(payload.read_bytes()).hexdigest()
    good = tmp_path / f"squeezenet-{digest[:8]}.pth"
    good.write_bytes(payload.read_bytes())
    state = _hub.load_state_dict_from_url(good.as_uri(), check_hash=True, progress=False)
    assert torch.equal(state["classifier.1.weight"], source.classifier[1].weight)
    assert (tmp_path / "home" / "hub" / "checkpoints" / good.name).exists()
    bad = tmp_path / "squeezenet-deadbeef.pth"
    bad.write_bytes(payload.read_bytes())
    with pytest.raises(RuntimeError, match="invalid hash value"):
        _hub.load_state_dict_from_url(bad.as_uri(), check_hash=True, progress=False)
    assert not (tmp_path / "home" / "hub" / "checkpoints" / bad.name).exists()
