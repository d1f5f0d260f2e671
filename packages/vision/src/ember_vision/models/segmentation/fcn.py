"""FCN (Long et al. 2014) on dilated ResNet-50/101 backbones, torchvision's layout
(``backbone``, ``classifier``, ``aux_classifier``)."""
import ember_nn as nn

from .._api import WeightsEnum, register_model, table_weights
from .._utils import IntermediateLayerGetter, handle_legacy_interface, overwrite_value_param
from ..resnet import ResNet50_Weights, ResNet101_Weights, resnet50, resnet101
from ._utils import SimpleSegmentationModel

__all__ = ["FCN", "FCNHead", "FCN_ResNet50_Weights", "FCN_ResNet101_Weights", "fcn_resnet50", "fcn_resnet101"]


class FCN(SimpleSegmentationModel):
    """Fully convolutional network: a backbone and an ``FCNHead`` (plus an auxiliary one)."""


class FCNHead(nn.Sequential):
    """3x3 convolution to a quarter of the channels, BatchNorm, ReLU, dropout, 1x1 to the classes."""

    def __init__(self, in_channels, channels):
        inter_channels = in_channels // 4
        super().__init__(nn.Conv2d(in_channels, inter_channels, 3, padding=1, bias=False),
                         nn.BatchNorm2d(inter_channels), nn.ReLU(), nn.Dropout(0.1),
                         nn.Conv2d(inter_channels, channels, 1))


def _fcn_resnet(backbone, num_classes, aux):
    return_layers = {"layer4": "out"}
    if aux:
        return_layers["layer3"] = "aux"
    backbone = IntermediateLayerGetter(backbone, return_layers=return_layers)
    return FCN(backbone, FCNHead(2048, num_classes), FCNHead(1024, num_classes) if aux else None)


def _build(backbone_builder, backbone_weights_enum, weights, progress, num_classes, aux_loss, weights_backbone):
    weights_backbone = backbone_weights_enum.verify(weights_backbone)
    if weights is not None:
        weights_backbone = None
        num_classes = overwrite_value_param("num_classes", num_classes, len(weights.meta["categories"]))
        aux_loss = overwrite_value_param("aux_loss", aux_loss, True)
    elif num_classes is None:
        num_classes = 21
    backbone = backbone_builder(weights=weights_backbone, replace_stride_with_dilation=[False, True, True])
    model = _fcn_resnet(backbone, num_classes, aux_loss)
    if weights is not None:
        model.load_state_dict(weights.get_state_dict(progress=progress, check_hash=True))
    return model


class FCN_ResNet50_Weights(WeightsEnum):
    """COCO weights (VOC's 20 categories and background) of fcn_resnet50."""
    COCO_WITH_VOC_LABELS_V1 = table_weights("FCN_ResNet50_Weights.COCO_WITH_VOC_LABELS_V1")
    DEFAULT = COCO_WITH_VOC_LABELS_V1


class FCN_ResNet101_Weights(WeightsEnum):
    """COCO weights (VOC's 20 categories and background) of fcn_resnet101."""
    COCO_WITH_VOC_LABELS_V1 = table_weights("FCN_ResNet101_Weights.COCO_WITH_VOC_LABELS_V1")
    DEFAULT = COCO_WITH_VOC_LABELS_V1


@register_model()
@handle_legacy_interface(weights=("pretrained", FCN_ResNet50_Weights.COCO_WITH_VOC_LABELS_V1),
                         weights_backbone=("pretrained_backbone", ResNet50_Weights.IMAGENET1K_V1))
def fcn_resnet50(*, weights: FCN_ResNet50_Weights = None, progress=True, num_classes=None, aux_loss=None,
                 weights_backbone=ResNet50_Weights.IMAGENET1K_V1, **kwargs):
    """FCN with a ResNet-50 backbone.

    Args:
        weights: an ``FCN_ResNet50_Weights`` member to load, or None.
        progress: show download progress.
        num_classes: outputs including the background (default 21).
        aux_loss: add the auxiliary classifier on ``layer3``.
        weights_backbone: the backbone's weights (torchvision's default loads ImageNet's;
            pass None for random ones, e.g. offline).
    """
    return _build(resnet50, ResNet50_Weights, FCN_ResNet50_Weights.verify(weights), progress, num_classes, aux_loss,
                  weights_backbone)


@register_model()
@handle_legacy_interface(weights=("pretrained", FCN_ResNet101_Weights.COCO_WITH_VOC_LABELS_V1),
                         weights_backbone=("pretrained_backbone", ResNet101_Weights.IMAGENET1K_V1))
def fcn_resnet101(*, weights: FCN_ResNet101_Weights = None, progress=True, num_classes=None, aux_loss=None,
                  weights_backbone=ResNet101_Weights.IMAGENET1K_V1, **kwargs):
    """FCN with a ResNet-101 backbone; arguments as ``fcn_resnet50``."""
    return _build(resnet101, ResNet101_Weights, FCN_ResNet101_Weights.verify(weights), progress, num_classes,
                  aux_loss, weights_backbone)
