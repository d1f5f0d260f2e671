"""Pooling layers: max, average, adaptive, power-average (LP) and max-unpooling.

Hyper-parameters are stored as given (PyTorch's repr shows them that way); the work is
one ``functional`` call.
"""
from .. import functional as F
from .module import Module
from .utils import _pair, _single, _triple

__all__ = [
    "MaxPool1d", "MaxPool2d", "MaxPool3d", "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d", "AvgPool1d",
    "AvgPool2d", "AvgPool3d", "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveAvgPool3d",
    "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "AdaptiveMaxPool3d", "LPPool1d", "LPPool2d", "LPPool3d",
]


class _MaxPoolNd(Module):
    _function = None

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False, ceil_mode=False):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def forward(self, input):
        return getattr(F, self._function)(input, self.kernel_size, self.stride, self.padding, self.dilation,
                                          ceil_mode=self.ceil_mode, return_indices=self.return_indices)

    def extra_repr(self):
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class MaxPool1d(_MaxPoolNd):
    """1-d max pooling over (N, C, L); ``return_indices`` also returns argmax positions."""

    _function = "max_pool1d"


class MaxPool2d(_MaxPoolNd):
    """2-d max pooling over (N, C, H, W).

    >>> MaxPool2d(3, stride=2)
    MaxPool2d(kernel_size=3, stride=2, padding=0, dilation=1, ceil_mode=False)
    """

    _function = "max_pool2d"


class MaxPool3d(_MaxPoolNd):
    """3-d max pooling over (N, C, D, H, W)."""

    _function = "max_pool3d"


class _MaxUnpoolNd(Module):
    _function = None
    _to_tuple = None

    def __init__(self, kernel_size, stride=None, padding=0):
        super().__init__()
        to_tuple = type(self)._to_tuple
        self.kernel_size = to_tuple(kernel_size)
        self.stride = to_tuple(stride if stride is not None else kernel_size)
        self.padding = to_tuple(padding)

    def forward(self, input, indices, output_size=None):
        return getattr(F, self._function)(input, indices, self.kernel_size, self.stride, self.padding,
                                          output_size)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(_MaxUnpoolNd):
    """Partial inverse of MaxPool1d: scatter values back to the indices it returned."""

    _function = "max_unpool1d"
    _to_tuple = staticmethod(_single)


class MaxUnpool2d(_MaxUnpoolNd):
    """Partial inverse of MaxPool2d: scatter values back to the indices it returned."""

    _function = "max_unpool2d"
    _to_tuple = staticmethod(_pair)


class MaxUnpool3d(_MaxUnpoolNd):
    """Partial inverse of MaxPool3d: scatter values back to the indices it returned."""

    _function = "max_unpool3d"
    _to_tuple = staticmethod(_triple)


class AvgPool1d(Module):
    """1-d average pooling over (N, C, L)."""

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
        super().__init__()
        self.kernel_size = _single(kernel_size)
        self.stride = _single(stride if stride is not None else kernel_size)
        self.padding = _single(padding)
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad

    def forward(self, input):
        return F.avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class _AvgPoolNd(Module):
    _function = None

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
                 divisor_override=None):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def forward(self, input):
        return getattr(F, self._function)(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                                          self.count_include_pad, self.divisor_override)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool2d(_AvgPoolNd):
    """2-d average pooling over (N, C, H, W)."""

    _function = "avg_pool2d"


class AvgPool3d(_AvgPoolNd):
    """3-d average pooling over (N, C, D, H, W)."""

    _function = "avg_pool3d"


class _AdaptivePoolNd(Module):
    _function = None

    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def forward(self, input):
        return getattr(F, self._function)(input, self.output_size)

    def extra_repr(self):
        return f"output_size={self.output_size}"


class AdaptiveAvgPool1d(_AdaptivePoolNd):
    """Average pooling to a fixed output length, whatever the input length."""

    _function = "adaptive_avg_pool1d"


class AdaptiveAvgPool2d(_AdaptivePoolNd):
    """Average pooling to a fixed (H, W) output, whatever the input size."""

    _function = "adaptive_avg_pool2d"


class AdaptiveAvgPool3d(_AdaptivePoolNd):
    """Average pooling to a fixed (D, H, W) output, whatever the input size."""

    _function = "adaptive_avg_pool3d"


class _AdaptiveMaxPoolNd(_AdaptivePoolNd):
    def __init__(self, output_size, return_indices=False):
        super().__init__(output_size)
        self.return_indices = return_indices

    def forward(self, input):
        return getattr(F, self._function)(input, self.output_size, self.return_indices)


class AdaptiveMaxPool1d(_AdaptiveMaxPoolNd):
    """Max pooling to a fixed output length, whatever the input length."""

    _function = "adaptive_max_pool1d"


class AdaptiveMaxPool2d(_AdaptiveMaxPoolNd):
    """Max pooling to a fixed (H, W) output, whatever the input size."""

    _function = "adaptive_max_pool2d"


class AdaptiveMaxPool3d(_AdaptiveMaxPoolNd):
    """Max pooling to a fixed (D, H, W) output, whatever the input size."""

    _function = "adaptive_max_pool3d"


class _LPPoolNd(Module):
    _function = None

    def __init__(self, norm_type, kernel_size, stride=None, ceil_mode=False):
        super().__init__()
        self.norm_type = norm_type
        self.kernel_size = kernel_size
        self.stride = stride
        self.ceil_mode = ceil_mode

    def forward(self, input):
        return getattr(F, self._function)(input, float(self.norm_type), self.kernel_size, self.stride,
                                          self.ceil_mode)

    def extra_repr(self):
        return (f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, stride={self.stride}, "
                f"ceil_mode={self.ceil_mode}")


class LPPool1d(_LPPoolNd):
    """Power-average pooling ``(sum x^p)^(1/p)`` over windows of (N, C, L)."""

    _function = "lp_pool1d"


class LPPool2d(_LPPoolNd):
    """Power-average pooling ``(sum x^p)^(1/p)`` over windows of (N, C, H, W)."""

    _function = "lp_pool2d"


class LPPool3d(_LPPoolNd):
    """Power-average pooling ``(sum x^p)^(1/p)`` over windows of (N, C, D, H, W)."""

    _function = "lp_pool3d"
