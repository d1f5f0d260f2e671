"""torchvision.models.segmentation: FCN, DeepLabV3 and LR-ASPP with their COCO (VOC labels) weights."""
from . import deeplabv3 as _deeplabv3, fcn as _fcn, lraspp as _lraspp
from .deeplabv3 import *  # noqa: F403
from .fcn import *  # noqa: F403
from .lraspp import *  # noqa: F403

__all__ = [*_deeplabv3.__all__, *_fcn.__all__, *_lraspp.__all__]
