"""ParameterList and ParameterDict: lists and dicts of parameters registered on a module
(re-exported by container.py, where PyTorch has them)."""
from collections.abc import Iterable, Mapping

from ember_tensor import Tensor

from ..parameter import Parameter
from .container import _index_in
from .module import Module

__all__ = ["ParameterList", "ParameterDict"]


def _parameter_line(key, value, type_name):
    """PyTorch's line for one entry: "  (0): Parameter containing: [torch.float32 of size 2x3]"."""
    if isinstance(value, Tensor):
        size = "x".join(str(s) for s in value.size())
        kind = "Parameter" if isinstance(value, Parameter) else "Tensor"
        device = "" if value.device.type == "cpu" else f" ({value.device})"
        return f"  ({key}): {kind} containing: [{type_name(value)} of size {size}{device}]"
    return f"  ({key}): Object of type: {type(value).__name__}"


def _legacy_type_name(value):
    # ParameterDict prints torch.typename ("torch.FloatTensor"), ParameterList the dtype.
    return "torch." + value.type().rsplit(".", 1)[-1]


class ParameterList(Module):
    """A list of parameters; plain tensors appended are wrapped in Parameter.

    >>> import ember_tensor as torch, ember_nn as nn
    >>> params = nn.ParameterList([torch.ones(2), torch.zeros(3)])
    >>> [type(p).__name__ for p in params]
    ['Parameter', 'Parameter']
    """

    def __init__(self, values=None):
        super().__init__()
        self._size = 0
        if values is not None:
            self += values

    def _key(self, idx):
        return str(_index_in(idx, len(self)))

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return type(self)([self[i] for i in range(len(self))[idx]])
        return getattr(self, self._key(idx))

    def __setitem__(self, idx, value):
        key = self._key(idx)
        if isinstance(value, Tensor) and not isinstance(value, Parameter):
            value = Parameter(value)
        setattr(self, key, value)

    def __len__(self):
        return self._size

    def __iter__(self):
        return iter(self[i] for i in range(len(self)))

    def __iadd__(self, values):
        return self.extend(values)

    def append(self, value):
        """Add `value` at the end (a Tensor becomes a Parameter); returns self."""
        self._size += 1
        self[self._size - 1] = value
        return self

    def extend(self, values):
        """Append every value of the iterable `values`; returns self."""
        if not isinstance(values, Iterable) or isinstance(values, Tensor):
            raise TypeError("ParameterList.extend should be called with an iterable, but got "
                            + type(values).__name__)
        for value in values:
            self.append(value)
        return self

    def extra_repr(self):
        return "\n".join(_parameter_line(i, p, lambda t: str(t.dtype)) for i, p in enumerate(self))

    def __call__(self, *args, **kwargs):
        raise RuntimeError("ParameterList should not be called.")


class ParameterDict(Module):
    """An ordered dict of parameters; plain tensors set are wrapped in Parameter.

    >>> import ember_tensor as torch, ember_nn as nn
    >>> params = nn.ParameterDict({"scale": torch.ones(2)})
    >>> [name for name, _ in params.named_parameters()]
    ['scale']
    """

    def __init__(self, parameters=None):
        super().__init__()
        self._keys = {}
        if parameters is not None:
            self.update(parameters)

    def __getitem__(self, key):
        return getattr(self, key)

    def __setitem__(self, key, value):
        self._keys[key] = None
        if isinstance(value, Tensor) and not isinstance(value, Parameter):
            value = Parameter(value)
        setattr(self, key, value)

    def __delitem__(self, key):
        del self._keys[key]
        delattr(self, key)

    def __len__(self):
        return len(self._keys)

    def __iter__(self):
        return iter(self._keys)

    def __contains__(self, key):
        return key in self._keys

    def keys(self):
        """The keys, in insertion order."""
        return self._keys.keys()

    def items(self):
        """(key, parameter) pairs, in insertion order."""
        return ((k, self[k]) for k in self._keys)

    def values(self):
        """The parameters, in insertion order."""
        return (self[k] for k in self._keys)

    def get(self, key, default=None):
        """The parameter at `key`, or `default`."""
        return self[key] if key in self else default

    def pop(self, key):
        """Remove and return the parameter at `key`."""
        value = self[key]
        del self[key]
        return value

    def clear(self):
        """Remove every parameter."""
        for key in list(self._keys):
            del self[key]

    def update(self, parameters):
        """Add the entries of a mapping or an iterable of (key, value) pairs."""
        if not isinstance(parameters, Iterable):
            raise TypeError("ParametersDict.update should be called with an iterable of key/value pairs, "
                            "but got " + type(parameters).__name__)
        pairs = parameters.items() if isinstance(parameters, Mapping) else parameters
        for j, pair in enumerate(pairs):
            if not isinstance(pair, Iterable):
                raise TypeError(f"ParameterDict update sequence element #{j} should be Iterable; is "
                                + type(pair).__name__)
            if len(pair) != 2:
                raise ValueError(f"ParameterDict update sequence element #{j} has length {len(pair)}; 2 is "
                                 "required")
            self[pair[0]] = pair[1]

    def extra_repr(self):
        return "\n".join(_parameter_line(k, p, _legacy_type_name) for k, p in self.items())

    def __call__(self, *args, **kwargs):
        raise RuntimeError("ParameterDict should not be called.")
