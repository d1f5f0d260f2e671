"""AlexNet (Krizhevsky 2014, "One weird trick..."), torchvision's single-tower variant."""
import ember_nn as nn
import ember_tensor as torch

from ._api import WeightsEnum, table_weights, register_model
from ._utils import handle_legacy_interface, load_weights, overwrite_named_param

__all__ = ["AlexNet", "AlexNet_Weights", "alexnet"]


class AlexNet(nn.Module):
    """Five convolutions (``features``), pooling to 6x6, three linear layers (``classifier``).

    Args:
        num_classes: outputs; dropout: before each of the first two linear layers.
    """

    def __init__(self, num_classes=1000, dropout=0.5):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 64, kernel_size=11, stride=4, padding=2), nn.ReLU(inplace=True),
            nn.MaxPool2d(kernel_size=3, stride=2),
            nn.Conv2d(64, 192, kernel_size=5, padding=2), nn.ReLU(inplace=True),
            nn.MaxPool2d(kernel_size=3, stride=2),
            nn.Conv2d(192, 384, kernel_size=3, padding=1), nn.ReLU(inplace=True),
            nn.Conv2d(384, 256, kernel_size=3, padding=1), nn.ReLU(inplace=True),
            nn.Conv2d(256, 256, kernel_size=3, padding=1), nn.ReLU(inplace=True),
            nn.MaxPool2d(kernel_size=3, stride=2))
        self.avgpool = nn.AdaptiveAvgPool2d((6, 6))
        self.classifier = nn.Sequential(
            nn.Dropout(p=dropout), nn.Linear(256 * 6 * 6, 4096), nn.ReLU(inplace=True),
            nn.Dropout(p=dropout), nn.Linear(4096, 4096), nn.ReLU(inplace=True),
            nn.Linear(4096, num_classes))

    def forward(self, x):
        x = torch.flatten(self.avgpool(self.features(x)), 1)
        return self.classifier(x)


class AlexNet_Weights(WeightsEnum):
    """ImageNet weights of alexnet."""
    IMAGENET1K_V1 = table_weights("AlexNet_Weights.IMAGENET1K_V1")
    DEFAULT = IMAGENET1K_V1


@register_model()
@handle_legacy_interface(weights=("pretrained", AlexNet_Weights.IMAGENET1K_V1))
def alexnet(*, weights: AlexNet_Weights = None, progress=True, **kwargs):
    """AlexNet.

    Args:
        weights: an ``AlexNet_Weights`` member to load, or None.
        progress: show download progress.
        **kwargs: passed to ``AlexNet``.
    """
    weights = AlexNet_Weights.verify(weights)
    if weights is not None:
        overwrite_named_param(kwargs, "num_classes", len(weights.meta["categories"]))
    return load_weights(AlexNet(**kwargs), weights, progress)
