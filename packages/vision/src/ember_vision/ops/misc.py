"""Building blocks torchvision's models share: ``Conv2dNormActivation`` (and 3d),
``SqueezeExcitation``, ``MLP``, ``Permute``, ``FrozenBatchNorm2d``. Each is the
``nn.Sequential``/``nn.Module`` torchvision has, so state_dict keys match."""
import ember_nn as nn
import ember_tensor as torch

__all__ = ["ConvNormActivation", "Conv2dNormActivation", "Conv3dNormActivation", "SqueezeExcitation", "MLP", "Permute",
           "FrozenBatchNorm2d"]


class ConvNormActivation(nn.Sequential):
    """A convolution (``conv_layer``), then a normalisation layer, then an activation: keys
    ``0.``, ``1.`` (and ``2``).

    Args:
        in_channels, out_channels, kernel_size, stride, groups, dilation: of the convolution
            (ints, or one number per spatial dimension).
        padding: default ``(kernel_size - 1) // 2 * dilation`` ("same" for odd kernels).
        norm_layer: default the conv's BatchNorm; None for none.
        activation_layer: default ``ReLU``; None for none.
        inplace: passed to the activation when not None.
        bias: default: a bias only when there is no normalisation.
    """

    def __init__(self, in_channels, out_channels, kernel_size=3, stride=1, padding=None, groups=1,
                 norm_layer=nn.BatchNorm2d, activation_layer=nn.ReLU, dilation=1, inplace=True, bias=None,
                 conv_layer=nn.Conv2d):
        if padding is None:
            if isinstance(kernel_size, int) and isinstance(dilation, int):
                padding = (kernel_size - 1) // 2 * dilation
            else:
                dims = len(kernel_size) if not isinstance(kernel_size, int) else len(dilation)
                kernel_size = (kernel_size,) * dims if isinstance(kernel_size, int) else tuple(kernel_size)
                dilation = (dilation,) * dims if isinstance(dilation, int) else tuple(dilation)
                padding = tuple((k - 1) // 2 * d for k, d in zip(kernel_size, dilation))
        if bias is None:
            bias = norm_layer is None
        layers = [conv_layer(in_channels, out_channels, kernel_size, stride, padding, dilation=dilation,
                             groups=groups, bias=bias)]
        if norm_layer is not None:
            layers.append(norm_layer(out_channels))
        if activation_layer is not None:
            layers.append(activation_layer(**({} if inplace is None else {"inplace": inplace})))
        super().__init__(*layers)
        self.out_channels = out_channels


class Conv2dNormActivation(ConvNormActivation):
    """Conv2d, normalisation (default BatchNorm2d), activation; arguments as ``ConvNormActivation``."""

    def __init__(self, in_channels, out_channels, kernel_size=3, stride=1, padding=None, groups=1,
                 norm_layer=nn.BatchNorm2d, activation_layer=nn.ReLU, dilation=1, inplace=True, bias=None):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, groups, norm_layer,
                         activation_layer, dilation, inplace, bias, nn.Conv2d)


class Conv3dNormActivation(ConvNormActivation):
    """Conv3d, normalisation (default BatchNorm3d), activation; arguments as ``ConvNormActivation``."""

    def __init__(self, in_channels, out_channels, kernel_size=3, stride=1, padding=None, groups=1,
                 norm_layer=nn.BatchNorm3d, activation_layer=nn.ReLU, dilation=1, inplace=True, bias=None):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, groups, norm_layer,
                         activation_layer, dilation, inplace, bias, nn.Conv3d)


class SqueezeExcitation(nn.Module):
    """Squeeze-and-Excitation (Hu et al.): channel weights from a pooled, two-layer bottleneck.

    Args:
        input_channels: channels in and out.
        squeeze_channels: the bottleneck's width.
        activation: after ``fc1`` (default ReLU); scale_activation: on the weights (default Sigmoid).
    """

    def __init__(self, input_channels, squeeze_channels, activation=nn.ReLU, scale_activation=nn.Sigmoid):
        super().__init__()
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc1 = nn.Conv2d(input_channels, squeeze_channels, 1)
        self.fc2 = nn.Conv2d(squeeze_channels, input_channels, 1)
        self.activation = activation()
        self.scale_activation = scale_activation()

    def _scale(self, x):
        return self.scale_activation(self.fc2(self.activation(self.fc1(self.avgpool(x)))))

    def forward(self, x):
        return self._scale(x) * x


class MLP(nn.Sequential):
    """Linear layers with normalisation, activation and dropout between them (keys ``0.``, ``3.``, ...).

    Args:
        in_channels: input features.
        hidden_channels: the width of each linear layer; the last is the output width.
        norm_layer: after each hidden linear layer (default none).
        activation_layer: after each hidden layer (default ReLU).
        bias: of the linear layers; dropout: after each layer, the last included.
    """

    def __init__(self, in_channels, hidden_channels, norm_layer=None, activation_layer=nn.ReLU, inplace=None,
                 bias=True, dropout=0.0):
        params = {} if inplace is None else {"inplace": inplace}
        layers, in_dim = [], in_channels
        for hidden_dim in hidden_channels[:-1]:
            layers.append(nn.Linear(in_dim, hidden_dim, bias=bias))
            if norm_layer is not None:
                layers.append(norm_layer(hidden_dim))
            layers.append(activation_layer(**params))
            layers.append(nn.Dropout(dropout, **params))
            in_dim = hidden_dim
        layers.append(nn.Linear(in_dim, hidden_channels[-1], bias=bias))
        layers.append(nn.Dropout(dropout, **params))
        super().__init__(*layers)


class Permute(nn.Module):
    """``x.permute(*dims)`` as a module."""

    def __init__(self, dims):
        super().__init__()
        self.dims = dims

    def forward(self, x):
        return torch.permute(x, self.dims)


class FrozenBatchNorm2d(nn.Module):
    """BatchNorm2d with fixed statistics and affine parameters, all buffers (detection backbones)."""

    def __init__(self, num_features, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.register_buffer("weight", torch.ones(num_features))
        self.register_buffer("bias", torch.zeros(num_features))
        self.register_buffer("running_mean", torch.zeros(num_features))
        self.register_buffer("running_var", torch.ones(num_features))

    def forward(self, x):
        scale = self.weight * (self.running_var + self.eps).rsqrt()
        shift = self.bias - self.running_mean * scale
        return x * scale.reshape(1, -1, 1, 1) + shift.reshape(1, -1, 1, 1)

    def extra_repr(self):
        return f"{self.weight.shape[0]}, eps={self.eps}"


