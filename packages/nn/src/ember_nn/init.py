"""Parameter initialisation (``torch.nn.init``): every function fills a tensor in place,
under no_grad, with ember_tensor's random ops (so ``manual_seed`` makes it reproducible),
and returns it.
"""
import math
import warnings

import numpy as np

import ember_autograd
import ember_tensor

__all__ = [
    "calculate_gain", "uniform_", "normal_", "trunc_normal_", "constant_", "ones_", "zeros_", "eye_",
    "dirac_", "xavier_uniform_", "xavier_normal_", "kaiming_uniform_", "kaiming_normal_", "orthogonal_",
    "sparse_",
]

_LINEAR_FNS = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
               "conv_transpose3d", "sigmoid")


def calculate_gain(nonlinearity, param=None):
    """The recommended gain for a nonlinearity (scales the init's standard deviation).

    ======================  ==========================
    linear, conv*, sigmoid  1
    tanh                    5/3
    relu                    sqrt(2)
    leaky_relu              sqrt(2 / (1 + slope^2))
    selu                    3/4
    ======================  ==========================

    >>> round(calculate_gain("leaky_relu", 0.2), 4)
    1.3868
    """
    if nonlinearity in _LINEAR_FNS:
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif isinstance(param, float) or (isinstance(param, int) and not isinstance(param, bool)):
            slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4  # found empirically (pytorch/pytorch#50664)
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _calculate_fan_in_and_fan_out(tensor):
    if tensor.dim() < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 dimensions")
    receptive_field = math.prod(tensor.shape[2:])
    return tensor.size(1) * receptive_field, tensor.size(0) * receptive_field


def _calculate_correct_fan(tensor, mode):
    mode = mode.lower()
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"Mode {mode} not supported, please use one of ['fan_in', 'fan_out']")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def _copy_numpy_into(tensor, values):
    tensor.copy_(ember_tensor.from_numpy(np.ascontiguousarray(values)))
    return tensor


def uniform_(tensor, a=0.0, b=1.0, generator=None):
    """Fill with samples of U(a, b).

    >>> import ember_tensor as torch
    >>> w = uniform_(torch.empty(3, 5), -0.5, 0.5)
    >>> bool((w.abs() <= 0.5).all())
    True
    """
    with ember_autograd.no_grad():
        return tensor.uniform_(a, b, generator=generator)


def normal_(tensor, mean=0.0, std=1.0, generator=None):
    """Fill with samples of N(mean, std^2)."""
    with ember_autograd.no_grad():
        return tensor.normal_(mean, std, generator=generator)


def trunc_normal_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0, generator=None):
    """Fill with samples of N(mean, std^2) redrawn until they fall in [a, b]."""
    if mean < a - 2 * std or mean > b + 2 * std:
        warnings.warn("mean is more than 2 std from [a, b] in nn.init.trunc_normal_. The distribution of "
                      "values may be incorrect.", stacklevel=2)
    with ember_autograd.no_grad():
        values = tensor.normal_(mean, std, generator=generator)
        # Rejection by redraw: each round keeps the in-range samples and redraws the rest.
        # The inverse-CDF method PyTorch once used would need erfinv of float precision.
        for _ in range(1000):
            outside = (values < a) | (values > b)
            if not bool(outside.any()):
                return tensor
            fresh = ember_tensor.empty_like(values).normal_(mean, std, generator=generator)
            tensor.copy_(ember_tensor.where(outside, fresh, values))
        return tensor.clamp_(a, b)  # [a, b] holds almost no mass: clamp what is left


def constant_(tensor, val):
    """Fill with the value `val`."""
    with ember_autograd.no_grad():
        return tensor.fill_(val)


def ones_(tensor):
    """Fill with ones."""
    return constant_(tensor, 1.0)


def zeros_(tensor):
    """Fill with zeros."""
    return constant_(tensor, 0.0)


def eye_(tensor):
    """Fill a 2-d tensor with the identity matrix (ones on the diagonal)."""
    if tensor.dim() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    with ember_autograd.no_grad():
        return _copy_numpy_into(tensor, np.eye(*tensor.shape))


def dirac_(tensor, groups=1):
    """Fill a 3/4/5-d convolution weight so that the convolution is the identity,
    channel by channel within each of `groups`."""
    dims = tensor.dim()
    if dims not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    sizes = tensor.size()
    if sizes[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    out_per_group = sizes[0] // groups
    values = np.zeros(tuple(sizes))
    centre = tuple(s // 2 for s in sizes[2:])
    for g in range(groups):
        for d in range(min(out_per_group, sizes[1])):
            values[(g * out_per_group + d, d) + centre] = 1
    with ember_autograd.no_grad():
        return _copy_numpy_into(tensor, values)


def xavier_uniform_(tensor, gain=1.0, generator=None):
    """Glorot uniform init: U(-b, b) with b = gain * sqrt(6 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    bound = math.sqrt(3.0) * gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return uniform_(tensor, -bound, bound, generator)


def xavier_normal_(tensor, gain=1.0, generator=None):
    """Glorot normal init: N(0, std^2) with std = gain * sqrt(2 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / float(fan_in + fan_out)), generator)


def _kaiming_std(tensor, a, mode, nonlinearity):
    return calculate_gain(nonlinearity, a) / math.sqrt(_calculate_correct_fan(tensor, mode))


def kaiming_uniform_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """He uniform init: U(-b, b) with b = gain * sqrt(3 / fan); `a` is the negative slope
    of the leaky_relu that follows, `mode` picks fan_in or fan_out.

    >>> import ember_tensor as torch
    >>> w = kaiming_uniform_(torch.empty(4, 9), a=5 ** 0.5)  # nn.Linear's default
    >>> bool((w.abs() <= 1 / 3).all())
    True
    """
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    bound = math.sqrt(3.0) * _kaiming_std(tensor, a, mode, nonlinearity)
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """He normal init: N(0, std^2) with std = gain / sqrt(fan)."""
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    return normal_(tensor, 0.0, _kaiming_std(tensor, a, mode, nonlinearity), generator)


def orthogonal_(tensor, gain=1, generator=None):
    """Fill with a (semi-)orthogonal matrix (the tensor flattened to rows x rest), scaled
    by `gain`: the Q of a QR factorisation of a Gaussian matrix, with signs fixed so that
    Q is uniformly distributed (Mezzadri, arXiv:math-ph/0609050)."""
    if tensor.dim() < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor
    rows = tensor.size(0)
    cols = tensor.numel() // rows
    gaussian = ember_tensor.empty(rows, cols, dtype=ember_tensor.float64).normal_(0, 1, generator=generator)
    flat = gaussian.numpy()
    if rows < cols:
        flat = flat.T
    q, r = np.linalg.qr(flat)
    q = q * np.sign(np.diag(r))
    if rows < cols:
        q = q.T
    with ember_autograd.no_grad():
        return _copy_numpy_into(tensor, (q * gain).reshape(tuple(tensor.shape)))


def sparse_(tensor, sparsity, std=0.01, generator=None):
    """Fill a 2-d tensor with N(0, std^2) samples, then zero a fraction `sparsity` of
    the rows in each column (chosen at random)."""
    if tensor.dim() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    rows, cols = tensor.shape
    num_zeros = math.ceil(sparsity * rows)
    with ember_autograd.no_grad():
        tensor.normal_(0, std, generator=generator)
        keep = np.ones((rows, cols), dtype=bool)
        for col in range(cols):
            zero_rows = ember_tensor.randperm(rows, generator=generator).numpy()[:num_zeros]
            keep[zero_rows, col] = False
        mask = ember_tensor.from_numpy(keep).to(device=tensor.device)
        return tensor.mul_(mask.to(tensor.dtype))


# PyTorch's deprecated names without the trailing underscore.
def _deprecated(new):
    def old(*args, **kwargs):
        warnings.warn(f"`nn.init.{new.__name__[:-1]}` is now deprecated in favor of "
                      f"`nn.init.{new.__name__}`.", FutureWarning, stacklevel=2)
        return new(*args, **kwargs)
    old.__name__ = new.__name__[:-1]
    old.__doc__ = f"Deprecated alias of :func:`{new.__name__}`."
    return old


uniform = _deprecated(uniform_)
normal = _deprecated(normal_)
constant = _deprecated(constant_)
xavier_uniform = _deprecated(xavier_uniform_)
xavier_normal = _deprecated(xavier_normal_)
kaiming_uniform = _deprecated(kaiming_uniform_)
kaiming_normal = _deprecated(kaiming_normal_)
orthogonal = _deprecated(orthogonal_)
sparse = _deprecated(sparse_)
eye = _deprecated(eye_)
dirac = _deprecated(dirac_)
