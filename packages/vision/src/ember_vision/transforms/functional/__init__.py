"""torchvision's ``transforms.functional``: each function takes a PIL image or an ember
tensor image (..., C, H, W) and does what torchvision does to that kind of image (Pillow
for PIL images, tensor arithmetic with ember ops for tensors).

The functions live by family: ``conversion`` (to and from tensors, dtypes, normalize),
``geometry`` (resize, crop, pad, flip, rotate, affine, perspective) and ``color`` (colour
adjustments, greyscale, blur, the photometric operations); the PIL and tensor kernels
beneath them are ``_pil``, ``_tensor_geometry``, ``_tensor_color`` and ``_tensor_common``.

>>> import ember_tensor as torch
>>> get_dimensions(torch.zeros(3, 4, 5))
[3, 4, 5]
"""
from ._modes import InterpolationMode
from .color import (adjust_brightness, adjust_contrast, adjust_gamma, adjust_hue, adjust_saturation, adjust_sharpness,
                    autocontrast, equalize, gaussian_blur, invert, posterize, rgb_to_grayscale, solarize, to_grayscale)
from .conversion import (convert_image_dtype, erase, get_dimensions, get_image_num_channels, get_image_size,
                         normalize, pil_to_tensor, to_pil_image, to_tensor)
from .geometry import (affine, center_crop, crop, elastic_transform, five_crop, hflip, pad, perspective, resize,
                       resized_crop, rotate, ten_crop, vflip)

__all__ = ["InterpolationMode", "get_dimensions", "get_image_size", "get_image_num_channels", "to_tensor",
           "pil_to_tensor", "to_pil_image", "convert_image_dtype", "normalize", "resize", "pad", "crop",
           "center_crop", "resized_crop", "hflip", "vflip", "five_crop", "ten_crop", "adjust_brightness",
           "adjust_contrast", "adjust_saturation", "adjust_hue", "adjust_gamma", "rotate", "affine", "perspective",
           "to_grayscale", "rgb_to_grayscale", "erase", "gaussian_blur", "invert", "posterize", "solarize",
           "adjust_sharpness", "autocontrast", "equalize", "elastic_transform"]
