"""torchvision.ops: box operations, non-maximum suppression, RoI Align and model blocks."""
from .boxes import batched_nms, box_area, box_convert, box_iou, clip_boxes_to_image, nms, remove_small_boxes
from .misc import MLP, Conv2dNormActivation, FrozenBatchNorm2d, Permute, SqueezeExcitation
from .roi_align import RoIAlign, roi_align
from .stochastic_depth import StochasticDepth, stochastic_depth

__all__ = ["nms", "batched_nms", "box_area", "box_iou", "box_convert", "clip_boxes_to_image", "remove_small_boxes",
           "roi_align", "RoIAlign", "MLP", "Conv2dNormActivation", "FrozenBatchNorm2d", "Permute",
           "SqueezeExcitation", "StochasticDepth", "stochastic_depth"]
