"""Functional forms of the sequence layers: embedding_bag, scaled_dot_product_attention and
multi_head_attention_forward, composed of differentiable ember ops."""
import math

import ember_tensor as et
from ember_tensor import nn_ops as K

from ..attention import check_a_kernel_is_enabled

from ._activation import softmax
from ._conv import linear, renorm_rows_
from ._dropout import dropout
from ._util import nondeterministic_backward

__all__ = ["embedding_bag", "scaled_dot_product_attention", "multi_head_attention_forward"]

# PyTorch's EmbeddingBagMode numbers, which the op takes.
_MODES = {"sum": 0, "mean": 1, "max": 2}


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2, scale_grad_by_freq=False, mode="mean",
                  sparse=False, per_sample_weights=None, include_last_offset=False, padding_idx=None):
    """Sums, means or maxima of bags of embeddings, without materialising each bag (one op).

    ``input`` 2-D (B, N): each row is a bag. ``input`` 1-D with ``offsets`` (B): bag i is
    ``input[offsets[i]:offsets[i+1]]``. Entries equal to ``padding_idx`` are left out (an
    empty bag gives zeros). ``per_sample_weights`` scales each entry (``mode='sum'`` only).
    """
    if mode not in ("sum", "mean", "max"):
        raise ValueError(f"mode has to be one of sum, mean or max, got {mode!r}")
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(f"embedding_bag: per_sample_weights was not None. per_sample_weights is only "
                                  f"supported for mode='sum' (got mode='{mode}'). Please open a feature request "
                                  f"on GitHub.")
    if input.dim() == 2:
        if offsets is not None:
            raise ValueError("if input is 2D, then offsets has to be None, as input is treated is a mini-batch of "
                             "fixed length sequences. However, found offsets of type Tensor")
        bags, length = input.shape
        offsets = (et.arange(0, bags * length, length, device=input.device) if length
                   else et.zeros(bags, dtype=et.int64, device=input.device))
        input = input.reshape(-1)
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape(-1)
    elif input.dim() == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.dim() != 1:
            raise ValueError("offsets has to be a 1D Tensor")
    else:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.dim()}")
    if padding_idx is not None:
        num = weight.shape[0]
        if not -num <= padding_idx < num:
            raise RuntimeError(f"padding_idx must be within the number of embeddings, {-num} through {num - 1}, "
                               f"but got {padding_idx}")
        padding_idx %= num
    if scale_grad_by_freq and mode == "max":
        raise ValueError("max mode does not support scaling the gradient by the frequency")
    if sparse and mode == "max":
        raise ValueError("max mode does not support sparse weights")
    if max_norm is not None:
        renorm_rows_(weight, input, max_norm, norm_type)
    # One op: each bag reduced straight from the weight (the rule scatters the gradient back).
    result = K.embedding_bag(weight, input, offsets, scale_grad_by_freq, _MODES[mode], sparse, per_sample_weights,
                             include_last_offset, -1 if padding_idx is None else padding_idx)[0]
    if mode == "max":
        # PyTorch's CUDA backward of the max mode adds with atomics.
        return nondeterministic_backward(result, "embedding_bag_backward_cuda_max")
    return result


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
                                 enable_gqa=False):
    """``softmax(q k^T * scale + mask) v`` over the last two dims, as torch's SDPA.

    A bool ``attn_mask`` marks the positions that may be attended (True: attend); a float
    one is added to the scores. ``is_causal`` masks the future (upper triangle).
    """
    check_a_kernel_is_enabled(query.device.type)
    if is_causal and attn_mask is not None:
        raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set when "
                           "is_causal=True")
    length, source = query.shape[-2], key.shape[-2]
    scale = 1.0 / math.sqrt(query.shape[-1]) if scale is None else scale
    if enable_gqa and key.shape[-3] != query.shape[-3]:
        groups = query.shape[-3] // key.shape[-3]
        key = key.repeat_interleave(groups, dim=-3)
        value = value.repeat_interleave(groups, dim=-3)
    scores = et.matmul(query, key.transpose(-2, -1)) * scale
    if is_causal:
        attn_mask = et.ones(length, source, dtype=et.bool, device=query.device).tril()
    if attn_mask is not None:
        if attn_mask.dtype is et.bool:
            scores = scores.masked_fill(attn_mask.logical_not(), float("-inf"))
        else:
            scores = scores + attn_mask
    weights = softmax(scores, dim=-1)
    if dropout_p > 0.0:
        weights = dropout(weights, dropout_p, training=True)
    return et.matmul(weights, value)


def _float_mask(mask, dtype):
    """A mask to add to attention scores: a bool mask's True (not allowed) becomes -inf."""
    if mask is None or mask.dtype is not et.bool:
        return mask
    return et.zeros(mask.shape, dtype=dtype, device=mask.device).masked_fill(mask, float("-inf"))


def multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads, in_proj_weight, in_proj_bias,
                                 bias_k, bias_v, add_zero_attn, dropout_p, out_proj_weight, out_proj_bias,
                                 training=True, key_padding_mask=None, need_weights=True, attn_mask=None,
                                 use_separate_proj_weight=False, q_proj_weight=None, k_proj_weight=None,
                                 v_proj_weight=None, static_k=None, static_v=None, average_attn_weights=True,
                                 is_causal=False):
    """The computation of nn.MultiheadAttention on (L, N, E) query and (S, N, E) key/value.

    Unbatched (L, E) inputs are accepted. Bool masks mark positions that may NOT be
    attended (True: masked), as nn.MultiheadAttention's documentation says; float masks
    are added to the scores. Returns (output, attention weights or None).
    """
    unbatched = query.dim() == 2
    if unbatched:
        query, key, value = _unsqueeze_shared(1, query, key, value)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    # A (L, N, E) query that is a transposed (N, L, E) tensor (a batch_first caller's) is
    # worked on in its memory order (`attention_in_memory_order`).
    batch_major = not query.is_contiguous() and query.transpose(0, 1).is_contiguous()
    if batch_major:
        query, key, value = _transpose_shared(query, key, value)
    out, weights = attention_in_memory_order(
        query, key, value, batch_major, embed_dim_to_check, num_heads, in_proj_weight, in_proj_bias, bias_k,
        bias_v, add_zero_attn, dropout_p, out_proj_weight, out_proj_bias, training, key_padding_mask,
        need_weights, attn_mask, use_separate_proj_weight, q_proj_weight, k_proj_weight, v_proj_weight,
        average_attn_weights, is_causal)
    if batch_major:
        out = out.transpose(0, 1)
    if unbatched:
        out = out.squeeze(1)
        if weights is not None:
            weights = weights.squeeze(0)
    return out, weights


def _unsqueeze_shared(dim, query, key, value):
    """query, key and value unsqueezed at `dim`, the ones that were one tensor still one
    (self-attention keeps its packed projection)."""
    return _map_shared(lambda x: x.unsqueeze(dim), query, key, value)


def _transpose_shared(query, key, value):
    """query, key and value with dims 0 and 1 swapped, shared ones still shared."""
    return _map_shared(lambda x: x.transpose(0, 1), query, key, value)


def _map_shared(fn, query, key, value):
    q = fn(query)
    k = q if key is query else fn(key)
    v = k if value is key else q if value is query else fn(value)
    return q, k, v


def attention_in_memory_order(query, key, value, batch_major, embed_dim_to_check, num_heads, in_proj_weight,
                              in_proj_bias, bias_k, bias_v, add_zero_attn, dropout_p, out_proj_weight,
                              out_proj_bias, training=True, key_padding_mask=None, need_weights=True,
                              attn_mask=None, use_separate_proj_weight=False, q_proj_weight=None,
                              k_proj_weight=None, v_proj_weight=None, average_attn_weights=True,
                              is_causal=False):
    """multi_head_attention_forward on batched inputs in their memory order: (N, L, E)
    query and (N, S, E) key/value when `batch_major`, else (L, N, E) and (S, N, E); the
    output in the same order, the weights (N, L, S) (or (N, H, L, S)) either way.

    MultiheadAttention(batch_first=True) calls this on its inputs as they are: working on
    (N, L, *) reads them, and writes q, k, v and the output, in place: no copy of the input
    for the GEMM (and none again in its backward), none of q, k and v to split the heads,
    no transposes to record, and the output's gradient reaches the out-projection
    contiguous.
    """
    seq_dim = 1 if batch_major else 0
    bsz, tgt_len, embed_dim = query.shape if batch_major else (query.shape[1], query.shape[0], query.shape[2])
    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but got {embed_dim}")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")

    def memory_order(x):
        return x.transpose(0, 1) if batch_major else x

    def split_heads(x, parts=1):
        # (L, N, parts*E) or (N, L, parts*E) -> (N, parts*H, L, head_dim), a view: the
        # batched products read each head's rows in place.
        if batch_major:
            return x.view(bsz, x.shape[1], parts * num_heads, head_dim).transpose(1, 2)
        return x.view(x.shape[0], bsz, parts * num_heads, head_dim).permute(1, 2, 0, 3)

    split = False  # whether q, k and v are (N, H, L, hd) heads yet
    if not use_separate_proj_weight and query is key and key is value:
        # Self-attention: q, k and v from one GEMM of the packed weight, as PyTorch's
        # _in_projection_packed computes them (one (E, 3E) product beats three (E, E)),
        # and their heads from one view of it (three ops where seven were recorded).
        qkv = linear(query, in_proj_weight, in_proj_bias)
        if bias_k is None:
            q, k, v = split_heads(qkv, 3).chunk(3, dim=1)
            split = True
        else:
            q, k, v = qkv.chunk(3, dim=-1)
    else:
        biases = (None, None, None) if in_proj_bias is None else in_proj_bias.chunk(3)
        if use_separate_proj_weight:
            q = linear(query, q_proj_weight, biases[0])
            k = linear(key, k_proj_weight, biases[1])
            v = linear(value, v_proj_weight, biases[2])
        elif key is value:  # k and v from one GEMM of their two thirds
            q_weight, kv_weight = in_proj_weight.split((embed_dim, 2 * embed_dim))
            kv_bias = None if in_proj_bias is None else in_proj_bias[embed_dim:]
            q = linear(query, q_weight, biases[0])
            k, v = linear(key, kv_weight, kv_bias).chunk(2, dim=-1)
        else:
            q, k, v = (linear(x, w, b) for x, w, b in zip((query, key, value), in_proj_weight.chunk(3), biases))
    if is_causal and attn_mask is None:
        attn_mask = et.ones(tgt_len, k.shape[2 if split else seq_dim], dtype=et.bool, device=q.device).triu(1)
    attn_mask = _float_mask(attn_mask, q.dtype)
    key_padding_mask = _float_mask(key_padding_mask, q.dtype)
    if attn_mask is not None and attn_mask.dim() == 3:  # (N*H, L, S): one mask per head
        attn_mask = attn_mask.reshape(bsz, num_heads, tgt_len, attn_mask.shape[-1])
    if bias_k is not None and bias_v is not None:
        k = et.cat([k, memory_order(bias_k.repeat(1, bsz, 1))], dim=seq_dim)
        v = et.cat([v, memory_order(bias_v.repeat(1, bsz, 1))], dim=seq_dim)
        if attn_mask is not None:
            attn_mask = et.cat([attn_mask, et.zeros(*attn_mask.shape[:-1], 1, dtype=attn_mask.dtype, device=attn_mask.device)], dim=-1)
        if key_padding_mask is not None:
            key_padding_mask = et.cat([key_padding_mask, et.zeros(bsz, 1, dtype=key_padding_mask.dtype, device=key_padding_mask.device)], dim=-1)
    if not split:
        q, k, v = split_heads(q), split_heads(k), split_heads(v)
    if add_zero_attn:
        k = et.cat([k, et.zeros(bsz, num_heads, 1, head_dim, dtype=k.dtype, device=k.device)], dim=2)
        v = et.cat([v, et.zeros(bsz, num_heads, 1, head_dim, dtype=v.dtype, device=v.device)], dim=2)
        if attn_mask is not None:
            attn_mask = et.cat([attn_mask, et.zeros(*attn_mask.shape[:-1], 1, dtype=attn_mask.dtype, device=attn_mask.device)], dim=-1)
        if key_padding_mask is not None:
            key_padding_mask = et.cat([key_padding_mask, et.zeros(bsz, 1, dtype=key_padding_mask.dtype, device=key_padding_mask.device)], dim=-1)
    src_len = k.shape[2]
    if key_padding_mask is not None:
        padding = key_padding_mask.reshape(bsz, 1, 1, src_len)
        attn_mask = padding if attn_mask is None else attn_mask + padding
    scores = et.matmul(q * (1.0 / math.sqrt(head_dim)), k.transpose(-2, -1))   # (N, H, L, S)
    if attn_mask is not None:
        scores = scores + attn_mask
    weights = softmax(scores, dim=-1)
    if dropout_p > 0.0:
        weights = dropout(weights, dropout_p, training=training)
    out = et.matmul(weights, v)                                   # (N, H, L, hd)
    if batch_major:
        out = out.transpose(1, 2).reshape(bsz, tgt_len, embed_dim)
    else:
        out = out.permute(2, 0, 1, 3).reshape(tgt_len, bsz, embed_dim)
    out = linear(out, out_proj_weight, out_proj_bias)
    if not need_weights:
        return out, None
    if average_attn_weights:
        weights = weights.mean(1)
    return out, weights
