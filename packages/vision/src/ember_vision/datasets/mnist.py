"""MNIST, FashionMNIST, KMNIST, EMNIST and QMNIST in torchvision's layout (``root/<Name>/raw``),
read by ember-data's IDX reader; samples are PIL images (mode L), as torchvision's."""
import os
import string

from PIL import Image

import ember_data.datasets as data_datasets

from .utils import download_and_extract_archive, extract_archive, verify_str_arg

__all__ = ["MNIST", "FashionMNIST", "KMNIST", "EMNIST", "QMNIST"]


class MNIST(data_datasets.MNIST):
    """MNIST handwritten digits.

    Args:
        root: the folder holding ``MNIST/raw`` (the IDX files, raw or ``.gz``).
        train: the 60,000 training images, or the 10,000 test images.
        transform: applied to the PIL image; target_transform: to the int label.
        download: fetch the files first (from torchvision's mirrors) when they are missing;
            offline, the error says where to put them.
    """

    mirrors = ["https://ossci-datasets.s3.amazonaws.com/mnist/", "http://yann.lecun.com/exdb/mnist/"]
    resources = [("train-images-idx3-ubyte.gz", "f68b3c2dcbeaaa9fbdd348bbdeb94873"),
                 ("train-labels-idx1-ubyte.gz", "d53e105ee54ea40749a09fcbcd1e9432"),
                 ("t10k-images-idx3-ubyte.gz", "9fb629c4189551a2d022fa330f9573f3"),
                 ("t10k-labels-idx1-ubyte.gz", "ec29112dd5afa0611ce80d1b7f02629c")]

    def __init__(self, root, train=True, transform=None, target_transform=None, download=False):
        self.root = os.path.expanduser(root)
        self.train = train
        if download:
            self.download()
        super().__init__(root, train=train, transform=transform, target_transform=target_transform, download=False)

    @property
    def processed_folder(self):
        """torchvision's (unused) processed folder, ``root/<Name>/processed``."""
        return os.path.join(self.root, type(self).__name__, "processed")

    def _check_exists(self):
        return all(any(os.path.isfile(os.path.join(self.raw_folder, name[:-3] + suffix)) for suffix in ("", ".gz"))
                   for name, _ in self.resources)

    def download(self):
        """Fetch and decompress the IDX files into ``raw_folder`` unless they are there."""
        if self._check_exists():
            return
        os.makedirs(self.raw_folder, exist_ok=True)
        for filename, md5 in self.resources:
            errors = []
            for mirror in self.mirrors:
                try:
                    download_and_extract_archive(f"{mirror}{filename}", download_root=self.raw_folder,
                                                 filename=filename, md5=md5)
                    break
                except RuntimeError as error:
                    errors.append(f"Tried {mirror}, got:\n{error}")
            else:
                raise RuntimeError(f"Error downloading {filename}:\n" + "\n".join(errors) +
                                   f"\nWithout a network, put the MNIST files ({', '.join(n for n, _ in self.resources)}) "
                                   f"in {self.raw_folder}")

    def __getitem__(self, index):
        img, target = self.data[index], int(self.targets[index])
        img = Image.fromarray(img.numpy())  # a 2-d uint8 array is mode "L"
        if self.transform is not None:
            img = self.transform(img)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target

    def extra_repr(self):
        """torchvision's ``Split: Train`` / ``Split: Test`` line."""
        return f"Split: {'Train' if self.train else 'Test'}"

    def __repr__(self):
        lines = [f"Dataset {type(self).__name__}", f"    Number of datapoints: {len(self)}",
                 f"    Root location: {self.root}", f"    {self.extra_repr()}"]
        if self.transform is not None:
            lines.append(f"    StandardTransform\nTransform: {self.transform!r}")
        return "\n".join(lines)


class FashionMNIST(MNIST):
    """Fashion-MNIST (Zalando's clothing images, MNIST's format); arguments as ``MNIST``."""

    mirrors = ["http://fashion-mnist.s3-website.eu-central-1.amazonaws.com/"]
    resources = [("train-images-idx3-ubyte.gz", "8d4fb7e6c68d591d4c3dfef9ec88bf0d"),
                 ("train-labels-idx1-ubyte.gz", "25c81989df183df01b3e8a0aad5dffbe"),
                 ("t10k-images-idx3-ubyte.gz", "bef4ecab320f06d8554ea6380940ec79"),
                 ("t10k-labels-idx1-ubyte.gz", "bb300cfdad3c16e7a12a480ee83cd310")]
    classes = ["T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker", "Bag",
               "Ankle boot"]


class KMNIST(MNIST):
    """Kuzushiji-MNIST (cursive Japanese characters, MNIST's format); arguments as ``MNIST``."""

    mirrors = ["http://codh.rois.ac.jp/kmnist/dataset/kmnist/"]
    resources = [("train-images-idx3-ubyte.gz", "bdb82020997e1d708af4cf47b453dcf7"),
                 ("train-labels-idx1-ubyte.gz", "e144d726b3acfaa3e44228e80efcd344"),
                 ("t10k-images-idx3-ubyte.gz", "5c965bf0a639b31b8f53240b1b52f4d7"),
                 ("t10k-labels-idx1-ubyte.gz", "7320c461ea6c1c855c0b718fb2a4b134")]
    classes = ["o", "ki", "su", "tsu", "na", "ha", "ma", "ya", "re", "wo"]


class EMNIST(MNIST):
    """EMNIST (letters and digits, MNIST's format), one of six ``split`` s.

    Args:
        root: the folder holding ``EMNIST/raw`` with ``emnist-<split>-<train|test>-*-idx?-ubyte`` files.
        split: byclass, bymerge, balanced, letters, digits or mnist.
        **kwargs: as ``MNIST``.
    """

    url = "https://biometrics.nist.gov/cs_links/EMNIST/gzip.zip"
    md5 = "58c8d27c78d21e728a6bc7b3cc06412e"
    splits = ("byclass", "bymerge", "balanced", "letters", "digits", "mnist")
    _merged_classes = {"c", "i", "j", "k", "l", "m", "o", "p", "s", "u", "v", "w", "x", "y", "z"}
    _all_classes = set(string.digits + string.ascii_letters)
    classes_split_dict = {
        "byclass": sorted(_all_classes), "bymerge": sorted(_all_classes - _merged_classes),
        "balanced": sorted(_all_classes - _merged_classes), "letters": ["N/A"] + list(string.ascii_lowercase),
        "digits": list(string.digits), "mnist": list(string.digits)}

    def __init__(self, root, split, **kwargs):
        self.split = verify_str_arg(split, "split", self.splits)
        self.classes = self.classes_split_dict[self.split]
        prefix = f"emnist-{self.split}"
        self._files = {True: (f"{prefix}-train-images-idx3-ubyte", f"{prefix}-train-labels-idx1-ubyte"),
                       False: (f"{prefix}-test-images-idx3-ubyte", f"{prefix}-test-labels-idx1-ubyte")}
        super().__init__(root, **kwargs)

    def _check_exists(self):
        return all(os.path.isfile(os.path.join(self.raw_folder, name)) or
                   os.path.isfile(os.path.join(self.raw_folder, name + ".gz")) for name in self._files[self.train])

    def download(self):
        """Fetch NIST's zip and extract the split's files into ``raw_folder``."""
        if self._check_exists():
            return
        os.makedirs(self.raw_folder, exist_ok=True)
        try:
            download_and_extract_archive(self.url, download_root=self.raw_folder, md5=self.md5)
        except RuntimeError as error:
            raise RuntimeError(f"{error}\nWithout a network, put the EMNIST IDX files "
                               f"({', '.join(self._files[self.train])}) in {self.raw_folder}") from None
        gzip_folder = os.path.join(self.raw_folder, "gzip")
        for name in os.listdir(gzip_folder):
            if name.endswith(".gz"):
                extract_archive(os.path.join(gzip_folder, name), self.raw_folder)


class QMNIST(MNIST):
    """QMNIST (Yadav & Bottou 2019): MNIST's test set reconstructed to 60,000 digits, with
    extended labels (class, NIST writer and more: 8 columns).

    Args:
        root: the folder holding ``QMNIST/raw``.
        what: "train", "test", "test10k" (MNIST's test digits), "test50k" (the rest) or "nist".
        compat: targets are the class alone (True) or the 8-column label rows.
        train: picks "train" or "test" when ``what`` is None.
        **kwargs: as ``MNIST`` (``transform``, ``target_transform``, ``download``).
    """

    subsets = {"train": "train", "test": "test", "test10k": "test", "test50k": "test", "nist": "nist"}
    _base = "https://raw.githubusercontent.com/facebookresearch/qmnist/master/"
    resources = {
        "train": [(_base + "qmnist-train-images-idx3-ubyte.gz", "ed72d4157d28c017586c42bc6afe6370"),
                  (_base + "qmnist-train-labels-idx2-int.gz", "0058f8dd561b90ffdd0f734c6a30e5e4")],
        "test": [(_base + "qmnist-test-images-idx3-ubyte.gz", "1394631089c404de565df7b7aeaf9412"),
                 (_base + "qmnist-test-labels-idx2-int.gz", "5b5b05890a5e13444e108efe57b788aa")],
        "nist": [(_base + "xnist-images-idx3-ubyte.xz", "7f124b3b8ab81486c9d8c2749c17f834"),
                 (_base + "xnist-labels-idx2-int.xz", "5ed0e788978e45d4a8bd4b7caec3d79d")],
    }

    def __init__(self, root, what=None, compat=True, train=True, **kwargs):
        if what is None:
            what = "train" if train else "test"
        self.what = verify_str_arg(what, "what", tuple(self.subsets))
        self.compat = compat
        names = tuple(os.path.splitext(os.path.basename(url))[0] for url, _ in self.resources[self.subsets[what]])
        self._files = {True: names, False: names}
        super().__init__(root, train=train, **kwargs)
        if what == "test10k":
            self.data, self.targets = self.data[:10000], self.targets[:10000]
        elif what == "test50k":
            self.data, self.targets = self.data[10000:], self.targets[10000:]

    def _check_exists(self):
        return all(os.path.isfile(os.path.join(self.raw_folder, name)) for name in self._files[True])

    def download(self):
        """Fetch and decompress the files of ``what`` into ``raw_folder`` unless they are there."""
        if self._check_exists():
            return
        os.makedirs(self.raw_folder, exist_ok=True)
        for url, md5 in self.resources[self.subsets[self.what]]:
            try:
                download_and_extract_archive(url, self.raw_folder, md5=md5)
            except RuntimeError as error:
                raise RuntimeError(f"{error}\nWithout a network, put {', '.join(self._files[True])} in "
                                   f"{self.raw_folder}") from None

    def __getitem__(self, index):
        img, target = Image.fromarray(self.data[index].numpy()), self.targets[index]
        if self.transform is not None:
            img = self.transform(img)
        target = int(target[0]) if self.compat else target
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target

    def extra_repr(self):
        """torchvision's ``Split: ...`` line."""
        return f"Split: {self.what}"
