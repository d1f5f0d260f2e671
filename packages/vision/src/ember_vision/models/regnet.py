"""RegNetX and RegNetY (Radosavovic et al. 2020): stages of grouped bottleneck blocks whose
widths follow a quantised linear rule; Y adds squeeze-excitation. torchvision's layout:
``stem``, ``trunk_output.block<stage>`` (blocks ``block<stage>-<i>``), ``fc``."""
import math
from collections import OrderedDict
from functools import partial

import numpy as np

import ember_nn as nn
import ember_tensor as torch

from ..ops.misc import Conv2dNormActivation, SqueezeExcitation
from ._api import WeightsEnum, table_weights, register_model
from ._utils import handle_legacy_interface, load_weights, make_divisible, overwrite_named_param

__all__ = ["RegNet", "BlockParams",
           "RegNet_Y_400MF_Weights", "RegNet_Y_800MF_Weights", "RegNet_Y_1_6GF_Weights", "RegNet_Y_3_2GF_Weights",
           "RegNet_Y_8GF_Weights", "RegNet_Y_16GF_Weights", "RegNet_Y_32GF_Weights", "RegNet_Y_128GF_Weights",
           "RegNet_X_400MF_Weights", "RegNet_X_800MF_Weights", "RegNet_X_1_6GF_Weights", "RegNet_X_3_2GF_Weights",
           "RegNet_X_8GF_Weights", "RegNet_X_16GF_Weights", "RegNet_X_32GF_Weights", "regnet_y_400mf",
           "regnet_y_800mf", "regnet_y_1_6gf", "regnet_y_3_2gf", "regnet_y_8gf", "regnet_y_16gf", "regnet_y_32gf",
           "regnet_y_128gf", "regnet_x_400mf", "regnet_x_800mf", "regnet_x_1_6gf", "regnet_x_3_2gf", "regnet_x_8gf",
           "regnet_x_16gf", "regnet_x_32gf"]


class SimpleStemIN(Conv2dNormActivation):
    """The stem: a strided 3x3 convolution, normalisation, activation."""

    def __init__(self, width_in, width_out, norm_layer, activation_layer):
        super().__init__(width_in, width_out, kernel_size=3, stride=2, norm_layer=norm_layer,
                         activation_layer=activation_layer)


class BottleneckTransform(nn.Sequential):
    """1x1 (``a``), grouped 3x3 (``b``), optional squeeze-excitation (``se``), 1x1 (``c``)."""

    def __init__(self, width_in, width_out, stride, norm_layer, activation_layer, group_width, bottleneck_multiplier,
                 se_ratio):
        layers = OrderedDict()
        w_b = int(round(width_out * bottleneck_multiplier))
        groups = w_b // group_width
        layers["a"] = Conv2dNormActivation(width_in, w_b, kernel_size=1, stride=1, norm_layer=norm_layer,
                                           activation_layer=activation_layer)
        layers["b"] = Conv2dNormActivation(w_b, w_b, kernel_size=3, stride=stride, groups=groups,
                                           norm_layer=norm_layer, activation_layer=activation_layer)
        if se_ratio:
            # The squeeze width follows the block's input width, as in the paper's code.
            layers["se"] = SqueezeExcitation(w_b, int(round(se_ratio * width_in)), activation=activation_layer)
        layers["c"] = Conv2dNormActivation(w_b, width_out, kernel_size=1, stride=1, norm_layer=norm_layer,
                                           activation_layer=None)
        super().__init__(layers)


class ResBottleneckBlock(nn.Module):
    """``BottleneckTransform`` (``f``) plus a shortcut, projected (``proj``) when the shape changes."""

    def __init__(self, width_in, width_out, stride, norm_layer, activation_layer, group_width=1,
                 bottleneck_multiplier=1.0, se_ratio=None):
        super().__init__()
        self.proj = None
        if width_in != width_out or stride != 1:
            self.proj = Conv2dNormActivation(width_in, width_out, kernel_size=1, stride=stride, norm_layer=norm_layer,
                                             activation_layer=None)
        self.f = BottleneckTransform(width_in, width_out, stride, norm_layer, activation_layer, group_width,
                                     bottleneck_multiplier, se_ratio)
        self.activation = activation_layer(inplace=True)

    def forward(self, x):
        shortcut = x if self.proj is None else self.proj(x)
        return self.activation(shortcut + self.f(x))


class AnyStage(nn.Sequential):
    """``depth`` blocks named ``block<stage_index>-<i>``; the first one strides."""

    def __init__(self, width_in, width_out, stride, depth, block_constructor, norm_layer, activation_layer,
                 group_width, bottleneck_multiplier, se_ratio=None, stage_index=0):
        super().__init__()
        for i in range(depth):
            block = block_constructor(width_in if i == 0 else width_out, width_out, stride if i == 0 else 1,
                                      norm_layer, activation_layer, group_width, bottleneck_multiplier, se_ratio)
            self.add_module(f"block{stage_index}-{i}", block)


class BlockParams:
    """Per-stage depths, widths, group widths, bottleneck multipliers and strides."""

    def __init__(self, depths, widths, group_widths, bottleneck_multipliers, strides, se_ratio=None):
        self.depths = depths
        self.widths = widths
        self.group_widths = group_widths
        self.bottleneck_multipliers = bottleneck_multipliers
        self.strides = strides
        self.se_ratio = se_ratio

    @classmethod
    def from_init_params(cls, depth, w_0, w_a, w_m, group_width, bottleneck_multiplier=1.0, se_ratio=None, **kwargs):
        """The stages of a RegNet from its design parameters: block widths ``w_0 + w_a * i``,
        snapped in log space to powers of ``w_m`` times ``w_0`` and to multiples of 8;
        consecutive blocks of one width form a stage. Computed in float32, as torchvision does,
        so the widths come out the same."""
        quant, stride = 8, 2
        if w_a < 0 or w_0 <= 0 or w_m <= 1 or w_0 % 8 != 0:
            raise ValueError("Invalid RegNet settings")
        f32 = np.float32
        widths_cont = np.arange(depth).astype(f32) * f32(w_a) + f32(w_0)
        block_capacity = np.round(np.log(widths_cont / f32(w_0)) / f32(math.log(w_m))).astype(f32)
        block_widths = (np.round(f32(w_0) * np.power(f32(w_m), block_capacity) / f32(quant)) * quant).astype(int)
        block_widths = block_widths.tolist()
        num_stages = len(set(block_widths))
        splits = [w != wp for w, wp in zip(block_widths + [0], [0] + block_widths)]
        stage_widths = [w for w, t in zip(block_widths, splits[:-1]) if t]
        stage_depths = np.diff([d for d, t in enumerate(splits) if t]).astype(int).tolist()
        strides = [stride] * num_stages
        bottleneck_multipliers = [bottleneck_multiplier] * num_stages
        group_widths = [group_width] * num_stages
        stage_widths, group_widths = cls._adjust_widths_groups_compatibilty(stage_widths, bottleneck_multipliers,
                                                                             group_widths)
        return cls(stage_depths, stage_widths, group_widths, bottleneck_multipliers, strides, se_ratio)

    def _get_expanded_params(self):
        return zip(self.widths, self.strides, self.depths, self.group_widths, self.bottleneck_multipliers)

    @staticmethod
    def _adjust_widths_groups_compatibilty(stage_widths, bottleneck_ratios, group_widths):
        # Bottleneck widths must be multiples of the group width.
        widths = [int(w * b) for w, b in zip(stage_widths, bottleneck_ratios)]
        group_widths_min = [min(g, w_bot) for g, w_bot in zip(group_widths, widths)]
        ws_bot = [make_divisible(w_bot, g) for w_bot, g in zip(widths, group_widths_min)]
        return [int(w_bot / b) for w_bot, b in zip(ws_bot, bottleneck_ratios)], group_widths_min


class RegNet(nn.Module):
    """RegNet over ``BlockParams``.

    Args:
        block_params: the stages; num_classes: outputs; stem_width: the stem's channels.
        stem_type, block_type: default ``SimpleStemIN``, ``ResBottleneckBlock``.
        norm_layer: default BatchNorm2d; activation: default ReLU.
    """

    def __init__(self, block_params, num_classes=1000, stem_width=32, stem_type=None, block_type=None,
                 norm_layer=None, activation=None):
        super().__init__()
        stem_type = stem_type or SimpleStemIN
        norm_layer = norm_layer or nn.BatchNorm2d
        block_type = block_type or ResBottleneckBlock
        activation = activation or nn.ReLU
        self.stem = stem_type(3, stem_width, norm_layer, activation)
        current_width = stem_width
        blocks = []
        for i, (width_out, stride, depth, group_width, bottleneck_multiplier) in enumerate(
                block_params._get_expanded_params()):
            blocks.append((f"block{i + 1}", AnyStage(current_width, width_out, stride, depth, block_type, norm_layer,
                                                     activation, group_width, bottleneck_multiplier,
                                                     block_params.se_ratio, stage_index=i + 1)))
            current_width = width_out
        self.trunk_output = nn.Sequential(OrderedDict(blocks))
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(in_features=current_width, out_features=num_classes)
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                fan_out = m.kernel_size[0] * m.kernel_size[1] * m.out_channels
                nn.init.normal_(m.weight, mean=0.0, std=math.sqrt(2.0 / fan_out))
            elif isinstance(m, nn.BatchNorm2d):
                nn.init.ones_(m.weight)
                nn.init.zeros_(m.bias)
            elif isinstance(m, nn.Linear):
                nn.init.normal_(m.weight, mean=0.0, std=0.01)
                nn.init.zeros_(m.bias)

    def forward(self, x):
        x = self.avgpool(self.trunk_output(self.stem(x)))
        return self.fc(torch.flatten(x, 1))


def _regnet(block_params, weights, progress, **kwargs):
    if weights is not None:
        overwrite_named_param(kwargs, "num_classes", len(weights.meta["categories"]))
    norm_layer = kwargs.pop("norm_layer", partial(nn.BatchNorm2d, eps=1e-05, momentum=0.1))
    return load_weights(RegNet(block_params, norm_layer=norm_layer, **kwargs), weights, progress)


class RegNet_Y_400MF_Weights(WeightsEnum):
    """ImageNet weights of regnet_y_400mf."""
    IMAGENET1K_V1 = table_weights("RegNet_Y_400MF_Weights.IMAGENET1K_V1")
    IMAGENET1K_V2 = table_weights("RegNet_Y_400MF_Weights.IMAGENET1K_V2")
    DEFAULT = IMAGENET1K_V2


class RegNet_Y_800MF_Weights(WeightsEnum):
    """ImageNet weights of regnet_y_800mf."""
    IMAGENET1K_V1 = table_weights("RegNet_Y_800MF_Weights.IMAGENET1K_V1")
    IMAGENET1K_V2 = table_weights("RegNet_Y_800MF_Weights.IMAGENET1K_V2")
    DEFAULT = IMAGENET1K_V2


class RegNet_Y_1_6GF_Weights(WeightsEnum):
    """ImageNet weights of regnet_y_1_6gf."""
    IMAGENET1K_V1 = table_weights("RegNet_Y_1_6GF_Weights.IMAGENET1K_V1")
    IMAGENET1K_V2 = table_weights("RegNet_Y_1_6GF_Weights.IMAGENET1K_V2")
    DEFAULT = IMAGENET1K_V2


class RegNet_Y_3_2GF_Weights(WeightsEnum):
    """ImageNet weights of regnet_y_3_2gf."""
    IMAGENET1K_V1 = table_weights("RegNet_Y_3_2GF_Weights.IMAGENET1K_V1")
    IMAGENET1K_V2 = table_weights("RegNet_Y_3_2GF_Weights.IMAGENET1K_V2")
    DEFAULT = IMAGENET1K_V2


class RegNet_Y_8GF_Weights(WeightsEnum):
    """ImageNet weights of regnet_y_8gf."""
    IMAGENET1K_V1 = table_weights("RegNet_Y_8GF_Weights.IMAGENET1K_V1")
    IMAGENET1K_V2 = table_weights("RegNet_Y_8GF_Weights.IMAGENET1K_V2")
    DEFAULT = IMAGENET1K_V2


class RegNet_Y_16GF_Weights(WeightsEnum):
    """ImageNet weights of regnet_y_16gf."""
    IMAGENET1K_SWAG_E2E_V1 = table_weights("RegNet_Y_16GF_Weights.IMAGENET1K_SWAG_E2E_V1")
    IMAGENET1K_SWAG_LINEAR_V1 = table_weights("RegNet_Y_16GF_Weights.IMAGENET1K_SWAG_LINEAR_V1")
    IMAGENET1K_V1 = table_weights("RegNet_Y_16GF_Weights.IMAGENET1K_V1")
    IMAGENET1K_V2 = table_weights("RegNet_Y_16GF_Weights.IMAGENET1K_V2")
    DEFAULT = IMAGENET1K_V2


class RegNet_Y_32GF_Weights(WeightsEnum):
    """ImageNet weights of regnet_y_32gf."""
    IMAGENET1K_SWAG_E2E_V1 = table_weights("RegNet_Y_32GF_Weights.IMAGENET1K_SWAG_E2E_V1")
    IMAGENET1K_SWAG_LINEAR_V1 = table_weights("RegNet_Y_32GF_Weights.IMAGENET1K_SWAG_LINEAR_V1")
    IMAGENET1K_V1 = table_weights("RegNet_Y_32GF_Weights.IMAGENET1K_V1")
    IMAGENET1K_V2 = table_weights("RegNet_Y_32GF_Weights.IMAGENET1K_V2")
    DEFAULT = IMAGENET1K_V2


class RegNet_Y_128GF_Weights(WeightsEnum):
    """ImageNet weights of regnet_y_128gf."""
    IMAGENET1K_SWAG_E2E_V1 = table_weights("RegNet_Y_128GF_Weights.IMAGENET1K_SWAG_E2E_V1")
    IMAGENET1K_SWAG_LINEAR_V1 = table_weights("RegNet_Y_128GF_Weights.IMAGENET1K_SWAG_LINEAR_V1")
    DEFAULT = IMAGENET1K_SWAG_E2E_V1


class RegNet_X_400MF_Weights(WeightsEnum):
    """ImageNet weights of regnet_x_400mf."""
    IMAGENET1K_V1 = table_weights("RegNet_X_400MF_Weights.IMAGENET1K_V1")
    IMAGENET1K_V2 = table_weights("RegNet_X_400MF_Weights.IMAGENET1K_V2")
    DEFAULT = IMAGENET1K_V2


class RegNet_X_800MF_Weights(WeightsEnum):
    """ImageNet weights of regnet_x_800mf."""
    IMAGENET1K_V1 = table_weights("RegNet_X_800MF_Weights.IMAGENET1K_V1")
    IMAGENET1K_V2 = table_weights("RegNet_X_800MF_Weights.IMAGENET1K_V2")
    DEFAULT = IMAGENET1K_V2


class RegNet_X_1_6GF_Weights(WeightsEnum):
    """ImageNet weights of regnet_x_1_6gf."""
    IMAGENET1K_V1 = table_weights("RegNet_X_1_6GF_Weights.IMAGENET1K_V1")
    IMAGENET1K_V2 = table_weights("RegNet_X_1_6GF_Weights.IMAGENET1K_V2")
    DEFAULT = IMAGENET1K_V2


class RegNet_X_3_2GF_Weights(WeightsEnum):
    """ImageNet weights of regnet_x_3_2gf."""
    IMAGENET1K_V1 = table_weights("RegNet_X_3_2GF_Weights.IMAGENET1K_V1")
    IMAGENET1K_V2 = table_weights("RegNet_X_3_2GF_Weights.IMAGENET1K_V2")
    DEFAULT = IMAGENET1K_V2


class RegNet_X_8GF_Weights(WeightsEnum):
    """ImageNet weights of regnet_x_8gf."""
    IMAGENET1K_V1 = table_weights("RegNet_X_8GF_Weights.IMAGENET1K_V1")
    IMAGENET1K_V2 = table_weights("RegNet_X_8GF_Weights.IMAGENET1K_V2")
    DEFAULT = IMAGENET1K_V2


class RegNet_X_16GF_Weights(WeightsEnum):
    """ImageNet weights of regnet_x_16gf."""
    IMAGENET1K_V1 = table_weights("RegNet_X_16GF_Weights.IMAGENET1K_V1")
    IMAGENET1K_V2 = table_weights("RegNet_X_16GF_Weights.IMAGENET1K_V2")
    DEFAULT = IMAGENET1K_V2


class RegNet_X_32GF_Weights(WeightsEnum):
    """ImageNet weights of regnet_x_32gf."""
    IMAGENET1K_V1 = table_weights("RegNet_X_32GF_Weights.IMAGENET1K_V1")
    IMAGENET1K_V2 = table_weights("RegNet_X_32GF_Weights.IMAGENET1K_V2")
    DEFAULT = IMAGENET1K_V2


@register_model()
@handle_legacy_interface(weights=("pretrained", RegNet_Y_400MF_Weights.IMAGENET1K_V1))
def regnet_y_400mf(*, weights: RegNet_Y_400MF_Weights = None, progress=True, **kwargs):
    """RegNetY 400MF (Radosavovic et al. 2020, Designing Network Design Spaces).

    Args:
        weights: a ``RegNet_Y_400MF_Weights`` member to load, or None.
        progress: show download progress.
        **kwargs: passed to ``RegNet`` (and ``norm_layer``, default BatchNorm2d).
    """
    params = BlockParams.from_init_params(depth=16, w_0=48, w_a=27.89, w_m=2.09, group_width=8, se_ratio=0.25)
    return _regnet(params, RegNet_Y_400MF_Weights.verify(weights), progress, **kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", RegNet_Y_800MF_Weights.IMAGENET1K_V1))
def regnet_y_800mf(*, weights: RegNet_Y_800MF_Weights = None, progress=True, **kwargs):
    """RegNetY 800MF; arguments as ``regnet_y_400mf``."""
    params = BlockParams.from_init_params(depth=14, w_0=56, w_a=38.84, w_m=2.4, group_width=16, se_ratio=0.25)
    return _regnet(params, RegNet_Y_800MF_Weights.verify(weights), progress, **kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", RegNet_Y_1_6GF_Weights.IMAGENET1K_V1))
def regnet_y_1_6gf(*, weights: RegNet_Y_1_6GF_Weights = None, progress=True, **kwargs):
    """RegNetY 1.6GF; arguments as ``regnet_y_400mf``."""
    params = BlockParams.from_init_params(depth=27, w_0=48, w_a=20.71, w_m=2.65, group_width=24, se_ratio=0.25)
    return _regnet(params, RegNet_Y_1_6GF_Weights.verify(weights), progress, **kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", RegNet_Y_3_2GF_Weights.IMAGENET1K_V1))
def regnet_y_3_2gf(*, weights: RegNet_Y_3_2GF_Weights = None, progress=True, **kwargs):
    """RegNetY 3.2GF; arguments as ``regnet_y_400mf``."""
    params = BlockParams.from_init_params(depth=21, w_0=80, w_a=42.63, w_m=2.66, group_width=24, se_ratio=0.25)
    return _regnet(params, RegNet_Y_3_2GF_Weights.verify(weights), progress, **kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", RegNet_Y_8GF_Weights.IMAGENET1K_V1))
def regnet_y_8gf(*, weights: RegNet_Y_8GF_Weights = None, progress=True, **kwargs):
    """RegNetY 8GF; arguments as ``regnet_y_400mf``."""
    params = BlockParams.from_init_params(depth=17, w_0=192, w_a=76.82, w_m=2.19, group_width=56, se_ratio=0.25)
    return _regnet(params, RegNet_Y_8GF_Weights.verify(weights), progress, **kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", RegNet_Y_16GF_Weights.IMAGENET1K_V1))
def regnet_y_16gf(*, weights: RegNet_Y_16GF_Weights = None, progress=True, **kwargs):
    """RegNetY 16GF; arguments as ``regnet_y_400mf``."""
    params = BlockParams.from_init_params(depth=18, w_0=200, w_a=106.23, w_m=2.48, group_width=112, se_ratio=0.25)
    return _regnet(params, RegNet_Y_16GF_Weights.verify(weights), progress, **kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", RegNet_Y_32GF_Weights.IMAGENET1K_V1))
def regnet_y_32gf(*, weights: RegNet_Y_32GF_Weights = None, progress=True, **kwargs):
    """RegNetY 32GF; arguments as ``regnet_y_400mf``."""
    params = BlockParams.from_init_params(depth=20, w_0=232, w_a=115.89, w_m=2.53, group_width=232, se_ratio=0.25)
    return _regnet(params, RegNet_Y_32GF_Weights.verify(weights), progress, **kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", None))
def regnet_y_128gf(*, weights: RegNet_Y_128GF_Weights = None, progress=True, **kwargs):
    """RegNetY 128GF; arguments as ``regnet_y_400mf``."""
    params = BlockParams.from_init_params(depth=27, w_0=456, w_a=160.83, w_m=2.52, group_width=264, se_ratio=0.25)
    return _regnet(params, RegNet_Y_128GF_Weights.verify(weights), progress, **kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", RegNet_X_400MF_Weights.IMAGENET1K_V1))
def regnet_x_400mf(*, weights: RegNet_X_400MF_Weights = None, progress=True, **kwargs):
    """RegNetX 400MF; arguments as ``regnet_y_400mf``."""
    params = BlockParams.from_init_params(depth=22, w_0=24, w_a=24.48, w_m=2.54, group_width=16)
    return _regnet(params, RegNet_X_400MF_Weights.verify(weights), progress, **kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", RegNet_X_800MF_Weights.IMAGENET1K_V1))
def regnet_x_800mf(*, weights: RegNet_X_800MF_Weights = None, progress=True, **kwargs):
    """RegNetX 800MF; arguments as ``regnet_y_400mf``."""
    params = BlockParams.from_init_params(depth=16, w_0=56, w_a=35.73, w_m=2.28, group_width=16)
    return _regnet(params, RegNet_X_800MF_Weights.verify(weights), progress, **kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", RegNet_X_1_6GF_Weights.IMAGENET1K_V1))
def regnet_x_1_6gf(*, weights: RegNet_X_1_6GF_Weights = None, progress=True, **kwargs):
    """RegNetX 1.6GF; arguments as ``regnet_y_400mf``."""
    params = BlockParams.from_init_params(depth=18, w_0=80, w_a=34.01, w_m=2.25, group_width=24)
    return _regnet(params, RegNet_X_1_6GF_Weights.verify(weights), progress, **kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", RegNet_X_3_2GF_Weights.IMAGENET1K_V1))
def regnet_x_3_2gf(*, weights: RegNet_X_3_2GF_Weights = None, progress=True, **kwargs):
    """RegNetX 3.2GF; arguments as ``regnet_y_400mf``."""
    params = BlockParams.from_init_params(depth=25, w_0=88, w_a=26.31, w_m=2.25, group_width=48)
    return _regnet(params, RegNet_X_3_2GF_Weights.verify(weights), progress, **kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", RegNet_X_8GF_Weights.IMAGENET1K_V1))
def regnet_x_8gf(*, weights: RegNet_X_8GF_Weights = None, progress=True, **kwargs):
    """RegNetX 8GF; arguments as ``regnet_y_400mf``."""
    params = BlockParams.from_init_params(depth=23, w_0=80, w_a=49.56, w_m=2.88, group_width=120)
    return _regnet(params, RegNet_X_8GF_Weights.verify(weights), progress, **kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", RegNet_X_16GF_Weights.IMAGENET1K_V1))
def regnet_x_16gf(*, weights: RegNet_X_16GF_Weights = None, progress=True, **kwargs):
    """RegNetX 16GF; arguments as ``regnet_y_400mf``."""
    params = BlockParams.from_init_params(depth=22, w_0=216, w_a=55.59, w_m=2.1, group_width=128)
    return _regnet(params, RegNet_X_16GF_Weights.verify(weights), progress, **kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", RegNet_X_32GF_Weights.IMAGENET1K_V1))
def regnet_x_32gf(*, weights: RegNet_X_32GF_Weights = None, progress=True, **kwargs):
    """RegNetX 32GF; arguments as ``regnet_y_400mf``."""
    params = BlockParams.from_init_params(depth=23, w_0=320, w_a=69.86, w_m=2.0, group_width=168)
    return _regnet(params, RegNet_X_32GF_Weights.verify(weights), progress, **kwargs)
