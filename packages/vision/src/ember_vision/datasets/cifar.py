"""CIFAR-10 and CIFAR-100 from torchvision's ``root/cifar-*-python`` folders, read by
ember-data's batch reader; samples are PIL RGB images, as torchvision's."""
import os

from PIL import Image

import ember_data.datasets as data_datasets

from .utils import download_and_extract_archive

__all__ = ["CIFAR10", "CIFAR100"]


class CIFAR10(data_datasets.CIFAR10):
    """CIFAR-10.

    Args:
        root: the folder holding ``cifar-10-batches-py`` (the extracted python-version archive).
        train: the five training batches, or the test batch.
        transform: applied to the PIL image; target_transform: to the int label.
        download: fetch and extract the archive first when missing; offline, the error says
            where to put it.
    """

    url = "https://www.cs.toronto.edu/~kriz/cifar-10-python.tar.gz"
    filename = "cifar-10-python.tar.gz"
    tgz_md5 = "c58f30108f718f92721af3b95e74349a"

    def __init__(self, root, train=True, transform=None, target_transform=None, download=False):
        self.root = os.path.expanduser(root)
        if download:
            self.download()
        super().__init__(root, train=train, transform=transform, target_transform=target_transform, download=False)

    def _check_integrity(self):
        folder = os.path.join(self.root, self.base_folder)
        return all(os.path.isfile(os.path.join(folder, name))
                   for name in self.train_list + self.test_list + [self.meta["filename"]])

    def download(self):
        """Fetch and extract the python-version archive into ``root`` unless it is there."""
        if self._check_integrity():
            return
        try:
            download_and_extract_archive(self.url, self.root, filename=self.filename, md5=self.tgz_md5)
        except RuntimeError as error:
            raise RuntimeError(f"{error}\nOr extract {self.filename} yourself so that "
                               f"{os.path.join(self.root, self.base_folder)} exists.") from None

    def __getitem__(self, index):
        img, target = Image.fromarray(self.data[index]), self.targets[index]
        if self.transform is not None:
            img = self.transform(img)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target

    def extra_repr(self):
        """torchvision's ``Split: Train`` / ``Split: Test`` line."""
        return f"Split: {'Train' if self.train is True else 'Test'}"


class CIFAR100(CIFAR10):
    """CIFAR-100 (fine labels) from ``root/cifar-100-python``; arguments as ``CIFAR10``."""

    base_folder = data_datasets.CIFAR100.base_folder
    train_list = data_datasets.CIFAR100.train_list
    test_list = data_datasets.CIFAR100.test_list
    meta = data_datasets.CIFAR100.meta
    labels_key = data_datasets.CIFAR100.labels_key
    url = "https://www.cs.toronto.edu/~kriz/cifar-100-python.tar.gz"
    filename = "cifar-100-python.tar.gz"
    tgz_md5 = "eb9058c3a382ffc7106e4002c42a8d85"
