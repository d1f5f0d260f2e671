"""STL-10 (Coates et al. 2011) from torchvision's ``root/stl10_binary`` (the extracted binary archive)."""
import os

import numpy as np
from PIL import Image

from .utils import download_and_extract_archive, verify_str_arg
from .vision import VisionDataset

__all__ = ["STL10"]


class STL10(VisionDataset):
    """STL-10: 96x96 colour images of 10 classes, plus 100,000 unlabeled ones (label -1).

    Args:
        root: the folder holding ``stl10_binary``.
        split: "train", "train+unlabeled", "unlabeled" or "test".
        folds: one of the 10 predefined training folds of 1,000 images (None: all 5,000).
        transform, target_transform: applied to the PIL image and the int label.
        download: fetch and extract the archive first when missing; offline, the error says
            where to put it.
    """

    base_folder = "stl10_binary"
    url = "http://ai.stanford.edu/~acoates/stl10/stl10_binary.tar.gz"
    filename = "stl10_binary.tar.gz"
    tgz_md5 = "91f7769df0f17e558f3565bffb0c7dfb"
    class_names_file = "class_names.txt"
    folds_list_file = "fold_indices.txt"
    splits = ("train", "train+unlabeled", "unlabeled", "test")

    def __init__(self, root, split="train", folds=None, transform=None, target_transform=None, download=False):
        super().__init__(root, transform=transform, target_transform=target_transform)
        self.split = verify_str_arg(split, "split", self.splits)
        if folds is not None and (not isinstance(folds, int) or folds not in range(10)):
            raise ValueError(f"Value for argument folds should be in the range [0, 10), but got {folds}.")
        self.folds = folds
        needed = {"train": ["train_X.bin", "train_y.bin"], "test": ["test_X.bin", "test_y.bin"],
                  "unlabeled": ["unlabeled_X.bin"],
                  "train+unlabeled": ["train_X.bin", "train_y.bin", "unlabeled_X.bin"]}[split]
        folder = os.path.join(self.root, self.base_folder)
        if download and not all(os.path.isfile(os.path.join(folder, n)) for n in needed):
            download_and_extract_archive(self.url, self.root, filename=self.filename, md5=self.tgz_md5)
        missing = [n for n in needed if not os.path.isfile(os.path.join(folder, n))]
        if missing:
            raise RuntimeError(f"Dataset not found or corrupted: {', '.join(missing)} missing in {folder}. You can use "
                               f"download=True to download it, or extract {self.url} in {self.root}.")
        if split in ("train", "train+unlabeled"):
            self.data, self.labels = self._load("train_X.bin", "train_y.bin")
            self._load_folds(folds)
            if split == "train+unlabeled":
                unlabeled, _ = self._load("unlabeled_X.bin")
                self.data = np.concatenate((self.data, unlabeled))
                self.labels = np.concatenate((self.labels, np.full(len(unlabeled), -1, np.int64)))
        elif split == "unlabeled":
            self.data, _ = self._load("unlabeled_X.bin")
            self.labels = np.full(len(self.data), -1, np.int64)
        else:
            self.data, self.labels = self._load("test_X.bin", "test_y.bin")
        class_file = os.path.join(folder, self.class_names_file)
        if os.path.isfile(class_file):
            with open(class_file) as f:
                self.classes = f.read().splitlines()

    def _load(self, data_file, labels_file=None):
        folder = os.path.join(self.root, self.base_folder)
        labels = None
        if labels_file:
            labels = np.fromfile(os.path.join(folder, labels_file), dtype=np.uint8).astype(np.int64) - 1  # 0-based
        images = np.fromfile(os.path.join(folder, data_file), dtype=np.uint8).reshape(-1, 3, 96, 96)
        return np.transpose(images, (0, 1, 3, 2)), labels  # stored column-major

    def _load_folds(self, folds):
        if folds is None:
            return
        with open(os.path.join(self.root, self.base_folder, self.folds_list_file)) as f:
            indices = np.array(f.read().splitlines()[folds].split(), dtype=np.int64)
        self.data, self.labels = self.data[indices], self.labels[indices]

    def __getitem__(self, index):
        img, target = Image.fromarray(np.transpose(self.data[index], (1, 2, 0))), int(self.labels[index])
        if self.transform is not None:
            img = self.transform(img)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target

    def __len__(self):
        return self.data.shape[0]

    def extra_repr(self):
        """torchvision's ``Split: ...`` line."""
        return f"Split: {self.split}"
