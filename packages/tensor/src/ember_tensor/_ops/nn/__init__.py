"""The compute kernels of neural networks, as dispatcher ops (one family per module):
convolution, pooling, normalisation, hardtanh, softmax and losses (fused nll_loss; the
other losses as composite ops that autocast's lists can name), recurrent layers, sampling
(pad, interpolate, grid_sample), embedding, embedding_bag and dropout masks.
`ember_nn.functional` is the API on top; their derivative rules live in
`ember_autograd._rules.nn`."""
from . import (
    activation, clamped_activation, conv, cross_entropy, dense, distance, embedding_bags, loss, margin_loss,
    nondeterministic, normalization, pointwise_loss, pooling, recurrent, sampling, smooth_activation, threshold,
)
from .conv import *  # noqa: F401,F403
from .dense import *  # noqa: F401,F403
from .loss import *  # noqa: F401,F403
from .cross_entropy import *  # noqa: F401,F403
from .distance import *  # noqa: F401,F403
from .smooth_activation import *  # noqa: F401,F403
from .pointwise_loss import *  # noqa: F401,F403
from .margin_loss import *  # noqa: F401,F403
from .normalization import *  # noqa: F401,F403
from .pooling import *  # noqa: F401,F403
from .recurrent import *  # noqa: F401,F403
from .sampling import *  # noqa: F401,F403
from .embedding_bags import *  # noqa: F401,F403
from .activation import *  # noqa: F401,F403
from .clamped_activation import *  # noqa: F401,F403
from .nondeterministic import *  # noqa: F401,F403
from .threshold import *  # noqa: F401,F403

from ..._tensor import Tensor

# PyTorch's Tensor has these two as methods: x.softmax(dim), x.log_softmax(dim).
Tensor.softmax = activation.softmax
Tensor.log_softmax = activation.log_softmax

__all__ = (conv.__all__ + dense.__all__ + loss.__all__ + cross_entropy.__all__ + distance.__all__
           + smooth_activation.__all__ + pointwise_loss.__all__ + margin_loss.__all__ + normalization.__all__
           + pooling.__all__ + recurrent.__all__ + sampling.__all__ + embedding_bags.__all__ + activation.__all__
           + clamped_activation.__all__ + nondeterministic.__all__ + threshold.__all__)
