"""``autograd.Variable``: since PyTorch 0.4 it returns a plain Tensor."""
from ember_tensor import Tensor

__all__ = ["Variable"]


class _VariableMeta(type):
    def __instancecheck__(cls, other):
        return isinstance(other, Tensor)


class Variable(metaclass=_VariableMeta):
    """``Variable(tensor, requires_grad=False)`` returns a Tensor sharing `tensor`'s data.

    >>> import ember_tensor as torch
    >>> v = Variable(torch.ones(2), requires_grad=True)
    >>> type(v).__name__, v.requires_grad
    ('Tensor', True)
    """

    def __new__(cls, data=None, requires_grad=False, volatile=False):
        if data is None:
            import ember_tensor
            data = ember_tensor.empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        result = data.detach()
        result._view_base = None
        result.requires_grad_(requires_grad)
        return result
