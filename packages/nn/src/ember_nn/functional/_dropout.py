"""Dropout family: masks drawn from ember_tensor's RNG (so `manual_seed` reproduces them),
element-wise or per channel, and the self-normalising alpha variants."""
import warnings

import ember_tensor as E

from ._util import apply_inplace, check_tensor

__all__ = ["dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout", "feature_alpha_dropout"]

_SELU_NEG_SATURATION = -1.7580993408473766  # -scale * alpha of SELU


def _check_p(p):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _keep_mask(input, shape, p):
    return E.empty(shape, dtype=input.dtype, device=input.device).bernoulli_(1 - p)


def dropout(input, p=0.5, training=True, inplace=False):
    """Zero each element with probability `p` and scale the rest by 1/(1-p) (training only).

    >>> import ember_tensor as torch
    >>> dropout(torch.ones(3), 0.5, training=False).tolist()
    [1.0, 1.0, 1.0]
    """
    check_tensor(input, "dropout")
    _check_p(p)
    if not training or p == 0.0:
        return input
    if p == 1.0:
        return apply_inplace(input, lambda x: x * 0.0, inplace)
    mask = _keep_mask(input, tuple(input.shape), p)
    return apply_inplace(input, lambda x: x * mask * (1.0 / (1 - p)), inplace)


def _feature_dropout(input, p, training, inplace, nd, name, alpha=False):
    check_tensor(input, name)
    _check_p(p)
    if input.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(f"{name}: Expected {nd + 1}D or {nd + 2}D input, but received a {input.dim()}D "
                           f"input. Note that {name} exists to provide channel-wise dropout on inputs with "
                           f"{nd} spatial dimension{'s' if nd > 1 else ''}, a channel dimension, and an "
                           "optional batch dimension (i.e. 2D or 3D inputs).")
    if not training or p == 0.0:
        return input
    unbatched = input.dim() == nd + 1
    channels = tuple(input.shape[:1]) if unbatched else tuple(input.shape[:2])
    shape = channels + (1,) * nd
    if alpha:
        return _alpha(input, p, shape, inplace)
    if p == 1.0:
        return apply_inplace(input, lambda x: x * 0.0, inplace)
    return apply_inplace(input, lambda x: x * _keep_mask(x, shape, p) * (1.0 / (1 - p)), inplace)


def dropout1d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels of (N, C, L) or (C, L) with probability `p`."""
    return _feature_dropout(input, p, training, inplace, 1, "dropout1d")


def dropout2d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels of (N, C, H, W) or (C, H, W) with probability `p`."""
    if input.dim() == 3:
        warnings.warn("dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D dropout "
                      "behavior is desired - input is interpreted as shape (N, C, L), where C is the channel "
                      "dim. This behavior will change in a future release to interpret the input as one "
                      "without a batch dimension, i.e. shape (C, H, W). To maintain the 1D channel-wise "
                      "dropout behavior, please switch to using dropout1d instead.", stacklevel=2)
        return _feature_dropout(input, p, training, inplace, 1, "dropout2d")
    return _feature_dropout(input, p, training, inplace, 2, "dropout2d")


def dropout3d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels of (N, C, D, H, W) or (C, D, H, W) with probability `p`."""
    return _feature_dropout(input, p, training, inplace, 3, "dropout3d")


def _alpha(input, p, shape, inplace):
    if p == 1.0:
        return apply_inplace(input, lambda x: x * 0.0, inplace)
    keep = _keep_mask(input, shape, p)
    a = ((1 - p) * (1 + p * _SELU_NEG_SATURATION ** 2)) ** -0.5
    b = -a * _SELU_NEG_SATURATION * p
    # Dropped units go to SELU's negative saturation value; a and b restore mean and variance.
    return apply_inplace(input, lambda x: (x * keep + (1 - keep) * _SELU_NEG_SATURATION) * a + b, inplace)


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    """Dropout that keeps SELU activations' mean and variance."""
    check_tensor(input, "alpha_dropout")
    _check_p(p)
    if not training or p == 0.0:
        return input
    return _alpha(input, p, tuple(input.shape), inplace)


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    """alpha_dropout of whole channels."""
    check_tensor(input, "feature_alpha_dropout")
    _check_p(p)
    if not training or p == 0.0:
        return input
    shape = tuple(input.shape[:2]) + (1,) * (input.dim() - 2)
    return _alpha(input, p, shape, inplace)
