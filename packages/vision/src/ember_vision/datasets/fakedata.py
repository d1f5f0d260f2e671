"""FakeData: random images, the same for an index on every call (for smoke tests and benchmarks)."""
import ember_data as data
import ember_tensor as torch

from ..transforms.functional import to_pil_image

__all__ = ["FakeData"]


class FakeData(data.Dataset):
    """``size`` random PIL images of ``image_size`` (C, H, W) with labels in [0, num_classes).

    Each sample is drawn under the seed ``index + random_offset`` and ember's global random
    state is restored afterwards, so reading the data set never disturbs a training run.
    """

    def __init__(self, size=1000, image_size=(3, 224, 224), num_classes=10, transform=None, target_transform=None,
                 random_offset=0):
        self.size = size
        self.num_classes = num_classes
        self.image_size = image_size
        self.random_offset = random_offset
        self.transform = transform
        self.target_transform = target_transform

    def __getitem__(self, index):
        if index >= len(self):
            raise IndexError(f"{self.__class__.__name__} index out of range")
        rng_state = torch.get_rng_state()
        torch.manual_seed(index + self.random_offset)
        img = torch.randn(*self.image_size)
        target = int(torch.randint(0, self.num_classes, size=(1,), dtype=torch.long)[0])
        torch.set_rng_state(rng_state)
        img = to_pil_image(img)
        if self.transform is not None:
            img = self.transform(img)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target

    def __len__(self):
        return self.size
