"""Containers: Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict.

Members are registered under their position ("0", "1", ...) or their key, so that they
appear in ``parameters()`` and ``state_dict()`` with those names.
"""
import operator
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from itertools import chain, islice

from .module import Module, _addindent

__all__ = ["Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict"]


def _index_in(idx, size):
    """`idx` made non-negative, or PyTorch's IndexError."""
    idx = operator.index(idx)
    if not -size <= idx < size:
        raise IndexError(f"index {idx} is out of range")
    return idx % size


def _renumber(container):
    # Keep keys "0".."n-1" after a deletion, as PyTorch does.
    object.__setattr__(container, "_modules", OrderedDict(
        (str(i), m) for i, m in enumerate(container._modules.values())))


class Sequential(Module):
    """Modules run one after another, each fed the previous one's output.

    Built from modules (named "0", "1", ...) or from one OrderedDict of named modules.

    >>> import ember_nn as nn
    >>> model = nn.Sequential(nn.Linear(2, 3), nn.ReLU())
    >>> len(model), type(model[1]).__name__
    (2, 'ReLU')
    """

    def __init__(self, *args):
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for key, module in args[0].items():
                self.add_module(key, module)
        else:
            for idx, module in enumerate(args):
                self.add_module(str(idx), module)

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return type(self)(OrderedDict(list(self._modules.items())[idx]))
        return next(islice(self._modules.values(), _index_in(idx, len(self)), None))

    def __setitem__(self, idx, module):
        key = next(islice(self._modules.keys(), _index_in(idx, len(self)), None))
        setattr(self, key, module)

    def __delitem__(self, idx):
        if isinstance(idx, slice):
            for key in list(self._modules.keys())[idx]:
                delattr(self, key)
        else:
            delattr(self, next(islice(self._modules.keys(), _index_in(idx, len(self)), None)))
        _renumber(self)

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def __add__(self, other):
        if not isinstance(other, Sequential):
            raise ValueError(f"add operator supports only objects of Sequential class, but {type(other)} is given.")
        return Sequential(*self, *other)

    def __iadd__(self, other):
        if not isinstance(other, Sequential):
            raise ValueError(f"add operator supports only objects of Sequential class, but {type(other)} is given.")
        return self.extend(list(other))

    def __mul__(self, times):
        if not isinstance(times, int):
            raise TypeError(f"unsupported operand type(s) for *: {type(self)} and {type(times)}")
        if times <= 0:
            raise ValueError(f"Non-positive multiplication factor {times} for {type(self)}")
        return Sequential(*(list(self) * times))

    __rmul__ = __mul__

    def append(self, module):
        """Add `module` at the end; returns self."""
        self.add_module(str(len(self)), module)
        return self

    def insert(self, index, module):
        """Insert `module` before position `index`; returns self."""
        if not isinstance(module, Module):
            raise AssertionError(f"module should be of type: {Module}")
        n = len(self._modules)
        if not -n <= index <= n:
            raise IndexError(f"Index out of range: {index}")
        index = index + n if index < 0 else index
        for i in range(n, index, -1):
            self._modules[str(i)] = self._modules[str(i - 1)]
        self._modules[str(index)] = module
        return self

    def extend(self, modules):
        """Append every module of `modules`; returns self."""
        for module in modules:
            self.append(module)
        return self

    def pop(self, idx):
        """Remove and return the module at `idx`."""
        module = self[idx]
        del self[idx]
        return module

    def forward(self, input):
        for module in self:
            input = module(input)
        return input


class ModuleList(Module):
    """A list of modules, registered so that their parameters are the owner's.

    >>> import ember_nn as nn
    >>> layers = nn.ModuleList([nn.Linear(2, 2) for _ in range(3)])
    >>> len(list(layers.parameters()))
    6
    """

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def _key(self, idx):
        return str(_index_in(idx, len(self)))

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return type(self)(list(self._modules.values())[idx])
        return self._modules[self._key(idx)]

    def __setitem__(self, idx, module):
        setattr(self, self._key(idx), module)

    def __delitem__(self, idx):
        if isinstance(idx, slice):
            for k in range(len(self._modules))[idx]:
                delattr(self, str(k))
        else:
            delattr(self, self._key(idx))
        _renumber(self)

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def __iadd__(self, modules):
        return self.extend(modules)

    def __add__(self, other):
        return ModuleList(chain(self, other))

    def append(self, module):
        """Add `module` at the end; returns self."""
        self.add_module(str(len(self)), module)
        return self

    def insert(self, index, module):
        """Insert `module` before position `index`."""
        for i in range(len(self._modules), index, -1):
            self._modules[str(i)] = self._modules[str(i - 1)]
        self._modules[str(index)] = module

    def extend(self, modules):
        """Append every module of the iterable `modules`; returns self."""
        if not isinstance(modules, Iterable):
            raise TypeError("ModuleList.extend should be called with an iterable, but got "
                            + type(modules).__name__)
        for module in modules:
            self.append(module)
        return self

    def pop(self, idx):
        """Remove and return the module at `idx`."""
        module = self[idx]
        del self[idx]
        return module

    def __repr__(self):
        # Runs of identical children print once: "(0-1): 2 x ReLU()".
        reprs = [repr(m) for m in self]
        if not reprs:
            return self._get_name() + "()"
        blocks = []  # [start, end, text]
        for i, text in enumerate(reprs):
            if blocks and blocks[-1][2] == text:
                blocks[-1][1] = i
            else:
                blocks.append([i, i, text])
        lines = [_addindent(f"({s}): {t}" if s == e else f"({s}-{e}): {e - s + 1} x {t}", 2)
                 for s, e, t in blocks]
        return self._get_name() + "(\n  " + "\n  ".join(lines) + "\n)"

    def forward(self, *args, **kwargs):
        raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required "forward" function')


class ModuleDict(Module):
    """An ordered dict of modules, registered under their keys.

    >>> import ember_nn as nn
    >>> acts = nn.ModuleDict({"relu": nn.ReLU(), "tanh": nn.Tanh()})
    >>> list(acts.keys())
    ['relu', 'tanh']
    """

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key):
        return self._modules[key]

    def __setitem__(self, key, module):
        self.add_module(key, module)

    def __delitem__(self, key):
        del self._modules[key]

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules)

    def __contains__(self, key):
        return key in self._modules

    def clear(self):
        """Remove every module."""
        self._modules.clear()

    def pop(self, key):
        """Remove and return the module at `key`."""
        module = self[key]
        del self[key]
        return module

    def keys(self):
        """The keys, in insertion order."""
        return self._modules.keys()

    def items(self):
        """(key, module) pairs, in insertion order."""
        return self._modules.items()

    def values(self):
        """The modules, in insertion order."""
        return self._modules.values()

    def update(self, modules):
        """Add the modules of a mapping or an iterable of (key, module) pairs."""
        if not isinstance(modules, Iterable):
            raise TypeError("ModuleDict.update should be called with an iterable of key/value pairs, "
                            "but got " + type(modules).__name__)
        if isinstance(modules, Mapping):
            for key, module in modules.items():
                self[key] = module
            return
        for j, pair in enumerate(modules):
            if not isinstance(pair, Iterable):
                raise TypeError(f"ModuleDict update sequence element #{j} should be Iterable; is "
                                + type(pair).__name__)
            if len(pair) != 2:
                raise ValueError(f"ModuleDict update sequence element #{j} has length {len(pair)}; 2 is required")
            self[pair[0]] = pair[1]

    def forward(self, *args, **kwargs):
        raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required "forward" function')


# PyTorch keeps them in this module too: ``torch.nn.modules.container.ParameterList``.
from .parameter_containers import ParameterDict, ParameterList  # noqa: E402
