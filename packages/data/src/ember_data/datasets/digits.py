"""The 8x8 handwritten digits (1797 images, UCI / scikit-learn's ``load_digits``), bundled,
so examples and tests can train on real data with no network and no extra dependency."""
import gzip
import os

import numpy as np

import ember_tensor

from ..dataset import Dataset

__all__ = ["Digits", "load_digits_arrays"]

_DATA = os.path.join(os.path.dirname(__file__), "_data", "digits.csv.gz")


def load_digits_arrays():
    """``(images, targets)``: uint8 (1797, 8, 8) with values 0..16, and int64 (1797,)."""
    with gzip.open(_DATA, "rt") as f:
        table = np.loadtxt(f, delimiter=",", dtype=np.int64)
    return table[:, :-1].reshape(-1, 8, 8).astype(np.uint8), table[:, -1]


class Digits(Dataset):
    """The bundled digits as ``(image, target)``: a float32 tensor (1, 8, 8) scaled to [0, 1]
    and an int. ``train`` selects the first 1500 samples, else the remaining 297.

    Licence: scikit-learn's BSD-3 for the file, CC BY 4.0 for the UCI data
    (``_data/LICENSE.digits``).
    """

    TRAIN_SIZE = 1500
    classes = [str(i) for i in range(10)]

    def __init__(self, root=None, train=True, transform=None, target_transform=None):
        images, targets = load_digits_arrays()
        part = slice(0, self.TRAIN_SIZE) if train else slice(self.TRAIN_SIZE, None)
        self.train = train
        self.data = ember_tensor.from_numpy((images[part, None] / np.float32(16.0)).astype(np.float32))
        self.targets = ember_tensor.from_numpy(targets[part])
        self.transform = transform
        self.target_transform = target_transform

    def __getitem__(self, index):
        img, target = self.data[index], int(self.targets[index])
        if self.transform is not None:
            img = self.transform(img)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target

    def __len__(self):
        return len(self.data)
