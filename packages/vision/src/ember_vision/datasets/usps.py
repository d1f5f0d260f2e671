"""USPS handwritten digits (16x16 greyscale) from torchvision's ``root/usps.bz2`` /
``usps.t.bz2`` (LIBSVM's bzip2-compressed sparse text format)."""
import bz2
import os

import numpy as np
from PIL import Image

from .utils import download_url
from .vision import VisionDataset

__all__ = ["USPS"]


class USPS(VisionDataset):
    """USPS: 7,291 training and 2,007 test digits, values in [-1, 1] in the files, uint8 here.

    Args:
        root: the folder holding ``usps.bz2`` (train) and ``usps.t.bz2`` (test).
        train: the training or the test file.
        transform, target_transform: applied to the PIL image (mode L) and the int label.
        download: fetch the file first when missing; offline, the error says where to put it.
    """

    split_list = {
        "train": ["https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets/multiclass/usps.bz2", "usps.bz2",
                  "ec16c51db3855ca6c91edd34d0e9b197"],
        "test": ["https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets/multiclass/usps.t.bz2", "usps.t.bz2",
                 "8ea070ee2aca1ac39742fdd1ef5ed118"],
    }

    def __init__(self, root, train=True, transform=None, target_transform=None, download=False):
        super().__init__(root, transform=transform, target_transform=target_transform)
        url, filename, checksum = self.split_list["train" if train else "test"]
        full_path = os.path.join(self.root, filename)
        if download and not os.path.isfile(full_path):
            download_url(url, self.root, filename, md5=checksum)
        if not os.path.isfile(full_path):
            raise RuntimeError(f"Dataset not found: {full_path} is missing. You can use download=True to download "
                               f"it, or put {url} there by hand.")
        with bz2.open(full_path) as fp:
            rows = [line.decode().split() for line in fp.readlines()]
        values = [[entry.split(":")[-1] for entry in row[1:]] for row in rows]
        images = np.asarray(values, dtype=np.float32).reshape((-1, 16, 16))
        self.data = ((images + 1) / 2 * 255).astype(np.uint8)
        self.targets = [int(row[0]) - 1 for row in rows]

    def __getitem__(self, index):
        img, target = Image.fromarray(self.data[index]), int(self.targets[index])
        if self.transform is not None:
            img = self.transform(img)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target

    def __len__(self):
        return len(self.data)
