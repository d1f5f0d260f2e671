"""Flatten parameters into one vector and back (for second-order methods, line searches)."""
import ember_tensor
from ember_tensor import Tensor

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def _check_same_device(param, device):
    if device is None:
        return param.device
    if param.device != device:
        raise TypeError("Found two parameters on different devices, this is currently not supported.")
    return device


def parameters_to_vector(parameters):
    """One 1-d tensor holding every parameter, flattened, in order.

    >>> import ember_tensor as torch
    >>> parameters_to_vector([torch.ones(2, 2), torch.zeros(1)]).tolist()
    [1.0, 1.0, 1.0, 1.0, 0.0]
    """
    device = None
    pieces = []
    for param in parameters:
        device = _check_same_device(param, device)
        pieces.append(param.reshape(-1))
    return ember_tensor.cat(pieces)


def vector_to_parameters(vec, parameters):
    """Make each parameter's data the matching slice of `vec` (a view of it)."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {type(vec).__name__}")
    device = None
    offset = 0
    for param in parameters:
        device = _check_same_device(param, device)
        n = param.numel()
        param.data = vec[offset:offset + n].view_as(param).data
        offset += n
