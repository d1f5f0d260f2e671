"""MultiheadAttention (PyTorch keeps it in ``nn.modules.activation``)."""
import ember_tensor as et

from .. import functional as F
from .. import init
from ..functional._sequence import attention_in_memory_order
from ..parameter import Parameter
from .linear import Linear
from .module import Module

__all__ = ["MultiheadAttention", "NonDynamicallyQuantizableLinear"]


class NonDynamicallyQuantizableLinear(Linear):
    """PyTorch's name for MultiheadAttention's output projection (kept so state_dicts match)."""


class MultiheadAttention(Module):
    """Attention over ``num_heads`` subspaces: ``concat(head_1..head_h) W_o``.

    Shapes (batch_first=False): query (L, N, E), key/value (S, N, kdim/vdim); unbatched
    (L, E) works too. Bool masks mark positions that may NOT be attended.

    >>> import ember_tensor as torch
    >>> mha = MultiheadAttention(8, 2)
    >>> out, weights = mha(torch.randn(5, 3, 8), torch.randn(4, 3, 8), torch.randn(4, 3, 8))
    >>> out.shape, weights.shape
    (torch.Size([5, 3, 8]), torch.Size([3, 5, 4]))
    """

    def __init__(self, embed_dim, num_heads, dropout=0.0, bias=True, add_bias_kv=False, add_zero_attn=False,
                 kdim=None, vdim=None, batch_first=False, device=None, dtype=None):
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(f"embed_dim and num_heads must be greater than 0, got embed_dim={embed_dim} and "
                             f"num_heads={num_heads} instead")
        super().__init__()
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads = num_heads
        self.dropout = dropout
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != embed_dim:
            raise AssertionError("embed_dim must be divisible by num_heads")
        factory = {"device": device, "dtype": dtype}
        if self._qkv_same_embed_dim:
            self.in_proj_weight = Parameter(et.empty((3 * embed_dim, embed_dim), **factory))
            self.register_parameter("q_proj_weight", None)
            self.register_parameter("k_proj_weight", None)
            self.register_parameter("v_proj_weight", None)
        else:
            self.q_proj_weight = Parameter(et.empty((embed_dim, embed_dim), **factory))
            self.k_proj_weight = Parameter(et.empty((embed_dim, self.kdim), **factory))
            self.v_proj_weight = Parameter(et.empty((embed_dim, self.vdim), **factory))
            self.register_parameter("in_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(et.empty(3 * embed_dim, **factory))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias, **factory)
        if add_bias_kv:
            self.bias_k = Parameter(et.empty((1, 1, embed_dim), **factory))
            self.bias_v = Parameter(et.empty((1, 1, embed_dim), **factory))
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self):
        # Xavier-uniform projections and zero biases, as PyTorch.
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            init.xavier_uniform_(self.q_proj_weight)
            init.xavier_uniform_(self.k_proj_weight)
            init.xavier_uniform_(self.v_proj_weight)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
        if self.bias_v is not None:
            init.xavier_normal_(self.bias_v)

    def forward(self, query, key, value, key_padding_mask=None, need_weights=True, attn_mask=None,
                average_attn_weights=True, is_causal=False):
        arguments = (self.embed_dim, self.num_heads, self.in_proj_weight, self.in_proj_bias, self.bias_k,
                     self.bias_v, self.add_zero_attn, self.dropout, self.out_proj.weight, self.out_proj.bias)
        options = dict(training=self.training, key_padding_mask=key_padding_mask, need_weights=need_weights,
                       attn_mask=attn_mask, use_separate_proj_weight=not self._qkv_same_embed_dim,
                       q_proj_weight=self.q_proj_weight, k_proj_weight=self.k_proj_weight,
                       v_proj_weight=self.v_proj_weight, average_attn_weights=average_attn_weights,
                       is_causal=is_causal)
        if self.batch_first and query.dim() == 3:
            # (N, L, E) as it is: the functional form's (L, N, E) would be a transposed view
            # that it works on in memory order anyway; this spares recording the transposes
            # (query, key and value stay one object for self-attention's packed projection).
            return attention_in_memory_order(query, key, value, True, *arguments, **options)
        return F.multi_head_attention_forward(query, key, value, *arguments, **options)
