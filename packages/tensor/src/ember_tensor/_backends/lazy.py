"""Lazy imports of backend modules.

Kernel modules that define ``@njit`` functions at import load Numba itself (~0.2 s): ops
reach them through `lazy` so that ``import ember_tensor`` does not pay for it.
"""
import importlib

__all__ = ["lazy", "lazy_module"]


class _LazyModule:
    """A kernel module imported on its first attribute access."""

    __slots__ = ("_name", "_module")

    def __init__(self, name):
        self._name = name
        self._module = None

    def __getattr__(self, attribute):
        module = self._module
        if module is None:
            module = self._module = importlib.import_module(self._name)
        return getattr(module, attribute)


def lazy(name):
    """The backend module ``ember_tensor._backends.<name>`` (e.g. ``"cpu.kernels.index"``),
    imported when first used."""
    return _LazyModule(f"{__package__}.{name}")


def lazy_module(fullname):
    """Any module, by its full name, imported when first used."""
    return _LazyModule(fullname)
