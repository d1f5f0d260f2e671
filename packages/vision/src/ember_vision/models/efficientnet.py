"""EfficientNet B0-B7 (Tan & Le 2019) and V2 S/M/L (Tan & Le 2021): (Fused)MBConv blocks with
squeeze-excitation, SiLU and stochastic depth, in torchvision's layout (``features``,
``avgpool``, ``classifier``)."""
import copy
import math
from functools import partial

import ember_nn as nn
import ember_tensor as torch

from ..ops.misc import Conv2dNormActivation, SqueezeExcitation
from ..ops.stochastic_depth import StochasticDepth
from ._api import WeightsEnum, table_weights, register_model
from ._utils import handle_legacy_interface, load_weights, make_divisible, overwrite_named_param

__all__ = ["EfficientNet", *[f"EfficientNet_B{i}_Weights" for i in range(8)], "EfficientNet_V2_S_Weights",
           "EfficientNet_V2_M_Weights", "EfficientNet_V2_L_Weights", *[f"efficientnet_b{i}" for i in range(8)],
           "efficientnet_v2_s", "efficientnet_v2_m", "efficientnet_v2_l"]


class MBConvConfig:
    """One stage's settings; channels scaled by ``width_mult``, repeats by ``depth_mult``."""

    def __init__(self, expand_ratio, kernel, stride, input_channels, out_channels, num_layers, width_mult=1.0,
                 depth_mult=1.0):
        self.expand_ratio = expand_ratio
        self.kernel = kernel
        self.stride = stride
        self.input_channels = self.adjust_channels(input_channels, width_mult)
        self.out_channels = self.adjust_channels(out_channels, width_mult)
        self.num_layers = int(math.ceil(num_layers * depth_mult))
        self.block = MBConv

    @staticmethod
    def adjust_channels(channels, width_mult, min_value=None):
        """``channels * width_mult`` rounded to a multiple of 8."""
        return make_divisible(channels * width_mult, 8, min_value)


class MBConv(nn.Module):
    """Expansion, depthwise convolution, squeeze-excitation, projection; a shortcut through
    stochastic depth when the shape is kept."""

    def __init__(self, cnf, stochastic_depth_prob, norm_layer, se_layer=SqueezeExcitation):
        super().__init__()
        if not 1 <= cnf.stride <= 2:
            raise ValueError("illegal stride value")
        self.use_res_connect = cnf.stride == 1 and cnf.input_channels == cnf.out_channels
        layers = []
        expanded = cnf.adjust_channels(cnf.input_channels, cnf.expand_ratio)
        if expanded != cnf.input_channels:
            layers.append(Conv2dNormActivation(cnf.input_channels, expanded, kernel_size=1, norm_layer=norm_layer,
                                               activation_layer=nn.SiLU))
        layers.append(Conv2dNormActivation(expanded, expanded, kernel_size=cnf.kernel, stride=cnf.stride,
                                           groups=expanded, norm_layer=norm_layer, activation_layer=nn.SiLU))
        squeeze_channels = max(1, cnf.input_channels // 4)
        layers.append(se_layer(expanded, squeeze_channels, activation=partial(nn.SiLU, inplace=True)))
        layers.append(Conv2dNormActivation(expanded, cnf.out_channels, kernel_size=1, norm_layer=norm_layer,
                                           activation_layer=None))
        self.block = nn.Sequential(*layers)
        self.stochastic_depth = StochasticDepth(stochastic_depth_prob, "row")
        self.out_channels = cnf.out_channels

    def forward(self, input):
        result = self.block(input)
        if self.use_res_connect:
            result = self.stochastic_depth(result) + input
        return result


class FusedMBConvConfig(MBConvConfig):
    """A fused stage (EfficientNetV2): its channels are used as given."""

    def __init__(self, expand_ratio, kernel, stride, input_channels, out_channels, num_layers):
        super().__init__(expand_ratio, kernel, stride, input_channels, out_channels, num_layers)
        self.block = FusedMBConv


class FusedMBConv(nn.Module):
    """One full convolution doing MBConv's expansion and depthwise step at once, then a
    projection; a shortcut through stochastic depth when the shape is kept."""

    def __init__(self, cnf, stochastic_depth_prob, norm_layer):
        super().__init__()
        if not 1 <= cnf.stride <= 2:
            raise ValueError("illegal stride value")
        self.use_res_connect = cnf.stride == 1 and cnf.input_channels == cnf.out_channels
        expanded = cnf.adjust_channels(cnf.input_channels, cnf.expand_ratio)
        if expanded != cnf.input_channels:
            layers = [Conv2dNormActivation(cnf.input_channels, expanded, kernel_size=cnf.kernel, stride=cnf.stride,
                                           norm_layer=norm_layer, activation_layer=nn.SiLU),
                      Conv2dNormActivation(expanded, cnf.out_channels, kernel_size=1, norm_layer=norm_layer,
                                           activation_layer=None)]
        else:
            layers = [Conv2dNormActivation(cnf.input_channels, cnf.out_channels, kernel_size=cnf.kernel,
                                           stride=cnf.stride, norm_layer=norm_layer, activation_layer=nn.SiLU)]
        self.block = nn.Sequential(*layers)
        self.stochastic_depth = StochasticDepth(stochastic_depth_prob, "row")
        self.out_channels = cnf.out_channels

    def forward(self, input):
        result = self.block(input)
        if self.use_res_connect:
            result = self.stochastic_depth(result) + input
        return result


class EfficientNet(nn.Module):
    """EfficientNet over a list of ``MBConvConfig`` stages.

    Args:
        inverted_residual_setting: the stages; dropout: before the classifier.
        stochastic_depth_prob: the last block's drop probability (rising linearly from 0).
        num_classes: outputs; norm_layer: default BatchNorm2d; last_channel: default 4x the last stage.
    """

    def __init__(self, inverted_residual_setting, dropout, stochastic_depth_prob=0.2, num_classes=1000,
                 norm_layer=None, last_channel=None):
        super().__init__()
        if not inverted_residual_setting:
            raise ValueError("The inverted_residual_setting should not be empty")
        norm_layer = norm_layer or nn.BatchNorm2d
        first = inverted_residual_setting[0].input_channels
        layers = [Conv2dNormActivation(3, first, kernel_size=3, stride=2, norm_layer=norm_layer,
                                       activation_layer=nn.SiLU)]
        total_stage_blocks = sum(cnf.num_layers for cnf in inverted_residual_setting)
        stage_block_id = 0
        for cnf in inverted_residual_setting:
            stage = []
            for _ in range(cnf.num_layers):
                block_cnf = copy.copy(cnf)
                if stage:
                    block_cnf.input_channels = block_cnf.out_channels
                    block_cnf.stride = 1
                sd_prob = stochastic_depth_prob * float(stage_block_id) / total_stage_blocks
                stage.append(block_cnf.block(block_cnf, sd_prob, norm_layer))
                stage_block_id += 1
            layers.append(nn.Sequential(*stage))
        lastconv_input = inverted_residual_setting[-1].out_channels
        lastconv_output = last_channel if last_channel is not None else 4 * lastconv_input
        layers.append(Conv2dNormActivation(lastconv_input, lastconv_output, kernel_size=1, norm_layer=norm_layer,
                                           activation_layer=nn.SiLU))
        self.features = nn.Sequential(*layers)
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.classifier = nn.Sequential(nn.Dropout(p=dropout, inplace=True), nn.Linear(lastconv_output, num_classes))
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out")
                if m.bias is not None:
                    nn.init.zeros_(m.bias)
            elif isinstance(m, (nn.BatchNorm2d, nn.GroupNorm)):
                nn.init.ones_(m.weight)
                nn.init.zeros_(m.bias)
            elif isinstance(m, nn.Linear):
                init_range = 1.0 / math.sqrt(m.out_features)
                nn.init.uniform_(m.weight, -init_range, init_range)
                nn.init.zeros_(m.bias)

    def forward(self, x):
        x = torch.flatten(self.avgpool(self.features(x)), 1)
        return self.classifier(x)


# width multiplier, depth multiplier, dropout, and whether BatchNorm uses the TensorFlow
# reference's eps/momentum (the B5-B7 weights were ported with them).
_SCALING = {0: (1.0, 1.0, 0.2, False), 1: (1.0, 1.1, 0.2, False), 2: (1.1, 1.2, 0.3, False),
            3: (1.2, 1.4, 0.3, False), 4: (1.4, 1.8, 0.4, False), 5: (1.6, 2.2, 0.4, True),
            6: (1.8, 2.6, 0.5, True), 7: (2.0, 3.1, 0.5, True)}


def _efficientnet(index, weights, progress, **kwargs):
    width_mult, depth_mult, dropout, tf_batchnorm = _SCALING[index]
    bneck = partial(MBConvConfig, width_mult=width_mult, depth_mult=depth_mult)
    setting = [bneck(1, 3, 1, 32, 16, 1), bneck(6, 3, 2, 16, 24, 2), bneck(6, 5, 2, 24, 40, 2),
               bneck(6, 3, 2, 40, 80, 3), bneck(6, 5, 1, 80, 112, 3), bneck(6, 5, 2, 112, 192, 4),
               bneck(6, 3, 1, 192, 320, 1)]
    if weights is not None:
        overwrite_named_param(kwargs, "num_classes", len(weights.meta["categories"]))
    if tf_batchnorm:
        kwargs.setdefault("norm_layer", partial(nn.BatchNorm2d, eps=0.001, momentum=0.01))
    model = EfficientNet(setting, kwargs.pop("dropout", dropout), **kwargs)
    return load_weights(model, weights, progress)


class EfficientNet_B0_Weights(WeightsEnum):
    """ImageNet weights of efficientnet_b0 (ported from the paper's; bicubic resize to 256)."""
    IMAGENET1K_V1 = table_weights("EfficientNet_B0_Weights.IMAGENET1K_V1")
    DEFAULT = IMAGENET1K_V1


class EfficientNet_B1_Weights(WeightsEnum):
    """ImageNet weights of efficientnet_b1 (V2: torchvision's newer recipe)."""
    IMAGENET1K_V1 = table_weights("EfficientNet_B1_Weights.IMAGENET1K_V1")
    IMAGENET1K_V2 = table_weights("EfficientNet_B1_Weights.IMAGENET1K_V2")
    DEFAULT = IMAGENET1K_V2


class EfficientNet_B2_Weights(WeightsEnum):
    """ImageNet weights of efficientnet_b2."""
    IMAGENET1K_V1 = table_weights("EfficientNet_B2_Weights.IMAGENET1K_V1")
    DEFAULT = IMAGENET1K_V1


class EfficientNet_B3_Weights(WeightsEnum):
    """ImageNet weights of efficientnet_b3."""
    IMAGENET1K_V1 = table_weights("EfficientNet_B3_Weights.IMAGENET1K_V1")
    DEFAULT = IMAGENET1K_V1


class EfficientNet_B4_Weights(WeightsEnum):
    """ImageNet weights of efficientnet_b4."""
    IMAGENET1K_V1 = table_weights("EfficientNet_B4_Weights.IMAGENET1K_V1")
    DEFAULT = IMAGENET1K_V1


class EfficientNet_B5_Weights(WeightsEnum):
    """ImageNet weights of efficientnet_b5."""
    IMAGENET1K_V1 = table_weights("EfficientNet_B5_Weights.IMAGENET1K_V1")
    DEFAULT = IMAGENET1K_V1


class EfficientNet_B6_Weights(WeightsEnum):
    """ImageNet weights of efficientnet_b6."""
    IMAGENET1K_V1 = table_weights("EfficientNet_B6_Weights.IMAGENET1K_V1")
    DEFAULT = IMAGENET1K_V1


class EfficientNet_B7_Weights(WeightsEnum):
    """ImageNet weights of efficientnet_b7."""
    IMAGENET1K_V1 = table_weights("EfficientNet_B7_Weights.IMAGENET1K_V1")
    DEFAULT = IMAGENET1K_V1


@register_model()
@handle_legacy_interface(weights=("pretrained", EfficientNet_B0_Weights.IMAGENET1K_V1))
def efficientnet_b0(*, weights: EfficientNet_B0_Weights = None, progress=True, **kwargs):
    """EfficientNet-B0.

    Args:
        weights: an ``EfficientNet_B0_Weights`` member to load, or None.
        progress: show download progress.
        **kwargs: passed to ``EfficientNet`` (``dropout`` defaults to the variant's: 0.2 for B0).
    """
    return _efficientnet(0, EfficientNet_B0_Weights.verify(weights), progress, **kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", EfficientNet_B1_Weights.IMAGENET1K_V1))
def efficientnet_b1(*, weights: EfficientNet_B1_Weights = None, progress=True, **kwargs):
    """EfficientNet-B1; arguments as ``efficientnet_b0``."""
    return _efficientnet(1, EfficientNet_B1_Weights.verify(weights), progress, **kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", EfficientNet_B2_Weights.IMAGENET1K_V1))
def efficientnet_b2(*, weights: EfficientNet_B2_Weights = None, progress=True, **kwargs):
    """EfficientNet-B2; arguments as ``efficientnet_b0``."""
    return _efficientnet(2, EfficientNet_B2_Weights.verify(weights), progress, **kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", EfficientNet_B3_Weights.IMAGENET1K_V1))
def efficientnet_b3(*, weights: EfficientNet_B3_Weights = None, progress=True, **kwargs):
    """EfficientNet-B3; arguments as ``efficientnet_b0``."""
    return _efficientnet(3, EfficientNet_B3_Weights.verify(weights), progress, **kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", EfficientNet_B4_Weights.IMAGENET1K_V1))
def efficientnet_b4(*, weights: EfficientNet_B4_Weights = None, progress=True, **kwargs):
    """EfficientNet-B4; arguments as ``efficientnet_b0``."""
    return _efficientnet(4, EfficientNet_B4_Weights.verify(weights), progress, **kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", EfficientNet_B5_Weights.IMAGENET1K_V1))
def efficientnet_b5(*, weights: EfficientNet_B5_Weights = None, progress=True, **kwargs):
    """EfficientNet-B5; arguments as ``efficientnet_b0``."""
    return _efficientnet(5, EfficientNet_B5_Weights.verify(weights), progress, **kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", EfficientNet_B6_Weights.IMAGENET1K_V1))
def efficientnet_b6(*, weights: EfficientNet_B6_Weights = None, progress=True, **kwargs):
    """EfficientNet-B6; arguments as ``efficientnet_b0``."""
    return _efficientnet(6, EfficientNet_B6_Weights.verify(weights), progress, **kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", EfficientNet_B7_Weights.IMAGENET1K_V1))
def efficientnet_b7(*, weights: EfficientNet_B7_Weights = None, progress=True, **kwargs):
    """EfficientNet-B7; arguments as ``efficientnet_b0``."""
    return _efficientnet(7, EfficientNet_B7_Weights.verify(weights), progress, **kwargs)


# (expand, kernel, stride, in, out, layers) per stage; the first three are fused.
_V2_SETTINGS = {
    "s": ([(1, 3, 1, 24, 24, 2), (4, 3, 2, 24, 48, 4), (4, 3, 2, 48, 64, 4)],
          [(4, 3, 2, 64, 128, 6), (6, 3, 1, 128, 160, 9), (6, 3, 2, 160, 256, 15)], 0.2),
    "m": ([(1, 3, 1, 24, 24, 3), (4, 3, 2, 24, 48, 5), (4, 3, 2, 48, 80, 5)],
          [(4, 3, 2, 80, 160, 7), (6, 3, 1, 160, 176, 14), (6, 3, 2, 176, 304, 18), (6, 3, 1, 304, 512, 5)], 0.3),
    "l": ([(1, 3, 1, 32, 32, 4), (4, 3, 2, 32, 64, 7), (4, 3, 2, 64, 96, 7)],
          [(4, 3, 2, 96, 192, 10), (6, 3, 1, 192, 224, 19), (6, 3, 2, 224, 384, 25), (6, 3, 1, 384, 640, 7)], 0.4),
}


def _efficientnet_v2(size, weights, progress, **kwargs):
    fused, plain, dropout = _V2_SETTINGS[size]
    setting = [FusedMBConvConfig(*row) for row in fused] + [MBConvConfig(*row) for row in plain]
    if weights is not None:
        overwrite_named_param(kwargs, "num_classes", len(weights.meta["categories"]))
    kwargs.setdefault("norm_layer", partial(nn.BatchNorm2d, eps=1e-03))
    model = EfficientNet(setting, kwargs.pop("dropout", dropout), last_channel=1280, **kwargs)
    return load_weights(model, weights, progress)


class EfficientNet_V2_S_Weights(WeightsEnum):
    """ImageNet weights of efficientnet_v2_s."""
    IMAGENET1K_V1 = table_weights("EfficientNet_V2_S_Weights.IMAGENET1K_V1")
    DEFAULT = IMAGENET1K_V1


class EfficientNet_V2_M_Weights(WeightsEnum):
    """ImageNet weights of efficientnet_v2_m."""
    IMAGENET1K_V1 = table_weights("EfficientNet_V2_M_Weights.IMAGENET1K_V1")
    DEFAULT = IMAGENET1K_V1


class EfficientNet_V2_L_Weights(WeightsEnum):
    """ImageNet weights of efficientnet_v2_l."""
    IMAGENET1K_V1 = table_weights("EfficientNet_V2_L_Weights.IMAGENET1K_V1")
    DEFAULT = IMAGENET1K_V1


@register_model()
@handle_legacy_interface(weights=("pretrained", EfficientNet_V2_S_Weights.IMAGENET1K_V1))
def efficientnet_v2_s(*, weights: EfficientNet_V2_S_Weights = None, progress=True, **kwargs):
    """EfficientNetV2-S; arguments as ``efficientnet_b0`` (``dropout`` defaults to 0.2)."""
    return _efficientnet_v2("s", EfficientNet_V2_S_Weights.verify(weights), progress, **kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", EfficientNet_V2_M_Weights.IMAGENET1K_V1))
def efficientnet_v2_m(*, weights: EfficientNet_V2_M_Weights = None, progress=True, **kwargs):
    """EfficientNetV2-M; arguments as ``efficientnet_b0`` (``dropout`` defaults to 0.3)."""
    return _efficientnet_v2("m", EfficientNet_V2_M_Weights.verify(weights), progress, **kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", EfficientNet_V2_L_Weights.IMAGENET1K_V1))
def efficientnet_v2_l(*, weights: EfficientNet_V2_L_Weights = None, progress=True, **kwargs):
    """EfficientNetV2-L; arguments as ``efficientnet_b0`` (``dropout`` defaults to 0.4)."""
    return _efficientnet_v2("l", EfficientNet_V2_L_Weights.verify(weights), progress, **kwargs)
