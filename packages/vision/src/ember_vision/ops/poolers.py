"""MultiScaleRoIAlign: RoI Align from the FPN level each box belongs to (eq. 1 of the FPN
paper: level = floor(4 + log2(sqrt(area) / 224)), clamped to the levels present)."""
import math

import numpy as np

import ember_nn as nn
import ember_tensor as torch

from .roi_align import roi_align

__all__ = ["MultiScaleRoIAlign"]


def _infer_scale(feature, original_size):
    # The power of two closest to the ratio of the feature map's size to the image's.
    return 2.0 ** round(math.log2(float(feature.shape[-2]) / float(original_size[0])))


class MultiScaleRoIAlign(nn.Module):
    """Pool each box from the feature map of its FPN level.

    Args:
        featmap_names: the names, in the input dict, of the maps to pool from.
        output_size: int or (h, w); sampling_ratio: as ``roi_align``'s.
        canonical_scale, canonical_level: a box of ``canonical_scale`` pixels a side goes to
            level ``canonical_level`` (224 and 4 in the paper).
    """

    def __init__(self, featmap_names, output_size, sampling_ratio, *, canonical_scale=224, canonical_level=4):
        super().__init__()
        if isinstance(output_size, int):
            output_size = (output_size, output_size)
        self.featmap_names = featmap_names
        self.sampling_ratio = sampling_ratio
        self.output_size = tuple(output_size)
        self.scales = None
        self.canonical_scale = canonical_scale
        self.canonical_level = canonical_level

    def _levels(self, boxes, k_min, k_max):
        b = np.concatenate([x.detach().cpu().numpy() for x in boxes]).astype(np.float32)
        s = np.sqrt((b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1]))
        target = np.floor(self.canonical_level + np.log2(s / self.canonical_scale) + np.float32(1e-6))
        return (np.clip(target, k_min, k_max).astype(np.int64) - k_min)

    def forward(self, x, boxes, image_shapes):
        maps = [v for k, v in x.items() if k in self.featmap_names]
        if not image_shapes:
            raise ValueError("images list should not be empty")
        original = (max(s[0] for s in image_shapes), max(s[1] for s in image_shapes))
        self.scales = [_infer_scale(m, original) for m in maps]
        if len(maps) == 1:
            return roi_align(maps[0], list(boxes), self.output_size, self.scales[0], self.sampling_ratio)
        k_min = int(-math.log2(self.scales[0]))
        k_max = int(-math.log2(self.scales[-1]))
        levels = self._levels(boxes, k_min, k_max)
        image_index = np.concatenate([np.full(len(b), i) for i, b in enumerate(boxes)]).astype(np.float32)
        rois = torch.cat([torch.from_numpy(image_index[:, None]).to(dtype=boxes[0].dtype, device=boxes[0].device),
                          torch.cat(list(boxes))], dim=1)
        pooled, order = [], []
        for level, (feature, scale) in enumerate(zip(maps, self.scales)):
            members = np.nonzero(levels == level)[0]
            if len(members):
                index = torch.from_numpy(members).to(rois.device)
                pooled.append(roi_align(feature, torch.index_select(rois, 0, index), self.output_size, scale,
                                        self.sampling_ratio))
                order.append(members)
        # A level past the maps given pools nothing: zeros, as torchvision leaves them.
        missing = np.setdiff1d(np.arange(len(levels)), np.concatenate(order) if order else [])
        if len(missing):
            pooled.append(torch.zeros((len(missing), maps[0].shape[1], *self.output_size), dtype=maps[0].dtype,
                                      device=maps[0].device))
            order.append(missing)
        # Back to the boxes' order: a gather keeps the result differentiable in every map.
        inverse = np.argsort(np.concatenate(order), kind="stable")
        return torch.index_select(torch.cat(pooled), 0, torch.from_numpy(inverse).to(rois.device))

    def __repr__(self):
        return (f"{self.__class__.__name__}(featmap_names={self.featmap_names}, output_size={self.output_size}, "
                f"sampling_ratio={self.sampling_ratio})")
