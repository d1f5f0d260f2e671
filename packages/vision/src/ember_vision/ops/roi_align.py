"""RoI Align (Mask R-CNN): average bilinear samples of each box's bins, differentiable in
the feature map (the samples are gathered with ember ops; only their positions, which
depend on the boxes alone, are planned in NumPy)."""
import math

import numpy as np

import ember_nn as nn
import ember_tensor as torch

__all__ = ["roi_align", "RoIAlign"]


def _rois_as_array(boxes):
    if isinstance(boxes, (list, tuple)):
        rows = []
        for batch_index, b in enumerate(boxes):
            b = b.detach().cpu().numpy().astype(np.float64)
            rows.append(np.concatenate([np.full((len(b), 1), batch_index, np.float64), b], axis=1))
        return np.concatenate(rows) if rows else np.zeros((0, 5))
    if boxes.dim() != 2 or boxes.shape[1] != 5:
        raise ValueError("boxes should be a Tensor[K, 5] or a list of Tensor[L, 4]")
    return boxes.detach().cpu().numpy().astype(np.float64)


def _sampling_plan(rois, height, width, pooled_h, pooled_w, spatial_scale, sampling_ratio, aligned):
    """Flat indices (into N*H*W) and weights of the four corners of every bilinear sample,
    each of shape (K, PH, PW, S) with S = 4 * the largest bin grid (padding has weight 0)."""
    offset = 0.5 if aligned else 0.0
    per_roi = []
    for batch_index, x1, y1, x2, y2 in rois:
        start_w, start_h = x1 * spatial_scale - offset, y1 * spatial_scale - offset
        roi_w, roi_h = x2 * spatial_scale - offset - start_w, y2 * spatial_scale - offset - start_h
        if not aligned:
            roi_w, roi_h = max(roi_w, 1.0), max(roi_h, 1.0)
        bin_h, bin_w = roi_h / pooled_h, roi_w / pooled_w
        grid_h = sampling_ratio if sampling_ratio > 0 else int(math.ceil(roi_h / pooled_h))
        grid_w = sampling_ratio if sampling_ratio > 0 else int(math.ceil(roi_w / pooled_w))
        count = max(grid_h * grid_w, 1)
        ph = np.arange(pooled_h)[:, None, None, None]
        pw = np.arange(pooled_w)[None, :, None, None]
        iy = np.arange(grid_h)[None, None, :, None]
        ix = np.arange(grid_w)[None, None, None, :]
        y = start_h + ph * bin_h + (iy + 0.5) * bin_h / grid_h
        x = start_w + pw * bin_w + (ix + 0.5) * bin_w / grid_w
        y, x = np.broadcast_arrays(y, x)
        y, x = y.reshape(pooled_h, pooled_w, -1), x.reshape(pooled_h, pooled_w, -1)
        outside = (y < -1.0) | (y > height) | (x < -1.0) | (x > width)
        y, x = np.clip(y, 0, None), np.clip(x, 0, None)
        y_low, x_low = y.astype(np.int64), x.astype(np.int64)
        y_edge, x_edge = y_low >= height - 1, x_low >= width - 1
        y_low, x_low = np.where(y_edge, height - 1, y_low), np.where(x_edge, width - 1, x_low)
        y, x = np.where(y_edge, y_low, y), np.where(x_edge, x_low, x)
        y_high, x_high = np.where(y_edge, y_low, y_low + 1), np.where(x_edge, x_low, x_low + 1)
        ly, lx = y - y_low, x - x_low
        hy, hx = 1.0 - ly, 1.0 - lx
        base = int(batch_index) * height * width
        index = np.concatenate([base + y_low * width + x_low, base + y_low * width + x_high,
                                base + y_high * width + x_low, base + y_high * width + x_high], axis=-1)
        weight = np.concatenate([hy * hx, hy * lx, ly * hx, ly * lx], axis=-1) / count
        weight = np.where(np.concatenate([outside] * 4, axis=-1), 0.0, weight)
        per_roi.append((index, weight))
    samples = max((w.shape[-1] for _, w in per_roi), default=0)
    index = np.zeros((len(per_roi), pooled_h, pooled_w, samples), np.int64)
    weight = np.zeros((len(per_roi), pooled_h, pooled_w, samples), np.float64)
    for k, (i, w) in enumerate(per_roi):
        index[k, :, :, :i.shape[-1]] = i
        weight[k, :, :, :w.shape[-1]] = w
    return index, weight


def roi_align(input, boxes, output_size, spatial_scale=1.0, sampling_ratio=-1, aligned=False):
    """Pool each box of ``boxes`` from ``input`` (N, C, H, W) to (C, *output_size) by averaging
    bilinear samples of each bin, as torchvision.

    Args:
        input: the feature map.
        boxes: Tensor[K, 5] of ``(batch_index, x1, y1, x2, y2)``, or a list of Tensor[L, 4] per image.
        output_size: ``(height, width)`` or an int.
        spatial_scale: maps box coordinates to the feature map (e.g. 1/16).
        sampling_ratio: samples per bin side (<= 0: ``ceil(box side / output side)``).
        aligned: shift by half a pixel (pixel-centre coordinates, the correct alignment).

    Returns:
        Tensor[K, C, output_size[0], output_size[1]].
    """
    pooled_h, pooled_w = (output_size, output_size) if isinstance(output_size, int) else tuple(output_size)
    n, c, height, width = input.shape
    rois = _rois_as_array(boxes)
    index, weight = _sampling_plan(rois, height, width, pooled_h, pooled_w, spatial_scale, sampling_ratio, aligned)
    k, samples = len(rois), index.shape[-1]
    flat = input.permute(0, 2, 3, 1).reshape(n * height * width, c)
    values = torch.index_select(flat, 0, torch.from_numpy(index.reshape(-1)).to(input.device))
    w = torch.from_numpy(weight.reshape(-1, 1)).to(dtype=input.dtype, device=input.device)
    pooled = (values * w).reshape(k, pooled_h, pooled_w, samples, c).sum(dim=3)
    return pooled.permute(0, 3, 1, 2).contiguous()


class RoIAlign(nn.Module):
    """``roi_align`` as a module."""

    def __init__(self, output_size, spatial_scale, sampling_ratio, aligned=False):
        super().__init__()
        self.output_size = output_size
        self.spatial_scale = spatial_scale
        self.sampling_ratio = sampling_ratio
        self.aligned = aligned

    def forward(self, input, rois):
        return roi_align(input, rois, self.output_size, self.spatial_scale, self.sampling_ratio, self.aligned)

    def __repr__(self):
        return (f"{self.__class__.__name__}(output_size={self.output_size}, spatial_scale={self.spatial_scale}, "
                f"sampling_ratio={self.sampling_ratio}, aligned={self.aligned})")
