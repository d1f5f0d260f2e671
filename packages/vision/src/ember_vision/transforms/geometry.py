"""Geometric transforms: resizing, cropping, padding, flipping, rotating, affine maps."""
import math
import numbers
from collections.abc import Sequence

import ember_nn as nn
import ember_tensor as torch

from . import functional as F
from ._utils import check_sequence_input, coin, randint, setup_angle, setup_size, uniform
from .functional._modes import InterpolationMode, as_interpolation_mode

__all__ = ["Resize", "CenterCrop", "Pad", "RandomCrop", "RandomResizedCrop", "RandomHorizontalFlip",
           "RandomVerticalFlip", "RandomRotation", "RandomAffine", "RandomPerspective", "ElasticTransform", "FiveCrop",
           "TenCrop"]


class Resize(nn.Module):
    """Resize to ``size`` (``(h, w)``, or one number for the shorter edge); see ``functional.resize``."""

    def __init__(self, size, interpolation=InterpolationMode.BILINEAR, max_size=None, antialias=True):
        super().__init__()
        if not isinstance(size, (int, Sequence)) and size is not None:
            raise TypeError(f"Size should be int or sequence. Got {type(size)}")
        if isinstance(size, Sequence) and len(size) not in (1, 2):
            raise ValueError("If size is a sequence, it should have 1 or 2 values")
        self.size = size
        self.max_size = max_size
        self.interpolation = as_interpolation_mode(interpolation)
        self.antialias = antialias

    def forward(self, img):
        return F.resize(img, self.size, self.interpolation, self.max_size, self.antialias)

    def __repr__(self):
        return (f"{self.__class__.__name__}(size={self.size}, interpolation={self.interpolation.value}, "
                f"max_size={self.max_size}, antialias={self.antialias})")


class CenterCrop(nn.Module):
    """Crop the centre to ``size`` (int or (h, w)), padding with zeros when the image is smaller."""

    def __init__(self, size):
        super().__init__()
        self.size = setup_size(size, error_msg="Please provide only two dimensions (h, w) for size.")

    def forward(self, img):
        return F.center_crop(img, self.size)

    def __repr__(self):
        return f"{self.__class__.__name__}(size={self.size})"


class Pad(nn.Module):
    """Pad every side; see ``functional.pad``."""

    def __init__(self, padding, fill=0, padding_mode="constant"):
        super().__init__()
        if not isinstance(padding, (numbers.Number, tuple, list)):
            raise TypeError("Got inappropriate padding arg")
        if isinstance(padding, Sequence) and len(padding) not in (1, 2, 4):
            raise ValueError(f"Padding must be an int or a 1, 2, or 4 element tuple, not a {len(padding)} element "
                             "tuple")
        if padding_mode not in ("constant", "edge", "reflect", "symmetric"):
            raise ValueError("Padding mode should be either constant, edge, reflect or symmetric")
        self.padding = padding
        self.fill = fill
        self.padding_mode = padding_mode

    def forward(self, img):
        return F.pad(img, self.padding, self.fill, self.padding_mode)


class RandomCrop(nn.Module):
    """Crop ``size`` at a random place, after optional ``padding`` (and ``pad_if_needed``)."""

    @staticmethod
    def get_params(img, output_size):
        """A random ``(top, left, height, width)`` of size ``output_size``."""
        _, h, w = F.get_dimensions(img)
        th, tw = output_size
        if h < th or w < tw:
            raise ValueError(f"Required crop size {(th, tw)} is larger than input image size {(h, w)}")
        if w == tw and h == th:
            return 0, 0, h, w
        return randint(0, h - th + 1), randint(0, w - tw + 1), th, tw

    def __init__(self, size, padding=None, pad_if_needed=False, fill=0, padding_mode="constant"):
        super().__init__()
        self.size = tuple(setup_size(size, error_msg="Please provide only two dimensions (h, w) for size."))
        self.padding = padding
        self.pad_if_needed = pad_if_needed
        self.fill = fill
        self.padding_mode = padding_mode

    def forward(self, img):
        if self.padding is not None:
            img = F.pad(img, self.padding, self.fill, self.padding_mode)
        _, height, width = F.get_dimensions(img)
        if self.pad_if_needed and width < self.size[1]:
            img = F.pad(img, [self.size[1] - width, 0], self.fill, self.padding_mode)
        if self.pad_if_needed and height < self.size[0]:
            img = F.pad(img, [0, self.size[0] - height], self.fill, self.padding_mode)
        i, j, h, w = self.get_params(img, self.size)
        return F.crop(img, i, j, h, w)

    def __repr__(self):
        return f"{self.__class__.__name__}(size={self.size}, padding={self.padding})"


class RandomResizedCrop(nn.Module):
    """Crop a random area (``scale`` of the image) of random aspect ``ratio``, resized to ``size``
    (the Inception training crop)."""

    def __init__(self, size, scale=(0.08, 1.0), ratio=(3.0 / 4.0, 4.0 / 3.0), interpolation=InterpolationMode.BILINEAR,
                 antialias=True):
        super().__init__()
        self.size = setup_size(size, error_msg="Please provide only two dimensions (h, w) for size.")
        if not isinstance(scale, Sequence):
            raise TypeError("Scale should be a sequence")
        if not isinstance(ratio, Sequence):
            raise TypeError("Ratio should be a sequence")
        self.interpolation = as_interpolation_mode(interpolation)
        self.antialias = antialias
        self.scale = scale
        self.ratio = ratio

    @staticmethod
    def get_params(img, scale, ratio):
        """``(top, left, height, width)`` of a random crop; ten tries, then a central crop."""
        _, height, width = F.get_dimensions(img)
        area = height * width
        log_ratio = (math.log(ratio[0]), math.log(ratio[1]))
        for _ in range(10):
            target_area = area * uniform(scale[0], scale[1])
            aspect_ratio = math.exp(uniform(log_ratio[0], log_ratio[1]))
            w = int(round(math.sqrt(target_area * aspect_ratio)))
            h = int(round(math.sqrt(target_area / aspect_ratio)))
            if 0 < w <= width and 0 < h <= height:
                return randint(0, height - h + 1), randint(0, width - w + 1), h, w
        in_ratio = float(width) / float(height)
        if in_ratio < min(ratio):
            w, h = width, int(round(width / min(ratio)))
        elif in_ratio > max(ratio):
            h, w = height, int(round(height * max(ratio)))
        else:
            w, h = width, height
        return (height - h) // 2, (width - w) // 2, h, w

    def forward(self, img):
        i, j, h, w = self.get_params(img, self.scale, self.ratio)
        return F.resized_crop(img, i, j, h, w, self.size, self.interpolation, antialias=self.antialias)

    def __repr__(self):
        return (f"{self.__class__.__name__}(size={self.size}, scale={tuple(round(s, 4) for s in self.scale)}, "
                f"ratio={tuple(round(r, 4) for r in self.ratio)}, interpolation={self.interpolation.value}, "
                f"antialias={self.antialias})")


class RandomHorizontalFlip(nn.Module):
    """Mirror left-right with probability ``p``."""

    def __init__(self, p=0.5):
        super().__init__()
        self.p = p

    def forward(self, img):
        return F.hflip(img) if coin(self.p) else img

    def __repr__(self):
        return f"{self.__class__.__name__}(p={self.p})"


class RandomVerticalFlip(nn.Module):
    """Mirror top-bottom with probability ``p``."""

    def __init__(self, p=0.5):
        super().__init__()
        self.p = p

    def forward(self, img):
        return F.vflip(img) if coin(self.p) else img

    def __repr__(self):
        return f"{self.__class__.__name__}(p={self.p})"


def _tensor_fill(img, fill):
    # Tensors take one fill value per channel.
    if isinstance(img, torch.Tensor):
        channels = F.get_image_num_channels(img)
        if isinstance(fill, (int, float)):
            return [float(fill)] * channels
        return [float(f) for f in fill]
    return fill


class RandomRotation(nn.Module):
    """Rotate by an angle drawn from ``degrees`` (d -> (-d, d))."""

    def __init__(self, degrees, interpolation=InterpolationMode.NEAREST, expand=False, center=None, fill=0):
        super().__init__()
        self.interpolation = as_interpolation_mode(interpolation)
        self.degrees = setup_angle(degrees, name="degrees", req_sizes=(2,))
        if center is not None:
            check_sequence_input(center, "center", req_sizes=(2,))
        self.center = center
        self.expand = expand
        if fill is None:
            fill = 0
        self.fill = fill

    @staticmethod
    def get_params(degrees):
        """A random angle in ``degrees``."""
        return uniform(degrees[0], degrees[1])

    def forward(self, img):
        angle = self.get_params(self.degrees)
        return F.rotate(img, angle, self.interpolation, self.expand, self.center, _tensor_fill(img, self.fill))


class RandomAffine(nn.Module):
    """A random affine map: rotation from ``degrees``, translation up to ``translate`` (fractions
    of width and height), ``scale`` range, ``shear`` range(s) in degrees."""

    def __init__(self, degrees, translate=None, scale=None, shear=None, interpolation=InterpolationMode.NEAREST,
                 fill=0, center=None):
        super().__init__()
        self.interpolation = as_interpolation_mode(interpolation)
        self.degrees = setup_angle(degrees, name="degrees", req_sizes=(2,))
        if translate is not None:
            check_sequence_input(translate, "translate", req_sizes=(2,))
            for t in translate:
                if not 0.0 <= t <= 1.0:
                    raise ValueError("translation values should be between 0 and 1")
        self.translate = translate
        if scale is not None:
            check_sequence_input(scale, "scale", req_sizes=(2,))
            for s in scale:
                if s <= 0:
                    raise ValueError("scale values should be positive")
        self.scale = scale
        self.shear = setup_angle(shear, name="shear", req_sizes=(2, 4)) if shear is not None else shear
        self.fill = 0 if fill is None else fill
        if center is not None:
            check_sequence_input(center, "center", req_sizes=(2,))
        self.center = center

    @staticmethod
    def get_params(degrees, translate, scale_ranges, shears, img_size):
        """``(angle, (tx, ty), scale, (shear_x, shear_y))`` drawn from the ranges; ``img_size = [w, h]``."""
        angle = uniform(degrees[0], degrees[1])
        if translate is not None:
            max_dx = float(translate[0] * img_size[0])
            max_dy = float(translate[1] * img_size[1])
            translations = (int(round(uniform(-max_dx, max_dx))), int(round(uniform(-max_dy, max_dy))))
        else:
            translations = (0, 0)
        scale = uniform(scale_ranges[0], scale_ranges[1]) if scale_ranges is not None else 1.0
        shear_x = shear_y = 0.0
        if shears is not None:
            shear_x = uniform(shears[0], shears[1])
            if len(shears) == 4:
                shear_y = uniform(shears[2], shears[3])
        return angle, translations, scale, (shear_x, shear_y)

    def forward(self, img):
        _, height, width = F.get_dimensions(img)
        ret = self.get_params(self.degrees, self.translate, self.scale, self.shear, [width, height])
        return F.affine(img, *ret, interpolation=self.interpolation, fill=_tensor_fill(img, self.fill),
                        center=self.center)


class RandomPerspective(nn.Module):
    """With probability ``p``, move each corner inwards by up to ``distortion_scale`` of half
    the image and warp the image to match."""

    def __init__(self, distortion_scale=0.5, p=0.5, interpolation=InterpolationMode.BILINEAR, fill=0):
        super().__init__()
        self.p = p
        self.interpolation = as_interpolation_mode(interpolation)
        self.distortion_scale = distortion_scale
        self.fill = 0 if fill is None else fill

    @staticmethod
    def get_params(width, height, distortion_scale):
        """``(startpoints, endpoints)``: the image's corners and where they go."""
        half_height, half_width = height // 2, width // 2
        dw, dh = int(distortion_scale * half_width), int(distortion_scale * half_height)
        topleft = [randint(0, dw + 1), randint(0, dh + 1)]
        topright = [randint(width - dw - 1, width), randint(0, dh + 1)]
        botright = [randint(width - dw - 1, width), randint(height - dh - 1, height)]
        botleft = [randint(0, dw + 1), randint(height - dh - 1, height)]
        startpoints = [[0, 0], [width - 1, 0], [width - 1, height - 1], [0, height - 1]]
        return startpoints, [topleft, topright, botright, botleft]

    def forward(self, img):
        _, height, width = F.get_dimensions(img)
        if coin(self.p):
            startpoints, endpoints = self.get_params(width, height, self.distortion_scale)
            return F.perspective(img, startpoints, endpoints, self.interpolation, _tensor_fill(img, self.fill))
        return img

    def __repr__(self):
        return f"{self.__class__.__name__}(p={self.p})"


class ElasticTransform(nn.Module):
    """Warp the image by a random displacement field: uniform noise in [-1, 1] smoothed by a
    Gaussian of ``sigma`` pixels and scaled by ``alpha`` pixels (per axis, or one for both)."""

    def __init__(self, alpha=50.0, sigma=5.0, interpolation=InterpolationMode.BILINEAR, fill=0):
        super().__init__()
        self.alpha = self._pair(alpha, "alpha")
        self.sigma = self._pair(sigma, "sigma")
        self.interpolation = as_interpolation_mode(interpolation)
        if isinstance(fill, (int, float)):
            fill = [float(fill)]
        elif isinstance(fill, (list, tuple)):
            fill = [float(f) for f in fill]
        else:
            raise TypeError(f"fill should be int or float or a list or tuple of them. Got {type(fill)}")
        self.fill = fill

    @staticmethod
    def _pair(value, name):
        if not isinstance(value, (float, Sequence)):
            raise TypeError(f"{name} should be float or a sequence of floats. Got {type(value)}")
        if isinstance(value, Sequence):
            if len(value) not in (1, 2):
                raise ValueError(f"If {name} is a sequence its length should be 2. Got {len(value)}")
            if not all(isinstance(v, float) for v in value):
                raise TypeError(f"{name} should be a sequence of floats. Got {value}")
            return [float(value[0]), float(value[-1])]
        return [float(value), float(value)]

    @staticmethod
    def get_params(alpha, sigma, size):
        """A (1, H, W, 2) displacement for an image of ``size = [H, W]``."""
        fields = []
        for axis in (0, 1):
            d = torch.rand([1, 1] + list(size)) * 2 - 1
            if sigma[axis] > 0.0:
                k = int(8 * sigma[axis] + 1)
                k += 1 - k % 2  # odd
                d = F.gaussian_blur(d, [k, k], sigma)
            fields.append(d * alpha[axis] / size[1 - axis])
        return torch.cat(fields, 1).permute([0, 2, 3, 1])

    def forward(self, tensor):
        _, height, width = F.get_dimensions(tensor)
        displacement = self.get_params(self.alpha, self.sigma, [height, width])
        return F.elastic_transform(tensor, displacement, self.interpolation, self.fill)

    def __repr__(self):
        return (f"{self.__class__.__name__}(alpha={self.alpha}, sigma={self.sigma}, "
                f"interpolation={self.interpolation}, fill={self.fill})")


class FiveCrop(nn.Module):
    """The four corners and the centre, as a tuple of five images."""

    def __init__(self, size):
        super().__init__()
        self.size = setup_size(size, error_msg="Please provide only two dimensions (h, w) for size.")

    def forward(self, img):
        return F.five_crop(img, self.size)


class TenCrop(nn.Module):
    """``FiveCrop`` of the image and of its flip."""

    def __init__(self, size, vertical_flip=False):
        super().__init__()
        self.size = setup_size(size, error_msg="Please provide only two dimensions (h, w) for size.")
        self.vertical_flip = vertical_flip

    def forward(self, img):
        return F.ten_crop(img, self.size, self.vertical_flip)
