"""Loaders for standard dataset files (torchvision's ``datasets`` for ember), never downloading.

- ``MNIST``, ``FashionMNIST``: IDX files, raw or gzip.
- ``CIFAR10``, ``CIFAR100``: the "python version" pickled batches.
- ``ImageFolder``, ``DatasetFolder``: a folder per class (.npy/.pgm/.ppm natively, more with Pillow).
- ``Digits``: the 8x8 handwritten digits, shipped with ember-data.
"""
from .cifar import CIFAR10, CIFAR100
from .digits import Digits, load_digits_arrays
from .folder import DatasetFolder, ImageFolder
from .mnist import MNIST, FashionMNIST, read_idx

__all__ = ["MNIST", "FashionMNIST", "CIFAR10", "CIFAR100", "ImageFolder", "DatasetFolder", "Digits",
           "load_digits_arrays", "read_idx"]
