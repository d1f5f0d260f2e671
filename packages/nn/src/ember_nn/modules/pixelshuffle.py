"""PixelShuffle and PixelUnshuffle: trade channels for spatial resolution and back;
ChannelShuffle: interleave groups of channels (ShuffleNet)."""
from .. import functional as F
from .module import Module

__all__ = ["PixelShuffle", "PixelUnshuffle", "ChannelShuffle"]


class PixelShuffle(Module):
    """(*, C*r^2, H, W) -> (*, C, H*r, W*r) with r = `upscale_factor`."""

    def __init__(self, upscale_factor):
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, input):
        return F.pixel_shuffle(input, self.upscale_factor)

    def extra_repr(self):
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    """(*, C, H*r, W*r) -> (*, C*r^2, H, W) with r = `downscale_factor`."""

    def __init__(self, downscale_factor):
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, input):
        return F.pixel_unshuffle(input, self.downscale_factor)

    def extra_repr(self):
        return f"downscale_factor={self.downscale_factor}"


class ChannelShuffle(Module):
    """(N, g*k, *) -> (N, k*g, *): the channels of `groups` groups interleaved, so that the
    next grouped convolution sees every group (ShuffleNet).

    >>> import ember_tensor as torch
    >>> ChannelShuffle(2)(torch.arange(4.).reshape(1, 4, 1)).flatten().tolist()
    [0.0, 2.0, 1.0, 3.0]
    """

    def __init__(self, groups):
        super().__init__()
        self.groups = groups

    def forward(self, input):
        return F.channel_shuffle(input, self.groups)

    def extra_repr(self):
        return f"groups={self.groups}"
