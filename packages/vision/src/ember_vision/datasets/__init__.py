"""torchvision's ``datasets``: MNIST, FashionMNIST, KMNIST, EMNIST, QMNIST, CIFAR10/100, SVHN, STL10,
USPS, ImageFolder, DatasetFolder and FakeData, in torchvision's folder layouts, reading the
files with ember-data's readers. ``download=True`` fetches a missing file when a network
answers; offline, the error names the URL and where to put the file."""
from . import utils
from .cifar import CIFAR10, CIFAR100
from .fakedata import FakeData
from .folder import IMG_EXTENSIONS, DatasetFolder, ImageFolder, default_loader, pil_loader
from .mnist import EMNIST, MNIST, KMNIST, QMNIST, FashionMNIST
from .stl10 import STL10
from .svhn import SVHN
from .usps import USPS
from .vision import StandardTransform, VisionDataset

__all__ = ["MNIST", "FashionMNIST", "KMNIST", "EMNIST", "QMNIST", "CIFAR10", "CIFAR100", "SVHN", "STL10", "USPS", "ImageFolder",
           "DatasetFolder", "FakeData", "VisionDataset", "StandardTransform", "IMG_EXTENSIONS", "default_loader",
           "pil_loader", "utils"]
