"""Padding layers: constant (and zero), reflection, replication and circular.

`padding` is an int (same on every side) or F.pad's tuple: (left, right) for the last
dim, then (top, bottom), then (front, back).
"""
from .. import functional as F
from .module import Module
from .utils import _ntuple

__all__ = [
    "ConstantPad1d", "ConstantPad2d", "ConstantPad3d", "ZeroPad1d", "ZeroPad2d", "ZeroPad3d",
    "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d", "ReplicationPad2d",
    "ReplicationPad3d", "CircularPad1d", "CircularPad2d", "CircularPad3d",
]


class _PadNd(Module):
    """Holds ``padding`` as a 2*dims tuple and pads with mode `_mode`."""

    _mode = None
    _dims = 0

    def __init__(self, padding):
        super().__init__()
        self.padding = _ntuple(2 * self._dims)(padding)

    def forward(self, input):
        return F.pad(input, self.padding, self._mode)

    def extra_repr(self):
        return f"{self.padding}"


class _ConstantPadNd(_PadNd):
    _mode = "constant"

    def __init__(self, padding, value):
        super().__init__(padding)
        self.value = value

    def forward(self, input):
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self):
        return f"padding={self.padding}, value={self.value}"


def _padding_class(name, base, dims, doc, mode=None):
    attrs = {"_dims": dims, "__doc__": doc, "__module__": __name__, "__qualname__": name}
    if mode is not None:
        attrs["_mode"] = mode
    return type(name, (base,), attrs)


ConstantPad1d = _padding_class("ConstantPad1d", _ConstantPadNd, 1, "Pad the last dim with `value`.")
ConstantPad2d = _padding_class("ConstantPad2d", _ConstantPadNd, 2, "Pad the last 2 dims with `value`.")
ConstantPad3d = _padding_class("ConstantPad3d", _ConstantPadNd, 3, "Pad the last 3 dims with `value`.")


class _ZeroPadNd(_ConstantPadNd):
    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"


ZeroPad1d = _padding_class("ZeroPad1d", _ZeroPadNd, 1, "Pad the last dim with zeros.")
ZeroPad2d = _padding_class("ZeroPad2d", _ZeroPadNd, 2, """Pad the last 2 dims with zeros.

    >>> ZeroPad2d(2)
    ZeroPad2d((2, 2, 2, 2))
    """)
ZeroPad3d = _padding_class("ZeroPad3d", _ZeroPadNd, 3, "Pad the last 3 dims with zeros.")
ReflectionPad1d = _padding_class("ReflectionPad1d", _PadNd, 1, "Pad the last dim by reflection.", "reflect")
ReflectionPad2d = _padding_class("ReflectionPad2d", _PadNd, 2, "Pad the last 2 dims by reflection.", "reflect")
ReflectionPad3d = _padding_class("ReflectionPad3d", _PadNd, 3, "Pad the last 3 dims by reflection.", "reflect")
ReplicationPad1d = _padding_class("ReplicationPad1d", _PadNd, 1, "Pad the last dim by repeating the edge.",
                                  "replicate")
ReplicationPad2d = _padding_class("ReplicationPad2d", _PadNd, 2, "Pad the last 2 dims by repeating the edge.",
                                  "replicate")
ReplicationPad3d = _padding_class("ReplicationPad3d", _PadNd, 3, "Pad the last 3 dims by repeating the edge.",
                                  "replicate")
CircularPad1d = _padding_class("CircularPad1d", _PadNd, 1, "Pad the last dim by wrapping around.", "circular")
CircularPad2d = _padding_class("CircularPad2d", _PadNd, 2, "Pad the last 2 dims by wrapping around.", "circular")
CircularPad3d = _padding_class("CircularPad3d", _PadNd, 3, "Pad the last 3 dims by wrapping around.", "circular")
