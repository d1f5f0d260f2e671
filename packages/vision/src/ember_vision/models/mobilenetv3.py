"""MobileNetV3 Large and Small (Howard et al. 2019): inverted residuals with squeeze-excitation
and hard-swish, BatchNorm with eps 0.001 and momentum 0.01 as in torchvision."""
from functools import partial

import ember_nn as nn
import ember_tensor as torch

from ..ops.misc import Conv2dNormActivation, SqueezeExcitation
from ._api import WeightsEnum, table_weights, register_model
from ._utils import handle_legacy_interface, load_weights, make_divisible, overwrite_named_param

__all__ = ["MobileNetV3", "MobileNet_V3_Large_Weights",
           "MobileNet_V3_Small_Weights", "mobilenet_v3_large", "mobilenet_v3_small"]


class InvertedResidualConfig:
    """One block's settings, with channels scaled by ``width_mult`` and rounded to multiples of 8."""

    def __init__(self, input_channels, kernel, expanded_channels, out_channels, use_se, activation, stride, dilation,
                 width_mult):
        self.input_channels = self.adjust_channels(input_channels, width_mult)
        self.kernel = kernel
        self.expanded_channels = self.adjust_channels(expanded_channels, width_mult)
        self.out_channels = self.adjust_channels(out_channels, width_mult)
        self.use_se = use_se
        self.use_hs = activation == "HS"
        self.stride = stride
        self.dilation = dilation

    @staticmethod
    def adjust_channels(channels, width_mult):
        """``channels * width_mult`` rounded to a multiple of 8."""
        return make_divisible(channels * width_mult, 8)


class InvertedResidual(nn.Module):
    """Expansion, depthwise convolution, optional squeeze-excitation, linear projection: ``block``."""

    def __init__(self, cnf, norm_layer, se_layer=partial(SqueezeExcitation, scale_activation=nn.Hardsigmoid)):
        super().__init__()
        if not 1 <= cnf.stride <= 2:
            raise ValueError("illegal stride value")
        self.use_res_connect = cnf.stride == 1 and cnf.input_channels == cnf.out_channels
        activation_layer = nn.Hardswish if cnf.use_hs else nn.ReLU
        layers = []
        if cnf.expanded_channels != cnf.input_channels:
            layers.append(Conv2dNormActivation(cnf.input_channels, cnf.expanded_channels, kernel_size=1,
                                               norm_layer=norm_layer, activation_layer=activation_layer))
        stride = 1 if cnf.dilation > 1 else cnf.stride
        layers.append(Conv2dNormActivation(cnf.expanded_channels, cnf.expanded_channels, kernel_size=cnf.kernel,
                                           stride=stride, dilation=cnf.dilation, groups=cnf.expanded_channels,
                                           norm_layer=norm_layer, activation_layer=activation_layer))
        if cnf.use_se:
            layers.append(se_layer(cnf.expanded_channels, make_divisible(cnf.expanded_channels // 4, 8)))
        layers.append(Conv2dNormActivation(cnf.expanded_channels, cnf.out_channels, kernel_size=1,
                                           norm_layer=norm_layer, activation_layer=None))
        self.block = nn.Sequential(*layers)
        self.out_channels = cnf.out_channels
        self._is_cn = cnf.stride > 1

    def forward(self, input):
        result = self.block(input)
        return result + input if self.use_res_connect else result


class MobileNetV3(nn.Module):
    """MobileNetV3 over a list of ``InvertedResidualConfig``.

    Args:
        inverted_residual_setting: the blocks; last_channel: width of the penultimate layer.
        num_classes: outputs; block: default ``InvertedResidual``.
        norm_layer: default ``BatchNorm2d(eps=0.001, momentum=0.01)``; dropout: in the classifier.
    """

    def __init__(self, inverted_residual_setting, last_channel, num_classes=1000, block=None, norm_layer=None,
                 dropout=0.2, **kwargs):
        super().__init__()
        if not inverted_residual_setting:
            raise ValueError("The inverted_residual_setting should not be empty")
        block = block or InvertedResidual
        norm_layer = norm_layer or partial(nn.BatchNorm2d, eps=0.001, momentum=0.01)
        first = inverted_residual_setting[0].input_channels
        layers = [Conv2dNormActivation(3, first, kernel_size=3, stride=2, norm_layer=norm_layer,
                                       activation_layer=nn.Hardswish)]
        layers += [block(cnf, norm_layer) for cnf in inverted_residual_setting]
        lastconv_input = inverted_residual_setting[-1].out_channels
        lastconv_output = 6 * lastconv_input
        layers.append(Conv2dNormActivation(lastconv_input, lastconv_output, kernel_size=1, norm_layer=norm_layer,
                                           activation_layer=nn.Hardswish))
        self.features = nn.Sequential(*layers)
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.classifier = nn.Sequential(nn.Linear(lastconv_output, last_channel), nn.Hardswish(inplace=True),
                                        nn.Dropout(p=dropout, inplace=True), nn.Linear(last_channel, num_classes))
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out")
                if m.bias is not None:
                    nn.init.zeros_(m.bias)
            elif isinstance(m, (nn.BatchNorm2d, nn.GroupNorm)):
                nn.init.ones_(m.weight)
                nn.init.zeros_(m.bias)
            elif isinstance(m, nn.Linear):
                nn.init.normal_(m.weight, 0, 0.01)
                nn.init.zeros_(m.bias)

    def forward(self, x):
        x = torch.flatten(self.avgpool(self.features(x)), 1)
        return self.classifier(x)


def _mobilenet_v3_conf(arch, width_mult=1.0, reduced_tail=False, dilated=False):
    reduce_divider = 2 if reduced_tail else 1
    dilation = 2 if dilated else 1
    c = partial(InvertedResidualConfig, width_mult=width_mult)
    rd = reduce_divider
    if arch == "mobilenet_v3_large":
        setting = [
            c(16, 3, 16, 16, False, "RE", 1, 1), c(16, 3, 64, 24, False, "RE", 2, 1),
            c(24, 3, 72, 24, False, "RE", 1, 1), c(24, 5, 72, 40, True, "RE", 2, 1),
            c(40, 5, 120, 40, True, "RE", 1, 1), c(40, 5, 120, 40, True, "RE", 1, 1),
            c(40, 3, 240, 80, False, "HS", 2, 1), c(80, 3, 200, 80, False, "HS", 1, 1),
            c(80, 3, 184, 80, False, "HS", 1, 1), c(80, 3, 184, 80, False, "HS", 1, 1),
            c(80, 3, 480, 112, True, "HS", 1, 1), c(112, 3, 672, 112, True, "HS", 1, 1),
            c(112, 5, 672, 160 // rd, True, "HS", 2, dilation),
            c(160 // rd, 5, 960 // rd, 160 // rd, True, "HS", 1, dilation),
            c(160 // rd, 5, 960 // rd, 160 // rd, True, "HS", 1, dilation)]
        last_channel = InvertedResidualConfig.adjust_channels(1280 // rd, width_mult)
    elif arch == "mobilenet_v3_small":
        setting = [
            c(16, 3, 16, 16, True, "RE", 2, 1), c(16, 3, 72, 24, False, "RE", 2, 1),
            c(24, 3, 88, 24, False, "RE", 1, 1), c(24, 5, 96, 40, True, "HS", 2, 1),
            c(40, 5, 240, 40, True, "HS", 1, 1), c(40, 5, 240, 40, True, "HS", 1, 1),
            c(40, 5, 120, 48, True, "HS", 1, 1), c(48, 5, 144, 48, True, "HS", 1, 1),
            c(48, 5, 288, 96 // rd, True, "HS", 2, dilation),
            c(96 // rd, 5, 576 // rd, 96 // rd, True, "HS", 1, dilation),
            c(96 // rd, 5, 576 // rd, 96 // rd, True, "HS", 1, dilation)]
        last_channel = InvertedResidualConfig.adjust_channels(1024 // rd, width_mult)
    else:
        raise ValueError(f"Unsupported model type {arch}")
    return setting, last_channel


def _mobilenet_v3(arch, weights, progress, **kwargs):
    setting, last_channel = _mobilenet_v3_conf(arch, **{k: kwargs.pop(k) for k in
                                                        ("width_mult", "reduced_tail", "dilated") if k in kwargs})
    if weights is not None:
        overwrite_named_param(kwargs, "num_classes", len(weights.meta["categories"]))
    return load_weights(MobileNetV3(setting, last_channel, **kwargs), weights, progress)


class MobileNet_V3_Large_Weights(WeightsEnum):
    """ImageNet weights of mobilenet_v3_large."""
    IMAGENET1K_V1 = table_weights("MobileNet_V3_Large_Weights.IMAGENET1K_V1")
    IMAGENET1K_V2 = table_weights("MobileNet_V3_Large_Weights.IMAGENET1K_V2")
    DEFAULT = IMAGENET1K_V2


class MobileNet_V3_Small_Weights(WeightsEnum):
    """ImageNet weights of mobilenet_v3_small."""
    IMAGENET1K_V1 = table_weights("MobileNet_V3_Small_Weights.IMAGENET1K_V1")
    DEFAULT = IMAGENET1K_V1


@register_model()
@handle_legacy_interface(weights=("pretrained", MobileNet_V3_Large_Weights.IMAGENET1K_V1))
def mobilenet_v3_large(*, weights: MobileNet_V3_Large_Weights = None, progress=True, **kwargs):
    """MobileNetV3 Large.

    Args:
        weights: a ``MobileNet_V3_Large_Weights`` member to load, or None.
        progress: show download progress.
        **kwargs: ``width_mult``, ``reduced_tail``, ``dilated``, and ``MobileNetV3``'s arguments.
    """
    return _mobilenet_v3("mobilenet_v3_large", MobileNet_V3_Large_Weights.verify(weights), progress, **kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", MobileNet_V3_Small_Weights.IMAGENET1K_V1))
def mobilenet_v3_small(*, weights: MobileNet_V3_Small_Weights = None, progress=True, **kwargs):
    """MobileNetV3 Small; arguments as ``mobilenet_v3_large``."""
    return _mobilenet_v3("mobilenet_v3_small", MobileNet_V3_Small_Weights.verify(weights), progress, **kwargs)
