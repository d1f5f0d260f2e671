"""VGG 11/13/16/19, with and without BatchNorm (Simonyan & Zisserman 2014), torchvision's layout:
``features`` (convolutions), ``avgpool`` (to 7x7), ``classifier`` (three linear layers)."""
import ember_nn as nn
import ember_tensor as torch

from ._api import WeightsEnum, table_weights, register_model
from ._utils import handle_legacy_interface, load_weights, overwrite_named_param

__all__ = ["VGG", "VGG11_Weights", "VGG11_BN_Weights", "VGG13_Weights", "VGG13_BN_Weights",
           "VGG16_Weights", "VGG16_BN_Weights", "VGG19_Weights", "VGG19_BN_Weights", "vgg11", "vgg11_bn", "vgg13",
           "vgg13_bn", "vgg16", "vgg16_bn", "vgg19", "vgg19_bn"]

# Channels of each 3x3 convolution; "M" is a 2x2 max-pool. The paper's configurations A, B, D, E.
CONFIGS = {
    "A": [64, "M", 128, "M", 256, 256, "M", 512, 512, "M", 512, 512, "M"],
    "B": [64, 64, "M", 128, 128, "M", 256, 256, "M", 512, 512, "M", 512, 512, "M"],
    "D": [64, 64, "M", 128, 128, "M", 256, 256, 256, "M", 512, 512, 512, "M", 512, 512, 512, "M"],
    "E": [64, 64, "M", 128, 128, "M", 256, 256, 256, 256, "M", 512, 512, 512, 512, "M", 512, 512, 512, 512, "M"],
}


class VGG(nn.Module):
    """VGG over a convolutional ``features`` module (see ``make_layers``).

    Args:
        features: the convolutional part, producing 512 channels.
        num_classes: outputs of the classifier.
        init_weights: torchvision's initialisation (He-normal convolutions, N(0, 0.01) linear layers).
        dropout: of the two dropout layers in the classifier.
    """

    def __init__(self, features, num_classes=1000, init_weights=True, dropout=0.5):
        super().__init__()
        self.features = features
        self.avgpool = nn.AdaptiveAvgPool2d((7, 7))
        self.classifier = nn.Sequential(
            nn.Linear(512 * 7 * 7, 4096), nn.ReLU(True), nn.Dropout(p=dropout),
            nn.Linear(4096, 4096), nn.ReLU(True), nn.Dropout(p=dropout),
            nn.Linear(4096, num_classes))
        if init_weights:
            self.reset_parameters()

    def reset_parameters(self):
        """torchvision's initialisation, which the published weights were trained from."""
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
                if m.bias is not None:
                    nn.init.constant_(m.bias, 0)
            elif isinstance(m, nn.BatchNorm2d):
                nn.init.constant_(m.weight, 1)
                nn.init.constant_(m.bias, 0)
            elif isinstance(m, nn.Linear):
                nn.init.normal_(m.weight, 0, 0.01)
                nn.init.constant_(m.bias, 0)

    def forward(self, x):
        x = torch.flatten(self.avgpool(self.features(x)), 1)
        return self.classifier(x)


def make_layers(cfg, batch_norm=False):
    """The ``features`` Sequential of a configuration: 3x3 convolutions (+BatchNorm), ReLU, max-pools."""
    layers, in_channels = [], 3
    for v in cfg:
        if v == "M":
            layers.append(nn.MaxPool2d(kernel_size=2, stride=2))
        else:
            layers.append(nn.Conv2d(in_channels, v, kernel_size=3, padding=1))
            if batch_norm:
                layers.append(nn.BatchNorm2d(v))
            layers.append(nn.ReLU(inplace=True))
            in_channels = v
    return nn.Sequential(*layers)


def _vgg(cfg, batch_norm, weights, progress, **kwargs):
    if weights is not None:
        kwargs["init_weights"] = False
        if weights.meta["categories"] is not None:
            overwrite_named_param(kwargs, "num_classes", len(weights.meta["categories"]))
    return load_weights(VGG(make_layers(CONFIGS[cfg], batch_norm=batch_norm), **kwargs), weights, progress)


class VGG11_Weights(WeightsEnum):
    """ImageNet weights of vgg11."""
    IMAGENET1K_V1 = table_weights("VGG11_Weights.IMAGENET1K_V1")
    DEFAULT = IMAGENET1K_V1


class VGG11_BN_Weights(WeightsEnum):
    """ImageNet weights of vgg11_bn."""
    IMAGENET1K_V1 = table_weights("VGG11_BN_Weights.IMAGENET1K_V1")
    DEFAULT = IMAGENET1K_V1


class VGG13_Weights(WeightsEnum):
    """ImageNet weights of vgg13."""
    IMAGENET1K_V1 = table_weights("VGG13_Weights.IMAGENET1K_V1")
    DEFAULT = IMAGENET1K_V1


class VGG13_BN_Weights(WeightsEnum):
    """ImageNet weights of vgg13_bn."""
    IMAGENET1K_V1 = table_weights("VGG13_BN_Weights.IMAGENET1K_V1")
    DEFAULT = IMAGENET1K_V1


class VGG16_Weights(WeightsEnum):
    """ImageNet weights of vgg16; IMAGENET1K_FEATURES: features only (no classifier, categories None)."""
    IMAGENET1K_V1 = table_weights("VGG16_Weights.IMAGENET1K_V1")
    IMAGENET1K_FEATURES = table_weights("VGG16_Weights.IMAGENET1K_FEATURES")
    DEFAULT = IMAGENET1K_V1


class VGG16_BN_Weights(WeightsEnum):
    """ImageNet weights of vgg16_bn."""
    IMAGENET1K_V1 = table_weights("VGG16_BN_Weights.IMAGENET1K_V1")
    DEFAULT = IMAGENET1K_V1


class VGG19_Weights(WeightsEnum):
    """ImageNet weights of vgg19."""
    IMAGENET1K_V1 = table_weights("VGG19_Weights.IMAGENET1K_V1")
    DEFAULT = IMAGENET1K_V1


class VGG19_BN_Weights(WeightsEnum):
    """ImageNet weights of vgg19_bn."""
    IMAGENET1K_V1 = table_weights("VGG19_BN_Weights.IMAGENET1K_V1")
    DEFAULT = IMAGENET1K_V1


@register_model()
@handle_legacy_interface(weights=("pretrained", VGG11_Weights.IMAGENET1K_V1))
def vgg11(*, weights: VGG11_Weights = None, progress=True, **kwargs):
    """VGG-11 (configuration A).

    Args:
        weights: a ``VGG11_Weights`` member to load, or None.
        progress: show download progress.
        **kwargs: passed to ``VGG``.
    """
    return _vgg("A", False, VGG11_Weights.verify(weights), progress, **kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", VGG11_BN_Weights.IMAGENET1K_V1))
def vgg11_bn(*, weights: VGG11_BN_Weights = None, progress=True, **kwargs):
    """VGG-11 with BatchNorm; arguments as ``vgg11``."""
    return _vgg("A", True, VGG11_BN_Weights.verify(weights), progress, **kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", VGG13_Weights.IMAGENET1K_V1))
def vgg13(*, weights: VGG13_Weights = None, progress=True, **kwargs):
    """VGG-13 (configuration B); arguments as ``vgg11``."""
    return _vgg("B", False, VGG13_Weights.verify(weights), progress, **kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", VGG13_BN_Weights.IMAGENET1K_V1))
def vgg13_bn(*, weights: VGG13_BN_Weights = None, progress=True, **kwargs):
    """VGG-13 with BatchNorm; arguments as ``vgg11``."""
    return _vgg("B", True, VGG13_BN_Weights.verify(weights), progress, **kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", VGG16_Weights.IMAGENET1K_V1))
def vgg16(*, weights: VGG16_Weights = None, progress=True, **kwargs):
    """VGG-16 (configuration D); arguments as ``vgg11``."""
    return _vgg("D", False, VGG16_Weights.verify(weights), progress, **kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", VGG16_BN_Weights.IMAGENET1K_V1))
def vgg16_bn(*, weights: VGG16_BN_Weights = None, progress=True, **kwargs):
    """VGG-16 with BatchNorm; arguments as ``vgg11``."""
    return _vgg("D", True, VGG16_BN_Weights.verify(weights), progress, **kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", VGG19_Weights.IMAGENET1K_V1))
def vgg19(*, weights: VGG19_Weights = None, progress=True, **kwargs):
    """VGG-19 (configuration E); arguments as ``vgg11``."""
    return _vgg("E", False, VGG19_Weights.verify(weights), progress, **kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", VGG19_BN_Weights.IMAGENET1K_V1))
def vgg19_bn(*, weights: VGG19_BN_Weights = None, progress=True, **kwargs):
    """VGG-19 with BatchNorm; arguments as ``vgg11``."""
    return _vgg("E", True, VGG19_BN_Weights.verify(weights), progress, **kwargs)
