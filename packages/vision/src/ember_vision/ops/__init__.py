"""torchvision.ops: box operations, non-maximum suppression, RoI Align and model blocks."""
from .misc import MLP, Conv2dNormActivation, FrozenBatchNorm2d, Permute, SqueezeExcitation
from .stochastic_depth import StochasticDepth, stochastic_depth

__all__ = ["MLP", "Conv2dNormActivation", "FrozenBatchNorm2d", "Permute", "SqueezeExcitation", "StochasticDepth",
           "stochastic_depth"]
