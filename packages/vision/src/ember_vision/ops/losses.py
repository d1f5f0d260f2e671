"""Detection losses: sigmoid focal loss and the IoU-based box regression losses."""
import math

import ember_nn.functional as F
import ember_tensor as torch

__all__ = ["sigmoid_focal_loss", "generalized_box_iou_loss", "distance_box_iou_loss", "complete_box_iou_loss"]


def _reduce(loss, reduction):
    if reduction == "none":
        return loss
    if reduction == "mean":
        return loss.mean() if loss.numel() > 0 else 0.0 * loss.sum()
    if reduction == "sum":
        return loss.sum()
    raise ValueError(f"Invalid Value for arg 'reduction': '{reduction} \n Supported reduction modes: 'none', 'mean', "
                     "'sum'")


def sigmoid_focal_loss(inputs, targets, alpha=0.25, gamma=2, reduction="none"):
    """Focal loss (Lin et al. 2017): binary cross-entropy on logits, down-weighting easy
    examples by ``(1 - p_t) ** gamma`` and weighting positives by ``alpha`` (-1: no weighting)."""
    if not (0 <= alpha <= 1) and alpha != -1:
        raise ValueError(f"Invalid alpha value: {alpha}. alpha must be in the range [0,1] or -1 for ignore.")
    p = torch.sigmoid(inputs)
    ce_loss = F.binary_cross_entropy_with_logits(inputs, targets, reduction="none")
    p_t = p * targets + (1 - p) * (1 - targets)
    loss = ce_loss * ((1 - p_t) ** gamma)
    if alpha >= 0:
        loss = (alpha * targets + (1 - alpha) * (1 - targets)) * loss
    return _reduce(loss, reduction)


def _pairwise_parts(boxes1, boxes2):
    x1, y1, x2, y2 = boxes1.unbind(dim=-1)
    x1g, y1g, x2g, y2g = boxes2.unbind(dim=-1)
    inter = (torch.minimum(x2, x2g) - torch.maximum(x1, x1g)).clamp(min=0) * \
        (torch.minimum(y2, y2g) - torch.maximum(y1, y1g)).clamp(min=0)
    union = (x2 - x1) * (y2 - y1) + (x2g - x1g) * (y2g - y1g) - inter
    enclosing = (torch.minimum(x1, x1g), torch.minimum(y1, y1g), torch.maximum(x2, x2g), torch.maximum(y2, y2g))
    return (x1, y1, x2, y2), (x1g, y1g, x2g, y2g), inter, union, enclosing


def generalized_box_iou_loss(boxes1, boxes2, reduction="none", eps=1e-7):
    """``1 - GIoU`` of matching ``xyxy`` boxes (element by element)."""
    _, _, inter, union, (xc1, yc1, xc2, yc2) = _pairwise_parts(boxes1, boxes2)
    iou = inter / (union + eps)
    area_c = (xc2 - xc1) * (yc2 - yc1)
    return _reduce(1 - (iou - (area_c - union) / (area_c + eps)), reduction)


def _diou_iou_loss(boxes1, boxes2, eps):
    (x1, y1, x2, y2), (x1g, y1g, x2g, y2g), inter, union, (xc1, yc1, xc2, yc2) = _pairwise_parts(boxes1, boxes2)
    iou = inter / (union + eps)
    diagonal_distance_squared = (xc2 - xc1) ** 2 + (yc2 - yc1) ** 2 + eps
    centers_distance_squared = ((x1 + x2) / 2 - (x1g + x2g) / 2) ** 2 + ((y1 + y2) / 2 - (y1g + y2g) / 2) ** 2
    return 1 - iou + centers_distance_squared / diagonal_distance_squared, iou


def distance_box_iou_loss(boxes1, boxes2, reduction="none", eps=1e-7):
    """``1 - DIoU`` of matching ``xyxy`` boxes."""
    return _reduce(_diou_iou_loss(boxes1, boxes2, eps)[0], reduction)


def complete_box_iou_loss(boxes1, boxes2, reduction="none", eps=1e-7):
    """``1 - CIoU`` of matching ``xyxy`` boxes."""
    diou_loss, iou = _diou_iou_loss(boxes1, boxes2, eps)
    x1, y1, x2, y2 = boxes1.unbind(dim=-1)
    x1g, y1g, x2g, y2g = boxes2.unbind(dim=-1)
    v = (4 / (math.pi ** 2)) * (torch.atan((x2g - x1g) / (y2g - y1g)) - torch.atan((x2 - x1) / (y2 - y1))) ** 2
    alpha = (v / (1 - iou + v + eps)).detach()
    return _reduce(diou_loss + alpha * v, reduction)
