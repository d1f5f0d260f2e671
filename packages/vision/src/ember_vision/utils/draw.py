"""Drawing on uint8/float image tensors: bounding boxes (with labels), segmentation masks, keypoints."""
import warnings

import numpy as np
from PIL import Image, ImageColor, ImageDraw, ImageFont

import ember_tensor as torch

from ..transforms.functional import convert_image_dtype

__all__ = ["draw_bounding_boxes", "draw_segmentation_masks", "draw_keypoints"]


def _generate_color_palette(num_objects):
    palette = (2 ** 25 - 1, 2 ** 15 - 1, 2 ** 21 - 1)
    return [tuple((i * p) % 255 for p in palette) for i in range(num_objects)]


def _parse_colors(colors, *, num_objects, floating=False):
    """One RGB tuple per object from None (a palette), a colour, or a list of colours."""
    if colors is None:
        colors = _generate_color_palette(num_objects)
    elif isinstance(colors, list):
        if len(colors) < num_objects:
            raise ValueError(f"Number of colors must be equal or larger than the number of objects, but got "
                             f"{len(colors)} < {num_objects}.")
    elif not isinstance(colors, (tuple, str)):
        raise ValueError(f"colors must be a tuple or a string, or a list thereof, but got {colors}.")
    elif isinstance(colors, tuple) and len(colors) != 3:
        raise ValueError(f"If passed as tuple, colors should be an RGB triplet, but got {colors}.")
    else:
        colors = [colors] * num_objects
    colors = [ImageColor.getrgb(color) if isinstance(color, str) else tuple(color) for color in colors]
    if floating:
        colors = [tuple(v / 255 for v in color) for color in colors]
    return colors


def draw_bounding_boxes(image, boxes, labels=None, colors=None, fill=False, width=1, font=None, font_size=None,
                        label_colors=None, fill_labels=False, label_background_colors=None):
    """Draw ``xyxy`` boxes (and their labels) on a (1 or 3, H, W) uint8 or float image with
    Pillow, as torchvision; returns a new image of the same dtype (3 channels).

    Args:
        image: the image tensor.
        boxes: Tensor[N, 4] of absolute ``(xmin, ymin, xmax, ymax)``.
        labels: one string per box, or None.
        colors: a colour for all boxes or a list (PIL names, "#RRGGBB" or RGB tuples); default: a palette.
        fill: fill the boxes (translucently); width: of the outline.
        font, font_size: a TrueType font file and its size (default: PIL's built-in font).
        label_colors, fill_labels, label_background_colors: the labels' text and background.
    """
    if not isinstance(image, torch.Tensor):
        raise TypeError(f"Tensor expected, got {type(image)}")
    if not (image.dtype == torch.uint8 or image.is_floating_point()):
        raise ValueError(f"The image dtype must be uint8 or float, got {image.dtype}")
    if image.dim() != 3:
        raise ValueError("Pass individual images, not batches")
    if image.shape[0] not in (1, 3):
        raise ValueError("Only grayscale and RGB images are supported")
    if boxes.shape[-1] != 4:
        raise ValueError("ember-vision draws (N, 4) boxes only (no oriented 8-coordinate boxes)")
    if bool((boxes[:, 0] > boxes[:, 2]).any()) or bool((boxes[:, 1] > boxes[:, 3]).any()):
        raise ValueError("Boxes need to be in (xmin, ymin, xmax, ymax) format. Use torchvision.ops.box_convert to "
                         "convert them")
    num_boxes = boxes.shape[0]
    if num_boxes == 0:
        warnings.warn("boxes doesn't contain any box. No box was drawn")
        return image
    if labels is None:
        labels = [None] * num_boxes
    elif len(labels) != num_boxes:
        raise ValueError(f"Number of boxes ({num_boxes}) and labels ({len(labels)}) mismatch. Please specify labels "
                         "for each box.")
    colors = _parse_colors(colors, num_objects=num_boxes)
    if label_colors or fill_labels:
        label_colors = _parse_colors(label_colors if label_colors else "black", num_objects=num_boxes)
    else:
        label_colors = list(colors)
    if fill_labels and label_background_colors:
        label_background_colors = _parse_colors(label_background_colors, num_objects=num_boxes)
    else:
        label_background_colors = list(colors)
    if font is None:
        if font_size is not None:
            warnings.warn("Argument 'font_size' will be ignored since 'font' is not set.")
        txt_font = ImageFont.load_default()
    else:
        txt_font = ImageFont.truetype(font=font, size=font_size or 10)
    if image.shape[0] == 1:
        image = torch.tile(image, (3, 1, 1))
    original_dtype = image.dtype
    if original_dtype.is_floating_point:
        image = convert_image_dtype(image, torch.uint8)
    img_to_draw = Image.fromarray(np.ascontiguousarray(image.detach().cpu().numpy().transpose(1, 2, 0)))
    draw = ImageDraw.Draw(img_to_draw, "RGBA") if fill else ImageDraw.Draw(img_to_draw)
    for bbox, color, label, label_color, label_bg_color in zip(boxes.to(torch.int64).tolist(), colors, labels,
                                                               label_colors, label_background_colors):
        draw.rectangle(bbox, width=width, outline=color, fill=color + (100,) if fill else None)
        if label is not None:
            box_margin = 1
            margin = width + box_margin
            if fill_labels:
                left, top, right, bottom = draw.textbbox((bbox[0] + margin, bbox[1] + margin), label, font=txt_font)
                draw.rectangle((left - box_margin, top - box_margin, right + box_margin, bottom + box_margin),
                               fill=label_bg_color)
            draw.text((bbox[0] + margin, bbox[1] + margin), label, fill=label_color, font=txt_font)
    out = torch.from_numpy(np.array(img_to_draw).transpose(2, 0, 1).copy()).to(image.device)
    if original_dtype.is_floating_point:
        out = convert_image_dtype(out, original_dtype)
    return out


def draw_segmentation_masks(image, masks, alpha=0.8, colors=None):
    """Blend boolean ``masks`` (N, H, W) onto an RGB (3, H, W) image in their colours
    (``alpha``: the masks' opacity); where masks overlap the colour is black."""
    if not isinstance(image, torch.Tensor):
        raise TypeError(f"The image must be a tensor, got {type(image)}")
    if not (image.dtype == torch.uint8 or image.is_floating_point()):
        raise ValueError(f"The image dtype must be uint8 or float, got {image.dtype}")
    if image.dim() != 3:
        raise ValueError("Pass individual images, not batches")
    if image.shape[0] != 3:
        raise ValueError("Pass an RGB image. Other Image formats are not supported")
    if masks.ndim == 2:
        masks = masks[None, :, :]
    if masks.ndim != 3:
        raise ValueError("masks must be of shape (H, W) or (batch_size, H, W)")
    if masks.dtype != torch.bool:
        raise ValueError(f"The masks must be of dtype bool. Got {masks.dtype}")
    if tuple(masks.shape[-2:]) != tuple(image.shape[-2:]):
        raise ValueError("The image and the masks must have the same height and width")
    num_masks = masks.shape[0]
    if num_masks == 0:
        warnings.warn("masks doesn't contain any mask. No mask was drawn")
        return image
    original_dtype = image.dtype
    colors = _parse_colors(colors, num_objects=num_masks, floating=original_dtype.is_floating_point)
    img_to_draw = image.detach().clone()
    for mask, color in zip(masks.unbind(0), colors):
        colour = torch.tensor(color, dtype=original_dtype, device=image.device)[:, None, None]
        img_to_draw = torch.where(mask[None], colour.expand(img_to_draw.shape), img_to_draw)
    overlapping = (masks.to(torch.int64).sum(dim=0) > 1)[None]
    img_to_draw = torch.where(overlapping, torch.zeros_like(img_to_draw), img_to_draw)
    out = image * (1 - alpha) + img_to_draw * alpha
    return out.to(original_dtype)


def draw_keypoints(image, keypoints, connectivity=None, colors=None, radius=2, width=3, visibility=None):
    """Draw keypoints (discs of ``radius``) and the ``connectivity`` lines between them on an
    RGB (3, H, W) uint8 or float image, with Pillow as torchvision; returns a new image.

    Args:
        keypoints: Tensor[num_instances, K, 2] of (x, y).
        connectivity: pairs of keypoint indices to join with lines of ``width``.
        colors: a PIL colour for the keypoints (default white).
        visibility: bool Tensor[num_instances, K]: which keypoints to draw (default all).
    """
    if not isinstance(image, torch.Tensor):
        raise TypeError(f"The image must be a tensor, got {type(image)}")
    if not (image.dtype == torch.uint8 or image.is_floating_point()):
        raise ValueError(f"The image dtype must be uint8 or float, got {image.dtype}")
    if image.dim() != 3:
        raise ValueError("Pass individual images, not batches")
    if image.shape[0] != 3:
        raise ValueError("Pass an RGB image. Other Image formats are not supported")
    if keypoints.ndim != 3:
        raise ValueError("keypoints must be of shape (num_instances, K, 2)")
    if visibility is None:
        visibility = torch.ones(tuple(keypoints.shape[:-1]), dtype=torch.bool)
    if visibility.ndim == 3:
        visibility = visibility.squeeze(-1)
    if visibility.ndim != 2:
        raise ValueError(f"visibility must be of shape (num_instances, K). Got ndim={visibility.ndim}")
    if tuple(visibility.shape) != tuple(keypoints.shape[:-1]):
        raise ValueError("keypoints and visibility must have the same dimensionality for num_instances and K. "
                         f"Got visibility.shape={tuple(visibility.shape)} and keypoints.shape={tuple(keypoints.shape)}")
    original_dtype = image.dtype
    if original_dtype.is_floating_point:
        image = convert_image_dtype(image, torch.uint8)
    img_to_draw = Image.fromarray(np.ascontiguousarray(image.detach().cpu().numpy().transpose(1, 2, 0)))
    draw = ImageDraw.Draw(img_to_draw)
    for kpt_inst, vis_inst in zip(keypoints.to(torch.int64).tolist(), visibility.to(torch.bool).tolist()):
        for (x, y), visible in zip(kpt_inst, vis_inst):
            if visible:
                draw.ellipse([x - radius, y - radius, x + radius, y + radius], fill=colors, outline=None, width=0)
        for start, end in connectivity or ():
            if vis_inst[start] and vis_inst[end]:
                draw.line((tuple(kpt_inst[start]), tuple(kpt_inst[end])), width=width)
    out = torch.from_numpy(np.array(img_to_draw).transpose(2, 0, 1).copy()).to(image.device)
    if original_dtype.is_floating_point:
        out = convert_image_dtype(out, original_dtype)
    return out
