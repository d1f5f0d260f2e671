"""VisionDataset, the base torchvision's datasets share and users subclass."""
import os

import ember_data as data

__all__ = ["VisionDataset", "StandardTransform"]


class StandardTransform:
    """``(input, target) -> (transform(input), target_transform(target))``."""

    def __init__(self, transform=None, target_transform=None):
        self.transform = transform
        self.target_transform = target_transform

    def __call__(self, input, target):
        if self.transform is not None:
            input = self.transform(input)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return input, target

    def __repr__(self):
        lines = [self.__class__.__name__]
        if self.transform is not None:
            lines.append(f"Transform: {self.transform!r}")
        if self.target_transform is not None:
            lines.append(f"Target transform: {self.target_transform!r}")
        return "\n".join(lines)


class VisionDataset(data.Dataset):
    """Base class of image datasets: ``root``, and either ``transforms`` (a function of the
    sample and target) or ``transform`` / ``target_transform`` (one each); subclasses define
    ``__getitem__`` and ``__len__``."""

    _repr_indent = 4

    def __init__(self, root=None, transforms=None, transform=None, target_transform=None):
        self.root = os.path.expanduser(root) if isinstance(root, str) else root
        has_transforms = transforms is not None
        has_separate_transform = transform is not None or target_transform is not None
        if has_transforms and has_separate_transform:
            raise ValueError("Only transforms or transform/target_transform can be passed as argument")
        self.transform = transform
        self.target_transform = target_transform
        if has_separate_transform:
            transforms = StandardTransform(transform, target_transform)
        self.transforms = transforms

    def __getitem__(self, index):
        raise NotImplementedError

    def __len__(self):
        raise NotImplementedError

    def extra_repr(self):
        """Extra lines for ``repr`` (none here)."""
        return ""

    def __repr__(self):
        head = "Dataset " + self.__class__.__name__
        body = [f"Number of datapoints: {self.__len__()}"]
        if self.root is not None:
            body.append(f"Root location: {self.root}")
        body += self.extra_repr().splitlines()
        if self.transforms is not None:
            body += repr(self.transforms).splitlines()
        return "\n".join([head] + [" " * self._repr_indent + line for line in body])
