"""torchvision.ops: box operations, non-maximum suppression, RoI Align / Pool, detection
losses and model blocks."""
from .boxes import (batched_nms, box_area, box_convert, box_iou, clip_boxes_to_image, complete_box_iou,
                    distance_box_iou, generalized_box_iou, masks_to_boxes, nms, remove_small_boxes)
from .drop_block import DropBlock2d, DropBlock3d, drop_block2d, drop_block3d
from .feature_pyramid_network import ExtraFPNBlock, FeaturePyramidNetwork, LastLevelMaxPool, LastLevelP6P7
from .losses import complete_box_iou_loss, distance_box_iou_loss, generalized_box_iou_loss, sigmoid_focal_loss
from .misc import MLP, Conv2dNormActivation, Conv3dNormActivation, FrozenBatchNorm2d, Permute, SqueezeExcitation
from .poolers import MultiScaleRoIAlign
from .roi_align import RoIAlign, roi_align
from .roi_pool import RoIPool, roi_pool
from .stochastic_depth import StochasticDepth, stochastic_depth

__all__ = ["nms", "batched_nms", "box_area", "box_iou", "generalized_box_iou", "distance_box_iou", "complete_box_iou",
           "box_convert", "clip_boxes_to_image", "remove_small_boxes", "masks_to_boxes", "sigmoid_focal_loss",
           "generalized_box_iou_loss", "distance_box_iou_loss", "complete_box_iou_loss", "roi_align", "RoIAlign", "MultiScaleRoIAlign",
           "roi_pool", "RoIPool", "drop_block2d", "drop_block3d", "DropBlock2d", "DropBlock3d", "FeaturePyramidNetwork",
           "ExtraFPNBlock", "LastLevelMaxPool", "LastLevelP6P7", "MLP",
           "Conv2dNormActivation", "Conv3dNormActivation", "FrozenBatchNorm2d", "Permute", "SqueezeExcitation",
           "StochasticDepth", "stochastic_depth"]
