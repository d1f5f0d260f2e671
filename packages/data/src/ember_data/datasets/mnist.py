"""MNIST and FashionMNIST from their IDX files (gzip-compressed or raw), never downloaded."""
import gzip
import os

import numpy as np

import ember_tensor

from ..dataset import Dataset

__all__ = ["MNIST", "FashionMNIST", "read_idx"]

# IDX type byte -> NumPy dtype (big-endian, as the format stores it)
_IDX_TYPES = {0x08: np.uint8, 0x09: np.int8, 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}


def read_idx(path):
    """An IDX file (LeCun's MNIST format; ``.gz`` is decompressed) as a NumPy array.

    Header: two zero bytes, a type byte, the number of dimensions, then each dimension as
    a big-endian uint32, then the data.
    """
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        data = f.read()
    if len(data) < 4 or data[0] != 0 or data[1] != 0 or data[2] not in _IDX_TYPES:
        raise ValueError(f"{path} is not an IDX file (bad magic number {data[:4]!r})")
    ndim = data[3]
    shape = tuple(int(n) for n in np.frombuffer(data, dtype=">u4", count=ndim, offset=4))
    dtype = np.dtype(_IDX_TYPES[data[2]])
    array = np.frombuffer(data, dtype=dtype, count=int(np.prod(shape)), offset=4 + 4 * ndim)
    return array.reshape(shape).astype(dtype.newbyteorder("="))


class MNIST(Dataset):
    """MNIST from ``root/MNIST/raw`` (torchvision's layout) or ``root`` itself.

    Samples are ``(image, target)``: a uint8 tensor (28, 28) and an int, each passed
    through ``transform`` / ``target_transform`` when given. The files are
    ``train-images-idx3-ubyte`` / ``train-labels-idx1-ubyte`` (``t10k-*`` for the test
    set), raw or with ``.gz``.
    """

    classes = ["0 - zero", "1 - one", "2 - two", "3 - three", "4 - four", "5 - five", "6 - six",
               "7 - seven", "8 - eight", "9 - nine"]
    _files = {True: ("train-images-idx3-ubyte", "train-labels-idx1-ubyte"),
              False: ("t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte")}

    def __init__(self, root, train=True, transform=None, target_transform=None, download=False):
        self.root = os.path.expanduser(root)
        self.train = train
        self.transform = transform
        self.target_transform = target_transform
        if download:
            raise RuntimeError(f"{type(self).__name__}: ember never downloads (there may be no network); "
                               f"put the IDX files in {self.raw_folder} yourself")
        images, labels = (self._find(name) for name in self._files[train])
        self.data = ember_tensor.from_numpy(read_idx(images))
        self.targets = ember_tensor.from_numpy(read_idx(labels).astype(np.int64))
        if len(self.data) != len(self.targets):
            raise RuntimeError(f"{images} holds {len(self.data)} images but {labels} {len(self.targets)} labels")

    @property
    def raw_folder(self):
        """Where the IDX files are looked for first: ``root/<ClassName>/raw``."""
        return os.path.join(self.root, type(self).__name__, "raw")

    def _find(self, name):
        for folder in (self.raw_folder, self.root):
            for candidate in (name, name + ".gz"):
                path = os.path.join(folder, candidate)
                if os.path.isfile(path):
                    return path
        raise RuntimeError(
            f"{type(self).__name__} {'training' if self.train else 'test'} file {name} (or {name}.gz) not found. "
            f"Put the IDX files in {self.raw_folder} (or in {self.root}); ember does not download datasets.")

    def __getitem__(self, index):
        img, target = self.data[index], int(self.targets[index])
        if self.transform is not None:
            img = self.transform(img)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target

    def __len__(self):
        return len(self.data)

    @property
    def class_to_idx(self):
        """``{class name: index}``."""
        return {c: i for i, c in enumerate(self.classes)}


class FashionMNIST(MNIST):
    """Fashion-MNIST (Zalando): MNIST's file format and layout, clothing classes."""

    classes = ["T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker", "Bag",
               "Ankle boot"]
