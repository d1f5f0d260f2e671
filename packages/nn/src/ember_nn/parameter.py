"""Parameter, Buffer and UninitializedParameter: the tensors a Module registers.

A Parameter is a Tensor subclass that shares storage with the tensor it was made from,
is a leaf of the autograd graph and requires grad by default; assigning one to a Module
attribute registers it. ``Buffer`` only marks a tensor for registration as a buffer.
"""
import copy
from collections import OrderedDict

import ember_tensor
from ember_tensor import Tensor, serialization

__all__ = ["Parameter", "Buffer", "UninitializedParameter", "UninitializedBuffer", "is_lazy"]


def _alias_as(cls, data):
    """A tensor of class `cls` viewing `data`'s storage, detached from any graph."""
    return cls._wrap(data._data, data._dtype, data._device, data._storage, data._offset)


class Parameter(Tensor):
    """A Tensor that is a module parameter: it requires grad by default and registers
    itself when assigned as an attribute of a Module.

    Args:
        data: the tensor whose storage the parameter shares (an empty tensor if None).
        requires_grad: whether the parameter requires gradient. Default: True.

    >>> import ember_tensor as torch
    >>> p = Parameter(torch.ones(2))
    >>> p.requires_grad, p.is_leaf, isinstance(p, torch.Tensor)
    (True, True, True)
    """

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            data = ember_tensor.empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Parameter(): argument 'data' must be Tensor, not {type(data).__name__}")
        param = _alias_as(cls, data)
        param.requires_grad_(requires_grad)
        return param

    def __init__(self, data=None, requires_grad=True):
        pass

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()

    __str__ = __repr__

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        result = type(self)(self.data.clone(), self.requires_grad)
        result.__dict__.update(copy.deepcopy(self.__dict__, memo))
        memo[id(self)] = result
        return result

    def __reduce_ex__(self, protocol):
        if type(self) is Parameter:
            # PyTorch's form, so torch.load reads ember's checkpoints of parameters.
            return (rebuild_parameter, (self.data, self.requires_grad, OrderedDict()))
        return (_rebuild_parameter_of_class, (type(self), self.data, self.requires_grad))


def rebuild_parameter(data, requires_grad, backward_hooks=None, *state):
    """``torch._utils._rebuild_parameter``: a Parameter over `data` (hooks are not restored)."""
    if type(requires_grad) is not bool:
        raise RuntimeError(f"_rebuild_parameter: requires_grad must be a bool, got {requires_grad!r}")
    return Parameter(data, requires_grad)


def _rebuild_parameter_of_class(cls, data, requires_grad):
    return cls(data, requires_grad)


# Checkpoints name Parameters by PyTorch's paths; both rebuild a Parameter from a tensor
# and nothing else, so weights_only=True may use them.
serialization.register_global("torch._utils._rebuild_parameter", rebuild_parameter, safe=True)
serialization.register_global("torch.nn.parameter.Parameter", Parameter, safe=True)


class _BufferMeta(type):
    # A Buffer is a plain Tensor flagged for registration: isinstance checks the flag.
    def __instancecheck__(cls, instance):
        if cls is Buffer:
            return isinstance(instance, Tensor) and getattr(instance, "_is_buffer", False)
        return super().__instancecheck__(instance)


class Buffer(metaclass=_BufferMeta):
    """Marks a tensor as a buffer: assigning ``Buffer(t)`` to a Module attribute calls
    ``register_buffer(name, t, persistent)``.

    Args:
        data: the buffer's tensor (an empty tensor if None); the result is detached from it.
        persistent: whether the buffer is saved in the module's ``state_dict``.

    >>> import ember_tensor as torch
    >>> b = Buffer(torch.zeros(3))
    >>> type(b).__name__, isinstance(b, Buffer), b.persistent
    ('Tensor', True, True)
    """

    def __new__(cls, data=None, *, persistent=True):
        if data is None:
            data = ember_tensor.empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Buffer(): argument 'data' must be Tensor, not {type(data).__name__}")
        buffer = data.detach().requires_grad_(data.requires_grad)
        buffer._is_buffer = True
        buffer.persistent = persistent
        return buffer


def _uninitialized_error(*args, **kwargs):
    raise RuntimeError(
        "Can't access the shape of an uninitialized parameter or buffer. This error usually "
        "happens in `load_state_dict` when trying to load an uninitialized parameter into an "
        "initialized one. Call `forward` to initialize the parameters before accessing their "
        "attributes.")


class _UninitializedMixin:
    """Shape-less placeholders for lazy modules; ``materialize`` gives them data."""

    cls_to_become = None

    def materialize(self, shape, device=None, dtype=None):
        """Allocate uninitialised data of `shape` and turn into ``cls_to_become``."""
        if device is None:
            device = self.data.device
        if dtype is None:
            dtype = self.data.dtype
        self.data = ember_tensor.empty(shape, device=device, dtype=dtype)
        self.__class__ = self.cls_to_become

    shape = property(_uninitialized_error)
    size = _uninitialized_error
    numel = _uninitialized_error
    dim = _uninitialized_error
    ndim = property(_uninitialized_error)

    def __repr__(self):
        return f"<{type(self).__name__}>"

    __str__ = __repr__

    def __reduce_ex__(self, protocol):
        raise RuntimeError(
            f"'{type(self).__name__}' must be initialized before it can be saved; run a forward "
            "pass first")


class UninitializedParameter(_UninitializedMixin, Parameter):
    """A Parameter whose shape is not known yet (see LazyLinear); ``materialize(shape)``
    turns it into a regular Parameter."""

    cls_to_become = Parameter

    def __new__(cls, requires_grad=True, device=None, dtype=None):
        data = ember_tensor.empty(0, device=device, dtype=dtype)
        return Parameter.__new__(cls, data, requires_grad)

    def __init__(self, requires_grad=True, device=None, dtype=None):
        pass


class UninitializedBuffer(_UninitializedMixin, Tensor):
    """A buffer whose shape is not known yet; ``materialize(shape)`` makes it a Tensor."""

    cls_to_become = Tensor

    def __new__(cls, requires_grad=False, device=None, dtype=None):
        data = ember_tensor.empty(0, device=device, dtype=dtype)
        return _alias_as(cls, data).requires_grad_(requires_grad)

    def __init__(self, requires_grad=False, device=None, dtype=None):
        pass


def is_lazy(param):
    """Whether `param` is an uninitialized parameter or buffer."""
    return isinstance(param, _UninitializedMixin)
