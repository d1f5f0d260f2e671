"""Learned and random augmentation policies: AutoAugment (ImageNet, CIFAR10, SVHN policies),
RandAugment and TrivialAugmentWide, on PIL images and uint8 tensors. Draws use ember's
generator, in torchvision's order."""
import math
from enum import Enum

import numpy as np

import ember_nn as nn
import ember_tensor as torch

from . import functional as F
from .functional import InterpolationMode

__all__ = ["AutoAugmentPolicy", "AutoAugment", "RandAugment", "TrivialAugmentWide"]


def _apply_op(img, op_name, magnitude, interpolation, fill):
    if op_name == "ShearX":
        # center=[0, 0]: shear about the top-left corner, as the reference implementations do.
        return F.affine(img, angle=0.0, translate=[0, 0], scale=1.0, shear=[math.degrees(math.atan(magnitude)), 0.0],
                        interpolation=interpolation, fill=fill, center=[0, 0])
    if op_name == "ShearY":
        return F.affine(img, angle=0.0, translate=[0, 0], scale=1.0, shear=[0.0, math.degrees(math.atan(magnitude))],
                        interpolation=interpolation, fill=fill, center=[0, 0])
    if op_name == "TranslateX":
        return F.affine(img, angle=0.0, translate=[int(magnitude), 0], scale=1.0, interpolation=interpolation,
                        shear=[0.0, 0.0], fill=fill)
    if op_name == "TranslateY":
        return F.affine(img, angle=0.0, translate=[0, int(magnitude)], scale=1.0, interpolation=interpolation,
                        shear=[0.0, 0.0], fill=fill)
    if op_name == "Rotate":
        return F.rotate(img, magnitude, interpolation=interpolation, fill=fill)
    simple = {"Brightness": lambda: F.adjust_brightness(img, 1.0 + magnitude),
              "Color": lambda: F.adjust_saturation(img, 1.0 + magnitude),
              "Contrast": lambda: F.adjust_contrast(img, 1.0 + magnitude),
              "Sharpness": lambda: F.adjust_sharpness(img, 1.0 + magnitude),
              "Posterize": lambda: F.posterize(img, int(magnitude)),
              "Solarize": lambda: F.solarize(img, magnitude),
              "AutoContrast": lambda: F.autocontrast(img), "Equalize": lambda: F.equalize(img),
              "Invert": lambda: F.invert(img), "Identity": lambda: img}
    if op_name not in simple:
        raise ValueError(f"The provided operator {op_name} is not recognized.")
    return simple[op_name]()


def _tensor_fill(img, fill):
    if isinstance(img, torch.Tensor):
        channels = F.get_dimensions(img)[0]
        if isinstance(fill, (int, float)):
            return [float(fill)] * channels
        if fill is not None:
            return [float(f) for f in fill]
    return fill


def _randint(high):
    return int(torch.randint(high, (1,)).item())


class AutoAugmentPolicy(Enum):
    """The policies learned on ImageNet, CIFAR10 and SVHN."""

    IMAGENET = "imagenet"
    CIFAR10 = "cifar10"
    SVHN = "svhn"


# Each policy: 25 sub-policies of two (operation, probability, magnitude bin) steps.
_POLICIES = {
    AutoAugmentPolicy.IMAGENET: [
        (("Posterize", 0.4, 8), ("Rotate", 0.6, 9)), (("Solarize", 0.6, 5), ("AutoContrast", 0.6, None)),
        (("Equalize", 0.8, None), ("Equalize", 0.6, None)), (("Posterize", 0.6, 7), ("Posterize", 0.6, 6)),
        (("Equalize", 0.4, None), ("Solarize", 0.2, 4)), (("Equalize", 0.4, None), ("Rotate", 0.8, 8)),
        (("Solarize", 0.6, 3), ("Equalize", 0.6, None)), (("Posterize", 0.8, 5), ("Equalize", 1.0, None)),
        (("Rotate", 0.2, 3), ("Solarize", 0.6, 8)), (("Equalize", 0.6, None), ("Posterize", 0.4, 6)),
        (("Rotate", 0.8, 8), ("Color", 0.4, 0)), (("Rotate", 0.4, 9), ("Equalize", 0.6, None)),
        (("Equalize", 0.0, None), ("Equalize", 0.8, None)), (("Invert", 0.6, None), ("Equalize", 1.0, None)),
        (("Color", 0.6, 4), ("Contrast", 1.0, 8)), (("Rotate", 0.8, 8), ("Color", 1.0, 2)),
        (("Color", 0.8, 8), ("Solarize", 0.8, 7)), (("Sharpness", 0.4, 7), ("Invert", 0.6, None)),
        (("ShearX", 0.6, 5), ("Equalize", 1.0, None)), (("Color", 0.4, 0), ("Equalize", 0.6, None)),
        (("Equalize", 0.4, None), ("Solarize", 0.2, 4)), (("Solarize", 0.6, 5), ("AutoContrast", 0.6, None)),
        (("Invert", 0.6, None), ("Equalize", 1.0, None)), (("Color", 0.6, 4), ("Contrast", 1.0, 8)),
        (("Equalize", 0.8, None), ("Equalize", 0.6, None))],
    AutoAugmentPolicy.CIFAR10: [
        (("Invert", 0.1, None), ("Contrast", 0.2, 6)), (("Rotate", 0.7, 2), ("TranslateX", 0.3, 9)),
        (("Sharpness", 0.8, 1), ("Sharpness", 0.9, 3)), (("ShearY", 0.5, 8), ("TranslateY", 0.7, 9)),
        (("AutoContrast", 0.5, None), ("Equalize", 0.9, None)), (("ShearY", 0.2, 7), ("Posterize", 0.3, 7)),
        (("Color", 0.4, 3), ("Brightness", 0.6, 7)), (("Sharpness", 0.3, 9), ("Brightness", 0.7, 9)),
        (("Equalize", 0.6, None), ("Equalize", 0.5, None)), (("Contrast", 0.6, 7), ("Sharpness", 0.6, 5)),
        (("Color", 0.7, 7), ("TranslateX", 0.5, 8)), (("Equalize", 0.3, None), ("AutoContrast", 0.4, None)),
        (("TranslateY", 0.4, 3), ("Sharpness", 0.2, 6)), (("Brightness", 0.9, 6), ("Color", 0.2, 8)),
        (("Solarize", 0.5, 2), ("Invert", 0.0, None)), (("Equalize", 0.2, None), ("AutoContrast", 0.6, None)),
        (("Equalize", 0.2, None), ("Equalize", 0.6, None)), (("Color", 0.9, 9), ("Equalize", 0.6, None)),
        (("AutoContrast", 0.8, None), ("Solarize", 0.2, 8)), (("Brightness", 0.1, 3), ("Color", 0.7, 0)),
        (("Solarize", 0.4, 5), ("AutoContrast", 0.9, None)), (("TranslateY", 0.9, 9), ("TranslateY", 0.7, 9)),
        (("AutoContrast", 0.9, None), ("Solarize", 0.8, 3)), (("Equalize", 0.8, None), ("Invert", 0.1, None)),
        (("TranslateY", 0.7, 9), ("AutoContrast", 0.9, None))],
    AutoAugmentPolicy.SVHN: [
        (("ShearX", 0.9, 4), ("Invert", 0.2, None)), (("ShearY", 0.9, 8), ("Invert", 0.7, None)),
        (("Equalize", 0.6, None), ("Solarize", 0.6, 6)), (("Invert", 0.9, None), ("Equalize", 0.6, None)),
        (("Equalize", 0.6, None), ("Rotate", 0.9, 3)), (("ShearX", 0.9, 4), ("AutoContrast", 0.8, None)),
        (("ShearY", 0.9, 8), ("Invert", 0.4, None)), (("ShearY", 0.9, 5), ("Solarize", 0.2, 6)),
        (("Invert", 0.9, None), ("AutoContrast", 0.8, None)), (("Equalize", 0.6, None), ("Rotate", 0.9, 3)),
        (("ShearX", 0.9, 4), ("Solarize", 0.3, 3)), (("ShearY", 0.8, 8), ("Invert", 0.7, None)),
        (("Equalize", 0.9, None), ("TranslateY", 0.6, 6)), (("Invert", 0.9, None), ("Equalize", 0.6, None)),
        (("Contrast", 0.3, 3), ("Rotate", 0.8, 4)), (("Invert", 0.8, None), ("TranslateY", 0.0, 2)),
        (("ShearY", 0.7, 6), ("Solarize", 0.4, 8)), (("Invert", 0.6, None), ("Rotate", 0.8, 4)),
        (("ShearY", 0.3, 7), ("TranslateX", 0.9, 3)), (("ShearX", 0.1, 6), ("Invert", 0.6, None)),
        (("Solarize", 0.7, 2), ("TranslateY", 0.6, 7)), (("ShearY", 0.8, 4), ("Invert", 0.8, None)),
        (("ShearX", 0.7, 9), ("TranslateY", 0.8, 3)), (("ShearY", 0.8, 5), ("AutoContrast", 0.7, None)),
        (("ShearX", 0.7, 2), ("Invert", 0.1, None))],
}


def _posterize_bits(num_bins, span):
    return (8 - np.round(np.arange(num_bins) / ((num_bins - 1) / span))).astype(int)


def _magnitude_space(num_bins, shear, translate_xy, rotate, enhance, posterize_span, identity, invert):
    """``{operation: (magnitudes or None, signed)}`` in torchvision's order (the order is drawn from)."""
    space = {"Identity": (None, False)} if identity else {}
    space.update({
        "ShearX": (np.linspace(0.0, shear, num_bins), True), "ShearY": (np.linspace(0.0, shear, num_bins), True),
        "TranslateX": (np.linspace(0.0, translate_xy[0], num_bins), True),
        "TranslateY": (np.linspace(0.0, translate_xy[1], num_bins), True),
        "Rotate": (np.linspace(0.0, rotate, num_bins), True),
        "Brightness": (np.linspace(0.0, enhance, num_bins), True), "Color": (np.linspace(0.0, enhance, num_bins), True),
        "Contrast": (np.linspace(0.0, enhance, num_bins), True),
        "Sharpness": (np.linspace(0.0, enhance, num_bins), True),
        "Posterize": (_posterize_bits(num_bins, posterize_span), False),
        "Solarize": (np.linspace(255.0, 0.0, num_bins), False),
        "AutoContrast": (None, False), "Equalize": (None, False)})
    if invert:
        space["Invert"] = (None, False)
    return space


class AutoAugment(nn.Module):
    """AutoAugment (Cubuk et al. 2018): one of the policy's 25 sub-policies, each step applied
    with its probability and magnitude.

    Args:
        policy: an ``AutoAugmentPolicy``; interpolation: for the geometric steps.
        fill: the value of pixels moved in from outside the image.
    """

    def __init__(self, policy=AutoAugmentPolicy.IMAGENET, interpolation=InterpolationMode.NEAREST, fill=None):
        super().__init__()
        if policy not in _POLICIES:
            raise ValueError(f"The provided policy {policy} is not recognized.")
        self.policy = policy
        self.interpolation = interpolation
        self.fill = fill
        self.policies = _POLICIES[policy]

    @staticmethod
    def get_params(transform_num):
        """``(sub-policy index, two probabilities, two signs)`` drawn with ember's generator."""
        policy_id = _randint(transform_num)
        probs = torch.rand((2,)).tolist()
        signs = torch.randint(2, (2,)).tolist()
        return policy_id, probs, signs

    def forward(self, img):
        fill = _tensor_fill(img, self.fill)
        _, height, width = F.get_dimensions(img)
        transform_id, probs, signs = self.get_params(len(self.policies))
        translate = (150.0 / 331.0 * width, 150.0 / 331.0 * height)
        op_meta = _magnitude_space(10, 0.3, translate, 30.0, 0.9, 4, identity=False, invert=True)
        for i, (op_name, p, magnitude_id) in enumerate(self.policies[transform_id]):
            if probs[i] <= p:
                magnitudes, signed = op_meta[op_name]
                magnitude = float(magnitudes[magnitude_id]) if magnitude_id is not None else 0.0
                if signed and signs[i] == 0:
                    magnitude *= -1.0
                img = _apply_op(img, op_name, magnitude, interpolation=self.interpolation, fill=fill)
        return img

    def __repr__(self):
        return f"{self.__class__.__name__}(policy={self.policy}, fill={self.fill})"


class RandAugment(nn.Module):
    """RandAugment (Cubuk et al. 2019): ``num_ops`` random operations at one ``magnitude``
    (a bin out of ``num_magnitude_bins``)."""

    def __init__(self, num_ops=2, magnitude=9, num_magnitude_bins=31, interpolation=InterpolationMode.NEAREST,
                 fill=None):
        super().__init__()
        self.num_ops = num_ops
        self.magnitude = magnitude
        self.num_magnitude_bins = num_magnitude_bins
        self.interpolation = interpolation
        self.fill = fill

    def forward(self, img):
        fill = _tensor_fill(img, self.fill)
        _, height, width = F.get_dimensions(img)
        translate = (150.0 / 331.0 * width, 150.0 / 331.0 * height)
        op_meta = _magnitude_space(self.num_magnitude_bins, 0.3, translate, 30.0, 0.9, 4, identity=True, invert=False)
        names = list(op_meta)
        for _ in range(self.num_ops):
            op_name = names[_randint(len(names))]
            magnitudes, signed = op_meta[op_name]
            magnitude = float(magnitudes[self.magnitude]) if magnitudes is not None else 0.0
            if signed and _randint(2):
                magnitude *= -1.0
            img = _apply_op(img, op_name, magnitude, interpolation=self.interpolation, fill=fill)
        return img

    def __repr__(self):
        return (f"{self.__class__.__name__}(num_ops={self.num_ops}, magnitude={self.magnitude}, "
                f"num_magnitude_bins={self.num_magnitude_bins}, interpolation={self.interpolation}, fill={self.fill})")


class TrivialAugmentWide(nn.Module):
    """TrivialAugment (Müller & Hutter 2021): one random operation at a random magnitude, from
    the wide ranges."""

    def __init__(self, num_magnitude_bins=31, interpolation=InterpolationMode.NEAREST, fill=None):
        super().__init__()
        self.num_magnitude_bins = num_magnitude_bins
        self.interpolation = interpolation
        self.fill = fill

    def forward(self, img):
        fill = _tensor_fill(img, self.fill)
        op_meta = _magnitude_space(self.num_magnitude_bins, 0.99, (32.0, 32.0), 135.0, 0.99, 6, identity=True,
                                   invert=False)
        names = list(op_meta)
        op_name = names[_randint(len(names))]
        magnitudes, signed = op_meta[op_name]
        magnitude = float(magnitudes[_randint(len(magnitudes))]) if magnitudes is not None else 0.0
        if signed and _randint(2):
            magnitude *= -1.0
        return _apply_op(img, op_name, magnitude, interpolation=self.interpolation, fill=fill)

    def __repr__(self):
        return (f"{self.__class__.__name__}(num_magnitude_bins={self.num_magnitude_bins}, "
                f"interpolation={self.interpolation}, fill={self.fill})")
