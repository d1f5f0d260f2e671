"""DenseNet-121/161/169/201 (Huang et al. 2016, Densely Connected Convolutional Networks), torchvision's
layout: ``features.denseblockN.denselayerM``, ``features.transitionN``, ``classifier``."""
import re
from collections import OrderedDict

import ember_nn as nn
import ember_nn.functional as F
import ember_tensor as torch
from ember_autograd.checkpoint import checkpoint

from ._api import WeightsEnum, table_weights, register_model
from ._utils import handle_legacy_interface, overwrite_named_param

__all__ = ["DenseNet", "DenseNet121_Weights", "DenseNet161_Weights", "DenseNet169_Weights", "DenseNet201_Weights",
           "densenet121", "densenet161", "densenet169", "densenet201"]


class DenseLayer(nn.Module):
    """BN-ReLU-Conv1x1 (bottleneck to ``bn_size * growth_rate``), BN-ReLU-Conv3x3 (``growth_rate``)."""

    def __init__(self, num_input_features, growth_rate, bn_size, drop_rate, memory_efficient=False):
        super().__init__()
        self.norm1 = nn.BatchNorm2d(num_input_features)
        self.relu1 = nn.ReLU(inplace=True)
        self.conv1 = nn.Conv2d(num_input_features, bn_size * growth_rate, kernel_size=1, stride=1, bias=False)
        self.norm2 = nn.BatchNorm2d(bn_size * growth_rate)
        self.relu2 = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(bn_size * growth_rate, growth_rate, kernel_size=3, stride=1, padding=1, bias=False)
        self.drop_rate = float(drop_rate)
        # Recompute the bottleneck in backward instead of keeping the concatenation and its
        # normalised copy (torchvision's memory_efficient): memory linear in depth, not quadratic.
        self.memory_efficient = memory_efficient

    def bn_function(self, inputs):
        """The bottleneck: BN-ReLU-Conv1x1 of the concatenation of every earlier output."""
        return self.conv1(self.relu1(self.norm1(torch.cat(inputs, 1))))

    def forward(self, input):
        prev_features = [input] if isinstance(input, torch.Tensor) else input
        if self.memory_efficient and any(t.requires_grad for t in prev_features):
            bottleneck = checkpoint(lambda *inputs: self.bn_function(inputs), *prev_features, use_reentrant=False)
        else:
            bottleneck = self.bn_function(prev_features)
        new_features = self.conv2(self.relu2(self.norm2(bottleneck)))
        if self.drop_rate > 0:
            new_features = F.dropout(new_features, p=self.drop_rate, training=self.training)
        return new_features


class DenseBlock(nn.ModuleDict):
    """``num_layers`` dense layers, each fed the concatenation of all earlier outputs."""

    def __init__(self, num_layers, num_input_features, bn_size, growth_rate, drop_rate, memory_efficient=False):
        super().__init__()
        for i in range(num_layers):
            layer = DenseLayer(num_input_features + i * growth_rate, growth_rate, bn_size, drop_rate, memory_efficient)
            self.add_module(f"denselayer{i + 1}", layer)

    def forward(self, init_features):
        features = [init_features]
        for _, layer in self.items():
            features.append(layer(features))
        return torch.cat(features, 1)


class Transition(nn.Sequential):
    """BN-ReLU-Conv1x1 then 2x2 average pooling, between dense blocks."""

    def __init__(self, num_input_features, num_output_features):
        super().__init__()
        self.norm = nn.BatchNorm2d(num_input_features)
        self.relu = nn.ReLU(inplace=True)
        self.conv = nn.Conv2d(num_input_features, num_output_features, kernel_size=1, stride=1, bias=False)
        self.pool = nn.AvgPool2d(kernel_size=2, stride=2)


class DenseNet(nn.Module):
    """DenseNet-BC.

    Args:
        growth_rate: channels each layer adds (k); block_config: layers per block.
        num_init_features: channels of the stem; bn_size: bottleneck width factor.
        drop_rate: dropout after each layer; num_classes: outputs.
        memory_efficient: recompute each layer's bottleneck in backward (torch.utils.checkpoint),
            trading compute for memory, as torchvision does.
    """

    def __init__(self, growth_rate=32, block_config=(6, 12, 24, 16), num_init_features=64, bn_size=4, drop_rate=0,
                 num_classes=1000, memory_efficient=False):
        super().__init__()
        self.features = nn.Sequential(OrderedDict([
            ("conv0", nn.Conv2d(3, num_init_features, kernel_size=7, stride=2, padding=3, bias=False)),
            ("norm0", nn.BatchNorm2d(num_init_features)),
            ("relu0", nn.ReLU(inplace=True)),
            ("pool0", nn.MaxPool2d(kernel_size=3, stride=2, padding=1)),
        ]))
        num_features = num_init_features
        for i, num_layers in enumerate(block_config):
            block = DenseBlock(num_layers, num_features, bn_size, growth_rate, drop_rate, memory_efficient)
            self.features.add_module(f"denseblock{i + 1}", block)
            num_features = num_features + num_layers * growth_rate
            if i != len(block_config) - 1:
                self.features.add_module(f"transition{i + 1}", Transition(num_features, num_features // 2))
                num_features = num_features // 2
        self.features.add_module("norm5", nn.BatchNorm2d(num_features))
        self.classifier = nn.Linear(num_features, num_classes)
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight)
            elif isinstance(m, nn.BatchNorm2d):
                nn.init.constant_(m.weight, 1)
                nn.init.constant_(m.bias, 0)
            elif isinstance(m, nn.Linear):
                nn.init.constant_(m.bias, 0)

    def forward(self, x):
        out = F.relu(self.features(x), inplace=True)
        out = torch.flatten(F.adaptive_avg_pool2d(out, (1, 1)), 1)
        return self.classifier(out)


# The published checkpoints predate the current names: "denselayer1.norm.1.weight" is
# "denselayer1.norm1.weight" now.
_LEGACY_KEY = re.compile(r"^(.*denselayer\d+\.(?:norm|relu|conv))\.((?:[12])\.(?:weight|bias|running_mean|running_var))$")


def _load_state_dict(model, weights, progress):
    state_dict = weights.get_state_dict(progress=progress, check_hash=True)
    for key in list(state_dict.keys()):
        match = _LEGACY_KEY.match(key)
        if match:
            state_dict[match.group(1) + match.group(2)] = state_dict.pop(key)
    model.load_state_dict(state_dict)


def _densenet(growth_rate, block_config, num_init_features, weights, progress, **kwargs):
    if weights is not None:
        overwrite_named_param(kwargs, "num_classes", len(weights.meta["categories"]))
    model = DenseNet(growth_rate, block_config, num_init_features, **kwargs)
    if weights is not None:
        _load_state_dict(model, weights, progress)
    return model


class DenseNet121_Weights(WeightsEnum):
    """ImageNet weights of densenet121."""
    IMAGENET1K_V1 = table_weights("DenseNet121_Weights.IMAGENET1K_V1")
    DEFAULT = IMAGENET1K_V1


class DenseNet161_Weights(WeightsEnum):
    """ImageNet weights of densenet161."""
    IMAGENET1K_V1 = table_weights("DenseNet161_Weights.IMAGENET1K_V1")
    DEFAULT = IMAGENET1K_V1


class DenseNet169_Weights(WeightsEnum):
    """ImageNet weights of densenet169."""
    IMAGENET1K_V1 = table_weights("DenseNet169_Weights.IMAGENET1K_V1")
    DEFAULT = IMAGENET1K_V1


class DenseNet201_Weights(WeightsEnum):
    """ImageNet weights of densenet201."""
    IMAGENET1K_V1 = table_weights("DenseNet201_Weights.IMAGENET1K_V1")
    DEFAULT = IMAGENET1K_V1


@register_model()
@handle_legacy_interface(weights=("pretrained", DenseNet121_Weights.IMAGENET1K_V1))
def densenet121(*, weights: DenseNet121_Weights = None, progress=True, **kwargs):
    """DenseNet-121.

    Args:
        weights: a ``DenseNet121_Weights`` member to load, or None.
        progress: show download progress.
        **kwargs: passed to ``DenseNet``.
    """
    return _densenet(32, (6, 12, 24, 16), 64, DenseNet121_Weights.verify(weights), progress, **kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", DenseNet161_Weights.IMAGENET1K_V1))
def densenet161(*, weights: DenseNet161_Weights = None, progress=True, **kwargs):
    """DenseNet-161 (growth rate 48); arguments as ``densenet121``."""
    return _densenet(48, (6, 12, 36, 24), 96, DenseNet161_Weights.verify(weights), progress, **kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", DenseNet169_Weights.IMAGENET1K_V1))
def densenet169(*, weights: DenseNet169_Weights = None, progress=True, **kwargs):
    """DenseNet-169; arguments as ``densenet121``."""
    return _densenet(32, (6, 12, 32, 32), 64, DenseNet169_Weights.verify(weights), progress, **kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", DenseNet201_Weights.IMAGENET1K_V1))
def densenet201(*, weights: DenseNet201_Weights = None, progress=True, **kwargs):
    """DenseNet-201; arguments as ``densenet121``."""
    return _densenet(32, (6, 12, 48, 32), 64, DenseNet201_Weights.verify(weights), progress, **kwargs)
