"""DropBlock (Ghiasi et al. 2018): drop contiguous square (cube) regions of feature maps while
training, rescaling the rest so the expected sum is unchanged."""
import ember_nn as nn
import ember_nn.functional as F
import ember_tensor as torch

__all__ = ["drop_block2d", "drop_block3d", "DropBlock2d", "DropBlock3d"]


def _drop_block(input, p, block_size, inplace, eps, training, dims):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"drop probability has to be between 0 and 1, but got {p}.")
    if input.ndim != dims + 2:
        raise ValueError(f"input should be {dims + 2} dimensional. Got {input.ndim} dimensions.")
    if not training or p == 0.0:
        return input
    spatial = tuple(input.shape[2:])
    block_size = min(block_size, *spatial)
    if block_size % 2 == 0:
        raise ValueError(f"block size should be odd. Got {block_size} which is even.")
    # The seed rate that drops a fraction p of the positions once every seed grows into a block.
    valid = 1
    for size in spatial:
        valid *= size - block_size + 1
    total = 1
    for size in spatial:
        total *= size
    gamma = (p * total) / ((block_size ** dims) * valid)
    seeds_shape = tuple(input.shape[:2]) + tuple(size - block_size + 1 for size in spatial)
    noise = torch.bernoulli(torch.full(seeds_shape, gamma, dtype=input.dtype, device=input.device))
    noise = F.pad(noise, [block_size // 2] * (2 * dims), value=0)
    pool = F.max_pool2d if dims == 2 else F.max_pool3d
    noise = 1 - pool(noise, stride=1, kernel_size=block_size, padding=block_size // 2)
    normalize_scale = noise.numel() / (eps + noise.sum())
    if inplace:
        return input.mul_(noise).mul_(normalize_scale)
    return input * noise * normalize_scale


def drop_block2d(input, p, block_size, inplace=False, eps=1e-06, training=True):
    """Zero ``block_size`` x ``block_size`` squares of an (N, C, H, W) input, about a fraction
    ``p`` of it, and rescale the rest; identity when not ``training``."""
    return _drop_block(input, p, block_size, inplace, eps, training, 2)


def drop_block3d(input, p, block_size, inplace=False, eps=1e-06, training=True):
    """``drop_block2d`` for (N, C, D, H, W) inputs (cubes)."""
    return _drop_block(input, p, block_size, inplace, eps, training, 3)


class DropBlock2d(nn.Module):
    """``drop_block2d`` as a module (follows ``self.training``)."""

    def __init__(self, p, block_size, inplace=False, eps=1e-06):
        super().__init__()
        self.p = p
        self.block_size = block_size
        self.inplace = inplace
        self.eps = eps

    def forward(self, input):
        return drop_block2d(input, self.p, self.block_size, self.inplace, self.eps, self.training)

    def __repr__(self):
        return f"{self.__class__.__name__}(p={self.p}, block_size={self.block_size}, inplace={self.inplace})"


class DropBlock3d(DropBlock2d):
    """``drop_block3d`` as a module."""

    def forward(self, input):
        return drop_block3d(input, self.p, self.block_size, self.inplace, self.eps, self.training)
