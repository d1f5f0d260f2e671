"""The inference preprocessing attached to weights: ``ResNet18_Weights.DEFAULT.transforms()``
(classification) and the segmentation models' (resize only, no crop)."""
import ember_nn as nn
import ember_tensor as torch

from . import functional as F
from .functional import InterpolationMode

__all__ = ["ImageClassification", "SemanticSegmentation"]


class ImageClassification(nn.Module):
    """Resize the shorter edge to ``resize_size``, centre-crop ``crop_size``, scale to [0, 1]
    floats and normalise; accepts PIL images and (batched) tensors."""

    def __init__(self, *, crop_size, resize_size=256, mean=(0.485, 0.456, 0.406), std=(0.229, 0.224, 0.225),
                 interpolation=InterpolationMode.BILINEAR, antialias=True):
        super().__init__()
        self.crop_size = [crop_size]
        self.resize_size = [resize_size]
        self.mean = list(mean)
        self.std = list(std)
        self.interpolation = interpolation
        self.antialias = antialias

    def forward(self, img):
        img = F.resize(img, self.resize_size, interpolation=self.interpolation, antialias=self.antialias)
        img = F.center_crop(img, self.crop_size)
        if not isinstance(img, torch.Tensor):
            img = F.pil_to_tensor(img)
        img = F.convert_image_dtype(img, torch.float)
        return F.normalize(img, mean=self.mean, std=self.std)

    def __repr__(self):
        return (f"{self.__class__.__name__}(\n    crop_size={self.crop_size}\n    resize_size={self.resize_size}\n"
                f"    mean={self.mean}\n    std={self.std}\n    interpolation={self.interpolation}\n)")

    def describe(self):
        """torchvision's one-paragraph description of the preprocessing."""
        return ("Accepts ``PIL.Image``, batched ``(B, C, H, W)`` and single ``(C, H, W)`` image ``torch.Tensor`` "
                f"objects. The images are resized to ``resize_size={self.resize_size}`` using "
                f"``interpolation={self.interpolation}``, followed by a central crop of ``crop_size={self.crop_size}``. "
                "Finally the values are first rescaled to ``[0.0, 1.0]`` and then normalized using "
                f"``mean={self.mean}`` and ``std={self.std}``.")


class SemanticSegmentation(nn.Module):
    """Resize (the shorter edge to ``resize_size``, or not at all when None), scale to [0, 1]
    floats and normalise; accepts PIL images and (batched) tensors."""

    def __init__(self, *, resize_size, mean=(0.485, 0.456, 0.406), std=(0.229, 0.224, 0.225),
                 interpolation=InterpolationMode.BILINEAR, antialias=True):
        super().__init__()
        self.resize_size = [resize_size] if resize_size is not None else None
        self.mean = list(mean)
        self.std = list(std)
        self.interpolation = interpolation
        self.antialias = antialias

    def forward(self, img):
        if isinstance(self.resize_size, list):
            img = F.resize(img, self.resize_size, interpolation=self.interpolation, antialias=self.antialias)
        if not isinstance(img, torch.Tensor):
            img = F.pil_to_tensor(img)
        img = F.convert_image_dtype(img, torch.float)
        return F.normalize(img, mean=self.mean, std=self.std)

    def __repr__(self):
        return (f"{self.__class__.__name__}(\n    resize_size={self.resize_size}\n    mean={self.mean}\n"
                f"    std={self.std}\n    interpolation={self.interpolation}\n)")

    def describe(self):
        """torchvision's one-paragraph description of the preprocessing."""
        return ("Accepts ``PIL.Image``, batched ``(B, C, H, W)`` and single ``(C, H, W)`` image ``torch.Tensor`` "
                f"objects. The images are resized to ``resize_size={self.resize_size}`` using "
                f"``interpolation={self.interpolation}``. Finally the values are first rescaled to ``[0.0, 1.0]`` and "
                f"then normalized using ``mean={self.mean}`` and ``std={self.std}``.")
