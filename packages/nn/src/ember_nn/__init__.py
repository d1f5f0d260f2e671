"""ember-nn: neural-network building blocks (``torch.nn``).

``Module`` and ``Parameter``, the containers, the layer classes, ``init`` and ``utils``,
with PyTorch's names, signatures and defaults.

At import it checks that the layers below it are versions it works with (the ranges in
its pyproject.toml).

>>> import ember_tensor as torch, ember_nn as nn
>>> layer = nn.Sequential(nn.Linear(4, 2), nn.ReLU())
>>> layer(torch.ones(3, 4)).shape
torch.Size([3, 2])
"""

import ember_autograd
import ember_tensor
from ember_tensor.version import check_layers

__version__ = "0.1.0"

_NEEDED_BY = f"ember-nn {__version__}"
check_layers(__file__, _NEEDED_BY)

from .parameter import Buffer, Parameter, UninitializedBuffer, UninitializedParameter  # noqa: E402
from .modules import *  # noqa: E402,F401,F403 - every layer class
from .modules import __all__ as _module_names  # noqa: E402
from . import attention, functional, init, parallel, utils  # noqa: E402,F401
from .parallel import DataParallel  # noqa: E402

__all__ = ["Parameter", "Buffer", "UninitializedParameter", "UninitializedBuffer", "functional", "init",
           "parallel", "utils", "DataParallel", *_module_names]
