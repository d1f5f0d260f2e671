"""DatasetFolder and ImageFolder (``root/<class>/<file>``) on ember-data's folder walk,
with torchvision's loader: every image through Pillow, converted to RGB."""
from PIL import Image

import ember_data.datasets as data_datasets
from ember_data.datasets.folder import find_classes, make_dataset

__all__ = ["DatasetFolder", "ImageFolder", "IMG_EXTENSIONS", "pil_loader", "default_loader", "find_classes",
           "make_dataset"]

IMG_EXTENSIONS = (".jpg", ".jpeg", ".png", ".ppm", ".bmp", ".pgm", ".tif", ".tiff", ".webp")


def pil_loader(path):
    """The image at ``path`` as an RGB PIL image (the file is closed before returning)."""
    with open(path, "rb") as f:
        return Image.open(f).convert("RGB")


def default_loader(path):
    """torchvision's default image loader: ``pil_loader``."""
    return pil_loader(path)


class DatasetFolder(data_datasets.DatasetFolder):
    """Samples ``(loader(path), class_index)`` from ``root/<class>/<file>``; classes are the
    sorted folder names (torchvision's ``find_classes``)."""

    def find_classes(self, directory):
        """``(classes, class_to_idx)`` of ``directory``'s sub-folders."""
        return find_classes(directory)

    @staticmethod
    def make_dataset(directory, class_to_idx, extensions=None, is_valid_file=None, allow_empty=False):
        """``[(path, class_index)]`` of the accepted files."""
        return make_dataset(directory, class_to_idx, extensions, is_valid_file)


class ImageFolder(DatasetFolder):
    """DatasetFolder of images with torchvision's extensions and loader.

    Args:
        root: the folder of class folders.
        transform, target_transform: applied to the PIL image and the class index.
        loader: path -> sample (default: an RGB PIL image).
        is_valid_file: path -> bool, instead of the extension list.
        allow_empty: accept class folders with no image.
    """

    def __init__(self, root, transform=None, target_transform=None, loader=default_loader, is_valid_file=None,
                 allow_empty=False):
        super().__init__(root, loader, IMG_EXTENSIONS if is_valid_file is None else None, transform=transform,
                         target_transform=target_transform, is_valid_file=is_valid_file, allow_empty=allow_empty)
        self.imgs = self.samples
