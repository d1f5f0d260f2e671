"""Linear maps: linear, bilinear, convolutions (1-3d, transposed), unfold/fold,
pixel (un)shuffle, embedding and one_hot."""

import ember_tensor as E
from ember_tensor import nn_ops as K
from ember_tensor.nn_ops import embedding_sparse

from ._util import check_tensor

__all__ = ["linear", "bilinear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
           "conv_transpose3d", "conv_tbc", "unfold", "fold", "pixel_shuffle", "pixel_unshuffle",
           "channel_shuffle", "native_channel_shuffle", "embedding", "one_hot"]


def linear(input, weight, bias=None):
    """input @ weight.T + bias: (*, in) -> (*, out), one GEMM and one graph node.

    >>> import ember_tensor as torch
    >>> linear(torch.ones(2, 3), torch.ones(4, 3)).shape
    torch.Size([2, 4])
    """
    check_tensor(input, "linear")
    return K.linear(input, weight, bias)


def bilinear(input1, input2, weight, bias=None):
    """y_k = x1^T W_k x2 + b_k: (*, in1), (*, in2), W (out, in1, in2) -> (*, out)."""
    if input1.shape[:-1] != input2.shape[:-1]:
        raise RuntimeError("bilinear(): input batch dimensions do not match: got "
                           f"{list(input1.shape[:-1])} and {list(input2.shape[:-1])}")
    if weight.shape[1] != input1.shape[-1] or weight.shape[2] != input2.shape[-1]:
        raise RuntimeError(f"bilinear(): input size does not match weight size: got {input1.shape[-1]} "
                           f"and {input2.shape[-1]} but expected {weight.shape[1]} and {weight.shape[2]}")
    batch = input1.shape[:-1]
    x1 = input1.reshape(-1, input1.shape[-1])
    x2 = input2.reshape(-1, input2.shape[-1])
    out_features, in1, in2 = weight.shape
    # (B, in1) @ (in1, out*in2) -> (B, out, in2), then contract with x2.
    left = x1.matmul(weight.permute(1, 0, 2).reshape(in1, out_features * in2)).reshape(-1, out_features, in2)
    out = (left * x2.unsqueeze(1)).sum(-1)
    if bias is not None:
        out = out + bias
    return out.reshape(tuple(batch) + (out_features,))


def _same_padding(nd, weight, dilation, stride):
    if any(s != 1 for s in ((stride,) * nd if isinstance(stride, int) else stride)):
        raise RuntimeError("padding='same' is not supported for strided convolutions")
    dilation = (dilation,) * nd if isinstance(dilation, int) else tuple(dilation)
    total = [d * (k - 1) for d, k in zip(dilation, weight.shape[2:])]
    return [t // 2 for t in total], [t - t // 2 for t in total]


def _conv(nd, input, weight, bias, stride, padding, dilation, groups):
    check_tensor(input, f"conv{nd}d")
    unbatched = input.dim() == nd + 1
    if unbatched:
        input = input.unsqueeze(0)
    elif input.dim() != nd + 2:
        raise RuntimeError(f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to conv{nd}d, "
                           f"but got input of size: {list(input.shape)}")
    if isinstance(padding, str):
        if padding == "valid":
            padding = 0
        elif padding == "same":
            left, right = _same_padding(nd, weight, dilation, stride)
            if left != right:
                # Asymmetric 'same' padding: pad the extra element on the right explicitly.
                pads = []
                for lo, hi in zip(reversed(left), reversed(right)):
                    pads += [0, hi - lo]
                input = K.constant_pad_nd(input, pads, 0.0)
            padding = left
        else:
            raise ValueError(f"Invalid padding string '{padding}', should be one of ['valid', 'same']")
    out = K.convolution(input, weight, bias, stride, padding, dilation, False, 0, groups)
    return out.squeeze(0) if unbatched else out


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """1-d convolution of (N, C, L) or (C, L) by weight (O, C/groups, K)."""
    return _conv(1, input, weight, bias, stride, padding, dilation, groups)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """2-d convolution of (N, C, H, W) or (C, H, W) by weight (O, C/groups, kH, kW).

    >>> import ember_tensor as torch
    >>> conv2d(torch.ones(1, 1, 3, 3), torch.ones(1, 1, 2, 2)).tolist()
    [[[[4.0, 4.0], [4.0, 4.0]]]]
    """
    return _conv(2, input, weight, bias, stride, padding, dilation, groups)


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """3-d convolution of (N, C, D, H, W) or (C, D, H, W) by weight (O, C/groups, kD, kH, kW)."""
    return _conv(3, input, weight, bias, stride, padding, dilation, groups)


def _conv_transpose(nd, input, weight, bias, stride, padding, output_padding, groups, dilation):
    check_tensor(input, f"conv_transpose{nd}d")
    unbatched = input.dim() == nd + 1
    if unbatched:
        input = input.unsqueeze(0)
    elif input.dim() != nd + 2:
        raise RuntimeError(f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to "
                           f"conv_transpose{nd}d, but got input of size: {list(input.shape)}")
    out = K.convolution(input, weight, bias, stride, padding, dilation, True, output_padding, groups)
    return out.squeeze(0) if unbatched else out


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """Transposed 1-d convolution (the gradient of conv1d w.r.t. its input); weight (C, O/groups, K)."""
    return _conv_transpose(1, input, weight, bias, stride, padding, output_padding, groups, dilation)


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """Transposed 2-d convolution; weight (C, O/groups, kH, kW)."""
    return _conv_transpose(2, input, weight, bias, stride, padding, output_padding, groups, dilation)


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """Transposed 3-d convolution; weight (C, O/groups, kD, kH, kW)."""
    return _conv_transpose(3, input, weight, bias, stride, padding, output_padding, groups, dilation)


def conv_tbc(input, weight, bias, pad=0):
    """1-d convolution in time-batch-channel layout: input (T, B, C_in), weight
    (K, C_in, C_out), bias (C_out,) -> (T', B, C_out)."""
    if input.dim() != 3 or weight.dim() != 3:
        raise RuntimeError("Input must have 3 dims: time, batch, in_channel" if input.dim() != 3 else
                           "Weight tensor must have 3 dims: kernel_width, in_channels, out_channels.")
    out = _conv(1, input.permute(1, 2, 0), weight.permute(2, 1, 0), bias, 1, pad, 1, 1)
    return out.permute(2, 0, 1)


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """Sliding blocks of (N, C, H, W) as columns (N, C*kh*kw, L) (im2col)."""
    if input.dim() == 3:
        return K.im2col(input.unsqueeze(0), kernel_size, dilation, padding, stride).squeeze(0)
    if input.dim() != 4:
        raise NotImplementedError(f"Input Error: Only 3D or 4D input Tensors are supported (got {input.dim()}D)")
    return K.im2col(input, kernel_size, dilation, padding, stride)


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """Sum columns (N, C*kh*kw, L) into (N, C, *output_size) (col2im, unfold's adjoint)."""
    if input.dim() == 2:
        return K.col2im(input.unsqueeze(0), output_size, kernel_size, dilation, padding, stride).squeeze(0)
    if input.dim() != 3:
        raise NotImplementedError(f"Input Error: Only unbatched (2D) or batched (3D) input Tensors are "
                                  f"supported (got {input.dim()}D)")
    return K.col2im(input, output_size, kernel_size, dilation, padding, stride)


def pixel_shuffle(input, upscale_factor):
    """(*, C*r^2, H, W) -> (*, C, H*r, W*r)."""
    r = upscale_factor
    if input.dim() < 3:
        raise RuntimeError(f"pixel_shuffle expects input to have at least 3 dimensions, but got input with "
                           f"{input.dim()} dimension(s)")
    *batch, c, h, w = input.shape
    if c % (r * r):
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be divisible by the "
                           f"square of upscale_factor, but input.size(-3)={c} is not divisible by {r * r}")
    nb = len(batch)
    x = input.reshape(tuple(batch) + (c // (r * r), r, r, h, w))
    x = x.permute(tuple(range(nb)) + (nb, nb + 3, nb + 1, nb + 4, nb + 2))
    return x.reshape(tuple(batch) + (c // (r * r), h * r, w * r))


def pixel_unshuffle(input, downscale_factor):
    """(*, C, H*r, W*r) -> (*, C*r^2, H, W)."""
    r = downscale_factor
    if input.dim() < 3:
        raise RuntimeError(f"pixel_unshuffle expects input to have at least 3 dimensions, but got input "
                           f"with {input.dim()} dimension(s)")
    *batch, c, h, w = input.shape
    if h % r or w % r:
        raise RuntimeError(f"pixel_unshuffle expects height and width to be divisible by downscale_factor, "
                           f"but got {h}x{w} and downscale_factor={r}")
    nb = len(batch)
    x = input.reshape(tuple(batch) + (c, h // r, r, w // r, r))
    x = x.permute(tuple(range(nb)) + (nb, nb + 2, nb + 4, nb + 1, nb + 3))
    return x.reshape(tuple(batch) + (c * r * r, h // r, w // r))


def channel_shuffle(input, groups):
    """Interleave the channels (dim 1) of `groups` groups: (N, g*k, *) read as (N, g, k, *),
    transposed to (N, k, g, *)."""
    if input.dim() < 3:
        raise RuntimeError(f"channel_shuffle expects input to have at least 3 dimensions, but got input with "
                           f"{input.dim()} dimension(s)")
    if groups <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of groups:{groups}")
    n, c = input.shape[:2]
    if c % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {c} channels and {groups} groups.")
    rest = tuple(input.shape[2:])
    return input.reshape((n, groups, c // groups) + rest).transpose(1, 2).reshape((n, c) + rest)


native_channel_shuffle = channel_shuffle


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
              sparse=False):
    """Rows of `weight` looked up by integer `input`; the `padding_idx` row gets no gradient."""
    if padding_idx is not None:
        if padding_idx > 0 and padding_idx >= weight.shape[0]:
            raise AssertionError("Padding_idx must be within num_embeddings")
        if padding_idx < 0:
            if padding_idx < -weight.shape[0]:
                raise AssertionError("Padding_idx must be within num_embeddings")
            padding_idx = weight.shape[0] + padding_idx
    if max_norm is not None:
        renorm_rows_(weight, input, max_norm, norm_type)
    if sparse:  # same lookup; its weight gradient is a sparse COO tensor
        return embedding_sparse(weight, input, padding_idx, scale_grad_by_freq)
    return K.embedding(weight, input, padding_idx, scale_grad_by_freq)


def renorm_rows_(weight, input, max_norm, norm_type):
    # In place and outside autograd, as PyTorch's embedding_renorm_.
    import numpy as np
    from ember_autograd import no_grad
    with no_grad():
        rows = np.unique(np.asarray(input).reshape(-1))
        w = weight.detach()
        for r in rows.tolist():
            norm = float(w[r].abs().pow(norm_type).sum()) ** (1.0 / norm_type)
            if norm > max_norm:
                w[r] = w[r] * (max_norm / (norm + 1e-7))


def one_hot(tensor, num_classes=-1):
    """int64 one-hot encoding with a new last dim of `num_classes` (inferred when -1)."""
    return K.one_hot(tensor, num_classes)
