"""Transforms that combine transforms: Compose, RandomApply, RandomChoice, RandomOrder, Lambda."""
import random

import ember_nn as nn

from ._utils import coin

__all__ = ["Compose", "RandomTransforms", "RandomApply", "RandomChoice", "RandomOrder", "Lambda"]


class Compose:
    """Apply ``transforms`` in order.

    >>> Compose([lambda x: x + 1, lambda x: x * 2])(3)
    8
    """

    def __init__(self, transforms):
        self.transforms = transforms

    def __call__(self, img):
        for t in self.transforms:
            img = t(img)
        return img

    def __repr__(self):
        lines = "".join(f"\n    {t}" for t in self.transforms)
        return f"{self.__class__.__name__}({lines}\n)"


class Lambda:
    """A user function as a transform."""

    def __init__(self, lambd):
        if not callable(lambd):
            raise TypeError(f"Argument lambd should be callable, got {repr(type(lambd).__name__)}")
        self.lambd = lambd

    def __call__(self, img):
        return self.lambd(img)

    def __repr__(self):
        return f"{self.__class__.__name__}()"


class RandomTransforms:
    """Base of the transforms that pick from a list."""

    def __init__(self, transforms):
        if not isinstance(transforms, (list, tuple)):
            raise TypeError("Argument transforms should be a sequence")
        self.transforms = transforms

    def __call__(self, *args, **kwargs):
        raise NotImplementedError()

    def __repr__(self):
        lines = "".join(f"\n    {t}" for t in self.transforms)
        return f"{self.__class__.__name__}({lines}\n)"


class RandomApply(nn.Module):
    """Apply all of ``transforms`` with probability ``p`` (default 0.5), or none."""

    def __init__(self, transforms, p=0.5):
        super().__init__()
        self.transforms = transforms
        self.p = p

    def forward(self, img):
        if not coin(self.p):
            return img
        for t in self.transforms:
            img = t(img)
        return img

    def __repr__(self):
        lines = "".join(f"\n    {t}" for t in self.transforms)
        return f"{self.__class__.__name__}(\n    p={self.p}{lines}\n)"


class RandomOrder(RandomTransforms):
    """Apply ``transforms`` in a random order (Python's ``random``, as torchvision)."""

    def __call__(self, img):
        order = list(range(len(self.transforms)))
        random.shuffle(order)
        for i in order:
            img = self.transforms[i](img)
        return img


class RandomChoice(RandomTransforms):
    """Apply one of ``transforms``, chosen with weights ``p`` (Python's ``random``, as torchvision)."""

    def __init__(self, transforms, p=None):
        super().__init__(transforms)
        if p is not None and not isinstance(p, (list, tuple)):
            raise TypeError("Argument p should be a sequence")
        self.p = p

    def __call__(self, *args):
        t = random.choices(self.transforms, weights=self.p)[0]
        return t(*args)

    def __repr__(self):
        return f"{super().__repr__()}(p={self.p})"
