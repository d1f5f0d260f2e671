"""The nn kernels as dispatcher ops: the surface ember-nn and ember-autograd build on.

Convolution and its two backward products, pooling with its backward and unpooling,
normalisation, softmax and losses, sampling (pad, interpolate, grid_sample, embedding,
one_hot, dropout masks) and the sparse embedding. They are PyTorch's ATen-level kernels
(``torch.ops.aten.convolution`` and friends): ``ember_nn.functional`` is the API on top,
their derivative rules live in ``ember_autograd``. Declared for the layers above: packages
import this module, never ``ember_tensor._ops`` (a contract in CI checks it).

>>> import ember_tensor as et
>>> from ember_tensor import nn_ops
>>> nn_ops.convolution(et.ones(1, 1, 3), et.ones(1, 1, 2)).tolist()
[[[2.0, 2.0]]]
"""
from ._backends.plan import adaptive_bounds, output_size
from ._ops.nn import *  # noqa: F401,F403 - the nn kernels
from ._ops.nn import __all__ as _KERNELS
from ._ops.nn.pointwise_loss import reduce_loss
from .sparse._nn import embedding_sparse, embedding_sparse_backward

__all__ = [*_KERNELS, "adaptive_bounds", "output_size", "embedding_sparse", "embedding_sparse_backward",
           "reduce_loss"]
