"""RoI Pool (Fast R-CNN): the maximum of each bin of each box, differentiable in the features
(bins are planned in NumPy from the boxes; values are gathered and reduced with ember ops)."""
import math

import numpy as np

import ember_nn as nn
import ember_tensor as torch

from .roi_align import _rois_as_array

__all__ = ["roi_pool", "RoIPool"]


def _round_half_away(x):
    # C's round(), which torchvision's kernel uses (Python's round() goes to even).
    return math.copysign(math.floor(abs(x) + 0.5), x)


def _bin_plan(rois, height, width, pooled_h, pooled_w, spatial_scale):
    """Flat indices of each bin's pixels, (K, PH, PW, S), and a mask of the real ones."""
    bins = []
    for batch_index, x1, y1, x2, y2 in rois:
        start_w, start_h = _round_half_away(x1 * spatial_scale), _round_half_away(y1 * spatial_scale)
        end_w, end_h = _round_half_away(x2 * spatial_scale), _round_half_away(y2 * spatial_scale)
        roi_w, roi_h = max(end_w - start_w + 1, 1), max(end_h - start_h + 1, 1)
        bin_h, bin_w = roi_h / pooled_h, roi_w / pooled_w
        for ph in range(pooled_h):
            h0 = min(max(math.floor(ph * bin_h) + start_h, 0), height)
            h1 = min(max(math.ceil((ph + 1) * bin_h) + start_h, 0), height)
            for pw in range(pooled_w):
                w0 = min(max(math.floor(pw * bin_w) + start_w, 0), width)
                w1 = min(max(math.ceil((pw + 1) * bin_w) + start_w, 0), width)
                ys, xs = np.meshgrid(np.arange(h0, h1), np.arange(w0, w1), indexing="ij")
                bins.append((int(batch_index) * height * width + ys * width + xs).ravel())
    samples = max((len(b) for b in bins), default=0) or 1
    index = np.zeros((len(bins), samples), np.int64)
    valid = np.zeros((len(bins), samples), bool)
    for k, b in enumerate(bins):
        index[k, :len(b)] = b
        valid[k, :len(b)] = True
    shape = (len(rois), pooled_h, pooled_w, samples)
    return index.reshape(shape), valid.reshape(shape)


def roi_pool(input, boxes, output_size, spatial_scale=1.0):
    """Max-pool each box of ``boxes`` from ``input`` (N, C, H, W) to (C, *output_size), as
    torchvision (box corners rounded to pixels; an empty bin is 0).

    Args:
        input: the feature map.
        boxes: Tensor[K, 5] of ``(batch_index, x1, y1, x2, y2)``, or a list of Tensor[L, 4] per image.
        output_size: ``(height, width)`` or an int.
        spatial_scale: maps box coordinates to the feature map.
    """
    pooled_h, pooled_w = (output_size, output_size) if isinstance(output_size, int) else tuple(output_size)
    n, c, height, width = input.shape
    rois = _rois_as_array(boxes)
    index, valid = _bin_plan(rois, height, width, pooled_h, pooled_w, spatial_scale)
    flat = input.permute(0, 2, 3, 1).reshape(n * height * width, c)
    values = torch.index_select(flat, 0, torch.from_numpy(index.reshape(-1)).to(input.device))
    values = values.reshape(*index.shape, c)
    mask = torch.from_numpy(valid[..., None]).to(input.device)
    pooled = torch.where(mask, values, torch.full_like(values, -math.inf)).amax(dim=3)
    empty = torch.from_numpy(~valid.any(axis=3)[..., None]).to(input.device)
    pooled = torch.where(empty, torch.zeros_like(pooled), pooled)
    return pooled.permute(0, 3, 1, 2).contiguous()


class RoIPool(nn.Module):
    """``roi_pool`` as a module."""

    def __init__(self, output_size, spatial_scale):
        super().__init__()
        self.output_size = output_size
        self.spatial_scale = spatial_scale

    def forward(self, input, rois):
        return roi_pool(input, rois, self.output_size, self.spatial_scale)

    def __repr__(self):
        return f"{self.__class__.__name__}(output_size={self.output_size}, spatial_scale={self.spatial_scale})"
