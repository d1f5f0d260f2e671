"""Vision Transformers ViT-B/16, B/32, L/16, L/32, H/14 (Dosovitskiy et al. 2020), torchvision's layout: ``conv_proj``,
``class_token``, ``encoder.pos_embedding``, ``encoder.layers.encoder_layer_N``, ``heads.head``."""
import math
from collections import OrderedDict
from functools import partial

import ember_nn as nn
import ember_tensor as torch

from ..ops.misc import MLP
from ._api import WeightsEnum, table_weights, register_model
from ._utils import handle_legacy_interface, load_weights, overwrite_named_param

__all__ = ["VisionTransformer", "ViT_B_16_Weights", "ViT_B_32_Weights", "ViT_L_16_Weights", "ViT_L_32_Weights",
           "ViT_H_14_Weights", "vit_b_16", "vit_b_32", "vit_l_16", "vit_l_32", "vit_h_14"]


class MLPBlock(MLP):
    """The transformer's feed-forward block: Linear, GELU, Dropout, Linear, Dropout."""

    def __init__(self, in_dim, mlp_dim, dropout):
        super().__init__(in_dim, [mlp_dim, in_dim], activation_layer=nn.GELU, inplace=None, dropout=dropout)
        for m in self.modules():
            if isinstance(m, nn.Linear):
                nn.init.xavier_uniform_(m.weight)
                if m.bias is not None:
                    nn.init.normal_(m.bias, std=1e-6)


class EncoderBlock(nn.Module):
    """Pre-norm transformer layer: x + attention(ln_1(x)), then + mlp(ln_2(.))."""

    def __init__(self, num_heads, hidden_dim, mlp_dim, dropout, attention_dropout, norm_layer=None):
        super().__init__()
        norm_layer = norm_layer or partial(nn.LayerNorm, eps=1e-6)
        self.num_heads = num_heads
        self.ln_1 = norm_layer(hidden_dim)
        self.self_attention = nn.MultiheadAttention(hidden_dim, num_heads, dropout=attention_dropout,
                                                    batch_first=True)
        self.dropout = nn.Dropout(dropout)
        self.ln_2 = norm_layer(hidden_dim)
        self.mlp = MLPBlock(hidden_dim, mlp_dim, dropout)

    def forward(self, input):
        if input.dim() != 3:
            raise ValueError(f"Expected (batch_size, seq_length, hidden_dim) got {tuple(input.shape)}")
        x = self.ln_1(input)
        x, _ = self.self_attention(x, x, x, need_weights=False)
        x = self.dropout(x) + input
        return x + self.mlp(self.ln_2(x))


class Encoder(nn.Module):
    """Learned position embedding, the encoder layers, a final LayerNorm ``ln``."""

    def __init__(self, seq_length, num_layers, num_heads, hidden_dim, mlp_dim, dropout, attention_dropout,
                 norm_layer=None):
        super().__init__()
        norm_layer = norm_layer or partial(nn.LayerNorm, eps=1e-6)
        self.pos_embedding = nn.Parameter(torch.empty(1, seq_length, hidden_dim))
        nn.init.normal_(self.pos_embedding, std=0.02)  # from BERT
        self.dropout = nn.Dropout(dropout)
        self.layers = nn.Sequential(OrderedDict(
            (f"encoder_layer_{i}", EncoderBlock(num_heads, hidden_dim, mlp_dim, dropout, attention_dropout,
                                                norm_layer)) for i in range(num_layers)))
        self.ln = norm_layer(hidden_dim)

    def forward(self, input):
        if input.dim() != 3:
            raise ValueError(f"Expected (batch_size, seq_length, hidden_dim) got {tuple(input.shape)}")
        return self.ln(self.layers(self.dropout(input + self.pos_embedding)))


class VisionTransformer(nn.Module):
    """ViT: non-overlapping patches embedded by a strided convolution, a class token, a
    transformer encoder, a linear head on the class token.

    Args:
        image_size: the (square) input size; patch_size: the patch side.
        num_layers, num_heads, hidden_dim, mlp_dim: the encoder's shape.
        dropout, attention_dropout: rates; num_classes: outputs.
        representation_size: a tanh pre-logits layer of this width (None: none).
        norm_layer: default LayerNorm(eps=1e-6).
    """

    def __init__(self, image_size, patch_size, num_layers, num_heads, hidden_dim, mlp_dim, dropout=0.0,
                 attention_dropout=0.0, num_classes=1000, representation_size=None, norm_layer=None,
                 conv_stem_configs=None):
        super().__init__()
        if image_size % patch_size != 0:
            raise ValueError("Input shape indivisible by patch size!")
        if conv_stem_configs is not None:
            raise NotImplementedError("ember-vision's VisionTransformer has no conv_stem_configs (ViT-C)")
        norm_layer = norm_layer or partial(nn.LayerNorm, eps=1e-6)
        self.image_size = image_size
        self.patch_size = patch_size
        self.hidden_dim = hidden_dim
        self.mlp_dim = mlp_dim
        self.attention_dropout = attention_dropout
        self.dropout = dropout
        self.num_classes = num_classes
        self.representation_size = representation_size
        self.norm_layer = norm_layer
        self.conv_proj = nn.Conv2d(3, hidden_dim, kernel_size=patch_size, stride=patch_size)
        seq_length = (image_size // patch_size) ** 2 + 1  # the patches and the class token
        self.class_token = nn.Parameter(torch.zeros(1, 1, hidden_dim))
        self.encoder = Encoder(seq_length, num_layers, num_heads, hidden_dim, mlp_dim, dropout, attention_dropout,
                               norm_layer)
        self.seq_length = seq_length
        heads = OrderedDict()
        if representation_size is None:
            heads["head"] = nn.Linear(hidden_dim, num_classes)
        else:
            heads["pre_logits"] = nn.Linear(hidden_dim, representation_size)
            heads["act"] = nn.Tanh()
            heads["head"] = nn.Linear(representation_size, num_classes)
        self.heads = nn.Sequential(heads)
        # A patch embedding is a linear layer on flattened patches: LeCun-normal on its fan-in.
        fan_in = self.conv_proj.in_channels * self.conv_proj.kernel_size[0] * self.conv_proj.kernel_size[1]
        nn.init.trunc_normal_(self.conv_proj.weight, std=math.sqrt(1 / fan_in))
        nn.init.zeros_(self.conv_proj.bias)
        if "pre_logits" in heads:
            fan_in = heads["pre_logits"].in_features
            nn.init.trunc_normal_(heads["pre_logits"].weight, std=math.sqrt(1 / fan_in))
            nn.init.zeros_(heads["pre_logits"].bias)
        nn.init.zeros_(heads["head"].weight)
        nn.init.zeros_(heads["head"].bias)

    def _process_input(self, x):
        n, c, h, w = x.shape
        p = self.patch_size
        if h != self.image_size or w != self.image_size:
            raise ValueError(f"Wrong image size! Expected ({self.image_size}, {self.image_size}) but got ({h}, {w})")
        x = self.conv_proj(x)  # (n, hidden_dim, h/p, w/p)
        x = x.reshape(n, self.hidden_dim, (h // p) * (w // p))
        return x.permute(0, 2, 1)  # (n, patches, hidden_dim): the encoder is batch-first

    def forward(self, x):
        x = self._process_input(x)
        batch_class_token = self.class_token.expand(x.shape[0], -1, -1)
        x = self.encoder(torch.cat([batch_class_token, x], dim=1))
        return self.heads(x[:, 0])


def _vision_transformer(patch_size, num_layers, num_heads, hidden_dim, mlp_dim, weights, progress, **kwargs):
    if weights is not None:
        overwrite_named_param(kwargs, "num_classes", len(weights.meta["categories"]))
        overwrite_named_param(kwargs, "image_size", weights.meta["min_size"][0])
    model = VisionTransformer(image_size=kwargs.pop("image_size", 224), patch_size=patch_size, num_layers=num_layers,
                              num_heads=num_heads, hidden_dim=hidden_dim, mlp_dim=mlp_dim, **kwargs)
    return load_weights(model, weights, progress)


class ViT_B_16_Weights(WeightsEnum):
    """ImageNet weights of vit_b_16 (SWAG: weakly supervised pre-training, fine-tuned at 384 or linear probe)."""
    IMAGENET1K_V1 = table_weights("ViT_B_16_Weights.IMAGENET1K_V1")
    IMAGENET1K_SWAG_E2E_V1 = table_weights("ViT_B_16_Weights.IMAGENET1K_SWAG_E2E_V1")
    IMAGENET1K_SWAG_LINEAR_V1 = table_weights("ViT_B_16_Weights.IMAGENET1K_SWAG_LINEAR_V1")
    DEFAULT = IMAGENET1K_V1


class ViT_B_32_Weights(WeightsEnum):
    """ImageNet weights of vit_b_32."""
    IMAGENET1K_V1 = table_weights("ViT_B_32_Weights.IMAGENET1K_V1")
    DEFAULT = IMAGENET1K_V1


class ViT_L_16_Weights(WeightsEnum):
    """ImageNet weights of vit_l_16 (SWAG variants as vit_b_16's)."""
    IMAGENET1K_V1 = table_weights("ViT_L_16_Weights.IMAGENET1K_V1")
    IMAGENET1K_SWAG_E2E_V1 = table_weights("ViT_L_16_Weights.IMAGENET1K_SWAG_E2E_V1")
    IMAGENET1K_SWAG_LINEAR_V1 = table_weights("ViT_L_16_Weights.IMAGENET1K_SWAG_LINEAR_V1")
    DEFAULT = IMAGENET1K_V1


class ViT_L_32_Weights(WeightsEnum):
    """ImageNet weights of vit_l_32."""
    IMAGENET1K_V1 = table_weights("ViT_L_32_Weights.IMAGENET1K_V1")
    DEFAULT = IMAGENET1K_V1


class ViT_H_14_Weights(WeightsEnum):
    """ImageNet weights of vit_h_14 (SWAG only: fine-tuned at 518, or linear probe at 224)."""
    IMAGENET1K_SWAG_E2E_V1 = table_weights("ViT_H_14_Weights.IMAGENET1K_SWAG_E2E_V1")
    IMAGENET1K_SWAG_LINEAR_V1 = table_weights("ViT_H_14_Weights.IMAGENET1K_SWAG_LINEAR_V1")
    DEFAULT = IMAGENET1K_SWAG_E2E_V1


@register_model()
@handle_legacy_interface(weights=("pretrained", ViT_B_16_Weights.IMAGENET1K_V1))
def vit_b_16(*, weights: ViT_B_16_Weights = None, progress=True, **kwargs):
    """ViT-B/16.

    Args:
        weights: a ``ViT_B_16_Weights`` member to load, or None (sets ``image_size`` from its ``min_size``).
        progress: show download progress.
        **kwargs: passed to ``VisionTransformer`` (``image_size`` defaults to 224).
    """
    return _vision_transformer(16, 12, 12, 768, 3072, ViT_B_16_Weights.verify(weights), progress, **kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", ViT_B_32_Weights.IMAGENET1K_V1))
def vit_b_32(*, weights: ViT_B_32_Weights = None, progress=True, **kwargs):
    """ViT-B/32; arguments as ``vit_b_16``."""
    return _vision_transformer(32, 12, 12, 768, 3072, ViT_B_32_Weights.verify(weights), progress, **kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", ViT_L_16_Weights.IMAGENET1K_V1))
def vit_l_16(*, weights: ViT_L_16_Weights = None, progress=True, **kwargs):
    """ViT-L/16; arguments as ``vit_b_16``."""
    return _vision_transformer(16, 24, 16, 1024, 4096, ViT_L_16_Weights.verify(weights), progress, **kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", ViT_L_32_Weights.IMAGENET1K_V1))
def vit_l_32(*, weights: ViT_L_32_Weights = None, progress=True, **kwargs):
    """ViT-L/32; arguments as ``vit_b_16``."""
    return _vision_transformer(32, 24, 16, 1024, 4096, ViT_L_32_Weights.verify(weights), progress, **kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", None))
def vit_h_14(*, weights: ViT_H_14_Weights = None, progress=True, **kwargs):
    """ViT-H/14 (``pretrained=True`` has no legacy weights here, as in torchvision); arguments as ``vit_b_16``."""
    return _vision_transformer(14, 32, 16, 1280, 5120, ViT_H_14_Weights.verify(weights), progress, **kwargs)
