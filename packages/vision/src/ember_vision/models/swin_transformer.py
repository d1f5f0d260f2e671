"""Swin Transformer V1 and V2, T/S/B (Liu et al. 2021, 2022): attention inside shifted local
windows with relative position biases, patch merging between stages; torchvision's layout
(``features.<stage>.<block>.attn.qkv``, ``relative_position_bias_table``, ``norm``, ``head``)."""
import math
from functools import partial

import numpy as np

import ember_autograd
import ember_nn as nn
import ember_nn.functional as F
import ember_tensor as torch

from ..ops.misc import MLP, Permute
from ..ops.stochastic_depth import StochasticDepth
from ._api import WeightsEnum, table_weights, register_model
from ._utils import handle_legacy_interface, load_weights, overwrite_named_param

__all__ = ["SwinTransformer", "Swin_T_Weights", "Swin_S_Weights", "Swin_B_Weights", "Swin_V2_T_Weights",
           "Swin_V2_S_Weights", "Swin_V2_B_Weights", "swin_t", "swin_s", "swin_b", "swin_v2_t", "swin_v2_s",
           "swin_v2_b"]


def _patch_merging_pad(x):
    h, w = x.shape[-3], x.shape[-2]
    x = F.pad(x, (0, 0, 0, w % 2, 0, h % 2))
    # The four pixels of each 2x2 neighbourhood, side by side in the channels.
    return torch.cat([x[..., 0::2, 0::2, :], x[..., 1::2, 0::2, :], x[..., 0::2, 1::2, :], x[..., 1::2, 1::2, :]], -1)


class PatchMerging(nn.Module):
    """Halve the resolution, concatenating each 2x2 block's channels, normalise, project to 2C."""

    def __init__(self, dim, norm_layer=nn.LayerNorm):
        super().__init__()
        self.dim = dim
        self.reduction = nn.Linear(4 * dim, 2 * dim, bias=False)
        self.norm = norm_layer(4 * dim)

    def forward(self, x):
        return self.reduction(self.norm(_patch_merging_pad(x)))


class PatchMergingV2(nn.Module):
    """Swin V2's patch merging: project to 2C, then normalise."""

    def __init__(self, dim, norm_layer=nn.LayerNorm):
        super().__init__()
        self.dim = dim
        self.reduction = nn.Linear(4 * dim, 2 * dim, bias=False)
        self.norm = norm_layer(2 * dim)

    def forward(self, x):
        return self.norm(self.reduction(_patch_merging_pad(x)))


def _shift_mask(pad_h, pad_w, window_size, shift_size):
    # Windows that wrap around after the shift mix regions that were not neighbours: label
    # the nine regions and forbid attention (-100 before the softmax) between labels.
    labels = np.zeros((pad_h, pad_w), np.float32)
    h_slices = ((0, -window_size[0]), (-window_size[0], -shift_size[0]), (-shift_size[0], None))
    w_slices = ((0, -window_size[1]), (-window_size[1], -shift_size[1]), (-shift_size[1], None))
    for count, (h, w) in enumerate((h, w) for h in h_slices for w in w_slices):
        labels[h[0]:h[1], w[0]:w[1]] = count
    labels = labels.reshape(pad_h // window_size[0], window_size[0], pad_w // window_size[1], window_size[1])
    labels = labels.transpose(0, 2, 1, 3).reshape(-1, window_size[0] * window_size[1])
    diff = labels[:, None, :] - labels[:, :, None]
    return np.where(diff != 0, np.float32(-100.0), np.float32(0.0))


def shifted_window_attention(input, qkv_weight, proj_weight, relative_position_bias, window_size, num_heads,
                             shift_size, attention_dropout=0.0, dropout=0.0, qkv_bias=None, proj_bias=None,
                             logit_scale=None, training=True):
    """Multi-head self-attention within (shifted) windows of an (N, H, W, C) input, with a
    relative position bias; ``logit_scale`` switches to Swin V2's scaled cosine attention."""
    b, h, w, c = input.shape
    pad_r = (window_size[1] - w % window_size[1]) % window_size[1]
    pad_b = (window_size[0] - h % window_size[0]) % window_size[0]
    x = F.pad(input, (0, 0, 0, pad_r, 0, pad_b))
    _, pad_h, pad_w, _ = x.shape
    shift_size = list(shift_size)
    if window_size[0] >= pad_h:
        shift_size[0] = 0
    if window_size[1] >= pad_w:
        shift_size[1] = 0
    if sum(shift_size) > 0:
        x = torch.roll(x, shifts=(-shift_size[0], -shift_size[1]), dims=(1, 2))
    num_windows = (pad_h // window_size[0]) * (pad_w // window_size[1])
    x = x.view(b, pad_h // window_size[0], window_size[0], pad_w // window_size[1], window_size[1], c)
    x = x.permute(0, 1, 3, 2, 4, 5).reshape(b * num_windows, window_size[0] * window_size[1], c)
    if logit_scale is not None and qkv_bias is not None:
        length = qkv_bias.numel() // 3  # V2 has no key bias
        qkv_bias = torch.cat([qkv_bias[:length], torch.zeros_like(qkv_bias[length:2 * length]),
                              qkv_bias[2 * length:]])
    qkv = F.linear(x, qkv_weight, qkv_bias)
    qkv = qkv.reshape(x.shape[0], x.shape[1], 3, num_heads, c // num_heads).permute(2, 0, 3, 1, 4)
    q, k, v = qkv[0], qkv[1], qkv[2]
    if logit_scale is not None:
        attn = F.normalize(q, dim=-1) @ F.normalize(k, dim=-1).transpose(-2, -1)
        attn = attn * torch.clamp(logit_scale, max=math.log(100.0)).exp()
    else:
        attn = (q * (c // num_heads) ** -0.5).matmul(k.transpose(-2, -1))
    attn = attn + relative_position_bias
    if sum(shift_size) > 0:
        mask = torch.from_numpy(_shift_mask(pad_h, pad_w, window_size, shift_size)).to(device=x.device,
                                                                                       dtype=attn.dtype)
        attn = attn.view(x.shape[0] // num_windows, num_windows, num_heads, x.shape[1], x.shape[1])
        attn = (attn + mask.unsqueeze(1).unsqueeze(0)).view(-1, num_heads, x.shape[1], x.shape[1])
    attn = F.dropout(F.softmax(attn, dim=-1), p=attention_dropout, training=training)
    x = attn.matmul(v).transpose(1, 2).reshape(x.shape[0], x.shape[1], c)
    x = F.dropout(F.linear(x, proj_weight, proj_bias), p=dropout, training=training)
    x = x.view(b, pad_h // window_size[0], pad_w // window_size[1], window_size[0], window_size[1], c)
    x = x.permute(0, 1, 3, 2, 4, 5).reshape(b, pad_h, pad_w, c)
    if sum(shift_size) > 0:
        x = torch.roll(x, shifts=(shift_size[0], shift_size[1]), dims=(1, 2))
    return x[:, :h, :w, :].contiguous()


def _relative_position_index(window_size):
    coords = np.stack(np.meshgrid(np.arange(window_size[0]), np.arange(window_size[1]), indexing="ij")).reshape(2, -1)
    relative = (coords[:, :, None] - coords[:, None, :]).transpose(1, 2, 0)
    relative[:, :, 0] += window_size[0] - 1  # shift to start from 0
    relative[:, :, 1] += window_size[1] - 1
    relative[:, :, 0] *= 2 * window_size[1] - 1
    return torch.from_numpy(relative.sum(-1).reshape(-1).astype(np.int64))


class ShiftedWindowAttention(nn.Module):
    """``shifted_window_attention`` with its parameters: ``qkv``, ``proj`` and a learned
    table of biases per relative position (``relative_position_bias_table``)."""

    def __init__(self, dim, window_size, shift_size, num_heads, qkv_bias=True, proj_bias=True, attention_dropout=0.0,
                 dropout=0.0):
        super().__init__()
        if len(window_size) != 2 or len(shift_size) != 2:
            raise ValueError("window_size and shift_size must be of length 2")
        self.window_size = window_size
        self.shift_size = shift_size
        self.num_heads = num_heads
        self.attention_dropout = attention_dropout
        self.dropout = dropout
        self.qkv = nn.Linear(dim, dim * 3, bias=qkv_bias)
        self.proj = nn.Linear(dim, dim, bias=proj_bias)
        self.define_relative_position_bias_table()
        self.register_buffer("relative_position_index", _relative_position_index(window_size))

    def define_relative_position_bias_table(self):
        """The learned bias of each relative position and head."""
        self.relative_position_bias_table = nn.Parameter(
            torch.zeros((2 * self.window_size[0] - 1) * (2 * self.window_size[1] - 1), self.num_heads))
        nn.init.trunc_normal_(self.relative_position_bias_table, std=0.02)

    def _bias_from_table(self, table):
        n = self.window_size[0] * self.window_size[1]
        bias = table[self.relative_position_index].view(n, n, -1)
        return bias.permute(2, 0, 1).contiguous().unsqueeze(0)

    def get_relative_position_bias(self):
        """The (1, heads, N, N) bias added to the attention logits of a window of N positions."""
        return self._bias_from_table(self.relative_position_bias_table)

    def forward(self, x):
        return shifted_window_attention(x, self.qkv.weight, self.proj.weight, self.get_relative_position_bias(),
                                        self.window_size, self.num_heads, shift_size=self.shift_size,
                                        attention_dropout=self.attention_dropout, dropout=self.dropout,
                                        qkv_bias=self.qkv.bias, proj_bias=self.proj.bias, training=self.training)


class ShiftedWindowAttentionV2(ShiftedWindowAttention):
    """Swin V2's window attention: cosine similarity with a learned ``logit_scale``, and biases
    from a small MLP (``cpb_mlp``) of log-spaced relative coordinates."""

    def __init__(self, dim, window_size, shift_size, num_heads, qkv_bias=True, proj_bias=True, attention_dropout=0.0,
                 dropout=0.0):
        super().__init__(dim, window_size, shift_size, num_heads, qkv_bias=qkv_bias, proj_bias=proj_bias,
                         attention_dropout=attention_dropout, dropout=dropout)
        self.logit_scale = nn.Parameter(torch.log(10 * torch.ones((num_heads, 1, 1))))
        self.cpb_mlp = nn.Sequential(nn.Linear(2, 512, bias=True), nn.ReLU(inplace=True),
                                     nn.Linear(512, num_heads, bias=False))
        if qkv_bias:
            length = self.qkv.bias.numel() // 3
            with ember_autograd.no_grad():
                self.qkv.bias[length:2 * length] = 0.0

    def define_relative_position_bias_table(self):
        """The log-spaced relative coordinates the bias MLP reads (a buffer, not learned)."""
        h = np.arange(-(self.window_size[0] - 1), self.window_size[0], dtype=np.float32)
        w = np.arange(-(self.window_size[1] - 1), self.window_size[1], dtype=np.float32)
        table = np.stack(np.meshgrid(h, w, indexing="ij")).transpose(1, 2, 0)[None].copy()
        table[..., 0] /= self.window_size[0] - 1
        table[..., 1] /= self.window_size[1] - 1
        table *= 8  # normalise to [-8, 8]
        table = np.sign(table) * np.log2(np.abs(table) + 1.0) / 3.0
        self.register_buffer("relative_coords_table", torch.from_numpy(table.astype(np.float32)))

    def get_relative_position_bias(self):
        """``16 * sigmoid`` of the MLP's bias for each relative position and head."""
        table = self.cpb_mlp(self.relative_coords_table).view(-1, self.num_heads)
        return 16 * torch.sigmoid(self._bias_from_table(table))

    def forward(self, x):
        return shifted_window_attention(x, self.qkv.weight, self.proj.weight, self.get_relative_position_bias(),
                                        self.window_size, self.num_heads, shift_size=self.shift_size,
                                        attention_dropout=self.attention_dropout, dropout=self.dropout,
                                        qkv_bias=self.qkv.bias, proj_bias=self.proj.bias,
                                        logit_scale=self.logit_scale, training=self.training)


class SwinTransformerBlock(nn.Module):
    """Pre-norm block: x + attention(norm1(x)), then + mlp(norm2(.)), through stochastic depth."""

    def __init__(self, dim, num_heads, window_size, shift_size, mlp_ratio=4.0, dropout=0.0, attention_dropout=0.0,
                 stochastic_depth_prob=0.0, norm_layer=nn.LayerNorm, attn_layer=ShiftedWindowAttention):
        super().__init__()
        self.norm1 = norm_layer(dim)
        self.attn = attn_layer(dim, window_size, shift_size, num_heads, attention_dropout=attention_dropout,
                               dropout=dropout)
        self.stochastic_depth = StochasticDepth(stochastic_depth_prob, "row")
        self.norm2 = norm_layer(dim)
        self.mlp = MLP(dim, [int(dim * mlp_ratio), dim], activation_layer=nn.GELU, inplace=None, dropout=dropout)
        for m in self.mlp.modules():
            if isinstance(m, nn.Linear):
                nn.init.xavier_uniform_(m.weight)
                if m.bias is not None:
                    nn.init.normal_(m.bias, std=1e-6)

    def forward(self, x):
        x = x + self.stochastic_depth(self.attn(self.norm1(x)))
        return x + self.stochastic_depth(self.mlp(self.norm2(x)))


class SwinTransformerBlockV2(SwinTransformerBlock):
    """Swin V2's residual post-norm block: x + norm1(attention(x)), then + norm2(mlp(.))."""

    def __init__(self, dim, num_heads, window_size, shift_size, mlp_ratio=4.0, dropout=0.0, attention_dropout=0.0,
                 stochastic_depth_prob=0.0, norm_layer=nn.LayerNorm, attn_layer=ShiftedWindowAttentionV2):
        super().__init__(dim, num_heads, window_size, shift_size, mlp_ratio=mlp_ratio, dropout=dropout,
                         attention_dropout=attention_dropout, stochastic_depth_prob=stochastic_depth_prob,
                         norm_layer=norm_layer, attn_layer=attn_layer)

    def forward(self, x):
        x = x + self.stochastic_depth(self.norm1(self.attn(x)))
        return x + self.stochastic_depth(self.norm2(self.mlp(x)))


class SwinTransformer(nn.Module):
    """Swin Transformer: patch embedding, stages of window-attention blocks with patch merging
    between them, LayerNorm, average pooling, a linear ``head``.

    Args:
        patch_size, embed_dim, depths, num_heads, window_size: the architecture.
        mlp_ratio, dropout, attention_dropout, stochastic_depth_prob: as named.
        num_classes: outputs; norm_layer: default LayerNorm(eps=1e-5);
        block: default ``SwinTransformerBlock``; downsample_layer: default ``PatchMerging``.
    """

    def __init__(self, patch_size, embed_dim, depths, num_heads, window_size, mlp_ratio=4.0, dropout=0.0,
                 attention_dropout=0.0, stochastic_depth_prob=0.1, num_classes=1000, norm_layer=None, block=None,
                 downsample_layer=PatchMerging):
        super().__init__()
        self.num_classes = num_classes
        block = block or SwinTransformerBlock
        norm_layer = norm_layer or partial(nn.LayerNorm, eps=1e-5)
        layers = [nn.Sequential(nn.Conv2d(3, embed_dim, kernel_size=tuple(patch_size), stride=tuple(patch_size)),
                                Permute([0, 2, 3, 1]), norm_layer(embed_dim))]
        total_stage_blocks = sum(depths)
        stage_block_id = 0
        for i_stage, depth in enumerate(depths):
            dim = embed_dim * 2 ** i_stage
            stage = []
            for i_layer in range(depth):
                sd_prob = stochastic_depth_prob * float(stage_block_id) / (total_stage_blocks - 1)
                stage.append(block(dim, num_heads[i_stage], window_size=window_size,
                                   shift_size=[0 if i_layer % 2 == 0 else w // 2 for w in window_size],
                                   mlp_ratio=mlp_ratio, dropout=dropout, attention_dropout=attention_dropout,
                                   stochastic_depth_prob=sd_prob, norm_layer=norm_layer))
                stage_block_id += 1
            layers.append(nn.Sequential(*stage))
            if i_stage < len(depths) - 1:
                layers.append(downsample_layer(dim, norm_layer))
        self.features = nn.Sequential(*layers)
        num_features = embed_dim * 2 ** (len(depths) - 1)
        self.norm = norm_layer(num_features)
        self.permute = Permute([0, 3, 1, 2])  # (B, H, W, C) -> (B, C, H, W)
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.flatten = nn.Flatten(1)
        self.head = nn.Linear(num_features, num_classes)
        for m in self.modules():
            if isinstance(m, nn.Linear):
                nn.init.trunc_normal_(m.weight, std=0.02)
                if m.bias is not None:
                    nn.init.zeros_(m.bias)

    def forward(self, x):
        x = self.avgpool(self.permute(self.norm(self.features(x))))
        return self.head(self.flatten(x))


_SETTINGS = {  # embed_dim, depths, num_heads, window, stochastic depth
    "t": (96, [2, 2, 6, 2], [3, 6, 12, 24], 0.2), "s": (96, [2, 2, 18, 2], [3, 6, 12, 24], 0.3),
    "b": (128, [2, 2, 18, 2], [4, 8, 16, 32], 0.5),
}


def _swin(size, v2, weights, progress, **kwargs):
    embed_dim, depths, num_heads, stochastic_depth_prob = _SETTINGS[size]
    if weights is not None:
        overwrite_named_param(kwargs, "num_classes", len(weights.meta["categories"]))
    if v2:
        kwargs.setdefault("block", SwinTransformerBlockV2)
        kwargs.setdefault("downsample_layer", PatchMergingV2)
    model = SwinTransformer(patch_size=[4, 4], embed_dim=embed_dim, depths=depths, num_heads=num_heads,
                            window_size=[8, 8] if v2 else [7, 7],
                            stochastic_depth_prob=kwargs.pop("stochastic_depth_prob", stochastic_depth_prob), **kwargs)
    return load_weights(model, weights, progress)


class Swin_T_Weights(WeightsEnum):
    """ImageNet weights of swin_t."""
    IMAGENET1K_V1 = table_weights("Swin_T_Weights.IMAGENET1K_V1")
    DEFAULT = IMAGENET1K_V1


class Swin_S_Weights(WeightsEnum):
    """ImageNet weights of swin_s."""
    IMAGENET1K_V1 = table_weights("Swin_S_Weights.IMAGENET1K_V1")
    DEFAULT = IMAGENET1K_V1


class Swin_B_Weights(WeightsEnum):
    """ImageNet weights of swin_b."""
    IMAGENET1K_V1 = table_weights("Swin_B_Weights.IMAGENET1K_V1")
    DEFAULT = IMAGENET1K_V1


class Swin_V2_T_Weights(WeightsEnum):
    """ImageNet weights of swin_v2_t."""
    IMAGENET1K_V1 = table_weights("Swin_V2_T_Weights.IMAGENET1K_V1")
    DEFAULT = IMAGENET1K_V1


class Swin_V2_S_Weights(WeightsEnum):
    """ImageNet weights of swin_v2_s."""
    IMAGENET1K_V1 = table_weights("Swin_V2_S_Weights.IMAGENET1K_V1")
    DEFAULT = IMAGENET1K_V1


class Swin_V2_B_Weights(WeightsEnum):
    """ImageNet weights of swin_v2_b."""
    IMAGENET1K_V1 = table_weights("Swin_V2_B_Weights.IMAGENET1K_V1")
    DEFAULT = IMAGENET1K_V1


@register_model()
@handle_legacy_interface(weights=("pretrained", Swin_T_Weights.IMAGENET1K_V1))
def swin_t(*, weights: Swin_T_Weights = None, progress=True, **kwargs):
    """Swin-T.

    Args:
        weights: a ``Swin_T_Weights`` member to load, or None.
        progress: show download progress.
        **kwargs: passed to ``SwinTransformer``.
    """
    return _swin("t", False, Swin_T_Weights.verify(weights), progress, **kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", Swin_S_Weights.IMAGENET1K_V1))
def swin_s(*, weights: Swin_S_Weights = None, progress=True, **kwargs):
    """Swin-S; arguments as ``swin_t``."""
    return _swin("s", False, Swin_S_Weights.verify(weights), progress, **kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", Swin_B_Weights.IMAGENET1K_V1))
def swin_b(*, weights: Swin_B_Weights = None, progress=True, **kwargs):
    """Swin-B; arguments as ``swin_t``."""
    return _swin("b", False, Swin_B_Weights.verify(weights), progress, **kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", Swin_V2_T_Weights.IMAGENET1K_V1))
def swin_v2_t(*, weights: Swin_V2_T_Weights = None, progress=True, **kwargs):
    """Swin V2-T; arguments as ``swin_t``."""
    return _swin("t", True, Swin_V2_T_Weights.verify(weights), progress, **kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", Swin_V2_S_Weights.IMAGENET1K_V1))
def swin_v2_s(*, weights: Swin_V2_S_Weights = None, progress=True, **kwargs):
    """Swin V2-S; arguments as ``swin_t``."""
    return _swin("s", True, Swin_V2_S_Weights.verify(weights), progress, **kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", Swin_V2_B_Weights.IMAGENET1K_V1))
def swin_v2_b(*, weights: Swin_V2_B_Weights = None, progress=True, **kwargs):
    """Swin V2-B; arguments as ``swin_t``."""
    return _swin("b", True, Swin_V2_B_Weights.verify(weights), progress, **kwargs)
