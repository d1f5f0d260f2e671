"""Feature Pyramid Network (Lin et al. 2016): lateral 1x1 convolutions, a top-down pathway
of nearest upsampling and sums, 3x3 output convolutions; with torchvision's extra levels."""
from collections import OrderedDict

import ember_nn as nn
import ember_nn.functional as F

from .misc import Conv2dNormActivation

__all__ = ["FeaturePyramidNetwork", "ExtraFPNBlock", "LastLevelMaxPool", "LastLevelP6P7"]


class ExtraFPNBlock(nn.Module):
    """Base of the blocks that add levels after the FPN: ``forward(results, x, names)``
    returns the extended results and names."""

    def forward(self, results, x, names):
        raise NotImplementedError


class FeaturePyramidNetwork(nn.Module):
    """An FPN over an ordered dict of feature maps, highest resolution first.

    Args:
        in_channels_list: the channels of each input map.
        out_channels: the channels of every output map.
        extra_blocks: an ``ExtraFPNBlock`` adding levels (e.g. ``LastLevelMaxPool``).
        norm_layer: after each convolution (default none).
    """

    def __init__(self, in_channels_list, out_channels, extra_blocks=None, norm_layer=None):
        super().__init__()
        self.inner_blocks = nn.ModuleList()
        self.layer_blocks = nn.ModuleList()
        for in_channels in in_channels_list:
            if in_channels == 0:
                raise ValueError("in_channels=0 is currently not supported")
            self.inner_blocks.append(Conv2dNormActivation(in_channels, out_channels, kernel_size=1, padding=0,
                                                          norm_layer=norm_layer, activation_layer=None))
            self.layer_blocks.append(Conv2dNormActivation(out_channels, out_channels, kernel_size=3,
                                                          norm_layer=norm_layer, activation_layer=None))
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_uniform_(m.weight, a=1)
                if m.bias is not None:
                    nn.init.constant_(m.bias, 0)
        if extra_blocks is not None and not isinstance(extra_blocks, ExtraFPNBlock):
            raise TypeError(f"extra_blocks should be of type ExtraFPNBlock not {type(extra_blocks)}")
        self.extra_blocks = extra_blocks

    def forward(self, x):
        names = list(x.keys())
        maps = list(x.values())
        last_inner = self.inner_blocks[-1](maps[-1])
        results = [self.layer_blocks[-1](last_inner)]
        for idx in range(len(maps) - 2, -1, -1):
            inner_lateral = self.inner_blocks[idx](maps[idx])
            top_down = F.interpolate(last_inner, size=tuple(inner_lateral.shape[-2:]), mode="nearest")
            last_inner = inner_lateral + top_down
            results.insert(0, self.layer_blocks[idx](last_inner))
        if self.extra_blocks is not None:
            results, names = self.extra_blocks(results, maps, names)
        return OrderedDict(zip(names, results))


class LastLevelMaxPool(ExtraFPNBlock):
    """Add a level ``"pool"``: the last map subsampled by 2."""

    def forward(self, x, y, names):
        names.append("pool")
        x.append(F.max_pool2d(x[-1], kernel_size=1, stride=2, padding=0))
        return x, names


class LastLevelP6P7(ExtraFPNBlock):
    """RetinaNet's extra levels P6 and P7 (strided 3x3 convolutions)."""

    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.p6 = nn.Conv2d(in_channels, out_channels, 3, 2, 1)
        self.p7 = nn.Conv2d(out_channels, out_channels, 3, 2, 1)
        for module in (self.p6, self.p7):
            nn.init.kaiming_uniform_(module.weight, a=1)
            nn.init.constant_(module.bias, 0)
        self.use_P5 = in_channels == out_channels

    def forward(self, p, c, names):
        p5, c5 = p[-1], c[-1]
        p6 = self.p6(p5 if self.use_P5 else c5)
        p7 = self.p7(F.relu(p6))
        return p + [p6, p7], names + ["p6", "p7"]
