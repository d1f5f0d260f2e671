"""ConvNeXt Tiny/Small/Base/Large (Liu et al. 2022): depthwise 7x7 convolutions, LayerNorm,
an inverted MLP and a learned per-channel layer scale, in torchvision's layout."""
from functools import partial

import ember_nn as nn
import ember_nn.functional as F
import ember_tensor as torch

from ..ops.misc import Conv2dNormActivation, Permute
from ..ops.stochastic_depth import StochasticDepth
from ._api import WeightsEnum, table_weights, register_model
from ._utils import handle_legacy_interface, load_weights, overwrite_named_param

__all__ = ["ConvNeXt", "ConvNeXt_Tiny_Weights", "ConvNeXt_Small_Weights", "ConvNeXt_Base_Weights",
           "ConvNeXt_Large_Weights", "convnext_tiny", "convnext_small", "convnext_base", "convnext_large"]


class LayerNorm2d(nn.LayerNorm):
    """LayerNorm over the channels of an (N, C, H, W) tensor."""

    def forward(self, x):
        x = F.layer_norm(x.permute(0, 2, 3, 1), self.normalized_shape, self.weight, self.bias, self.eps)
        return x.permute(0, 3, 1, 2)


class CNBlock(nn.Module):
    """Depthwise 7x7, LayerNorm, Linear x4, GELU, Linear back, scaled by ``layer_scale``, plus the input."""

    def __init__(self, dim, layer_scale, stochastic_depth_prob, norm_layer=None):
        super().__init__()
        norm_layer = norm_layer or partial(nn.LayerNorm, eps=1e-6)
        self.block = nn.Sequential(
            nn.Conv2d(dim, dim, kernel_size=7, padding=3, groups=dim, bias=True), Permute([0, 2, 3, 1]),
            norm_layer(dim), nn.Linear(dim, 4 * dim, bias=True), nn.GELU(), nn.Linear(4 * dim, dim, bias=True),
            Permute([0, 3, 1, 2]))
        self.layer_scale = nn.Parameter(torch.ones(dim, 1, 1) * layer_scale)
        self.stochastic_depth = StochasticDepth(stochastic_depth_prob, "row")

    def forward(self, input):
        return self.stochastic_depth(self.layer_scale * self.block(input)) + input


class CNBlockConfig:
    """One stage: its width, the next stage's width (None for the last), its number of blocks."""

    def __init__(self, input_channels, out_channels, num_layers):
        self.input_channels = input_channels
        self.out_channels = out_channels
        self.num_layers = num_layers

    def __repr__(self):
        return (f"{self.__class__.__name__}(input_channels={self.input_channels}, out_channels={self.out_channels}, "
                f"num_layers={self.num_layers})")


class ConvNeXt(nn.Module):
    """ConvNeXt over a list of ``CNBlockConfig`` stages.

    Args:
        block_setting: the stages; stochastic_depth_prob: the last block's drop rate.
        layer_scale: the initial per-channel scale of each block's branch.
        num_classes: outputs; block: default ``CNBlock``; norm_layer: default LayerNorm2d(eps=1e-6).
    """

    def __init__(self, block_setting, stochastic_depth_prob=0.0, layer_scale=1e-6, num_classes=1000, block=None,
                 norm_layer=None, **kwargs):
        super().__init__()
        if not block_setting:
            raise ValueError("The block_setting should not be empty")
        if not all(isinstance(s, CNBlockConfig) for s in block_setting):
            raise TypeError("The block_setting should be List[CNBlockConfig]")
        block = block or CNBlock
        norm_layer = norm_layer or partial(LayerNorm2d, eps=1e-6)
        layers = [Conv2dNormActivation(3, block_setting[0].input_channels, kernel_size=4, stride=4, padding=0,
                                       norm_layer=norm_layer, activation_layer=None, bias=True)]
        total_stage_blocks = sum(cnf.num_layers for cnf in block_setting)
        stage_block_id = 0
        for cnf in block_setting:
            stage = []
            for _ in range(cnf.num_layers):
                sd_prob = stochastic_depth_prob * stage_block_id / (total_stage_blocks - 1.0)
                stage.append(block(cnf.input_channels, layer_scale, sd_prob))
                stage_block_id += 1
            layers.append(nn.Sequential(*stage))
            if cnf.out_channels is not None:  # downsampling between stages
                layers.append(nn.Sequential(norm_layer(cnf.input_channels),
                                            nn.Conv2d(cnf.input_channels, cnf.out_channels, kernel_size=2, stride=2)))
        self.features = nn.Sequential(*layers)
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        last = block_setting[-1]
        last_channels = last.out_channels if last.out_channels is not None else last.input_channels
        self.classifier = nn.Sequential(norm_layer(last_channels), nn.Flatten(1), nn.Linear(last_channels, num_classes))
        for m in self.modules():
            if isinstance(m, (nn.Conv2d, nn.Linear)):
                nn.init.trunc_normal_(m.weight, std=0.02)
                if m.bias is not None:
                    nn.init.zeros_(m.bias)

    def forward(self, x):
        return self.classifier(self.avgpool(self.features(x)))


_SETTINGS = {
    "tiny": ([(96, 192, 3), (192, 384, 3), (384, 768, 9), (768, None, 3)], 0.1),
    "small": ([(96, 192, 3), (192, 384, 3), (384, 768, 27), (768, None, 3)], 0.4),
    "base": ([(128, 256, 3), (256, 512, 3), (512, 1024, 27), (1024, None, 3)], 0.5),
    "large": ([(192, 384, 3), (384, 768, 3), (768, 1536, 27), (1536, None, 3)], 0.5),
}


def _convnext(size, weights, progress, **kwargs):
    rows, stochastic_depth_prob = _SETTINGS[size]
    if weights is not None:
        overwrite_named_param(kwargs, "num_classes", len(weights.meta["categories"]))
    model = ConvNeXt([CNBlockConfig(*row) for row in rows],
                     stochastic_depth_prob=kwargs.pop("stochastic_depth_prob", stochastic_depth_prob), **kwargs)
    return load_weights(model, weights, progress)


class ConvNeXt_Tiny_Weights(WeightsEnum):
    """ImageNet weights of convnext_tiny."""
    IMAGENET1K_V1 = table_weights("ConvNeXt_Tiny_Weights.IMAGENET1K_V1")
    DEFAULT = IMAGENET1K_V1


class ConvNeXt_Small_Weights(WeightsEnum):
    """ImageNet weights of convnext_small."""
    IMAGENET1K_V1 = table_weights("ConvNeXt_Small_Weights.IMAGENET1K_V1")
    DEFAULT = IMAGENET1K_V1


class ConvNeXt_Base_Weights(WeightsEnum):
    """ImageNet weights of convnext_base."""
    IMAGENET1K_V1 = table_weights("ConvNeXt_Base_Weights.IMAGENET1K_V1")
    DEFAULT = IMAGENET1K_V1


class ConvNeXt_Large_Weights(WeightsEnum):
    """ImageNet weights of convnext_large."""
    IMAGENET1K_V1 = table_weights("ConvNeXt_Large_Weights.IMAGENET1K_V1")
    DEFAULT = IMAGENET1K_V1


@register_model()
@handle_legacy_interface(weights=("pretrained", ConvNeXt_Tiny_Weights.IMAGENET1K_V1))
def convnext_tiny(*, weights: ConvNeXt_Tiny_Weights = None, progress=True, **kwargs):
    """ConvNeXt Tiny.

    Args:
        weights: a ``ConvNeXt_Tiny_Weights`` member to load, or None.
        progress: show download progress.
        **kwargs: passed to ``ConvNeXt`` (``stochastic_depth_prob`` defaults to 0.1).
    """
    return _convnext("tiny", ConvNeXt_Tiny_Weights.verify(weights), progress, **kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", ConvNeXt_Small_Weights.IMAGENET1K_V1))
def convnext_small(*, weights: ConvNeXt_Small_Weights = None, progress=True, **kwargs):
    """ConvNeXt Small (``stochastic_depth_prob`` 0.4); arguments as ``convnext_tiny``."""
    return _convnext("small", ConvNeXt_Small_Weights.verify(weights), progress, **kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", ConvNeXt_Base_Weights.IMAGENET1K_V1))
def convnext_base(*, weights: ConvNeXt_Base_Weights = None, progress=True, **kwargs):
    """ConvNeXt Base (``stochastic_depth_prob`` 0.5); arguments as ``convnext_tiny``."""
    return _convnext("base", ConvNeXt_Base_Weights.verify(weights), progress, **kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", ConvNeXt_Large_Weights.IMAGENET1K_V1))
def convnext_large(*, weights: ConvNeXt_Large_Weights = None, progress=True, **kwargs):
    """ConvNeXt Large (``stochastic_depth_prob`` 0.5); arguments as ``convnext_tiny``."""
    return _convnext("large", ConvNeXt_Large_Weights.verify(weights), progress, **kwargs)
