"""transforms.functional against torchvision's, on the same PIL images and tensors.

PIL results must be equal pixel for pixel (both call Pillow); tensor results equal within
float rounding (uint8: off by at most one where torchvision rounds a float result). With
torchvision installed the comparison is live, on a 37x45 image; without it, against the
outputs torchvision 0.28 gave on an 18x22 image (tests/data/functional_expected.npz).
"""
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

import ember_tensor as torch
import ember_vision.transforms.functional as F
from functional_cases import CASES, UINT8_ONLY, as_numpy, make_images
from torchvision_oracle import import_torchvision, torchvision_available

needs_torchvision = pytest.mark.skipif(not torchvision_available(), reason="torchvision (test-only oracle) not installed")
PIL_RGB, UINT8_CHW, FLOAT_CHW = make_images(37, 45)
_BASE = np.array(PIL_RGB)  # writable, as torch.from_numpy wants
EXPECTED = np.load(Path(__file__).parent / "data" / "functional_expected.npz")
SMALL_PIL, SMALL_UINT8, SMALL_FLOAT = make_images(18, 22)


@pytest.fixture(scope="module")
def TF():
    return import_torchvision().transforms.functional


def _ember(array):
    return torch.from_numpy(array.copy())


def _torch(array):
    import torch as real_torch
    return real_torch.from_numpy(array.copy())


_as_numpy = as_numpy


def _interp(F_module, name):
    return getattr(F_module.InterpolationMode, name)




@needs_torchvision
@pytest.mark.parametrize("name, fn", CASES + UINT8_ONLY, ids=[c[0] for c in CASES + UINT8_ONLY])
def test_pil_images_match_torchvision(TF, name, fn):
    got, expected = _as_numpy(fn(F, PIL_RGB)), _as_numpy(fn(TF, PIL_RGB))
    np.testing.assert_array_equal(np.asarray(got), np.asarray(expected))


@needs_torchvision
@pytest.mark.parametrize("name, fn", CASES + UINT8_ONLY, ids=[c[0] for c in CASES + UINT8_ONLY])
def test_uint8_tensors_match_torchvision(TF, name, fn):
    got = np.asarray(_as_numpy(fn(F, _ember(UINT8_CHW))), dtype=np.int64)
    expected = np.asarray(_as_numpy(fn(TF, _torch(UINT8_CHW))), dtype=np.int64)
    assert got.shape == expected.shape
    assert np.abs(got - expected).max() <= 1
    # Off by one only where a float result sits at a rounding or truncation boundary.
    assert (got != expected).mean() < 0.02


@needs_torchvision
@pytest.mark.parametrize("name, fn", CASES, ids=[c[0] for c in CASES])
def test_float_tensors_match_torchvision(TF, name, fn):
    got = np.asarray(_as_numpy(fn(F, _ember(FLOAT_CHW))))
    expected = np.asarray(_as_numpy(fn(TF, _torch(FLOAT_CHW))))
    assert got.shape == expected.shape
    np.testing.assert_allclose(got, expected, atol=2e-5)


@needs_torchvision
def test_batched_tensors_match_torchvision(TF):
    batch = np.stack([FLOAT_CHW, FLOAT_CHW[:, ::-1].copy()])
    for fn in (lambda f, im: f.resize(im, [19, 23]), lambda f, im: f.rotate(im, 33.0),
               lambda f, im: f.adjust_hue(im, -0.3)):
        np.testing.assert_allclose(_as_numpy(fn(F, _ember(batch))), _as_numpy(fn(TF, _torch(batch))), atol=2e-5)


@needs_torchvision
@pytest.mark.parametrize("pic", [PIL_RGB, PIL_RGB.convert("L"), PIL_RGB.convert("RGBA"), _BASE,
                                 _BASE.astype(np.float32)], ids=["RGB", "L", "RGBA", "uint8_array", "float_array"])
def test_to_tensor_and_pil_to_tensor_match_torchvision(TF, pic):
    np.testing.assert_allclose(_as_numpy(F.to_tensor(pic)), _as_numpy(TF.to_tensor(pic)), atol=1e-7)
    if isinstance(pic, Image.Image):
        np.testing.assert_array_equal(_as_numpy(F.pil_to_tensor(pic)), _as_numpy(TF.pil_to_tensor(pic)))


@needs_torchvision
@pytest.mark.parametrize("array, mode", [(FLOAT_CHW, None), (UINT8_CHW, None), (UINT8_CHW[:1], None),
                                         (UINT8_CHW, "HSV"), (FLOAT_CHW[:1], "F")], ids=str)
def test_to_pil_image_matches_torchvision(TF, array, mode):
    got, expected = F.to_pil_image(_ember(array), mode), TF.to_pil_image(_torch(array), mode)
    assert got.mode == expected.mode
    np.testing.assert_array_equal(np.asarray(got), np.asarray(expected))


@needs_torchvision
@pytest.mark.parametrize("source, target", [("uint8", "float32"), ("float32", "uint8"), ("uint8", "int32"),
                                            ("int32", "uint8"), ("float64", "int16")])
def test_convert_image_dtype_matches_torchvision(TF, source, target):
    import torch as real_torch
    array = UINT8_CHW if source == "uint8" else (FLOAT_CHW if source.startswith("float") else
                                                  UINT8_CHW.astype(np.int32) * 8421504)
    array = array.astype(source)
    got = F.convert_image_dtype(_ember(array), getattr(torch, target))
    expected = TF.convert_image_dtype(_torch(array), getattr(real_torch, target))
    np.testing.assert_array_equal(_as_numpy(got), _as_numpy(expected))


@needs_torchvision
def test_normalize_and_erase_match_torchvision(TF):
    mean, std = [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]
    np.testing.assert_allclose(_as_numpy(F.normalize(_ember(FLOAT_CHW), mean, std)),
                               _as_numpy(TF.normalize(_torch(FLOAT_CHW), mean, std)), atol=1e-6)
    got = F.erase(_ember(FLOAT_CHW), 2, 3, 5, 6, torch.tensor(0.5))
    assert float(got[0, 2, 3]) == 0.5 and float(got[0, 7, 9]) == float(FLOAT_CHW[0, 7, 9])
    with pytest.raises(ValueError, match="std evaluated to zero"):
        F.normalize(_ember(FLOAT_CHW), mean, [1.0, 0.0, 1.0])


def test_errors_are_torchvisions():
    with pytest.raises(TypeError, match="img should be PIL Image or Tensor"):
        F.hflip(np.zeros((3, 3)))
    with pytest.raises(ValueError, match="hue_factor"):
        F.adjust_hue(PIL_RGB, 0.7)
    with pytest.raises(ValueError, match="kernel_size should have odd and positive integers"):
        F.gaussian_blur(PIL_RGB, 4)


@pytest.mark.parametrize("name, fn", CASES + UINT8_ONLY, ids=[c[0] for c in CASES + UINT8_ONLY])
def test_matches_torchvisions_recorded_outputs(name, fn):
    expected = EXPECTED[f"pil/{name}"]
    np.testing.assert_array_equal(np.asarray(as_numpy(fn(F, SMALL_PIL))), expected)
    got = np.asarray(as_numpy(fn(F, _ember(SMALL_UINT8))), dtype=np.int64)
    expected = EXPECTED[f"uint8/{name}"].astype(np.int64)
    assert got.shape == expected.shape and np.abs(got - expected).max() <= 1
    assert (got != expected).mean() < 0.02
    if f"float/{name}" in EXPECTED:
        np.testing.assert_allclose(np.asarray(as_numpy(fn(F, _ember(SMALL_FLOAT)))), EXPECTED[f"float/{name}"],
                                   atol=2e-5)


@needs_torchvision
@pytest.mark.parametrize("kind", ["pil", "uint8", "float"])
def test_elastic_transform_matches_torchvision(TF, kind):
    import torch as real_torch
    displacement = np.random.default_rng(9).uniform(-0.1, 0.1, (1, 37, 45, 2)).astype(np.float32)
    image = {"pil": PIL_RGB, "uint8": UINT8_CHW, "float": FLOAT_CHW}[kind]
    ours = image if kind == "pil" else _ember(image)
    theirs = image if kind == "pil" else _torch(image)
    got = as_numpy(F.elastic_transform(ours, torch.from_numpy(displacement), fill=[5.0, 6.0, 7.0]))
    expected = as_numpy(TF.elastic_transform(theirs, real_torch.from_numpy(displacement), fill=[5.0, 6.0, 7.0]))
    diff = np.abs(np.asarray(got, dtype=np.float64) - np.asarray(expected, dtype=np.float64))
    assert diff.max() <= (2e-5 if kind == "float" else 1)
