"""``torch.utils.backcompat``: the migration warnings of PyTorch 0.2.

`broadcast_warning.enabled = True` warns where an elementwise op broadcasts two tensors
of different shapes that have the same number of elements (before broadcasting, such
ops viewed both as 1-d and gave another result); `keepdim_warning.enabled = True` warns
where a reduction over a dim leaves `keepdim` at its default (False since 0.2). Both warn
at calls made by the program, not at the ops those calls run inside. While a switch is
on, a dispatcher wrapper looks at each call; off, nothing runs.

>>> import warnings, ember_tensor as torch
>>> keepdim_warning.enabled = True
>>> with warnings.catch_warnings(record=True) as caught:
...     warnings.simplefilter("always")
...     _ = torch.ones(2, 3).sum(1)
>>> keepdim_warning.enabled = False
>>> str(caught[0].message)[:48]
'backwards compatibility: call to "sum" uses defa'
"""
import functools
import inspect
import threading
import warnings

from ._dispatch import register_wrapper, unregister_wrapper
from ._tensor import Tensor

__all__ = ["broadcast_warning", "keepdim_warning"]

_depth = threading.local()


class Warning:  # noqa: A001 - PyTorch's name
    """A switch: ``enabled`` (also ``set_enabled``/``get_enabled``)."""

    def __init__(self, name):
        self.name = name
        self._enabled = False

    def set_enabled(self, value):
        self._enabled = bool(value)
        _update_wrapper()

    def get_enabled(self):
        return self._enabled

    enabled = property(get_enabled, set_enabled)


broadcast_warning = Warning("broadcast")
keepdim_warning = Warning("keepdim")
_registered = [False]


def _update_wrapper():
    wanted = broadcast_warning.enabled or keepdim_warning.enabled
    if wanted and not _registered[0]:
        register_wrapper(_check, outermost=True)
    elif not wanted and _registered[0]:
        unregister_wrapper(_check)
    _registered[0] = wanted


@functools.lru_cache(maxsize=None)
def _parameters(op):
    """The names of `op`'s parameters in order (empty when they cannot be read)."""
    try:
        return tuple(inspect.signature(op.impl).parameters)
    except (TypeError, ValueError):
        return ()


def _is_elementwise(op):
    return getattr(op.impl, "__module__", "").startswith("ember_tensor._ops.elementwise")


def _check(op, args, kwargs, redispatch):
    depth = getattr(_depth, "value", 0)
    if depth == 0:
        if broadcast_warning.enabled and _is_elementwise(op):
            tensors = [a for a in args[:2] if isinstance(a, Tensor)]
            if (len(tensors) == 2 and tensors[0].shape != tensors[1].shape
                    and tensors[0].numel() == tensors[1].numel()):
                warnings.warn("self and other do not have the same shape, but are broadcastable, and have the "
                              "same number of elements.", UserWarning, stacklevel=4)
        if keepdim_warning.enabled and "keepdim" not in kwargs:
            names = _parameters(op)
            if "keepdim" in names and "dim" in names:
                given_dim = "dim" in kwargs or len(args) > names.index("dim")
                keepdim_positional = len(args) > names.index("keepdim")
                if given_dim and not keepdim_positional:
                    warnings.warn(f'backwards compatibility: call to "{op.name}" uses default value for keepdim '
                                  "which has changed default to False.  Consider passing as kwarg.", UserWarning,
                                  stacklevel=4)
    _depth.value = depth + 1
    try:
        return redispatch(op, args, kwargs)
    finally:
        _depth.value = depth
