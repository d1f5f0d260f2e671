"""ShuffleNet V2 x0.5, x1.0, x1.5, x2.0 (Ma et al. 2018): channel split, two branches, channel shuffle."""
import ember_nn as nn
import ember_tensor as torch

from ._api import WeightsEnum, table_weights, register_model
from ._utils import handle_legacy_interface, load_weights, overwrite_named_param

__all__ = ["ShuffleNetV2", "ShuffleNet_V2_X0_5_Weights", "ShuffleNet_V2_X1_0_Weights", "ShuffleNet_V2_X1_5_Weights",
           "ShuffleNet_V2_X2_0_Weights", "shufflenet_v2_x0_5", "shufflenet_v2_x1_0", "shufflenet_v2_x1_5",
           "shufflenet_v2_x2_0"]


def channel_shuffle(x, groups):
    """Interleave the channels of ``groups`` groups: (N, g*c, H, W) -> view (N, g, c) -> (N, c, g)."""
    batchsize, num_channels, height, width = x.shape
    x = x.view(batchsize, groups, num_channels // groups, height, width)
    return torch.transpose(x, 1, 2).contiguous().view(batchsize, num_channels, height, width)


def _depthwise_conv(i, o, kernel_size, stride=1, padding=0, bias=False):
    return nn.Conv2d(i, o, kernel_size, stride, padding, bias=bias, groups=i)


class InvertedResidual(nn.Module):
    """A ShuffleNet V2 unit: ``branch1`` (only when striding) and ``branch2``, then a shuffle."""

    def __init__(self, inp, oup, stride):
        super().__init__()
        if not 1 <= stride <= 3:
            raise ValueError("illegal stride value")
        self.stride = stride
        branch_features = oup // 2
        if self.stride == 1 and inp != branch_features << 1:
            raise ValueError(f"Invalid combination of stride {stride}, inp {inp} and oup {oup} values. "
                             "If stride == 1 then inp should be equal to oup // 2 << 1.")
        if self.stride > 1:
            self.branch1 = nn.Sequential(
                _depthwise_conv(inp, inp, kernel_size=3, stride=self.stride, padding=1), nn.BatchNorm2d(inp),
                nn.Conv2d(inp, branch_features, kernel_size=1, stride=1, padding=0, bias=False),
                nn.BatchNorm2d(branch_features), nn.ReLU(inplace=True))
        else:
            self.branch1 = nn.Sequential()
        self.branch2 = nn.Sequential(
            nn.Conv2d(inp if self.stride > 1 else branch_features, branch_features, kernel_size=1, stride=1,
                      padding=0, bias=False),
            nn.BatchNorm2d(branch_features), nn.ReLU(inplace=True),
            _depthwise_conv(branch_features, branch_features, kernel_size=3, stride=self.stride, padding=1),
            nn.BatchNorm2d(branch_features),
            nn.Conv2d(branch_features, branch_features, kernel_size=1, stride=1, padding=0, bias=False),
            nn.BatchNorm2d(branch_features), nn.ReLU(inplace=True))

    def forward(self, x):
        if self.stride == 1:
            x1, x2 = x.chunk(2, dim=1)
            out = torch.cat((x1, self.branch2(x2)), dim=1)
        else:
            out = torch.cat((self.branch1(x), self.branch2(x)), dim=1)
        return channel_shuffle(out, 2)


class ShuffleNetV2(nn.Module):
    """ShuffleNet V2.

    Args:
        stages_repeats: units in stages 2-4; stages_out_channels: five widths (stem, stages, conv5).
        num_classes: outputs; inverted_residual: the unit class.
    """

    def __init__(self, stages_repeats, stages_out_channels, num_classes=1000, inverted_residual=InvertedResidual):
        super().__init__()
        if len(stages_repeats) != 3:
            raise ValueError("expected stages_repeats as list of 3 positive ints")
        if len(stages_out_channels) != 5:
            raise ValueError("expected stages_out_channels as list of 5 positive ints")
        self._stage_out_channels = stages_out_channels
        input_channels, output_channels = 3, self._stage_out_channels[0]
        self.conv1 = nn.Sequential(nn.Conv2d(input_channels, output_channels, 3, 2, 1, bias=False),
                                   nn.BatchNorm2d(output_channels), nn.ReLU(inplace=True))
        input_channels = output_channels
        self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
        for name, repeats, output_channels in zip(["stage2", "stage3", "stage4"], stages_repeats,
                                                  self._stage_out_channels[1:]):
            seq = [inverted_residual(input_channels, output_channels, 2)]
            seq += [inverted_residual(output_channels, output_channels, 1) for _ in range(repeats - 1)]
            setattr(self, name, nn.Sequential(*seq))
            input_channels = output_channels
        output_channels = self._stage_out_channels[-1]
        self.conv5 = nn.Sequential(nn.Conv2d(input_channels, output_channels, 1, 1, 0, bias=False),
                                   nn.BatchNorm2d(output_channels), nn.ReLU(inplace=True))
        self.fc = nn.Linear(output_channels, num_classes)

    def forward(self, x):
        x = self.maxpool(self.conv1(x))
        x = self.conv5(self.stage4(self.stage3(self.stage2(x))))
        return self.fc(x.mean([2, 3]))  # global average pool


def _shufflenetv2(weights, progress, *args, **kwargs):
    if weights is not None:
        overwrite_named_param(kwargs, "num_classes", len(weights.meta["categories"]))
    return load_weights(ShuffleNetV2(*args, **kwargs), weights, progress)


class ShuffleNet_V2_X0_5_Weights(WeightsEnum):
    """ImageNet weights of shufflenet_v2_x0_5."""
    IMAGENET1K_V1 = table_weights("ShuffleNet_V2_X0_5_Weights.IMAGENET1K_V1")
    DEFAULT = IMAGENET1K_V1


class ShuffleNet_V2_X1_0_Weights(WeightsEnum):
    """ImageNet weights of shufflenet_v2_x1_0."""
    IMAGENET1K_V1 = table_weights("ShuffleNet_V2_X1_0_Weights.IMAGENET1K_V1")
    DEFAULT = IMAGENET1K_V1


class ShuffleNet_V2_X1_5_Weights(WeightsEnum):
    """ImageNet weights of shufflenet_v2_x1_5."""
    IMAGENET1K_V1 = table_weights("ShuffleNet_V2_X1_5_Weights.IMAGENET1K_V1")
    DEFAULT = IMAGENET1K_V1


class ShuffleNet_V2_X2_0_Weights(WeightsEnum):
    """ImageNet weights of shufflenet_v2_x2_0."""
    IMAGENET1K_V1 = table_weights("ShuffleNet_V2_X2_0_Weights.IMAGENET1K_V1")
    DEFAULT = IMAGENET1K_V1



@register_model()
@handle_legacy_interface(weights=("pretrained", ShuffleNet_V2_X0_5_Weights.IMAGENET1K_V1))
def shufflenet_v2_x0_5(*, weights: ShuffleNet_V2_X0_5_Weights = None, progress=True, **kwargs):
    """ShuffleNet V2 with 0.5x output channels; arguments as ``shufflenet_v2_x1_0``."""
    weights = ShuffleNet_V2_X0_5_Weights.verify(weights)
    return _shufflenetv2(weights, progress, [4, 8, 4], [24, 48, 96, 192, 1024], **kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", ShuffleNet_V2_X1_0_Weights.IMAGENET1K_V1))
def shufflenet_v2_x1_0(*, weights: ShuffleNet_V2_X1_0_Weights = None, progress=True, **kwargs):
    """ShuffleNet V2 with 1.0x output channels.

    Args:
        weights: a ``ShuffleNet_V2_X1_0_Weights`` member to load, or None.
        progress: show download progress.
        **kwargs: passed to ``ShuffleNetV2``.
    """
    weights = ShuffleNet_V2_X1_0_Weights.verify(weights)
    return _shufflenetv2(weights, progress, [4, 8, 4], [24, 116, 232, 464, 1024], **kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", ShuffleNet_V2_X1_5_Weights.IMAGENET1K_V1))
def shufflenet_v2_x1_5(*, weights: ShuffleNet_V2_X1_5_Weights = None, progress=True, **kwargs):
    """ShuffleNet V2 with 1.5x output channels; arguments as ``shufflenet_v2_x1_0``."""
    weights = ShuffleNet_V2_X1_5_Weights.verify(weights)
    return _shufflenetv2(weights, progress, [4, 8, 4], [24, 176, 352, 704, 1024], **kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", ShuffleNet_V2_X2_0_Weights.IMAGENET1K_V1))
def shufflenet_v2_x2_0(*, weights: ShuffleNet_V2_X2_0_Weights = None, progress=True, **kwargs):
    """ShuffleNet V2 with 2.0x output channels; arguments as ``shufflenet_v2_x1_0``."""
    weights = ShuffleNet_V2_X2_0_Weights.verify(weights)
    return _shufflenetv2(weights, progress, [4, 8, 4], [24, 244, 488, 976, 2048], **kwargs)
