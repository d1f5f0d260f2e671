"""Colour transforms: ColorJitter, Grayscale, RandomGrayscale, GaussianBlur and the random
photometric ones (invert, posterize, solarize, sharpness, autocontrast, equalize)."""
import numbers
from collections.abc import Sequence

import ember_nn as nn
import ember_tensor as torch

from . import functional as F
from ._utils import coin, setup_size, uniform

__all__ = ["ColorJitter", "Grayscale", "RandomGrayscale", "GaussianBlur", "RandomInvert", "RandomPosterize",
           "RandomSolarize", "RandomAdjustSharpness", "RandomAutocontrast", "RandomEqualize"]


class ColorJitter(nn.Module):
    """Randomly change brightness, contrast, saturation and hue, in a random order.

    Args:
        brightness, contrast, saturation: a factor range ``[max(0, 1 - x), 1 + x]`` or ``(min, max)``.
        hue: a range ``[-x, x]`` (``0 <= x <= 0.5``) or ``(min, max)`` within [-0.5, 0.5].
    """

    def __init__(self, brightness=0, contrast=0, saturation=0, hue=0):
        super().__init__()
        self.brightness = self._check_input(brightness, "brightness")
        self.contrast = self._check_input(contrast, "contrast")
        self.saturation = self._check_input(saturation, "saturation")
        self.hue = self._check_input(hue, "hue", center=0, bound=(-0.5, 0.5), clip_first_on_zero=False)

    @staticmethod
    def _check_input(value, name, center=1, bound=(0, float("inf")), clip_first_on_zero=True):
        if isinstance(value, numbers.Number):
            if value < 0:
                raise ValueError(f"If {name} is a single number, it must be non negative.")
            value = [center - float(value), center + float(value)]
            if clip_first_on_zero:
                value[0] = max(value[0], 0.0)
        elif isinstance(value, (tuple, list)) and len(value) == 2:
            value = [float(value[0]), float(value[1])]
        else:
            raise TypeError(f"{name} should be a single number or a list/tuple with length 2.")
        if not bound[0] <= value[0] <= value[1] <= bound[1]:
            raise ValueError(f"{name} values should be between {bound}, but got {value}.")
        return None if value[0] == value[1] == center else tuple(value)

    @staticmethod
    def get_params(brightness, contrast, saturation, hue):
        """The order of the four adjustments and each factor (None where not jittered)."""
        fn_idx = torch.randperm(4).tolist()
        b = None if brightness is None else uniform(brightness[0], brightness[1])
        c = None if contrast is None else uniform(contrast[0], contrast[1])
        s = None if saturation is None else uniform(saturation[0], saturation[1])
        h = None if hue is None else uniform(hue[0], hue[1])
        return fn_idx, b, c, s, h

    def forward(self, img):
        fn_idx, b, c, s, h = self.get_params(self.brightness, self.contrast, self.saturation, self.hue)
        for fn_id in fn_idx:
            if fn_id == 0 and b is not None:
                img = F.adjust_brightness(img, b)
            elif fn_id == 1 and c is not None:
                img = F.adjust_contrast(img, c)
            elif fn_id == 2 and s is not None:
                img = F.adjust_saturation(img, s)
            elif fn_id == 3 and h is not None:
                img = F.adjust_hue(img, h)
        return img

    def __repr__(self):
        return (f"{self.__class__.__name__}(brightness={self.brightness}, contrast={self.contrast}, "
                f"saturation={self.saturation}, hue={self.hue})")


class Grayscale(nn.Module):
    """Convert to greyscale with 1 or 3 output channels."""

    def __init__(self, num_output_channels=1):
        super().__init__()
        self.num_output_channels = num_output_channels

    def forward(self, img):
        return F.rgb_to_grayscale(img, num_output_channels=self.num_output_channels)


class RandomGrayscale(nn.Module):
    """Convert to greyscale (keeping the channel count) with probability ``p``."""

    def __init__(self, p=0.1):
        super().__init__()
        self.p = p

    def forward(self, img):
        num_output_channels, _, _ = F.get_dimensions(img)
        if coin(self.p):
            return F.rgb_to_grayscale(img, num_output_channels=num_output_channels)
        return img


class GaussianBlur(nn.Module):
    """Blur with ``kernel_size`` and a sigma drawn from ``sigma`` (a range, or one fixed value)."""

    def __init__(self, kernel_size, sigma=(0.1, 2.0)):
        super().__init__()
        self.kernel_size = setup_size(kernel_size, "Kernel size should be a tuple/list of two integers")
        for ks in self.kernel_size:
            if ks <= 0 or ks % 2 == 0:
                raise ValueError("Kernel size value should be an odd and positive number.")
        if isinstance(sigma, numbers.Number):
            if sigma <= 0:
                raise ValueError("If sigma is a single number, it must be positive.")
            sigma = (sigma, sigma)
        elif isinstance(sigma, Sequence) and len(sigma) == 2:
            if not 0.0 < sigma[0] <= sigma[1]:
                raise ValueError("sigma values should be positive and of the form (min, max).")
        else:
            raise ValueError("sigma should be a single number or a list/tuple with length 2.")
        self.sigma = sigma

    @staticmethod
    def get_params(sigma_min, sigma_max):
        """A sigma drawn uniformly from [sigma_min, sigma_max]."""
        return uniform(sigma_min, sigma_max)

    def forward(self, img):
        sigma = self.get_params(self.sigma[0], self.sigma[1])
        return F.gaussian_blur(img, self.kernel_size, [sigma, sigma])


class _RandomPhotometric(nn.Module):
    def __init__(self, p=0.5):
        super().__init__()
        self.p = p

    def forward(self, img):
        return self._apply(img) if coin(self.p) else img

    def __repr__(self):
        return f"{self.__class__.__name__}(p={self.p})"


class RandomInvert(_RandomPhotometric):
    """Invert the colours with probability ``p``."""

    def _apply(self, img):
        return F.invert(img)


class RandomPosterize(_RandomPhotometric):
    """Posterize to ``bits`` with probability ``p``."""

    def __init__(self, bits, p=0.5):
        super().__init__(p)
        self.bits = bits

    def _apply(self, img):
        return F.posterize(img, self.bits)


class RandomSolarize(_RandomPhotometric):
    """Solarize above ``threshold`` with probability ``p``."""

    def __init__(self, threshold, p=0.5):
        super().__init__(p)
        self.threshold = threshold

    def _apply(self, img):
        return F.solarize(img, self.threshold)


class RandomAdjustSharpness(_RandomPhotometric):
    """Adjust sharpness by ``sharpness_factor`` with probability ``p``."""

    def __init__(self, sharpness_factor, p=0.5):
        super().__init__(p)
        self.sharpness_factor = sharpness_factor

    def _apply(self, img):
        return F.adjust_sharpness(img, self.sharpness_factor)


class RandomAutocontrast(_RandomPhotometric):
    """Autocontrast with probability ``p``."""

    def _apply(self, img):
        return F.autocontrast(img)


class RandomEqualize(_RandomPhotometric):
    """Equalise the histogram with probability ``p``."""

    def _apply(self, img):
        return F.equalize(img)
