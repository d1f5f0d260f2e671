"""torchvision.utils: ``make_grid``, ``save_image``, ``draw_bounding_boxes``,
``draw_segmentation_masks``, ``draw_keypoints``, ``flow_to_image``."""
from .draw import draw_bounding_boxes, draw_keypoints, draw_segmentation_masks
from .flow import flow_to_image
from .grid import make_grid, save_image

__all__ = ["make_grid", "save_image", "draw_bounding_boxes", "draw_segmentation_masks", "draw_keypoints",
           "flow_to_image"]
