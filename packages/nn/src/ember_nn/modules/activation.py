"""Activation layers: each stores its hyper-parameters and calls its ``functional`` twin."""
import warnings

import ember_tensor

from .. import functional as F
from ..parameter import Parameter
from .module import Module

__all__ = [
    "Threshold", "ReLU", "RReLU", "Hardtanh", "ReLU6", "Sigmoid", "Hardsigmoid", "Tanh", "SiLU", "Mish",
    "Hardswish", "ELU", "CELU", "SELU", "GLU", "GELU", "Hardshrink", "LeakyReLU", "LogSigmoid", "Softplus",
    "Softshrink", "PReLU", "Softsign", "Tanhshrink", "Softmin", "Softmax", "Softmax2d", "LogSoftmax",
]


def _inplace_suffix(inplace):
    return ", inplace=True" if inplace else ""


class _Elementwise(Module):
    """An activation with no hyper-parameters: ``forward`` is ``F.<_function>(input)``."""

    _function = None

    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):
        return getattr(F, self._function)(input)


class _ElementwiseInplace(Module):
    """An activation whose only hyper-parameter is ``inplace``."""

    _function = None
    _show_inplace = True

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return getattr(F, self._function)(input, inplace=self.inplace)

    def extra_repr(self):
        return "inplace=True" if self.inplace and self._show_inplace else ""


class Threshold(Module):
    """``y = x if x > threshold else value``."""

    def __init__(self, threshold, value, inplace=False):
        super().__init__()
        self.threshold = threshold
        self.value = value
        self.inplace = inplace

    def forward(self, input):
        return F.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self):
        return f"threshold={self.threshold}, value={self.value}{_inplace_suffix(self.inplace)}"


class ReLU(_ElementwiseInplace):
    """``max(0, x)``.

    >>> import ember_tensor as torch
    >>> ReLU()(torch.tensor([-1.0, 2.0]))
    tensor([0., 2.])
    """

    _function = "relu"


class RReLU(Module):
    """Randomized leaky ReLU: a slope drawn from U(lower, upper) in training, their mean in eval."""

    def __init__(self, lower=1.0 / 8, upper=1.0 / 3, inplace=False):
        super().__init__()
        self.lower = lower
        self.upper = upper
        self.inplace = inplace

    def forward(self, input):
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self):
        return f"lower={self.lower}, upper={self.upper}{_inplace_suffix(self.inplace)}"


class Hardtanh(Module):
    """``x`` clamped to [min_val, max_val]."""

    def __init__(self, min_val=-1.0, max_val=1.0, inplace=False, min_value=None, max_value=None):
        super().__init__()
        if min_value is not None:
            warnings.warn("keyword argument `min_value` is deprecated and rename to `min_val`",
                          FutureWarning, stacklevel=2)
            min_val = min_value
        if max_value is not None:
            warnings.warn("keyword argument `max_value` is deprecated and rename to `max_val`",
                          FutureWarning, stacklevel=2)
            max_val = max_value
        self.min_val = min_val
        self.max_val = max_val
        self.inplace = inplace
        if self.max_val <= self.min_val:
            raise AssertionError(f"max_val ({self.max_val}) must be greater than min_val ({self.min_val})")

    def forward(self, input):
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self):
        return f"min_val={self.min_val}, max_val={self.max_val}{_inplace_suffix(self.inplace)}"


class ReLU6(Hardtanh):
    """``min(max(0, x), 6)``."""

    def __init__(self, inplace=False):
        super().__init__(0.0, 6.0, inplace)

    def extra_repr(self):
        return "inplace=True" if self.inplace else ""


class Sigmoid(_Elementwise):
    """``1 / (1 + exp(-x))``."""

    _function = "sigmoid"


class Tanh(_Elementwise):
    """Hyperbolic tangent."""

    _function = "tanh"


class LogSigmoid(_Elementwise):
    """``log(sigmoid(x))``, computed stably."""

    _function = "logsigmoid"


class Softsign(_Elementwise):
    """``x / (1 + |x|)``."""

    _function = "softsign"


class Tanhshrink(_Elementwise):
    """``x - tanh(x)``."""

    _function = "tanhshrink"


class Hardsigmoid(_ElementwiseInplace):
    """Piecewise-linear sigmoid: ``relu6(x + 3) / 6``."""

    _function = "hardsigmoid"
    _show_inplace = False


class Hardswish(_ElementwiseInplace):
    """``x * relu6(x + 3) / 6``."""

    _function = "hardswish"
    _show_inplace = False


class SiLU(_ElementwiseInplace):
    """``x * sigmoid(x)`` (swish)."""

    _function = "silu"


class Mish(_ElementwiseInplace):
    """``x * tanh(softplus(x))``."""

    _function = "mish"


class SELU(_ElementwiseInplace):
    """Scaled ELU with the self-normalising constants."""

    _function = "selu"


class ELU(Module):
    """``x if x > 0 else alpha * (exp(x) - 1)``."""

    _function = "elu"

    def __init__(self, alpha=1.0, inplace=False):
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input):
        return getattr(F, self._function)(input, self.alpha, self.inplace)

    def extra_repr(self):
        return f"alpha={self.alpha}{_inplace_suffix(self.inplace)}"


class CELU(ELU):
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``."""

    _function = "celu"


class GLU(Module):
    """Gated linear unit: split `dim` in halves a, b and return ``a * sigmoid(b)``."""

    def __init__(self, dim=-1):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.glu(input, self.dim)

    def extra_repr(self):
        return f"dim={self.dim}"


class GELU(Module):
    """Gaussian error linear unit; ``approximate='tanh'`` uses the tanh formula."""

    def __init__(self, approximate="none"):
        super().__init__()
        self.approximate = approximate

    def forward(self, input):
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self):
        return f"approximate={self.approximate!r}"


class Hardshrink(Module):
    """``x if |x| > lambd else 0``."""

    def __init__(self, lambd=0.5):
        super().__init__()
        self.lambd = lambd

    def forward(self, input):
        return F.hardshrink(input, self.lambd)

    def extra_repr(self):
        return f"{self.lambd}"


class Softshrink(Hardshrink):
    """``x - lambd`` above lambd, ``x + lambd`` below -lambd, else 0."""

    def forward(self, input):
        return F.softshrink(input, self.lambd)


class LeakyReLU(Module):
    """``x if x >= 0 else negative_slope * x``."""

    def __init__(self, negative_slope=1e-2, inplace=False):
        super().__init__()
        self.negative_slope = negative_slope
        self.inplace = inplace

    def forward(self, input):
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self):
        return f"negative_slope={self.negative_slope}{_inplace_suffix(self.inplace)}"


class Softplus(Module):
    """``log(1 + exp(beta * x)) / beta``; linear above `threshold` for stability."""

    def __init__(self, beta=1.0, threshold=20.0):
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, input):
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self):
        return f"beta={self.beta}, threshold={self.threshold}"


class PReLU(Module):
    """Leaky ReLU with a learned slope (one, or one per channel).

    >>> PReLU(3).weight.tolist()
    [0.25, 0.25, 0.25]
    """

    def __init__(self, num_parameters=1, init=0.25, device=None, dtype=None):
        self.num_parameters = num_parameters
        super().__init__()
        self.init = init
        self.weight = Parameter(ember_tensor.empty(num_parameters, device=device, dtype=dtype))
        self.reset_parameters()

    def reset_parameters(self):
        """Every slope to `init`."""
        from .. import init as nn_init
        nn_init.constant_(self.weight, self.init)

    def forward(self, input):
        return F.prelu(input, self.weight)

    def extra_repr(self):
        return f"num_parameters={self.num_parameters}"


class _DimModule(Module):
    _function = None

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def __setstate__(self, state):
        super().__setstate__(state)
        if not hasattr(self, "dim"):
            self.dim = None

    def forward(self, input):
        return getattr(F, self._function)(input, self.dim)

    def extra_repr(self):
        return f"dim={self.dim}"


class Softmin(_DimModule):
    """``softmax(-x)`` along `dim`."""

    _function = "softmin"


class Softmax(_DimModule):
    """``exp(x) / sum(exp(x))`` along `dim`.

    >>> Softmax(dim=1)
    Softmax(dim=1)
    """

    _function = "softmax"


class LogSoftmax(_DimModule):
    """``log(softmax(x))`` along `dim`, computed stably."""

    _function = "log_softmax"


class Softmax2d(Module):
    """Softmax over the channels of (N, C, H, W) or (C, H, W), at each location."""

    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):
        if input.dim() not in (3, 4):
            raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got {input.dim()}D instead")
        return F.softmax(input, -3)
