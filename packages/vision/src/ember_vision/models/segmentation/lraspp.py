"""Lite R-ASPP (Howard et al. 2019, with MobileNetV3): a cheap segmentation head mixing a
gated high-level map with a low-level one; torchvision's layout."""
from collections import OrderedDict

import ember_nn as nn
import ember_nn.functional as F

from .._api import WeightsEnum, register_model, table_weights
from .._utils import IntermediateLayerGetter, handle_legacy_interface, overwrite_value_param
from ..mobilenetv3 import MobileNet_V3_Large_Weights, mobilenet_v3_large
from .deeplabv3 import mobilenet_stage_positions

__all__ = ["LRASPP", "LRASPP_MobileNet_V3_Large_Weights", "lraspp_mobilenet_v3_large"]


class LRASPP(nn.Module):
    """A backbone returning ``{"low", "high"}`` and an ``LRASPPHead``; returns ``{"out": logits}``
    at the input's size."""

    def __init__(self, backbone, low_channels, high_channels, num_classes, inter_channels=128):
        super().__init__()
        self.backbone = backbone
        self.classifier = LRASPPHead(low_channels, high_channels, num_classes, inter_channels)

    def forward(self, input):
        out = self.classifier(self.backbone(input))
        out = F.interpolate(out, size=tuple(input.shape[-2:]), mode="bilinear", align_corners=False)
        return OrderedDict([("out", out)])


class LRASPPHead(nn.Module):
    """High-level features through 1x1-BN-ReLU, gated by a pooled sigmoid, upsampled and
    classified, plus a 1x1 classifier of the low-level features."""

    def __init__(self, low_channels, high_channels, num_classes, inter_channels):
        super().__init__()
        self.cbr = nn.Sequential(nn.Conv2d(high_channels, inter_channels, 1, bias=False),
                                 nn.BatchNorm2d(inter_channels), nn.ReLU(inplace=True))
        self.scale = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Conv2d(high_channels, inter_channels, 1, bias=False),
                                   nn.Sigmoid())
        self.low_classifier = nn.Conv2d(low_channels, num_classes, 1)
        self.high_classifier = nn.Conv2d(inter_channels, num_classes, 1)

    def forward(self, input):
        low, high = input["low"], input["high"]
        x = self.cbr(high) * self.scale(high)
        x = F.interpolate(x, size=tuple(low.shape[-2:]), mode="bilinear", align_corners=False)
        return self.low_classifier(low) + self.high_classifier(x)


class LRASPP_MobileNet_V3_Large_Weights(WeightsEnum):
    """COCO weights (VOC's 20 categories and background) of lraspp_mobilenet_v3_large."""
    COCO_WITH_VOC_LABELS_V1 = table_weights("LRASPP_MobileNet_V3_Large_Weights.COCO_WITH_VOC_LABELS_V1")
    DEFAULT = COCO_WITH_VOC_LABELS_V1


@register_model()
@handle_legacy_interface(weights=("pretrained", LRASPP_MobileNet_V3_Large_Weights.COCO_WITH_VOC_LABELS_V1),
                         weights_backbone=("pretrained_backbone", MobileNet_V3_Large_Weights.IMAGENET1K_V1))
def lraspp_mobilenet_v3_large(*, weights: LRASPP_MobileNet_V3_Large_Weights = None, progress=True, num_classes=None,
                              weights_backbone=MobileNet_V3_Large_Weights.IMAGENET1K_V1, **kwargs):
    """Lite R-ASPP with a dilated MobileNetV3-Large backbone.

    Args:
        weights: an ``LRASPP_MobileNet_V3_Large_Weights`` member to load, or None.
        progress: show download progress.
        num_classes: outputs including the background (default 21).
        weights_backbone: the backbone's weights (torchvision's default loads ImageNet's;
            pass None for random ones, e.g. offline).
    """
    if kwargs.pop("aux_loss", False):
        raise NotImplementedError("This model does not use auxiliary loss")
    weights = LRASPP_MobileNet_V3_Large_Weights.verify(weights)
    weights_backbone = MobileNet_V3_Large_Weights.verify(weights_backbone)
    if weights is not None:
        weights_backbone = None
        num_classes = overwrite_value_param("num_classes", num_classes, len(weights.meta["categories"]))
    elif num_classes is None:
        num_classes = 21
    features = mobilenet_v3_large(weights=weights_backbone, dilated=True).features
    stages = mobilenet_stage_positions(features)
    low_pos, high_pos = stages[-4], stages[-1]  # C2 (output stride 8) and C5 (16)
    body = IntermediateLayerGetter(features, return_layers={str(low_pos): "low", str(high_pos): "high"})
    model = LRASPP(body, features[low_pos].out_channels, features[high_pos].out_channels, num_classes)
    if weights is not None:
        model.load_state_dict(weights.get_state_dict(progress=progress, check_hash=True))
    return model
