"""Convolutions: Conv1d/2d/3d, ConvTranspose1d/2d/3d and their Lazy forms.

The classes only hold hyper-parameters and Parameters; the computation is one call into
``functional`` (padding modes other than zeros pad explicitly first, as PyTorch does).
"""
import math

import ember_autograd
import ember_tensor

from .. import functional as F
from .. import init
from ..parameter import Parameter, UninitializedParameter
from .lazy import LazyModuleMixin
from .module import Module
from .utils import _pair, _reverse_repeat_tuple, _single, _triple

__all__ = ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d", "LazyConv1d",
           "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d", "LazyConvTranspose2d", "LazyConvTranspose3d"]

_PADDING_STRINGS = {"same", "valid"}
_PADDING_MODES = {"zeros", "reflect", "replicate", "circular"}


class _ConvNd(Module):
    """What every convolution holds; `transposed` picks the weight layout."""

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, dilation, transposed,
                 output_padding, groups, bias, padding_mode, device=None, dtype=None):
        super().__init__()
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        if isinstance(padding, str):
            if padding not in _PADDING_STRINGS:
                raise ValueError(f"Invalid padding string {padding!r}, should be one of {_PADDING_STRINGS}")
            if padding == "same" and any(s != 1 for s in stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
        if padding_mode not in _PADDING_MODES:
            raise ValueError(f"padding_mode must be one of {_PADDING_MODES}, but got padding_mode='{padding_mode}'")
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = kernel_size
        self.stride = stride
        self.padding = padding
        self.dilation = dilation
        self.transposed = transposed
        self.output_padding = output_padding
        self.groups = groups
        self.padding_mode = padding_mode
        self._reversed_padding_repeated_twice = self._explicit_padding()
        if transposed:
            shape = (in_channels, out_channels // groups, *kernel_size)
        else:
            shape = (out_channels, in_channels // groups, *kernel_size)
        self.weight = Parameter(ember_tensor.empty(shape, device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(ember_tensor.empty(out_channels, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def _explicit_padding(self):
        """F.pad's (last dim first, left and right) padding for the non-zeros modes."""
        if not isinstance(self.padding, str):
            return _reverse_repeat_tuple(self.padding, 2)
        pads = [0, 0] * len(self.kernel_size)
        if self.padding == "same":
            for i, (d, k) in enumerate(zip(reversed(self.dilation), reversed(self.kernel_size))):
                total = d * (k - 1)
                pads[2 * i], pads[2 * i + 1] = total // 2, total - total // 2
        return tuple(pads)

    def reset_parameters(self):
        """Weight from kaiming_uniform_(a=sqrt(5)), bias from U(-1/sqrt(fan_in), 1/sqrt(fan_in))."""
        # a=sqrt(5) makes the weight bound 1/sqrt(fan_in) too (pytorch/pytorch#57109).
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def extra_repr(self):
        s = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}"
        if self.padding != (0,) * len(self.padding):
            s += f", padding={self.padding}"
        if self.dilation != (1,) * len(self.dilation):
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * len(self.output_padding):
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s

    def __setstate__(self, state):
        super().__setstate__(state)
        if not hasattr(self, "padding_mode"):
            self.padding_mode = "zeros"

    def _conv_forward(self, conv, input, weight, bias):
        if self.padding_mode != "zeros":
            padded = F.pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode)
            return conv(padded, weight, bias, self.stride, (0,) * len(self.kernel_size), self.dilation,
                        self.groups)
        return conv(input, weight, bias, self.stride, self.padding, self.dilation, self.groups)


def _conv_args(to_tuple, kernel_size, stride, padding, dilation):
    return (to_tuple(kernel_size), to_tuple(stride), padding if isinstance(padding, str) else to_tuple(padding),
            to_tuple(dilation))


class Conv1d(_ConvNd):
    """1-d convolution over an input (N, C_in, L) or (C_in, L)."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 bias=True, padding_mode="zeros", device=None, dtype=None):
        k, s, p, d = _conv_args(_single, kernel_size, stride, padding, dilation)
        super().__init__(in_channels, out_channels, k, s, p, d, False, _single(0), groups, bias, padding_mode,
                         device, dtype)

    def forward(self, input):
        return self._conv_forward(F.conv1d, input, self.weight, self.bias)


class Conv2d(_ConvNd):
    """2-d convolution over an input (N, C_in, H, W) or (C_in, H, W).

    >>> import ember_tensor as torch
    >>> Conv2d(1, 10, kernel_size=5)
    Conv2d(1, 10, kernel_size=(5, 5), stride=(1, 1))
    """

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 bias=True, padding_mode="zeros", device=None, dtype=None):
        k, s, p, d = _conv_args(_pair, kernel_size, stride, padding, dilation)
        super().__init__(in_channels, out_channels, k, s, p, d, False, _pair(0), groups, bias, padding_mode,
                         device, dtype)

    def forward(self, input):
        return self._conv_forward(F.conv2d, input, self.weight, self.bias)


class Conv3d(_ConvNd):
    """3-d convolution over an input (N, C_in, D, H, W) or (C_in, D, H, W)."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 bias=True, padding_mode="zeros", device=None, dtype=None):
        k, s, p, d = _conv_args(_triple, kernel_size, stride, padding, dilation)
        super().__init__(in_channels, out_channels, k, s, p, d, False, _triple(0), groups, bias, padding_mode,
                         device, dtype)

    def forward(self, input):
        return self._conv_forward(F.conv3d, input, self.weight, self.bias)


class _ConvTransposeNd(_ConvNd):
    """Transposed convolutions: only zero padding; `output_size` picks output_padding."""

    _spatial_dims = 0

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, dilation, transposed,
                 output_padding, groups, bias, padding_mode, device=None, dtype=None):
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {type(self).__name__}')
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, transposed,
                         output_padding, groups, bias, padding_mode, device, dtype)

    def _output_padding(self, input, output_size):
        """The output_padding that makes the output spatial size `output_size`."""
        if output_size is None:
            return _single(self.output_padding)
        n = self._spatial_dims
        non_spatial = 2 if input.dim() == n + 2 else 1
        output_size = list(output_size)
        if len(output_size) == non_spatial + n:
            output_size = output_size[non_spatial:]
        if len(output_size) != n:
            raise ValueError(f"ConvTranspose{n}D: for {input.dim()}D input, output_size must have {n} or "
                             f"{non_spatial + n} elements (got {len(output_size)})")
        min_sizes = [(input.size(d + non_spatial) - 1) * self.stride[d] - 2 * self.padding[d]
                     + self.dilation[d] * (self.kernel_size[d] - 1) + 1 for d in range(n)]
        max_sizes = [m + s - 1 for m, s in zip(min_sizes, self.stride)]
        for size, low, high in zip(output_size, min_sizes, max_sizes):
            if not low <= size <= high:
                raise ValueError(f"requested an output size of {output_size}, but valid sizes range from "
                                 f"{min_sizes} to {max_sizes} (for an input of {input.size()[2:]})")
        return [size - low for size, low in zip(output_size, min_sizes)]

    def _transposed_forward(self, conv, input, output_size):
        output_padding = self._output_padding(input, output_size)
        return conv(input, self.weight, self.bias, self.stride, self.padding, output_padding, self.groups,
                    self.dilation)


class ConvTranspose1d(_ConvTransposeNd):
    """1-d transposed convolution (the gradient of Conv1d with respect to its input)."""

    _spatial_dims = 1

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1,
                 bias=True, dilation=1, padding_mode="zeros", device=None, dtype=None):
        super().__init__(in_channels, out_channels, _single(kernel_size), _single(stride), _single(padding),
                         _single(dilation), True, _single(output_padding), groups, bias, padding_mode, device,
                         dtype)

    def forward(self, input, output_size=None):
        return self._transposed_forward(F.conv_transpose1d, input, output_size)


class ConvTranspose2d(_ConvTransposeNd):
    """2-d transposed convolution (the gradient of Conv2d with respect to its input)."""

    _spatial_dims = 2

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1,
                 bias=True, dilation=1, padding_mode="zeros", device=None, dtype=None):
        super().__init__(in_channels, out_channels, _pair(kernel_size), _pair(stride), _pair(padding),
                         _pair(dilation), True, _pair(output_padding), groups, bias, padding_mode, device, dtype)

    def forward(self, input, output_size=None):
        return self._transposed_forward(F.conv_transpose2d, input, output_size)


class ConvTranspose3d(_ConvTransposeNd):
    """3-d transposed convolution (the gradient of Conv3d with respect to its input)."""

    _spatial_dims = 3

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1,
                 bias=True, dilation=1, padding_mode="zeros", device=None, dtype=None):
        super().__init__(in_channels, out_channels, _triple(kernel_size), _triple(stride), _triple(padding),
                         _triple(dilation), True, _triple(output_padding), groups, bias, padding_mode, device,
                         dtype)

    def forward(self, input, output_size=None):
        return self._transposed_forward(F.conv_transpose3d, input, output_size)


class _LazyConvMixin(LazyModuleMixin):
    """Convolutions whose ``in_channels`` comes from the first input (or a state dict)."""

    def _make_lazy(self, out_channels, bias, device, dtype):
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_channels = out_channels
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()

    def initialize_parameters(self, input, *args, **kwargs):
        """Materialize weight and bias from the input's channels, then initialise them."""
        if not self.has_uninitialized_params():
            return
        n = len(self.kernel_size)
        if input.dim() not in (n + 1, n + 2):
            raise RuntimeError(f"Expected {n + 1}D (unbatched) or {n + 2}D (batched) input to {type(self).__name__}, "
                               f"but got input of size: {input.shape}")
        self.in_channels = input.shape[1] if input.dim() == n + 2 else input.shape[0]
        if self.in_channels % self.groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if self.transposed:
            shape = (self.in_channels, self.out_channels // self.groups, *self.kernel_size)
        else:
            shape = (self.out_channels, self.in_channels // self.groups, *self.kernel_size)
        with ember_autograd.no_grad():
            self.weight.materialize(shape)
            if self.bias is not None:
                self.bias.materialize((self.out_channels,))
            self.reset_parameters()


# bias=False in the calls below: no tensor is made only to be replaced by an uninitialized one.

class LazyConv1d(_LazyConvMixin, Conv1d):
    """A Conv1d whose ``in_channels`` is taken from the first input."""

    cls_to_become = Conv1d

    def __init__(self, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
                 padding_mode="zeros", device=None, dtype=None):
        super().__init__(0, 0, kernel_size, stride, padding, dilation, groups, False, padding_mode, device, dtype)
        self._make_lazy(out_channels, bias, device, dtype)


class LazyConv2d(_LazyConvMixin, Conv2d):
    """A Conv2d whose ``in_channels`` is taken from the first input.

    >>> import ember_tensor as torch
    >>> conv = LazyConv2d(4, 3)
    >>> conv(torch.ones(1, 2, 5, 5)).shape, conv.weight.shape
    (torch.Size([1, 4, 3, 3]), torch.Size([4, 2, 3, 3]))
    """

    cls_to_become = Conv2d

    def __init__(self, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
                 padding_mode="zeros", device=None, dtype=None):
        super().__init__(0, 0, kernel_size, stride, padding, dilation, groups, False, padding_mode, device, dtype)
        self._make_lazy(out_channels, bias, device, dtype)


class LazyConv3d(_LazyConvMixin, Conv3d):
    """A Conv3d whose ``in_channels`` is taken from the first input."""

    cls_to_become = Conv3d

    def __init__(self, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
                 padding_mode="zeros", device=None, dtype=None):
        super().__init__(0, 0, kernel_size, stride, padding, dilation, groups, False, padding_mode, device, dtype)
        self._make_lazy(out_channels, bias, device, dtype)


class LazyConvTranspose1d(_LazyConvMixin, ConvTranspose1d):
    """A ConvTranspose1d whose ``in_channels`` is taken from the first input."""

    cls_to_become = ConvTranspose1d

    def __init__(self, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1, bias=True,
                 dilation=1, padding_mode="zeros", device=None, dtype=None):
        super().__init__(0, 0, kernel_size, stride, padding, output_padding, groups, False, dilation, padding_mode,
                         device, dtype)
        self._make_lazy(out_channels, bias, device, dtype)


class LazyConvTranspose2d(_LazyConvMixin, ConvTranspose2d):
    """A ConvTranspose2d whose ``in_channels`` is taken from the first input."""

    cls_to_become = ConvTranspose2d

    def __init__(self, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1, bias=True,
                 dilation=1, padding_mode="zeros", device=None, dtype=None):
        super().__init__(0, 0, kernel_size, stride, padding, output_padding, groups, False, dilation, padding_mode,
                         device, dtype)
        self._make_lazy(out_channels, bias, device, dtype)


class LazyConvTranspose3d(_LazyConvMixin, ConvTranspose3d):
    """A ConvTranspose3d whose ``in_channels`` is taken from the first input."""

    cls_to_become = ConvTranspose3d

    def __init__(self, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1, bias=True,
                 dilation=1, padding_mode="zeros", device=None, dtype=None):
        super().__init__(0, 0, kernel_size, stride, padding, output_padding, groups, False, dilation, padding_mode,
                         device, dtype)
        self._make_lazy(out_channels, bias, device, dtype)
