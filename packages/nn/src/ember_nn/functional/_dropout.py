"""Dropout family: masks drawn from ember_tensor's RNG (so `manual_seed` reproduces them),
element-wise or per channel, and the self-normalising alpha variants."""
import warnings

import ember_tensor as E

from ._util import apply_inplace, check_tensor

# feature_dropout is public (the meta-package's torch.feature_dropout calls it) but not
# part of torch.nn.functional's namespace, so not of __all__.
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


def _feature_dropout(input, p, training, inplace, alpha=False):
    """ATen's feature_dropout: one draw per (N, C) slice of an input of any rank >= 2."""
    if not training or p == 0.0:
        return input
    if input.dim() < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    shape = tuple(input.shape[:2]) + (1,) * (input.dim() - 2)
    if alpha:
        return _alpha(input, p, shape, inplace)
    if p == 1.0:
        return apply_inplace(input, lambda x: x * 0.0, inplace)
    return apply_inplace(input, lambda x: x * _keep_mask(x, shape, p) * (1.0 / (1 - p)), inplace)


def feature_dropout(input, p, train, inplace=False):
    """ATen's ``feature_dropout(input, p, train)`` (``torch.feature_dropout``): zero whole
    (N, C) slices of an input of any rank >= 2 with probability `p`, the kernel behind
    dropout1d/2d/3d; ember's top-level spelling calls it."""
    check_tensor(input, "feature_dropout")
    _check_p(p)
    return _feature_dropout(input, p, train, inplace)


def _unbatched_feature_dropout(input, p, training, inplace):
    """feature_dropout of (C, *S) seen as a batch of one; in place, `input` itself is written."""
    result = _feature_dropout(input.unsqueeze(0), p, training, inplace)
    return input if inplace else result.squeeze(0)


def _warn_rank(name, rank, nd):
    # PyTorch still runs dropout2d/3d on other ranks (as feature_dropout), with this warning.
    warnings.warn(f"{name}: Received a {rank}-D input to {name}, which is deprecated and will result in an "
                  "error in a future release. To retain the behavior and silence this warning, please use "
                  f"dropout instead. Note that {name} exists to provide channel-wise dropout on inputs with "
                  f"{nd} spatial dimensions, a channel dimension, and an optional batch dimension (i.e. "
                  f"{nd + 1}D or {nd + 2}D inputs).", stacklevel=3)


def dropout1d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels of (N, C, L) or (C, L) with probability `p`."""
    check_tensor(input, "dropout1d")
    _check_p(p)
    if input.dim() not in (2, 3):
        raise RuntimeError(f"dropout1d: Expected 2D or 3D input, but received a {input.dim()}D input. Note "
                           "that dropout1d exists to provide channel-wise dropout on inputs with 1 spatial "
                           "dimension, a channel dimension, and an optional batch dimension (i.e. 2D or 3D "
                           "inputs).")
    if input.dim() == 2:
        return _unbatched_feature_dropout(input, p, training, inplace)
    return _feature_dropout(input, p, training, inplace)


def dropout2d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels of (N, C, H, W) with probability `p`.

    As in PyTorch, a 3-D input is read as (N, C, L) (with a warning), and other ranks are
    dropped per (dim 0, dim 1) slice with a deprecation warning (a 2-D input: element-wise).
    """
    check_tensor(input, "dropout2d")
    _check_p(p)
    if input.dim() not in (3, 4):
        _warn_rank("dropout2d", input.dim(), 2)
    if input.dim() == 3:
        warnings.warn("dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D dropout "
                      "behavior is desired - input is interpreted as shape (N, C, L), where C is the channel "
                      "dim. This behavior will change in a future release to interpret the input as one "
                      "without a batch dimension, i.e. shape (C, H, W). To maintain the 1D channel-wise "
                      "dropout behavior, please switch to using dropout1d instead.", stacklevel=2)
    return _feature_dropout(input, p, training, inplace)


def dropout3d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels of (N, C, D, H, W) or (C, D, H, W) with probability `p`.

    As in PyTorch, other ranks warn and are read as unbatched: channels along dim 0.
    """
    check_tensor(input, "dropout3d")
    _check_p(p)
    if input.dim() not in (4, 5):
        _warn_rank("dropout3d", input.dim(), 3)
    if input.dim() != 5:
        return _unbatched_feature_dropout(input, p, training, inplace)
    return _feature_dropout(input, p, training, inplace)


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
