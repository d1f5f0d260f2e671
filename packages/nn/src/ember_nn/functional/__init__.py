"""``torch.nn.functional`` for ember: the function form of every layer and loss.

Kernels (convolution, pooling, normalisation, softmax, nll) are dispatcher ops of
ember_tensor with derivative rules in ember_autograd; everything else here is composed
from differentiable ops.

>>> import ember_tensor as torch
>>> import ember_nn.functional as F
>>> F.relu(torch.tensor([-1., 2.])).tolist()
[0.0, 2.0]
"""
from . import _activation, _conv, _ctc, _distance, _dropout, _grid, _loss, _normalization, _pooling, _sampling
from ._activation import *  # noqa: F401,F403
from ._conv import *  # noqa: F401,F403
from ._ctc import *  # noqa: F401,F403
from ._distance import *  # noqa: F401,F403
from ._dropout import *  # noqa: F401,F403
from ._dropout import feature_dropout  # noqa: F401 - torch.feature_dropout calls it; not in F.__all__
from ._grid import *  # noqa: F401,F403
from ._loss import *  # noqa: F401,F403
from ._normalization import *  # noqa: F401,F403
from ._pooling import *  # noqa: F401,F403
from ._sampling import *  # noqa: F401,F403
from . import _sequence  # noqa: E402
from ._sequence import *  # noqa: F401,F403 -- embedding_bag, attention

__all__ = (_activation.__all__ + _conv.__all__ + _ctc.__all__ + _distance.__all__ + _dropout.__all__ + _grid.__all__
           + _loss.__all__ + _normalization.__all__ + _pooling.__all__ + _sampling.__all__ + _sequence.__all__)
