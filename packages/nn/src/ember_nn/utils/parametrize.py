"""Parametrizations: a tensor of a module computed by a small Module from stored originals.

``register_parametrization(m, "weight", P())`` stores the current weight (through
``P.right_inverse`` when P has one) under ``m.parametrizations.weight.original`` and makes
``m.weight`` a property that returns ``P()(original)``. The module's class is swapped for a
subclass ``Parametrized<Name>`` that holds the property, as in PyTorch.
"""
import ember_autograd
from ember_tensor import Tensor

from ..modules.container import ModuleDict, ModuleList
from ..parameter import Parameter

__all__ = ["register_parametrization", "remove_parametrizations", "is_parametrized", "ParametrizationList",
           "type_before_parametrizations"]


class ParametrizationList(ModuleList):
    """The parametrizations of one tensor and its originals (``original`` or
    ``original0``, ``original1``, ... when right_inverse returns several tensors)."""

    def __init__(self, modules, original, unsafe=False):
        super().__init__(modules)
        self.unsafe = unsafe
        with ember_autograd.no_grad():
            new = original
            for module in reversed(list(self)):
                if hasattr(module, "right_inverse"):
                    new = module.right_inverse(new)
        self.is_tensor = isinstance(new, Tensor)
        self.ntensors = 1 if self.is_tensor else len(new)
        if self.is_tensor:
            if original.dtype != new.dtype:
                raise ValueError("When `right_inverse` outputs one tensor, it may not change the dtype.\n"
                                 f"original.dtype: {original.dtype}\nright_inverse(original).dtype: {new.dtype}")
            with ember_autograd.no_grad():
                original.data = new.detach()  # the original Parameter object stays the same one
            _register_like(self, "original", original, original)
        else:
            for i, t in enumerate(new):
                if not isinstance(t, Tensor):
                    raise ValueError(f"'right_inverse' must return a Tensor or a Sequence of tensors (list, "
                                     f"tuple...). Got element {i} of the sequence with type {type(t).__name__}.")
                _register_like(self, f"original{i}", t.detach(), original)

    def right_inverse(self, value):
        """Store `value` as the originals (through each right_inverse, last first)."""
        with ember_autograd.no_grad():
            for module in reversed(list(self)):
                if hasattr(module, "right_inverse"):
                    value = module.right_inverse(value)
            if self.is_tensor:
                self.original.copy_(value)
            else:
                for i, t in enumerate(value):
                    getattr(self, f"original{i}").copy_(t)

    def forward(self):
        if self.is_tensor:
            x = self[0](self.original)
        else:
            x = self[0](*(getattr(self, f"original{i}") for i in range(self.ntensors)))
        for module in list(self)[1:]:
            x = module(x)
        return x


def _register_like(module, name, tensor, like):
    """Register `tensor` as a parameter if `like` is one, else as a buffer."""
    if isinstance(like, Parameter):
        module.register_parameter(name, tensor if isinstance(tensor, Parameter)
                                  else Parameter(tensor, like.requires_grad))
    else:
        module.register_buffer(name, tensor)


def is_parametrized(module, tensor_name=None):
    """Whether `module` has parametrizations (for `tensor_name`, if given)."""
    parametrizations = module.__dict__.get("_modules", {}).get("parametrizations")
    if parametrizations is None or not isinstance(parametrizations, ModuleDict):
        return False
    return len(parametrizations) > 0 if tensor_name is None else tensor_name in parametrizations


def type_before_parametrizations(module):
    """The module's class as it was before any parametrization was registered."""
    return type(module).__bases__[0] if is_parametrized(module) else type(module)


def _refuse_pickle(self):
    raise RuntimeError("Serialization of parametrized modules is only supported through state_dict(). See:\n"
                       "https://pytorch.org/tutorials/beginner/saving_loading_models.html")


def _inject_property(module, tensor_name):
    def get_parametrized(self):
        return self.parametrizations[tensor_name]()

    def set_original(self, value):
        self.parametrizations[tensor_name].right_inverse(value)

    setattr(type(module), tensor_name, property(get_parametrized, set_original))


def register_parametrization(module, tensor_name, parametrization, *, unsafe=False):
    """Make ``module.<tensor_name>`` be computed as ``parametrization(original)``.

    Registering a second parametrization on the same tensor chains it after the first.

    >>> import ember_tensor as torch, ember_nn as nn
    >>> class Symmetric(nn.Module):
    ...     def forward(self, x):
    ...         return x.triu() + x.triu(1).transpose(0, 1)
    >>> m = register_parametrization(nn.Linear(3, 3), "weight", Symmetric())
    >>> bool((m.weight == m.weight.T).all())
    True
    """
    parametrization.train(module.training)
    if is_parametrized(module, tensor_name):
        module.parametrizations[tensor_name].append(parametrization)
        return module
    if tensor_name in module._buffers or tensor_name in module._parameters:
        original = getattr(module, tensor_name)
        parametrizations = ParametrizationList([parametrization], original, unsafe=unsafe)
        delattr(module, tensor_name)
        if not is_parametrized(module):
            cls = type(module)
            module.__class__ = type(f"Parametrized{cls.__name__}", (cls,), {"__getstate__": _refuse_pickle})
            module.parametrizations = ModuleDict()
        module.parametrizations[tensor_name] = parametrizations
        _inject_property(module, tensor_name)
        return module
    raise ValueError(f"Module '{module}' does not have a parameter, a buffer, or a parametrized element with "
                     f"name '{tensor_name}'")


def remove_parametrizations(module, tensor_name, leave_parametrized=True):
    """Remove the parametrizations of `tensor_name`, leaving either its current value
    (`leave_parametrized`) or its original as a plain parameter or buffer."""
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"Module {module} does not have a parametrization on {tensor_name}")
    parametrizations = module.parametrizations[tensor_name]
    if parametrizations.is_tensor:
        original = parametrizations.original
        if leave_parametrized:
            with ember_autograd.no_grad():
                value = getattr(module, tensor_name)
                original.data = value.detach()
    else:
        if not leave_parametrized:
            raise ValueError("Cannot leave unparametrized (`leave_parametrized=False`) a tensor that is "
                             "parametrized in terms of a sequence of tensors.")
        with ember_autograd.no_grad():
            value = getattr(module, tensor_name)
        like = parametrizations.original0
        original = Parameter(value.detach(), like.requires_grad) if isinstance(like, Parameter) else value.detach()
    delattr(type(module), tensor_name)
    del module.parametrizations[tensor_name]
    if isinstance(original, Parameter):
        module.register_parameter(tensor_name, original)
    else:
        module.register_buffer(tensor_name, original)
    if not is_parametrized(module):
        delattr(module, "parametrizations")
        module.__class__ = type(module).__bases__[0]
    return module
