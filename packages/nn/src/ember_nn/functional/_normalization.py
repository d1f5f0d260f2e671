"""Normalisation: batch, instance, layer, group, RMS and local response norm, and
`normalize`. Batch, layer and group norm run fused kernels with their own backward."""
from ember_autograd import no_grad
from ember_tensor import nn_ops as K

from ._util import check_tensor

# torch.finfo(dtype).eps, rms_norm's default eps.
_MACHINE_EPS = {"torch.float16": 0.0009765625, "torch.bfloat16": 0.0078125,
                "torch.float32": 1.1920928955078125e-07, "torch.float64": 2.220446049250313e-16}

__all__ = ["batch_norm", "instance_norm", "layer_norm", "group_norm", "rms_norm", "local_response_norm",
           "normalize"]


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1,
               eps=1e-05):
    """Normalise each channel (dim 1) of (N, C, *) by batch statistics (training, which
    also updates the running ones in place) or by the running statistics."""
    check_tensor(input, "batch_norm")
    if training:
        size = list(input.shape)
        count = input.numel() // size[1] if input.dim() > 1 and size[1] else 0
        if count == 1:
            raise ValueError(f"Expected more than 1 value per channel when training, got input size "
                             f"torch.Size({size})")
    _check_momentum(momentum, "batch_norm")
    return K.native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps)[0]


def _check_momentum(momentum, name):
    # PyTorch's functional forms take a float; only the modules give None a meaning.
    if not isinstance(momentum, (int, float)) or isinstance(momentum, bool):
        raise TypeError(f"{name}(): argument 'momentum' (position 7) must be float, not "
                        f"{type(momentum).__name__}")


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None, use_input_stats=True,
                  momentum=0.1, eps=1e-05):
    """Normalise each (sample, channel) plane of (N, C, *) separately."""
    check_tensor(input, "instance_norm")
    _check_momentum(momentum, "instance_norm")
    if use_input_stats and input.numel() // (input.shape[0] * input.shape[1] or 1) <= 1:
        raise ValueError(f"Expected more than 1 spatial element when training, got input size "
                         f"torch.Size({list(input.shape)})")
    n, c = input.shape[:2]
    # Instance norm is batch norm of a (1, N*C, *) view: one fused kernel for both.
    folded = input.reshape((1, n * c) + tuple(input.shape[2:]))
    mean_rep = running_mean.repeat(n) if running_mean is not None else None
    var_rep = running_var.repeat(n) if running_var is not None else None
    w = weight.repeat(n) if weight is not None else None
    b = bias.repeat(n) if bias is not None else None
    out = K.native_batch_norm(folded, w, b, mean_rep, var_rep, use_input_stats, momentum, eps)[0]
    if use_input_stats and running_mean is not None:
        with no_grad():
            running_mean.copy_(mean_rep.reshape(n, c).mean(0))
            running_var.copy_(var_rep.reshape(n, c).mean(0))
    return out.reshape(input.shape)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-05):
    """Normalise over the trailing `normalized_shape` dims, then scale and shift."""
    check_tensor(input, "layer_norm")
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    return K.native_layer_norm(input, shape, weight, bias, eps)[0]


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-05):
    """Normalise groups of channels of (N, C, *) per sample."""
    check_tensor(input, "group_norm")
    if input.dim() < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received {input.dim()}")
    return K.native_group_norm(input, weight, bias, num_groups, eps)[0]


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """x / sqrt(mean(x^2 over the trailing dims) + eps) * weight."""
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    if tuple(input.shape[input.dim() - len(shape):]) != shape:
        raise RuntimeError(f"Given normalized_shape={list(shape)}, expected input with shape [*, "
                           f"{', '.join(map(str, shape))}], but got input of size{list(input.shape)}")
    if eps is None:
        eps = _MACHINE_EPS.get(str(input.dtype), _MACHINE_EPS["torch.float32"])
    dims = list(range(input.dim() - len(shape), input.dim()))
    out = input * ((input * input).mean(dims, keepdim=True) + eps).rsqrt()
    return out if weight is None else out * weight


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """Normalise each element by the squares of its neighbours across channels."""
    if input.dim() < 3:
        raise ValueError(f"Expected 3D or higher dimensionality input (got {input.dim()} dimensions)")
    if input.numel() == 0:
        return input
    sizes = tuple(input.shape)
    squares = (input * input).reshape(sizes[0], 1, sizes[1], -1)
    # Sum over a window of `size` channels centred on each one: pad the channel dim, pool.
    padded = K.constant_pad_nd(squares, (0, 0, size // 2, (size - 1) // 2), 0.0)
    div = K.avg_pool(padded, (size, 1), (1, 1), (0, 0), False, True).reshape(sizes)
    return input / (div * alpha + k).pow(beta)


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    """x / max(||x||_p along dim, eps)."""
    denom = input.norm(p, dim, keepdim=True).clamp(min=eps).expand_as(input)
    result = input / denom
    if out is not None:
        return out.copy_(result)
    return result
