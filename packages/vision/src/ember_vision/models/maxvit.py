"""MaxViT-T (Tu et al. 2022, Multi-Axis Vision Transformer): each layer is an MBConv, then
attention inside local windows, then attention across a dilated grid; torchvision's layout
(``stem``, ``blocks.<i>.layers.<j>.layers.{MBconv,window_attention,grid_attention}``, ``classifier``)."""
import math
from collections import OrderedDict
from functools import partial

import numpy as np

import ember_nn as nn
import ember_nn.functional as F
import ember_tensor as torch

from ..ops.misc import Conv2dNormActivation, SqueezeExcitation
from ..ops.stochastic_depth import StochasticDepth
from ._api import WeightsEnum, table_weights, register_model
from ._utils import handle_legacy_interface, load_weights, overwrite_named_param

__all__ = ["MaxVit", "MaxVit_T_Weights", "maxvit_t"]


def _get_conv_output_shape(input_size, kernel_size, stride, padding):
    return ((input_size[0] - kernel_size + 2 * padding) // stride + 1,
            (input_size[1] - kernel_size + 2 * padding) // stride + 1)


def _make_block_input_shapes(input_size, n_blocks):
    shapes = []
    shape = _get_conv_output_shape(input_size, 3, 2, 1)
    for _ in range(n_blocks):
        shape = _get_conv_output_shape(shape, 3, 2, 1)
        shapes.append(shape)
    return shapes


def _get_relative_position_index(height, width):
    coords = np.stack(np.meshgrid(np.arange(height), np.arange(width), indexing="ij")).reshape(2, -1)
    relative = (coords[:, :, None] - coords[:, None, :]).transpose(1, 2, 0)
    relative[:, :, 0] += height - 1
    relative[:, :, 1] += width - 1
    relative[:, :, 0] *= 2 * width - 1
    return torch.from_numpy(relative.sum(-1).astype(np.int64))


class MBConv(nn.Module):
    """Pre-normalised inverted bottleneck with squeeze-excitation; the shortcut is pooled and
    projected when the block strides or changes width."""

    def __init__(self, in_channels, out_channels, expansion_ratio, squeeze_ratio, stride, activation_layer, norm_layer,
                 p_stochastic_dropout=0.0):
        super().__init__()
        if stride != 1 or in_channels != out_channels:
            proj = [nn.Conv2d(in_channels, out_channels, kernel_size=1, stride=1, bias=True)]
            if stride == 2:
                proj = [nn.AvgPool2d(kernel_size=3, stride=stride, padding=1)] + proj
            self.proj = nn.Sequential(*proj)
        else:
            self.proj = nn.Identity()
        mid_channels = int(out_channels * expansion_ratio)
        sqz_channels = int(out_channels * squeeze_ratio)
        self.stochastic_depth = StochasticDepth(p_stochastic_dropout, mode="row") if p_stochastic_dropout \
            else nn.Identity()
        layers = OrderedDict()
        layers["pre_norm"] = norm_layer(in_channels)
        layers["conv_a"] = Conv2dNormActivation(in_channels, mid_channels, kernel_size=1, stride=1, padding=0,
                                                activation_layer=activation_layer, norm_layer=norm_layer, inplace=None)
        layers["conv_b"] = Conv2dNormActivation(mid_channels, mid_channels, kernel_size=3, stride=stride, padding=1,
                                                activation_layer=activation_layer, norm_layer=norm_layer,
                                                groups=mid_channels, inplace=None)
        layers["squeeze_excitation"] = SqueezeExcitation(mid_channels, sqz_channels, activation=nn.SiLU)
        layers["conv_c"] = nn.Conv2d(mid_channels, out_channels, kernel_size=1, bias=True)
        self.layers = nn.Sequential(layers)

    def forward(self, x):
        return self.proj(x) + self.stochastic_depth(self.layers(x))


class RelativePositionalMultiHeadAttention(nn.Module):
    """Multi-head attention over the P positions of each of G partitions, (B, G, P, D), with
    a learned bias per relative position."""

    def __init__(self, feat_dim, head_dim, max_seq_len):
        super().__init__()
        if feat_dim % head_dim != 0:
            raise ValueError(f"feat_dim: {feat_dim} must be divisible by head_dim: {head_dim}")
        self.n_heads = feat_dim // head_dim
        self.head_dim = head_dim
        self.size = int(math.sqrt(max_seq_len))
        self.max_seq_len = max_seq_len
        self.to_qkv = nn.Linear(feat_dim, self.n_heads * self.head_dim * 3)
        self.scale_factor = feat_dim ** -0.5  # the reference scales by the feature, not the head, width
        self.merge = nn.Linear(self.head_dim * self.n_heads, feat_dim)
        self.relative_position_bias_table = nn.Parameter(
            torch.empty(((2 * self.size - 1) * (2 * self.size - 1), self.n_heads), dtype=torch.float32))
        self.register_buffer("relative_position_index", _get_relative_position_index(self.size, self.size))
        nn.init.trunc_normal_(self.relative_position_bias_table, std=0.02)

    def get_relative_positional_bias(self):
        """The (1, heads, P, P) bias added to the attention logits."""
        bias = self.relative_position_bias_table[self.relative_position_index.view(-1)]
        return bias.view(self.max_seq_len, self.max_seq_len, -1).permute(2, 0, 1).contiguous().unsqueeze(0)

    def forward(self, x):
        b, g, p, d = x.shape
        h, dh = self.n_heads, self.head_dim
        q, k, v = torch.chunk(self.to_qkv(x), 3, dim=-1)
        q, k, v = (t.reshape(b, g, p, h, dh).permute(0, 1, 3, 2, 4) for t in (q, k, v))
        dot_prod = torch.matmul(q, (k * self.scale_factor).transpose(-2, -1))
        attention = F.softmax(dot_prod + self.get_relative_positional_bias(), dim=-1)
        out = torch.matmul(attention, v).permute(0, 1, 3, 2, 4).reshape(b, g, p, d)
        return self.merge(out)


class SwapAxes(nn.Module):
    """``x.swapaxes(a, b)`` as a module."""

    def __init__(self, a, b):
        super().__init__()
        self.a = a
        self.b = b

    def forward(self, x):
        return torch.swapaxes(x, self.a, self.b)


class WindowPartition(nn.Module):
    """(B, C, H, W) -> (B, H/P * W/P, P*P, C): non-overlapping P x P windows."""

    def forward(self, x, p):
        b, c, h, w = x.shape
        x = x.reshape(b, c, h // p, p, w // p, p).permute(0, 2, 4, 3, 5, 1)
        return x.reshape(b, (h // p) * (w // p), p * p, c)


class WindowDepartition(nn.Module):
    """The inverse of ``WindowPartition``."""

    def forward(self, x, p, h_partitions, w_partitions):
        b, _, _, c = x.shape
        x = x.reshape(b, h_partitions, w_partitions, p, p, c).permute(0, 5, 1, 3, 2, 4)
        return x.reshape(b, c, h_partitions * p, w_partitions * p)


class PartitionAttentionLayer(nn.Module):
    """Attention within windows (``partition_type="window"``) or across a grid of strided
    positions (``"grid"``), then an MLP; both residual, through stochastic depth."""

    def __init__(self, in_channels, head_dim, partition_size, partition_type, grid_size, mlp_ratio, activation_layer,
                 norm_layer, attention_dropout, mlp_dropout, p_stochastic_dropout):
        super().__init__()
        self.n_heads = in_channels // head_dim
        self.head_dim = head_dim
        self.n_partitions = grid_size[0] // partition_size
        self.partition_type = partition_type
        self.grid_size = grid_size
        if partition_type not in ("grid", "window"):
            raise ValueError("partition_type must be either 'grid' or 'window'")
        if partition_type == "window":
            self.p, self.g = partition_size, self.n_partitions
        else:
            self.p, self.g = self.n_partitions, partition_size
        self.partition_op = WindowPartition()
        self.departition_op = WindowDepartition()
        self.partition_swap = SwapAxes(-2, -3) if partition_type == "grid" else nn.Identity()
        self.departition_swap = SwapAxes(-2, -3) if partition_type == "grid" else nn.Identity()
        self.attn_layer = nn.Sequential(norm_layer(in_channels),
                                        RelativePositionalMultiHeadAttention(in_channels, head_dim, partition_size ** 2),
                                        nn.Dropout(attention_dropout))
        self.mlp_layer = nn.Sequential(nn.LayerNorm(in_channels), nn.Linear(in_channels, in_channels * mlp_ratio),
                                       activation_layer(), nn.Linear(in_channels * mlp_ratio, in_channels),
                                       nn.Dropout(mlp_dropout))
        self.stochastic_dropout = StochasticDepth(p_stochastic_dropout, mode="row")

    def forward(self, x):
        if self.grid_size[0] % self.p != 0 or self.grid_size[1] % self.p != 0:
            raise ValueError(f"Grid size must be divisible by partition size. Got grid size of {self.grid_size} and "
                             f"partition size of {self.p}")
        gh, gw = self.grid_size[0] // self.p, self.grid_size[1] // self.p
        x = self.partition_swap(self.partition_op(x, self.p))
        x = x + self.stochastic_dropout(self.attn_layer(x))
        x = x + self.stochastic_dropout(self.mlp_layer(x))
        return self.departition_op(self.departition_swap(x), self.p, gh, gw)


class MaxVitLayer(nn.Module):
    """MBConv, window attention, grid attention."""

    def __init__(self, in_channels, out_channels, squeeze_ratio, expansion_ratio, stride, norm_layer, activation_layer,
                 head_dim, mlp_ratio, mlp_dropout, attention_dropout, p_stochastic_dropout, partition_size, grid_size):
        super().__init__()
        layers = OrderedDict()
        layers["MBconv"] = MBConv(in_channels, out_channels, expansion_ratio, squeeze_ratio, stride, activation_layer,
                                  norm_layer, p_stochastic_dropout=p_stochastic_dropout)
        for kind in ("window", "grid"):
            layers[f"{kind}_attention"] = PartitionAttentionLayer(
                out_channels, head_dim, partition_size, kind, grid_size, mlp_ratio, activation_layer, nn.LayerNorm,
                attention_dropout, mlp_dropout, p_stochastic_dropout)
        self.layers = nn.Sequential(layers)

    def forward(self, x):
        return self.layers(x)


class MaxVitBlock(nn.Module):
    """``n_layers`` MaxViT layers, the first one halving the resolution."""

    def __init__(self, in_channels, out_channels, squeeze_ratio, expansion_ratio, norm_layer, activation_layer,
                 head_dim, mlp_ratio, mlp_dropout, attention_dropout, partition_size, input_grid_size, n_layers,
                 p_stochastic):
        super().__init__()
        if len(p_stochastic) != n_layers:
            raise ValueError(f"p_stochastic must have length n_layers={n_layers}, got p_stochastic={p_stochastic}.")
        self.layers = nn.ModuleList()
        self.grid_size = _get_conv_output_shape(input_grid_size, kernel_size=3, stride=2, padding=1)
        for idx, p in enumerate(p_stochastic):
            self.layers.append(MaxVitLayer(in_channels if idx == 0 else out_channels, out_channels, squeeze_ratio,
                                           expansion_ratio, 2 if idx == 0 else 1, norm_layer, activation_layer,
                                           head_dim, mlp_ratio, mlp_dropout, attention_dropout, p, partition_size,
                                           self.grid_size))

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


class MaxVit(nn.Module):
    """MaxViT for a fixed ``input_size`` (each block's grid must divide by ``partition_size``).

    Args:
        input_size: (H, W); stem_channels, partition_size, block_channels, block_layers, head_dim:
            the architecture; stochastic_depth_prob: the last layer's drop rate.
        norm_layer: default BatchNorm2d(eps=1e-3, momentum=0.01); activation_layer: default GELU.
        squeeze_ratio, expansion_ratio, mlp_ratio, mlp_dropout, attention_dropout, num_classes: as named.
    """

    def __init__(self, input_size, stem_channels, partition_size, block_channels, block_layers, head_dim,
                 stochastic_depth_prob, norm_layer=None, activation_layer=nn.GELU, squeeze_ratio=0.25,
                 expansion_ratio=4, mlp_ratio=4, mlp_dropout=0.0, attention_dropout=0.0, num_classes=1000):
        super().__init__()
        norm_layer = norm_layer or partial(nn.BatchNorm2d, eps=1e-3, momentum=0.01)
        block_input_sizes = _make_block_input_shapes(input_size, len(block_channels))
        for idx, size in enumerate(block_input_sizes):
            if size[0] % partition_size != 0 or size[1] % partition_size != 0:
                raise ValueError(f"Input size {size} of block {idx} is not divisible by partition size "
                                 f"{partition_size}. Consider changing the partition size or the input size.\n"
                                 f"Current configuration yields the following block input sizes: {block_input_sizes}.")
        self.stem = nn.Sequential(
            Conv2dNormActivation(3, stem_channels, 3, stride=2, norm_layer=norm_layer, activation_layer=activation_layer,
                                 bias=False, inplace=None),
            Conv2dNormActivation(stem_channels, stem_channels, 3, stride=1, norm_layer=None, activation_layer=None,
                                 bias=True))
        input_size = _get_conv_output_shape(input_size, kernel_size=3, stride=2, padding=1)
        self.partition_size = partition_size
        self.blocks = nn.ModuleList()
        p_stochastic = np.linspace(0, stochastic_depth_prob, sum(block_layers)).tolist()
        p_idx = 0
        for in_channel, out_channel, num_layers in zip([stem_channels] + block_channels[:-1], block_channels,
                                                       block_layers):
            self.blocks.append(MaxVitBlock(in_channel, out_channel, squeeze_ratio, expansion_ratio, norm_layer,
                                           activation_layer, head_dim, mlp_ratio, mlp_dropout, attention_dropout,
                                           partition_size, input_size, num_layers,
                                           p_stochastic[p_idx:p_idx + num_layers]))
            input_size = self.blocks[-1].grid_size
            p_idx += num_layers
        self.classifier = nn.Sequential(
            nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.LayerNorm(block_channels[-1]),
            nn.Linear(block_channels[-1], block_channels[-1]), nn.Tanh(),
            nn.Linear(block_channels[-1], num_classes, bias=False))
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.normal_(m.weight, std=0.02)
                if m.bias is not None:
                    nn.init.zeros_(m.bias)
            elif isinstance(m, nn.BatchNorm2d):
                nn.init.constant_(m.weight, 1)
                nn.init.constant_(m.bias, 0)
            elif isinstance(m, nn.Linear):
                nn.init.normal_(m.weight, std=0.02)
                if m.bias is not None:
                    nn.init.zeros_(m.bias)

    def forward(self, x):
        x = self.stem(x)
        for block in self.blocks:
            x = block(x)
        return self.classifier(x)


class MaxVit_T_Weights(WeightsEnum):
    """ImageNet weights of maxvit_t."""
    IMAGENET1K_V1 = table_weights("MaxVit_T_Weights.IMAGENET1K_V1")
    DEFAULT = IMAGENET1K_V1


@register_model()
@handle_legacy_interface(weights=("pretrained", MaxVit_T_Weights.IMAGENET1K_V1))
def maxvit_t(*, weights: MaxVit_T_Weights = None, progress=True, **kwargs):
    """MaxViT-T.

    Args:
        weights: a ``MaxVit_T_Weights`` member to load, or None (sets ``input_size`` from its ``min_size``).
        progress: show download progress.
        **kwargs: passed to ``MaxVit`` (``input_size`` defaults to (224, 224)).
    """
    weights = MaxVit_T_Weights.verify(weights)
    if weights is not None:
        overwrite_named_param(kwargs, "num_classes", len(weights.meta["categories"]))
        overwrite_named_param(kwargs, "input_size", tuple(weights.meta["min_size"]))
    model = MaxVit(input_size=kwargs.pop("input_size", (224, 224)), stem_channels=64,
                   block_channels=[64, 128, 256, 512], block_layers=[2, 2, 5, 2], head_dim=32,
                   stochastic_depth_prob=0.2, partition_size=7, **kwargs)
    return load_weights(model, weights, progress)
