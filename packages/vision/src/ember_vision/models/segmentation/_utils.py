"""The shape all segmentation models share: a backbone returning ``{"out", "aux"}`` features,
a classifier (and an auxiliary one), logits upsampled to the input's size."""
from collections import OrderedDict

import ember_nn as nn
import ember_nn.functional as F

__all__ = ["SimpleSegmentationModel"]


class SimpleSegmentationModel(nn.Module):
    """``backbone`` -> ``classifier`` (and ``aux_classifier``), bilinearly upsampled back to the
    input's size; returns ``{"out": logits, "aux": logits}``."""

    __constants__ = ["aux_classifier"]

    def __init__(self, backbone, classifier, aux_classifier=None):
        super().__init__()
        self.backbone = backbone
        self.classifier = classifier
        self.aux_classifier = aux_classifier

    def forward(self, x):
        input_shape = tuple(x.shape[-2:])
        features = self.backbone(x)
        result = OrderedDict()
        result["out"] = F.interpolate(self.classifier(features["out"]), size=input_shape, mode="bilinear",
                                      align_corners=False)
        if self.aux_classifier is not None:
            result["aux"] = F.interpolate(self.aux_classifier(features["aux"]), size=input_shape, mode="bilinear",
                                          align_corners=False)
        return result
