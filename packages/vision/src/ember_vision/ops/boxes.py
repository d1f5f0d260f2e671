"""Box operations on (N, 4) tensors: formats, areas, IoU, non-maximum suppression."""
import math

import numpy as np

import ember_tensor as torch

__all__ = ["box_area", "box_iou", "generalized_box_iou", "distance_box_iou", "complete_box_iou", "box_convert",
           "clip_boxes_to_image", "remove_small_boxes", "masks_to_boxes", "nms", "batched_nms"]


def box_area(boxes):
    """Areas of ``(x1, y1, x2, y2)`` boxes.

    >>> import ember_tensor as torch
    >>> box_area(torch.tensor([[0.0, 0.0, 2.0, 3.0]])).tolist()
    [6.0]
    """
    return (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])


def _box_inter_union(boxes1, boxes2):
    area1, area2 = box_area(boxes1), box_area(boxes2)
    lt = torch.maximum(boxes1[:, None, :2], boxes2[None, :, :2])
    rb = torch.minimum(boxes1[:, None, 2:], boxes2[None, :, 2:])
    wh = (rb - lt).clamp(min=0)
    inter = wh[:, :, 0] * wh[:, :, 1]
    return inter, area1[:, None] + area2[None, :] - inter


def box_iou(boxes1, boxes2):
    """The (N, M) matrix of intersection-over-union of two sets of ``xyxy`` boxes.

    >>> import ember_tensor as torch
    >>> box_iou(torch.tensor([[0.0, 0.0, 2.0, 2.0]]), torch.tensor([[1.0, 0.0, 3.0, 2.0]])).tolist()
    [[0.3333333432674408]]
    """
    inter, union = _box_inter_union(boxes1, boxes2)
    return inter / union


def _enclosing_wh(boxes1, boxes2):
    lti = torch.minimum(boxes1[:, None, :2], boxes2[None, :, :2])
    rbi = torch.maximum(boxes1[:, None, 2:], boxes2[None, :, 2:])
    return (rbi - lti).clamp(min=0)


def generalized_box_iou(boxes1, boxes2):
    """Generalised IoU (Rezatofighi et al. 2019): IoU minus the share of the smallest
    enclosing box that the union leaves empty; in [-1, 1]."""
    inter, union = _box_inter_union(boxes1, boxes2)
    whi = _enclosing_wh(boxes1, boxes2)
    area_enclosing = whi[:, :, 0] * whi[:, :, 1]
    return inter / union - (area_enclosing - union) / area_enclosing


def _box_diou_iou(boxes1, boxes2, eps):
    iou = box_iou(boxes1, boxes2)
    whi = _enclosing_wh(boxes1, boxes2)
    diagonal_distance_squared = whi[:, :, 0] ** 2 + whi[:, :, 1] ** 2 + eps
    x_p, y_p = (boxes1[:, 0] + boxes1[:, 2]) / 2, (boxes1[:, 1] + boxes1[:, 3]) / 2
    x_g, y_g = (boxes2[:, 0] + boxes2[:, 2]) / 2, (boxes2[:, 1] + boxes2[:, 3]) / 2
    centers_distance_squared = (x_p[:, None] - x_g[None, :]) ** 2 + (y_p[:, None] - y_g[None, :]) ** 2
    return iou - centers_distance_squared / diagonal_distance_squared, iou


def distance_box_iou(boxes1, boxes2, eps=1e-7):
    """Distance IoU (Zheng et al. 2019): IoU minus the squared distance of the centres over
    the squared diagonal of the enclosing box."""
    return _box_diou_iou(boxes1, boxes2, eps)[0]


def complete_box_iou(boxes1, boxes2, eps=1e-7):
    """Complete IoU: distance IoU minus an aspect-ratio consistency term."""
    diou, iou = _box_diou_iou(boxes1, boxes2, eps)
    w_pred, h_pred = boxes1[:, None, 2] - boxes1[:, None, 0], boxes1[:, None, 3] - boxes1[:, None, 1]
    w_gt, h_gt = boxes2[None, :, 2] - boxes2[None, :, 0], boxes2[None, :, 3] - boxes2[None, :, 1]
    v = (4 / (math.pi ** 2)) * (torch.atan(w_pred / h_pred) - torch.atan(w_gt / h_gt)) ** 2
    alpha = (v / (1 - iou + v + eps)).detach()  # a weight, not a path for gradients
    return diou - alpha * v


def masks_to_boxes(masks):
    """The ``xyxy`` box around each of (N, H, W) masks (pixel indices, inclusive); 0 for empty masks."""
    if masks.numel() == 0:
        return torch.zeros((0, 4), dtype=torch.float32, device=masks.device)
    array = masks.detach().cpu().numpy().astype(bool)
    boxes = np.zeros((len(array), 4), dtype=np.float32)
    for k, mask in enumerate(array):
        ys, xs = np.nonzero(mask)
        if len(ys):
            boxes[k] = (xs.min(), ys.min(), xs.max(), ys.max())
    return torch.from_numpy(boxes).to(masks.device)


def box_convert(boxes, in_fmt, out_fmt):
    """Convert boxes between ``"xyxy"`` (corners), ``"xywh"`` (corner, size) and ``"cxcywh"`` (centre, size)."""
    allowed = ("xyxy", "xywh", "cxcywh")
    if in_fmt not in allowed or out_fmt not in allowed:
        raise ValueError("Unsupported Bounding Box Conversions for given in_fmt and out_fmt")
    if in_fmt == out_fmt:
        return boxes.clone()
    a, b, c, d = boxes.unbind(-1)
    if in_fmt == "xywh":
        a, b, c, d = a, b, a + c, b + d
    elif in_fmt == "cxcywh":
        a, b, c, d = a - 0.5 * c, b - 0.5 * d, a + 0.5 * c, b + 0.5 * d
    if out_fmt == "xywh":
        a, b, c, d = a, b, c - a, d - b
    elif out_fmt == "cxcywh":
        a, b, c, d = (a + c) / 2, (b + d) / 2, c - a, d - b
    return torch.stack((a, b, c, d), dim=-1)


def clip_boxes_to_image(boxes, size):
    """Clip ``xyxy`` boxes to an image of ``size = (height, width)``."""
    height, width = size
    x = boxes[..., 0::2].clamp(min=0, max=width)
    y = boxes[..., 1::2].clamp(min=0, max=height)
    return torch.stack((x, y), dim=boxes.dim()).reshape(boxes.shape)


def remove_small_boxes(boxes, min_size):
    """Indices of the boxes whose sides are both at least ``min_size``."""
    ws, hs = boxes[:, 2] - boxes[:, 0], boxes[:, 3] - boxes[:, 1]
    keep = (ws >= min_size) & (hs >= min_size)
    return torch.where(keep)[0]


def _greedy_nms(boxes, scores, iou_threshold):
    # Visit boxes by decreasing score; each kept box suppresses the later ones overlapping
    # it by more than the threshold. Inherently sequential: NumPy rows, one kept box at a time.
    order = np.argsort(-scores, kind="stable")
    x1, y1, x2, y2 = boxes.T
    areas = (x2 - x1) * (y2 - y1)
    suppressed = np.zeros(len(boxes), dtype=bool)
    keep = []
    for position, i in enumerate(order):
        if suppressed[i]:
            continue
        keep.append(i)
        rest = order[position + 1:]
        w = np.clip(np.minimum(x2[i], x2[rest]) - np.maximum(x1[i], x1[rest]), 0, None)
        h = np.clip(np.minimum(y2[i], y2[rest]) - np.maximum(y1[i], y1[rest]), 0, None)
        inter = w * h
        iou = inter / (areas[i] + areas[rest] - inter)
        suppressed[rest[iou > iou_threshold]] = True
    return np.array(keep, dtype=np.int64)


def nms(boxes, scores, iou_threshold):
    """Non-maximum suppression: the indices (int64, by decreasing score) of the ``xyxy``
    boxes kept after dropping every box whose IoU with a higher-scoring kept box exceeds
    ``iou_threshold``.

    >>> import ember_tensor as torch
    >>> boxes = torch.tensor([[0.0, 0.0, 2.0, 2.0], [0.1, 0.0, 2.1, 2.0], [5.0, 5.0, 6.0, 6.0]])
    >>> nms(boxes, torch.tensor([0.9, 0.8, 0.7]), 0.5).tolist()
    [0, 2]
    """
    if boxes.dim() != 2 or boxes.shape[-1] != 4:
        raise RuntimeError(f"boxes should have 4 elements in dimension 1, got {boxes.shape[-1]}")
    if boxes.shape[0] != scores.shape[0]:
        raise RuntimeError(f"boxes and scores should have same number of elements in dimension 0, got "
                           f"{boxes.shape[0]} and {scores.shape[0]}")
    keep = _greedy_nms(boxes.detach().cpu().numpy().astype(np.float64),
                       scores.detach().cpu().numpy().astype(np.float64), float(iou_threshold))
    return torch.from_numpy(keep).to(boxes.device)


def batched_nms(boxes, scores, idxs, iou_threshold):
    """NMS within each category ``idxs`` (boxes of different categories never suppress each
    other): the kept indices by decreasing score."""
    if boxes.numel() == 0:
        return torch.empty((0,), dtype=torch.int64, device=boxes.device)
    # Shift each category's boxes by a distinct offset so that categories cannot overlap.
    max_coordinate = boxes.max()
    offsets = idxs.to(boxes.dtype) * (max_coordinate + 1)
    return nms(boxes + offsets[:, None], scores, iou_threshold)
