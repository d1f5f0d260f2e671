"""CIFAR-10 and CIFAR-100 from the "python version" batch files (pickled dicts)."""
import os
import pickle

import numpy as np

import ember_tensor

from ..dataset import Dataset

__all__ = ["CIFAR10", "CIFAR100"]


class CIFAR10(Dataset):
    """CIFAR-10 from ``root/cifar-10-batches-py`` (the extracted ``cifar-10-python.tar.gz``).

    Samples are ``(image, target)``: a uint8 tensor (32, 32, 3) (HWC, as torchvision
    keeps ``data``) and an int; ``transform`` / ``target_transform`` apply when given.
    """

    base_folder = "cifar-10-batches-py"
    train_list = [f"data_batch_{i}" for i in range(1, 6)]
    test_list = ["test_batch"]
    meta = {"filename": "batches.meta", "key": "label_names"}
    labels_key = "labels"

    def __init__(self, root, train=True, transform=None, target_transform=None, download=False):
        self.root = os.path.expanduser(root)
        self.train = train
        self.transform = transform
        self.target_transform = target_transform
        folder = os.path.join(self.root, self.base_folder)
        if download:
            raise RuntimeError(f"{type(self).__name__}: ember never downloads (there may be no network); "
                               f"extract the python-version archive so that {folder} exists")
        names = self.train_list if train else self.test_list
        missing = [n for n in names + [self.meta["filename"]] if not os.path.isfile(os.path.join(folder, n))]
        if missing:
            raise RuntimeError(
                f"{type(self).__name__}: {', '.join(missing)} not found in {folder}. Download the CIFAR "
                f"\"python version\" archive and extract it in {self.root}; ember does not download datasets.")
        data, targets = [], []
        for name in names:
            entry = self._load(os.path.join(folder, name))
            data.append(np.asarray(entry["data"], dtype=np.uint8).reshape(-1, 3, 32, 32))
            targets.extend(entry[self.labels_key])
        # Stored channel-major (N, 3, 32, 32); torchvision exposes HWC, and so do we.
        self.data = np.ascontiguousarray(np.concatenate(data).transpose(0, 2, 3, 1))
        self.targets = list(targets)
        self.classes = self._load(os.path.join(folder, self.meta["filename"]))[self.meta["key"]]
        self.class_to_idx = {c: i for i, c in enumerate(self.classes)}

    @staticmethod
    def _load(path):
        with open(path, "rb") as f:
            entry = pickle.load(f, encoding="latin1")
        return {k.decode() if isinstance(k, bytes) else k: v for k, v in entry.items()}

    def __getitem__(self, index):
        img, target = ember_tensor.from_numpy(self.data[index]), self.targets[index]
        if self.transform is not None:
            img = self.transform(img)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target

    def __len__(self):
        return len(self.data)


class CIFAR100(CIFAR10):
    """CIFAR-100 (fine labels) from ``root/cifar-100-python``."""

    base_folder = "cifar-100-python"
    train_list = ["train"]
    test_list = ["test"]
    meta = {"filename": "meta", "key": "fine_label_names"}
    labels_key = "fine_labels"
