"""RandomErasing (Zhong et al. 2017): blank a random rectangle of a tensor image."""
import math
import numbers
import warnings

import ember_nn as nn
import ember_tensor as torch

from . import functional as F
from ._utils import coin, randint, uniform

__all__ = ["RandomErasing"]


class RandomErasing(nn.Module):
    """With probability ``p``, overwrite a random rectangle (area ``scale``, aspect ``ratio``)
    with ``value``: a number, per-channel values, or ``"random"`` (normal noise)."""

    def __init__(self, p=0.5, scale=(0.02, 0.33), ratio=(0.3, 3.3), value=0, inplace=False):
        super().__init__()
        if not isinstance(value, (numbers.Number, str, tuple, list)):
            raise TypeError("Argument value should be either a number or str or a sequence")
        if isinstance(value, str) and value != "random":
            raise ValueError("If value is str, it should be 'random'")
        if scale[0] > scale[1] or ratio[0] > ratio[1]:
            warnings.warn("Scale and ratio should be of kind (min, max)")
        if scale[0] < 0 or scale[1] > 1:
            raise ValueError("Scale should be between 0 and 1")
        if p < 0 or p > 1:
            raise ValueError("Random erasing probability should be between 0 and 1")
        self.p = p
        self.scale = scale
        self.ratio = ratio
        self.value = value
        self.inplace = inplace

    @staticmethod
    def get_params(img, scale, ratio, value=None):
        """``(i, j, h, w, v)`` of the rectangle and what to write; ten tries, then the image unchanged."""
        img_c, img_h, img_w = img.shape[-3], img.shape[-2], img.shape[-1]
        area = img_h * img_w
        log_ratio = (math.log(ratio[0]), math.log(ratio[1]))
        for _ in range(10):
            erase_area = area * uniform(scale[0], scale[1])
            aspect_ratio = math.exp(uniform(log_ratio[0], log_ratio[1]))
            h = int(round(math.sqrt(erase_area * aspect_ratio)))
            w = int(round(math.sqrt(erase_area / aspect_ratio)))
            if not (h < img_h and w < img_w):
                continue
            if value is None:
                v = torch.empty([img_c, h, w], dtype=torch.float32, device=img.device).normal_()
            else:
                v = torch.tensor(value, device=img.device)[:, None, None]
            return randint(0, img_h - h + 1), randint(0, img_w - w + 1), h, w, v
        return 0, 0, img_h, img_w, img

    def forward(self, img):
        if not coin(self.p):
            return img
        if isinstance(self.value, (int, float)):
            value = [float(self.value)]
        elif isinstance(self.value, str):
            value = None
        else:
            value = [float(v) for v in self.value]
        if value is not None and len(value) not in (1, img.shape[-3]):
            raise ValueError("If value is a sequence, it should have either a single value or "
                             f"{img.shape[-3]} (number of input channels)")
        x, y, h, w, v = self.get_params(img, scale=self.scale, ratio=self.ratio, value=value)
        return F.erase(img, x, y, h, w, v, self.inplace)
