"""Bijective (mostly) transforms with log |det J|, as ``torch.distributions.transforms``.

One module per concept: the protocol (``_base``), elementwise bijections
(``_elementwise``), transforms of whole events (``_structural``) and transforms built
from others (``_composition``); every name is importable from here, as in PyTorch.

>>> import ember_tensor as torch
>>> t = ExpTransform()
>>> t(torch.tensor([0.0])), t.inv(torch.tensor([1.0]))
(tensor([1.]), tensor([0.]))
"""
from ._base import Transform
from ._composition import CatTransform, ComposeTransform, IndependentTransform, StackTransform, identity_transform
from ._elementwise import (
    AbsTransform, AffineTransform, CumulativeDistributionTransform, ExpTransform, PowerTransform, SigmoidTransform,
    SoftplusTransform, TanhTransform,
)
from ._structural import (
    CorrCholeskyTransform, LowerCholeskyTransform, PositiveDefiniteTransform, ReshapeTransform, SoftmaxTransform,
    StickBreakingTransform,
)

__all__ = [
    "AbsTransform", "AffineTransform", "CatTransform", "ComposeTransform", "CorrCholeskyTransform",
    "CumulativeDistributionTransform", "ExpTransform", "IndependentTransform", "LowerCholeskyTransform",
    "PositiveDefiniteTransform", "PowerTransform", "ReshapeTransform", "SigmoidTransform", "SoftplusTransform",
    "TanhTransform", "SoftmaxTransform", "StackTransform", "StickBreakingTransform", "Transform", "identity_transform",
]
