"""Activation functions (``torch.nn.functional``'s), composed from differentiable
elementwise ops; softmax and log_softmax run fused kernels."""
import math

import ember_tensor as E
from ember_tensor import nn_ops as K

from ._util import apply_inplace, check_tensor

__all__ = ["threshold", "threshold_", "relu", "relu_", "relu6", "hardtanh", "hardtanh_", "elu", "elu_",
           "selu", "selu_", "celu", "celu_", "leaky_relu", "leaky_relu_", "prelu", "rrelu", "rrelu_",
           "glu", "gelu", "logsigmoid", "hardshrink", "tanhshrink", "softsign", "softplus", "softmin",
           "softmax", "log_softmax", "gumbel_softmax", "softshrink", "tanh", "sigmoid", "hardsigmoid", "silu", "mish",
           "hardswish"]


def _threshold(input, limit, value, inplace):
    # PyTorch tests x <= threshold, so NaN is kept (with its gradient), not replaced.
    return apply_inplace(input, lambda x: E.where(x <= limit, value, x), inplace)


def threshold(input, threshold, value, inplace=False):
    """`input` where it is greater than `threshold`, else `value`."""
    return _threshold(input, threshold, value, inplace)


def threshold_(input, threshold, value):
    """In-place `threshold`."""
    return _threshold(input, threshold, value, True)


def relu(input, inplace=False):
    """max(0, x): ``relu(tensor([-1., 2.]))`` -> ``tensor([0., 2.])``."""
    check_tensor(input, "relu")
    return input.relu_() if inplace else input.relu()


def relu_(input):
    """In-place `relu`."""
    return input.relu_()


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    """x clamped to [min_val, max_val]: ``hardtanh(tensor([-2., 0.5]))`` -> ``tensor([-1., 0.5])``.

    One operator (`nn_ops.hardtanh`), not `clamp`: its values are clamp's (-0.0 stays -0.0),
    but PyTorch's hardtanh (and relu6) pass no gradient at the limits themselves, where
    clamp passes it, and a NaN input gets the gradient (it is at no limit).
    """
    check_tensor(input, "hardtanh")
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    return K.hardtanh_(input, min_val, max_val) if inplace else K.hardtanh(input, min_val, max_val)


def hardtanh_(input, min_val=-1.0, max_val=1.0):
    """In-place `hardtanh`."""
    return hardtanh(input, min_val, max_val, True)


def relu6(input, inplace=False):
    """min(max(0, x), 6)."""
    return hardtanh(input, 0.0, 6.0, inplace)


def _expm1_below_0(x):
    """expm1 of x where x <= 0, the negative branch of the elu family.

    The branch is selected with `where(x <= 0, ..., x)` as PyTorch's backward tests it, so a
    NaN input takes the linear branch's gradient (1, not nan). x is clamped at 0 first: the
    unselected branch of a large x would otherwise backpropagate 0 * exp(x) = nan.
    """
    return x.clamp(max=0).expm1()


def elu(input, alpha=1.0, inplace=False):
    """x if x > 0 else alpha * (exp(x) - 1)."""
    return apply_inplace(input, lambda x: E.where(x <= 0, _expm1_below_0(x) * alpha, x), inplace)


def elu_(input, alpha=1.0):
    """In-place `elu`."""
    return elu(input, alpha, True)


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def selu(input, inplace=False):
    """scale * elu(x, alpha) with the self-normalising constants."""
    return apply_inplace(input, lambda x: E.where(x <= 0, _expm1_below_0(x) * _SELU_ALPHA, x) * _SELU_SCALE,
                         inplace)


def selu_(input):
    """In-place `selu`."""
    return selu(input, True)


def celu(input, alpha=1.0, inplace=False):
    """max(0, x) + min(0, alpha * (exp(x / alpha) - 1))."""
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError")
    return apply_inplace(input, lambda x: E.where(x <= 0, _expm1_below_0(x / alpha) * alpha, x), inplace)


def celu_(input, alpha=1.0):
    """In-place `celu`."""
    return celu(input, alpha, True)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    """x if x > 0 else negative_slope * x."""
    return apply_inplace(input, lambda x: E.where(x > 0, x, x * negative_slope), inplace)


def leaky_relu_(input, negative_slope=0.01):
    """In-place `leaky_relu`."""
    return leaky_relu(input, negative_slope, True)


def prelu(input, weight):
    """leaky_relu with a learnt slope per channel (dim 1) or one shared slope."""
    if weight.numel() != 1:
        channels = input.shape[1] if input.dim() >= 2 else input.shape[0]
        if weight.numel() != channels:
            raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found parameter numbers "
                               f"= {weight.numel()} and channel size = {channels}.")
        if input.dim() >= 2:
            weight = weight.reshape((1, -1) + (1,) * (input.dim() - 2))
    return E.where(input > 0, input, input * weight)


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    """Randomised leaky ReLU: a slope drawn from U(lower, upper) per element in training,
    their mean in evaluation."""
    if training:
        # PyTorch's rrelu_with_noise: the slope applies where x <= 0 (0 included, NaN not).
        slope = E.empty_like(input).uniform_(lower, upper)
        return apply_inplace(input, lambda x: E.where(x <= 0, x * slope, x), inplace)
    # In evaluation it is leaky_relu with the mean slope: x > 0 keeps x (NaN takes the slope).
    slope = (lower + upper) / 2
    return apply_inplace(input, lambda x: E.where(x > 0, x, x * slope), inplace)


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False):
    """In-place `rrelu`."""
    return rrelu(input, lower, upper, training, True)


def glu(input, dim=-1):
    """a * sigmoid(b) where a, b are the halves of `input` along `dim`."""
    if input.dim() == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    if input.shape[dim] % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {dim % input.dim()} is size "
                           f"{input.shape[dim]}")
    a, b = input.chunk(2, dim)
    return a * b.sigmoid()


def gelu(input, approximate="none"):
    """x * Phi(x), exactly (erf) or with the tanh approximation."""
    if approximate == "tanh":
        inner = (input + input * input * input * 0.044715) * math.sqrt(2.0 / math.pi)
        return input * 0.5 * (inner.tanh() + 1)
    if approximate != "none":
        raise RuntimeError(f"approximate argument must be either none or tanh.")
    return input * 0.5 * ((input * (1.0 / math.sqrt(2.0))).erf() + 1)


def logsigmoid(input):
    """log(sigmoid(x)) = -softplus(-x), stable for large |x|.

    Two smooth branches, x - log1p(exp(x)) below 0 and -log1p(exp(-x)) from 0 on, each fed
    its own side of 0 (so no unselected exp overflows): min(x, 0) - log1p(exp(-|x|)) would
    put the kinks of min and abs at 0 and give a gradient of 1 there, not sigmoid(0) = 0.5.
    """
    negative = input < 0
    below = E.where(negative, input, 0.0)
    above = E.where(negative, 0.0, input)
    return E.where(negative, below - below.exp().log1p(), 0.0 - (-above).exp().log1p())  # +0 at inf, as PyTorch


def hardshrink(input, lambd=0.5):
    """x where |x| > lambd, else 0 (NaN stays NaN, with its gradient, as in PyTorch)."""
    return E.where((input >= -lambd) & (input <= lambd), 0.0, input)


def tanhshrink(input):
    """x - tanh(x)."""
    return input - input.tanh()


def softsign(input):
    """x / (1 + |x|)."""
    return input / (input.abs() + 1)


def softplus(input, beta=1.0, threshold=20.0):
    """log(1 + exp(beta * x)) / beta, linear where beta * x > threshold."""
    return K.softplus(input, beta, threshold)


def softshrink(input, lambd=0.5):
    """x - lambd if x > lambd, x + lambd if x < -lambd, else 0."""
    if lambd < 0:
        raise RuntimeError(f"lambda must be greater or equal to 0, but found to be {lambd}.")
    # x - sign(x) * lambd outside the band: NaN stays NaN with its gradient, as in PyTorch.
    return E.where((input >= -lambd) & (input <= lambd), 0.0, input - input.sign() * lambd)


def _softmax_dim(ndim):
    # PyTorch's implicit-dim rule (deprecated there, kept for compatibility).
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    """exp(x) / sum(exp(x)) along `dim` (fused, max-subtracted)."""
    check_tensor(input, "softmax")
    return K.softmax(input, _softmax_dim(input.dim()) if dim is None else dim, dtype)


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    """softmax(-x)."""
    return K.softmax(-input, _softmax_dim(input.dim()) if dim is None else dim, dtype)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    """log(softmax(x)) computed stably in one kernel."""
    check_tensor(input, "log_softmax")
    return K.log_softmax(input, _softmax_dim(input.dim()) if dim is None else dim, dtype)


def gumbel_softmax(logits, tau=1, hard=False, eps=1e-10, dim=-1):
    """A sample of the Gumbel-softmax (concrete) distribution over `dim`; with `hard`, the
    one-hot of its argmax whose gradient is the soft sample's (straight-through)."""
    gumbels = -E.empty_like(logits).exponential_().log()  # Gumbel(0, 1) noise
    soft = K.softmax((logits + gumbels) / tau, dim)
    if not hard:
        return soft
    moved = soft.movedim(dim, -1)
    hot = K.one_hot(moved.argmax(-1), moved.shape[-1]).to(soft.dtype).movedim(-1, dim)
    return hot - soft.detach() + soft


def tanh(input):
    """Hyperbolic tangent."""
    return input.tanh()


def sigmoid(input):
    """1 / (1 + exp(-x))."""
    return input.sigmoid()


def hardsigmoid(input, inplace=False):
    """relu6(x + 3) / 6.

    The gradient is 1/6 strictly inside (-3, 3) only, as PyTorch's: not at the limits, not
    at NaN (whose value, NaN, comes from the clamped constant branch).
    """
    return apply_inplace(input, lambda x: E.where((x > -3) & (x < 3), x / 6 + 0.5, ((x + 3).clamp(0, 6) / 6).detach()),
                         inplace)


def silu(input, inplace=False):
    """x * sigmoid(x)."""
    return apply_inplace(input, lambda x: x * x.sigmoid(), inplace)


def mish(input, inplace=False):
    """x * tanh(softplus(x))."""
    return apply_inplace(input, lambda x: x * softplus(x).tanh(), inplace)


def hardswish(input, inplace=False):
    """x * relu6(x + 3) / 6.

    Piecewise as PyTorch's backward: 0 up to -3 (inclusive), x * (x + 3) / 6 below 3, x from
    3 on; NaN falls through to x and gets the gradient 1.
    """
    return apply_inplace(input, _hardswish, inplace)


def _hardswish(x):
    # The middle branch sees x only inside (-3, 3): elsewhere its unselected 0 gradient
    # times a NaN or infinite x would be NaN.
    inside = E.where((x > -3) & (x < 3), x, 0.0)
    return E.where(x <= -3, x * 0.0, E.where(x < 3, inside * (inside + 3) / 6, x))
