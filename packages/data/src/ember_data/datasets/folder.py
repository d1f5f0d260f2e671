"""ImageFolder / DatasetFolder: one sub-folder per class, the folder name is the label."""
import os

from ..dataset import Dataset
from ._images import IMG_EXTENSIONS, read_image

__all__ = ["DatasetFolder", "ImageFolder", "find_classes", "make_dataset"]


def find_classes(directory):
    """The sorted class folder names in ``directory`` and ``{name: index}``."""
    classes = sorted(entry.name for entry in os.scandir(directory) if entry.is_dir())
    if not classes:
        raise FileNotFoundError(f"Couldn't find any class folder in {directory}.")
    return classes, {name: i for i, name in enumerate(classes)}


def make_dataset(directory, class_to_idx, extensions=None, is_valid_file=None):
    """``[(path, class_index)]`` for every accepted file under each class folder, sorted."""
    if (extensions is None) == (is_valid_file is None):
        raise ValueError("Both extensions and is_valid_file cannot be None or not None at the same time")
    if is_valid_file is None:
        def is_valid_file(path):
            return path.lower().endswith(tuple(extensions))
    instances, found = [], set()
    for target_class in sorted(class_to_idx):
        target_dir = os.path.join(directory, target_class)
        for root, _, fnames in sorted(os.walk(target_dir, followlinks=True)):
            for fname in sorted(fnames):
                path = os.path.join(root, fname)
                if is_valid_file(path):
                    instances.append((path, class_to_idx[target_class]))
                    found.add(target_class)
    empty = set(class_to_idx) - found
    if empty:
        msg = f"Found no valid file for the classes {', '.join(sorted(empty))}. "
        if extensions is not None:
            msg += f"Supported extensions are: {', '.join(extensions)}"
        raise FileNotFoundError(msg)
    return instances


class DatasetFolder(Dataset):
    """Samples ``(loader(path), class_index)`` from ``root/<class>/<file>``."""

    def __init__(self, root, loader, extensions=None, transform=None, target_transform=None,
                 is_valid_file=None, allow_empty=False):
        self.root = os.path.expanduser(root)
        if not os.path.isdir(self.root):
            raise FileNotFoundError(f"{type(self).__name__}: {self.root} does not exist. Make it a folder with "
                                    "one sub-folder of images per class (root/cat/1.ppm, root/dog/2.ppm, ...).")
        self.classes, self.class_to_idx = find_classes(self.root)
        self.samples = make_dataset(self.root, self.class_to_idx, extensions, is_valid_file) if not allow_empty \
            else _make_dataset_allowing_empty(self.root, self.class_to_idx, extensions, is_valid_file)
        self.loader = loader
        self.extensions = extensions
        self.targets = [s[1] for s in self.samples]
        self.transform = transform
        self.target_transform = target_transform

    def __getitem__(self, index):
        path, target = self.samples[index]
        sample = self.loader(path)
        if self.transform is not None:
            sample = self.transform(sample)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return sample, target

    def __len__(self):
        return len(self.samples)


def _make_dataset_allowing_empty(directory, class_to_idx, extensions, is_valid_file):
    samples = []
    for name, index in class_to_idx.items():
        try:
            samples += make_dataset(directory, {name: index}, extensions, is_valid_file)
        except FileNotFoundError:
            pass
    return sorted(samples)


def default_loader(path):
    """Read an image file: NumPy array for .npy/.pgm/.ppm, a PIL image for Pillow formats."""
    return read_image(path)


class ImageFolder(DatasetFolder):
    """DatasetFolder for images. Without Pillow it reads ``.npy``, ``.pgm``, ``.ppm``
    (and ``.pnm``) as NumPy arrays (H, W[, C]); with Pillow also JPEG, PNG, BMP, TIFF, ..."""

    def __init__(self, root, transform=None, target_transform=None, loader=default_loader, is_valid_file=None,
                 allow_empty=False):
        super().__init__(root, loader, IMG_EXTENSIONS if is_valid_file is None else None, transform=transform,
                         target_transform=target_transform, is_valid_file=is_valid_file, allow_empty=allow_empty)
        self.imgs = self.samples
