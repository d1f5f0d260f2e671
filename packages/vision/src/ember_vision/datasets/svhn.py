"""SVHN (Street View House Numbers, cropped digits) from torchvision's ``root/<split>_32x32.mat``."""
import os

import numpy as np
from PIL import Image

import ember_data as data

from ._matlab import load_mat
from .utils import check_integrity, download_url, verify_str_arg

__all__ = ["SVHN"]


class SVHN(data.Dataset):
    """SVHN digits; label 10 (digit zero in the files) is 0, as torchvision maps it.

    Args:
        root: the folder holding ``train_32x32.mat`` / ``test_32x32.mat`` / ``extra_32x32.mat``.
        split: "train", "test" or "extra".
        transform: applied to the PIL image; target_transform: to the int label.
        download: fetch the split's file first when missing; offline, the error says where to put it.
    """

    split_list = {
        "train": ["http://ufldl.stanford.edu/housenumbers/train_32x32.mat", "train_32x32.mat",
                  "e26dedcc434d2e4c54c9b2d4a06d8373"],
        "test": ["http://ufldl.stanford.edu/housenumbers/test_32x32.mat", "test_32x32.mat",
                 "eb5a983be6a315427106f1b164d9cef3"],
        "extra": ["http://ufldl.stanford.edu/housenumbers/extra_32x32.mat", "extra_32x32.mat",
                  "a93ce644f1a588dc4d68dda5feec44a7"],
    }

    def __init__(self, root, split="train", transform=None, target_transform=None, download=False):
        self.root = os.path.expanduser(root)
        self.split = verify_str_arg(split, "split", tuple(self.split_list))
        self.url, self.filename, self.file_md5 = self.split_list[split]
        self.transform = transform
        self.target_transform = target_transform
        path = os.path.join(self.root, self.filename)
        if download and not os.path.isfile(path):
            download_url(self.url, self.root, self.filename, self.file_md5)
        if not check_integrity(path):
            raise RuntimeError(f"Dataset not found or corrupted: {path} is missing. You can use download=True to "
                               f"download it, or put {self.url} there by hand.")
        loaded = load_mat(path)
        self.labels = loaded["y"].astype(np.int64).squeeze(axis=1)
        np.place(self.labels, self.labels == 10, 0)
        self.data = np.ascontiguousarray(np.transpose(loaded["X"], (3, 2, 0, 1)))  # (N, C, H, W)

    def __getitem__(self, index):
        img, target = Image.fromarray(np.transpose(self.data[index], (1, 2, 0))), int(self.labels[index])
        if self.transform is not None:
            img = self.transform(img)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target

    def __len__(self):
        return len(self.data)

    def extra_repr(self):
        """torchvision's ``Split: ...`` line."""
        return f"Split: {self.split}"
