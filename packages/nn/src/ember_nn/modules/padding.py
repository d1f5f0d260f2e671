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


class _ZeroPadNd(_ConstantPadNd):
    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"


class ConstantPad1d(_ConstantPadNd):
    """Pad the last dim with `value`."""

    _dims = 1


class ConstantPad2d(_ConstantPadNd):
    """Pad the last 2 dims with `value`."""

    _dims = 2


class ConstantPad3d(_ConstantPadNd):
    """Pad the last 3 dims with `value`."""

    _dims = 3


class ZeroPad1d(_ZeroPadNd):
    """Pad the last dim with zeros."""

    _dims = 1


class ZeroPad2d(_ZeroPadNd):
    """Pad the last 2 dims with zeros.

    >>> ZeroPad2d(2)
    ZeroPad2d((2, 2, 2, 2))
    """

    _dims = 2


class ZeroPad3d(_ZeroPadNd):
    """Pad the last 3 dims with zeros."""

    _dims = 3


class ReflectionPad1d(_PadNd):
    """Pad the last dim by reflection."""

    _mode = "reflect"
    _dims = 1


class ReflectionPad2d(_PadNd):
    """Pad the last 2 dims by reflection."""

    _mode = "reflect"
    _dims = 2


class ReflectionPad3d(_PadNd):
    """Pad the last 3 dims by reflection."""

    _mode = "reflect"
    _dims = 3


class ReplicationPad1d(_PadNd):
    """Pad the last dim by repeating the edge."""

    _mode = "replicate"
    _dims = 1


class ReplicationPad2d(_PadNd):
    """Pad the last 2 dims by repeating the edge."""

    _mode = "replicate"
    _dims = 2


class ReplicationPad3d(_PadNd):
    """Pad the last 3 dims by repeating the edge."""

    _mode = "replicate"
    _dims = 3


class CircularPad1d(_PadNd):
    """Pad the last dim by wrapping around."""

    _mode = "circular"
    _dims = 1


class CircularPad2d(_PadNd):
    """Pad the last 2 dims by wrapping around."""

    _mode = "circular"
    _dims = 2


class CircularPad3d(_PadNd):
    """Pad the last 3 dims by wrapping around."""

    _mode = "circular"
    _dims = 3
