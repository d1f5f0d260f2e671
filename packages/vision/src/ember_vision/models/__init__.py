"""torchvision's classification models: builders, model classes and weights enums.

``resnet18(weights=ResNet18_Weights.DEFAULT)`` loads the checkpoint from the hub cache
(``$TORCH_HOME/hub/checkpoints``), downloading it when a network answers; ``pretrained=True``
still works, with torchvision's deprecation warning.
"""
from . import alexnet as _alexnet, convnext as _convnext, densenet as _densenet, efficientnet as _efficientnet
from . import googlenet as _googlenet, inception as _inception, maxvit as _maxvit
from . import mnasnet as _mnasnet, mobilenetv2 as _mobilenetv2, mobilenetv3 as _mobilenetv3, resnet as _resnet
from . import regnet as _regnet, shufflenetv2 as _shufflenetv2, squeezenet as _squeezenet, vgg as _vgg
from . import swin_transformer as _swin_transformer, vision_transformer as _vision_transformer
from . import segmentation
from ._api import Weights, WeightsEnum, get_model, get_model_builder, get_model_weights, get_weight, list_models
from .alexnet import *  # noqa: F403
from .convnext import *  # noqa: F403
from .densenet import *  # noqa: F403
from .efficientnet import *  # noqa: F403
from .googlenet import *  # noqa: F403
from .inception import *  # noqa: F403
from .maxvit import *  # noqa: F403
from .mnasnet import *  # noqa: F403
from .mobilenetv2 import *  # noqa: F403
from .mobilenetv3 import *  # noqa: F403
from .regnet import *  # noqa: F403
from .resnet import *  # noqa: F403
from .shufflenetv2 import *  # noqa: F403
from .squeezenet import *  # noqa: F403
from .swin_transformer import *  # noqa: F403
from .vgg import *  # noqa: F403
from .vision_transformer import *  # noqa: F403

_FAMILIES = [_alexnet, _convnext, _densenet, _efficientnet, _googlenet, _inception, _maxvit, _mnasnet, _mobilenetv2,
             _mobilenetv3, _regnet, _resnet, _shufflenetv2, _squeezenet, _swin_transformer, _vgg, _vision_transformer]

__all__ = ["Weights", "WeightsEnum", "get_model", "get_model_builder", "get_model_weights", "get_weight",
           "list_models", *[name for family in _FAMILIES for name in family.__all__]]
