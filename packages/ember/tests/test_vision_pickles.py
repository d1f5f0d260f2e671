"""Whole ember-vision models pickled by ``ember.save`` name torchvision's classes, so PyTorch
with torchvision loads them as torchvision models with the same outputs."""
import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

import ember
import ember_vision

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "vision" / "tests"))
from torchvision_oracle import import_torchvision  # noqa: E402

needs_torchvision = pytest.mark.skipif(importlib.util.find_spec("torchvision") is None,
                                       reason="torchvision (test-only oracle) not installed")


def test_saved_model_names_torchvision_classes(tmp_path):
    import pickletools
    import zipfile

    ember.save(ember_vision.models.squeezenet1_1(num_classes=5), tmp_path / "model.pt")
    with zipfile.ZipFile(tmp_path / "model.pt") as archive:
        pickle_bytes = archive.read(next(n for n in archive.namelist() if n.endswith("data.pkl")))
    strings = [arg for op, arg, _ in pickletools.genops(pickle_bytes) if isinstance(arg, str)]
    assert "torchvision.models.squeezenet SqueezeNet" in strings
    assert not any(s.startswith("ember_vision") for s in strings)


@needs_torchvision
def test_pytorch_loads_an_ember_vision_model_as_torchvisions(tmp_path):
    import torch
    tv = import_torchvision()
    model = ember_vision.models.squeezenet1_1(num_classes=5).eval()
    ember.save(model, tmp_path / "model.pt")
    x = np.random.default_rng(0).uniform(size=(1, 3, 64, 64)).astype(np.float32)
    with ember.no_grad():
        expected = model(ember.from_numpy(x)).numpy()
    loaded = torch.load(tmp_path / "model.pt", weights_only=False)
    assert isinstance(loaded, tv.models.SqueezeNet)
    with torch.no_grad():
        np.testing.assert_allclose(loaded(torch.from_numpy(x)).numpy(), expected, rtol=1e-5, atol=1e-6)


VISION_DATA = Path(__file__).resolve().parents[2] / "vision" / "tests" / "data"
WHOLE_TORCHVISION_MODEL = Path(__file__).resolve().parent / "data" / "shufflenet_tiny_whole_torchvision.pt"


def test_a_whole_torchvision_model_saved_by_pytorch_loads_as_ember_visions():
    # Written by real torch.save from torchvision's ShuffleNetV2 holding the weights of
    # vision's shufflenet_tiny fixture: its pickle names torchvision.models.shufflenetv2
    # classes, which must resolve to ember-vision's, never to the real torchvision.
    sys.path.insert(0, str(VISION_DATA.parent))
    from seeded_weights import seeded_input
    model = ember.load(WHOLE_TORCHVISION_MODEL, weights_only=False)
    assert isinstance(model, ember_vision.models.ShuffleNetV2)
    with ember.no_grad():
        logits = model(ember.from_numpy(seeded_input((2, 3, 32, 32)))).numpy()
    np.testing.assert_allclose(logits, np.load(VISION_DATA / "shufflenet_tiny_logits.npy"), rtol=1e-4, atol=1e-5)


def test_a_whole_torchvision_model_is_refused_under_weights_only():
    import pickle
    with pytest.raises(pickle.UnpicklingError, match="torchvision.models.shufflenetv2.ShuffleNetV2"):
        ember.load(WHOLE_TORCHVISION_MODEL)
