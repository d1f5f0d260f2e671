"""Interpolation modes and the checks every functional transform shares."""
from enum import Enum

from PIL import Image

import ember_tensor as torch

__all__ = ["InterpolationMode", "PIL_MODES", "as_interpolation_mode", "is_tensor", "check_image"]


class InterpolationMode(Enum):
    """Interpolation methods, by torchvision's names (the value is the tensor path's mode)."""

    NEAREST = "nearest"
    NEAREST_EXACT = "nearest-exact"
    BILINEAR = "bilinear"
    BICUBIC = "bicubic"
    # PIL only
    BOX = "box"
    HAMMING = "hamming"
    LANCZOS = "lanczos"


PIL_MODES = {InterpolationMode.NEAREST: Image.NEAREST, InterpolationMode.NEAREST_EXACT: Image.NEAREST,
             InterpolationMode.BILINEAR: Image.BILINEAR, InterpolationMode.BICUBIC: Image.BICUBIC,
             InterpolationMode.BOX: Image.BOX, InterpolationMode.HAMMING: Image.HAMMING,
             InterpolationMode.LANCZOS: Image.LANCZOS}
_PIL_TO_MODE = {Image.NEAREST: InterpolationMode.NEAREST, Image.BILINEAR: InterpolationMode.BILINEAR,
                Image.BICUBIC: InterpolationMode.BICUBIC, Image.BOX: InterpolationMode.BOX,
                Image.HAMMING: InterpolationMode.HAMMING, Image.LANCZOS: InterpolationMode.LANCZOS}


def as_interpolation_mode(interpolation):
    """An ``InterpolationMode`` from itself or from PIL's integer constant (torchvision still accepts those)."""
    if isinstance(interpolation, int):
        return _PIL_TO_MODE[interpolation]
    if not isinstance(interpolation, InterpolationMode):
        raise TypeError("Argument interpolation should be a InterpolationMode or a corresponding Pillow integer constant")
    return interpolation


def is_tensor(img):
    """Whether ``img`` is an ember tensor (else a PIL image is expected)."""
    return isinstance(img, torch.Tensor)


def check_image(img):
    """Raise torchvision's TypeError unless ``img`` is a PIL image or a tensor."""
    if not is_tensor(img) and not isinstance(img, Image.Image):
        raise TypeError(f"img should be PIL Image or Tensor. Got {type(img)}")
