"""Conversions between PIL images, arrays and tensors, and normalisation."""
import ember_nn as nn

from . import functional as F

__all__ = ["ToTensor", "PILToTensor", "ToPILImage", "ConvertImageDtype", "Normalize"]


class ToTensor:
    """PIL image or ndarray (H, W, C) -> float tensor (C, H, W); uint8 is scaled to [0, 1]."""

    def __call__(self, pic):
        return F.to_tensor(pic)

    def __repr__(self):
        return f"{self.__class__.__name__}()"


class PILToTensor:
    """PIL image -> tensor (C, H, W) of the image's dtype, not scaled."""

    def __call__(self, pic):
        return F.pil_to_tensor(pic)

    def __repr__(self):
        return f"{self.__class__.__name__}()"


class ToPILImage:
    """Tensor (C, H, W) or ndarray (H, W, C) -> PIL image of ``mode`` (inferred when None)."""

    def __init__(self, mode=None):
        self.mode = mode

    def __call__(self, pic):
        return F.to_pil_image(pic, self.mode)

    def __repr__(self):
        return f"{self.__class__.__name__}({'' if self.mode is None else f'mode={self.mode}'})"


class ConvertImageDtype(nn.Module):
    """Convert a tensor image to ``dtype``, rescaling the values."""

    def __init__(self, dtype):
        super().__init__()
        self.dtype = dtype

    def forward(self, image):
        return F.convert_image_dtype(image, self.dtype)


class Normalize(nn.Module):
    """``(x - mean) / std`` per channel on a float tensor image."""

    def __init__(self, mean, std, inplace=False):
        super().__init__()
        self.mean = mean
        self.std = std
        self.inplace = inplace

    def forward(self, tensor):
        return F.normalize(tensor, self.mean, self.std, self.inplace)

    def __repr__(self):
        return f"{self.__class__.__name__}(mean={self.mean}, std={self.std})"


