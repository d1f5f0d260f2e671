"""ember-vision: torchvision for ember.

``import ember_vision as torchvision`` runs torchvision code on ember: the classification
models with torchvision's constructors, module names and ``state_dict`` keys (so its
checkpoints load with ``strict=True``) and their ``weights=`` enums; ``transforms`` (v1)
and ``transforms.functional`` on PIL images and tensors; ``datasets`` in torchvision's
folder layouts; ``io``, ``ops`` and ``utils``.

>>> import ember_tensor as torch
>>> import ember_vision as torchvision
>>> model = torchvision.models.squeezenet1_1(num_classes=10).eval()
>>> model(torch.randn(1, 3, 64, 64)).shape
torch.Size([1, 10])
"""

import ember_autograd
import ember_data
import ember_nn
import ember_tensor
from ember_tensor.version import check_layers

__version__ = "0.1.0"

_NEEDED_BY = f"ember-vision {__version__}"
check_layers(__file__, _NEEDED_BY)

from . import datasets, io, models, ops, transforms, utils  # noqa: E402 -- after the version checks
from ._backend import get_image_backend, set_image_backend  # noqa: E402

__all__ = ["datasets", "io", "models", "ops", "transforms", "utils", "get_image_backend", "set_image_backend"]
