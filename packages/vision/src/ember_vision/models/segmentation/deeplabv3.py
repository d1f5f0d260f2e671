"""DeepLabV3 (Chen et al. 2017): atrous spatial pyramid pooling on dilated ResNet-50/101 or
MobileNetV3-Large backbones, torchvision's layout."""
import ember_nn as nn
import ember_nn.functional as F
import ember_tensor as torch

from .._api import WeightsEnum, register_model, table_weights
from .._utils import IntermediateLayerGetter, handle_legacy_interface, overwrite_value_param
from ..mobilenetv3 import MobileNet_V3_Large_Weights, mobilenet_v3_large
from ..resnet import ResNet50_Weights, ResNet101_Weights, resnet50, resnet101
from ._utils import SimpleSegmentationModel
from .fcn import FCNHead

__all__ = ["DeepLabV3", "DeepLabHead", "DeepLabV3_ResNet50_Weights", "DeepLabV3_ResNet101_Weights",
           "DeepLabV3_MobileNet_V3_Large_Weights", "deeplabv3_mobilenet_v3_large", "deeplabv3_resnet50",
           "deeplabv3_resnet101"]


class DeepLabV3(SimpleSegmentationModel):
    """DeepLabV3: a backbone and a ``DeepLabHead`` (plus an auxiliary ``FCNHead``)."""


class ASPPConv(nn.Sequential):
    """A dilated 3x3 convolution, BatchNorm, ReLU."""

    def __init__(self, in_channels, out_channels, dilation):
        super().__init__(nn.Conv2d(in_channels, out_channels, 3, padding=dilation, dilation=dilation, bias=False),
                         nn.BatchNorm2d(out_channels), nn.ReLU())


class ASPPPooling(nn.Sequential):
    """Image-level features: global pooling, 1x1 convolution, upsampled back."""

    def __init__(self, in_channels, out_channels):
        super().__init__(nn.AdaptiveAvgPool2d(1), nn.Conv2d(in_channels, out_channels, 1, bias=False),
                         nn.BatchNorm2d(out_channels), nn.ReLU())

    def forward(self, x):
        size = tuple(x.shape[-2:])
        for module in self:
            x = module(x)
        return F.interpolate(x, size=size, mode="bilinear", align_corners=False)


class ASPP(nn.Module):
    """Atrous spatial pyramid pooling: 1x1, three dilated 3x3 and image pooling, concatenated and projected."""

    def __init__(self, in_channels, atrous_rates, out_channels=256):
        super().__init__()
        modules = [nn.Sequential(nn.Conv2d(in_channels, out_channels, 1, bias=False), nn.BatchNorm2d(out_channels),
                                 nn.ReLU())]
        modules += [ASPPConv(in_channels, out_channels, rate) for rate in tuple(atrous_rates)]
        modules.append(ASPPPooling(in_channels, out_channels))
        self.convs = nn.ModuleList(modules)
        self.project = nn.Sequential(nn.Conv2d(len(self.convs) * out_channels, out_channels, 1, bias=False),
                                     nn.BatchNorm2d(out_channels), nn.ReLU(), nn.Dropout(0.5))

    def forward(self, x):
        return self.project(torch.cat([conv(x) for conv in self.convs], dim=1))


class DeepLabHead(nn.Sequential):
    """ASPP, a 3x3 convolution, BatchNorm, ReLU, a 1x1 convolution to the classes."""

    def __init__(self, in_channels, num_classes, atrous_rates=(12, 24, 36)):
        super().__init__(ASPP(in_channels, atrous_rates), nn.Conv2d(256, 256, 3, padding=1, bias=False),
                         nn.BatchNorm2d(256), nn.ReLU(), nn.Conv2d(256, num_classes, 1))


def _deeplabv3_resnet(backbone, num_classes, aux):
    return_layers = {"layer4": "out"}
    if aux:
        return_layers["layer3"] = "aux"
    backbone = IntermediateLayerGetter(backbone, return_layers=return_layers)
    return DeepLabV3(backbone, DeepLabHead(2048, num_classes), FCNHead(1024, num_classes) if aux else None)


def mobilenet_stage_positions(features):
    """Indices of the stem, of the blocks that stride, and of the last block of MobileNetV3's
    ``features``: the C0 ... Cn stages the segmentation heads read."""
    return [0] + [i for i, b in enumerate(features) if getattr(b, "_is_cn", False)] + [len(features) - 1]


def _deeplabv3_mobilenetv3(backbone, num_classes, aux):
    features = backbone.features
    stages = mobilenet_stage_positions(features)
    out_pos, aux_pos = stages[-1], stages[-4]  # C5 (output stride 16) and C2 (stride 8)
    return_layers = {str(out_pos): "out"}
    if aux:
        return_layers[str(aux_pos)] = "aux"
    body = IntermediateLayerGetter(features, return_layers=return_layers)
    aux_classifier = FCNHead(features[aux_pos].out_channels, num_classes) if aux else None
    return DeepLabV3(body, DeepLabHead(features[out_pos].out_channels, num_classes), aux_classifier)


def _settle(weights, num_classes, aux_loss, weights_backbone):
    if weights is not None:
        num_classes = overwrite_value_param("num_classes", num_classes, len(weights.meta["categories"]))
        aux_loss = overwrite_value_param("aux_loss", aux_loss, True)
        weights_backbone = None
    elif num_classes is None:
        num_classes = 21
    return num_classes, aux_loss, weights_backbone


def _load(model, weights, progress):
    if weights is not None:
        model.load_state_dict(weights.get_state_dict(progress=progress, check_hash=True))
    return model


class DeepLabV3_ResNet50_Weights(WeightsEnum):
    """COCO weights (VOC's 20 categories and background) of deeplabv3_resnet50."""
    COCO_WITH_VOC_LABELS_V1 = table_weights("DeepLabV3_ResNet50_Weights.COCO_WITH_VOC_LABELS_V1")
    DEFAULT = COCO_WITH_VOC_LABELS_V1


class DeepLabV3_ResNet101_Weights(WeightsEnum):
    """COCO weights (VOC's 20 categories and background) of deeplabv3_resnet101."""
    COCO_WITH_VOC_LABELS_V1 = table_weights("DeepLabV3_ResNet101_Weights.COCO_WITH_VOC_LABELS_V1")
    DEFAULT = COCO_WITH_VOC_LABELS_V1


class DeepLabV3_MobileNet_V3_Large_Weights(WeightsEnum):
    """COCO weights (VOC's 20 categories and background) of deeplabv3_mobilenet_v3_large."""
    COCO_WITH_VOC_LABELS_V1 = table_weights("DeepLabV3_MobileNet_V3_Large_Weights.COCO_WITH_VOC_LABELS_V1")
    DEFAULT = COCO_WITH_VOC_LABELS_V1


@register_model()
@handle_legacy_interface(weights=("pretrained", DeepLabV3_ResNet50_Weights.COCO_WITH_VOC_LABELS_V1),
                         weights_backbone=("pretrained_backbone", ResNet50_Weights.IMAGENET1K_V1))
def deeplabv3_resnet50(*, weights: DeepLabV3_ResNet50_Weights = None, progress=True, num_classes=None,
                       aux_loss=None, weights_backbone=ResNet50_Weights.IMAGENET1K_V1, **kwargs):
    """DeepLabV3 with a ResNet-50 backbone.

    Args:
        weights: a ``DeepLabV3_ResNet50_Weights`` member to load, or None.
        progress: show download progress.
        num_classes: outputs including the background (default 21).
        aux_loss: add the auxiliary classifier on ``layer3``.
        weights_backbone: the backbone's weights (torchvision's default loads ImageNet's;
            pass None for random ones, e.g. offline).
    """
    weights = DeepLabV3_ResNet50_Weights.verify(weights)
    num_classes, aux_loss, weights_backbone = _settle(weights, num_classes, aux_loss,
                                                      ResNet50_Weights.verify(weights_backbone))
    backbone = resnet50(weights=weights_backbone, replace_stride_with_dilation=[False, True, True])
    return _load(_deeplabv3_resnet(backbone, num_classes, aux_loss), weights, progress)


@register_model()
@handle_legacy_interface(weights=("pretrained", DeepLabV3_ResNet101_Weights.COCO_WITH_VOC_LABELS_V1),
                         weights_backbone=("pretrained_backbone", ResNet101_Weights.IMAGENET1K_V1))
def deeplabv3_resnet101(*, weights: DeepLabV3_ResNet101_Weights = None, progress=True, num_classes=None,
                        aux_loss=None, weights_backbone=ResNet101_Weights.IMAGENET1K_V1, **kwargs):
    """DeepLabV3 with a ResNet-101 backbone; arguments as ``deeplabv3_resnet50``."""
    weights = DeepLabV3_ResNet101_Weights.verify(weights)
    num_classes, aux_loss, weights_backbone = _settle(weights, num_classes, aux_loss,
                                                      ResNet101_Weights.verify(weights_backbone))
    backbone = resnet101(weights=weights_backbone, replace_stride_with_dilation=[False, True, True])
    return _load(_deeplabv3_resnet(backbone, num_classes, aux_loss), weights, progress)


@register_model()
@handle_legacy_interface(weights=("pretrained", DeepLabV3_MobileNet_V3_Large_Weights.COCO_WITH_VOC_LABELS_V1),
                         weights_backbone=("pretrained_backbone", MobileNet_V3_Large_Weights.IMAGENET1K_V1))
def deeplabv3_mobilenet_v3_large(*, weights: DeepLabV3_MobileNet_V3_Large_Weights = None, progress=True,
                                 num_classes=None, aux_loss=None,
                                 weights_backbone=MobileNet_V3_Large_Weights.IMAGENET1K_V1, **kwargs):
    """DeepLabV3 with a dilated MobileNetV3-Large backbone; arguments as ``deeplabv3_resnet50``."""
    weights = DeepLabV3_MobileNet_V3_Large_Weights.verify(weights)
    num_classes, aux_loss, weights_backbone = _settle(weights, num_classes, aux_loss,
                                                      MobileNet_V3_Large_Weights.verify(weights_backbone))
    backbone = mobilenet_v3_large(weights=weights_backbone, dilated=True)
    return _load(_deeplabv3_mobilenetv3(backbone, num_classes, aux_loss), weights, progress)
