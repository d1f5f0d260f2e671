"""The nn kernels: softmax, layer norm, linear, convolution, pooling, embedding and losses.

The entries call `ember_tensor.nn_ops`, the kernels ember-nn's functional API is one call
into (ember-tensor cannot import ember-nn, the layer above it); cross_entropy and
mse_loss are written the way `ember_nn.functional` composes them (log_softmax then
nll_loss; the mean of the squared difference).
"""
import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from ember_tensor import nn_ops

from .info import FamilyOpInfo, O, S, floats, ints

__all__ = ["NN_DB"]


# --- references ---------------------------------------------------------------------------


def _ref_softmax(x, dim):
    e = np.exp(x - np.max(x, axis=dim, keepdims=True)) if x.size else x
    return e / np.sum(e, axis=dim, keepdims=True)


def _ref_log_softmax(x, dim):
    if not x.size:
        return x
    shifted = x - np.max(x, axis=dim, keepdims=True)
    return shifted - np.log(np.sum(np.exp(shifted), axis=dim, keepdims=True))


def _ref_layer_norm(x, weight, bias, normalized_shape, eps):
    axes = tuple(range(x.ndim - len(normalized_shape), x.ndim))
    mean = x.mean(axis=axes, keepdims=True) if x.size else x
    var = x.var(axis=axes, keepdims=True) if x.size else x
    y = (x - mean) / np.sqrt(var + eps)
    return y * (1 if weight is None else weight) + (0 if bias is None else bias)


def _ref_linear(x, weight, bias):
    return x @ weight.T + (0 if bias is None else bias)


def _windows(x, kernel, stride, dilation, out):
    """(N, C, *out, *kernel) views of x's windows: the window at output position o starts
    at o * stride and takes every dilation-th element."""
    nd = len(kernel)
    spans = tuple(d * (k - 1) + 1 for k, d in zip(kernel, dilation))
    w = sliding_window_view(x, spans, axis=tuple(range(2, 2 + nd)))
    w = w[(Ellipsis,) + tuple(slice(None, None, d) for d in dilation)]
    return w[(slice(None), slice(None)) + tuple(slice(0, o * s, s) for o, s in zip(out, stride))]


def _ref_conv(x, weight, bias, stride, padding, dilation, groups):
    nd = weight.ndim - 2
    kernel = weight.shape[2:]
    x = np.pad(x, [(0, 0), (0, 0)] + [(p, p) for p in padding])
    out = [(n - d * (k - 1) - 1) // s + 1 for n, k, s, d in zip(x.shape[2:], kernel, stride, dilation)]
    win = _windows(x, kernel, stride, dilation, out)
    cin, cout = x.shape[1] // groups, weight.shape[0] // groups
    letters = "hwd"[:nd]
    spec = f"nc{letters}{letters.upper()},oc{letters.upper()}->no{letters}"
    y = np.concatenate([np.einsum(spec, win[:, g * cin:(g + 1) * cin], weight[g * cout:(g + 1) * cout])
                        for g in range(groups)], axis=1)
    return y if bias is None else y + bias.reshape((-1,) + (1,) * nd)


def _pool_size(n, k, s, p, d, ceil_mode):
    # PyTorch's pooling_output_shape: a window that would start in the right padding is dropped.
    span = n + 2 * p - d * (k - 1) - 1
    o = (span + (s - 1 if ceil_mode else 0)) // s + 1
    return o - 1 if ceil_mode and (o - 1) * s >= n + p else o


def _ref_max_pool2d(x, kernel, stride, padding, dilation, ceil_mode):
    (kh, kw), (sh, sw), (ph, pw), (dh, dw) = kernel, stride, padding, dilation
    n, c, h, w = x.shape
    out = (_pool_size(h, kh, sh, ph, dh, ceil_mode), _pool_size(w, kw, sw, pw, dw, ceil_mode))
    # Pad by enough -inf on the right for a ceil_mode window that runs past the input.
    xp = np.pad(x, [(0, 0), (0, 0), (ph, ph + sh + dh * kh), (pw, pw + sw + dw * kw)], constant_values=-np.inf)
    win = _windows(xp, kernel, stride, dilation, out).reshape(n, c, *out, kh * kw)
    arg = np.argmax(win, axis=-1)  # the first maximum, as PyTorch's kernel keeps
    rows = np.arange(out[0]).reshape(-1, 1) * sh - ph + (arg // kw) * dh
    cols = np.arange(out[1]) * sw - pw + (arg % kw) * dw
    return np.max(win, axis=-1), rows * w + cols


def _ref_avg_pool2d(x, kernel, stride, padding, ceil_mode=False, count_include_pad=True, divisor_override=None):
    h, w = x.shape[2:]
    out = tuple(_pool_size(n, k, s, p, 1, ceil_mode) for n, k, s, p in zip((h, w), kernel, stride, padding))
    # Zeros past the right padding, for a ceil_mode window that runs over it.
    pads = [(0, 0), (0, 0)] + [(p, p + s + k) for p, s, k in zip(padding, stride, kernel)]

    def window_sums(a, value=0):
        return _windows(np.pad(a, pads, constant_values=value), kernel, stride, (1, 1), out).sum(axis=(-2, -1))
    sums = window_sums(x)
    if divisor_override:
        return sums / divisor_override
    # PyTorch divides by the window clipped to the padded input (count_include_pad) or
    # to the input itself: counted here as window sums of ones.
    ones = np.ones((1, 1, h, w))
    if count_include_pad:
        ones = np.pad(ones, [(0, 0), (0, 0)] + [(p, p) for p in padding], constant_values=1)
        pads = [(0, 0), (0, 0)] + [(0, s + k) for s, k in zip(stride, kernel)]
    return sums / window_sums(ones)


def _ref_embedding(weight, indices):
    return weight[indices]


def _ref_nll_loss(logp, target, weight=None, reduction="mean", ignore_index=-100):
    classes = logp.shape[0] if logp.ndim == 1 else logp.shape[1]
    w = np.ones(classes) if weight is None else weight
    if logp.ndim == 1:  # (C,) with a 0-d target
        logp, target = logp[None], target[None]
    keep = target != ignore_index
    safe = np.where(keep, target, 0)
    picked = np.take_along_axis(logp, safe[:, None], axis=1)[:, 0]
    wt = w[safe] * keep
    losses = -picked * wt
    if reduction == "none":
        return losses.reshape(target.shape) if target.ndim else losses[0]
    return losses.sum() if reduction == "sum" else losses.sum() / wt.sum()


def _ref_cross_entropy(x, target, weight=None, reduction="mean", ignore_index=-100):
    return _ref_nll_loss(_ref_log_softmax(x, 0 if x.ndim == 1 else 1), target, weight, reduction, ignore_index)


def _ref_mse_loss(x, y, reduction="mean"):
    d = (x - y) ** 2
    return d if reduction == "none" else d.sum() if reduction == "sum" else d.mean()


# --- the ops as ember-nn calls them -------------------------------------------------------


def _layer_norm(x, weight, bias, normalized_shape, eps):
    return nn_ops.native_layer_norm(x, normalized_shape, weight, bias, eps)[0]


def _conv(x, weight, bias, stride, padding, dilation, groups):
    return nn_ops.convolution(x, weight, bias, stride, padding, dilation, False, 0, groups)


def _max_pool2d(x, kernel, stride, padding, dilation, ceil_mode):
    return nn_ops.max_pool_with_indices(x, kernel, stride, padding, dilation, ceil_mode)


def _avg_pool2d(x, kernel, stride, padding, ceil_mode=False, count_include_pad=True, divisor_override=None):
    return nn_ops.avg_pool(x, kernel, stride, padding, ceil_mode, count_include_pad, divisor_override)


def _nll_loss(logp, target, weight=None, reduction="mean", ignore_index=-100):
    return nn_ops.nll_loss(logp, target, weight, reduction, ignore_index)


def _cross_entropy(x, target, weight=None, reduction="mean", ignore_index=-100):
    logp = nn_ops.log_softmax(x, 0 if x.dim() == 1 else 1)
    return nn_ops.nll_loss(logp, target, weight, reduction, ignore_index)


def _mse_loss(x, y, reduction="mean"):
    d = x - y
    d = d * d
    return d if reduction == "none" else d.sum() if reduction == "sum" else d.mean()


# --- samples ------------------------------------------------------------------------------


def _softmax_samples(op, dtype, rng):
    def v(*shape):
        return floats(shape, dtype, rng, -4, 4)
    yield S(O(v(3, 5)), kwargs={"dim": 1}, name="rows")
    yield S(O(v(2, 3, 4)), kwargs={"dim": 0}, name="3-d, dim 0")
    yield S(O(v(4, 3), "transposed"), kwargs={"dim": -1}, name="transposed")
    yield S(O(v(2, 3, 4), "stepped"), kwargs={"dim": 1}, name="stepped")
    yield S(O(v()), kwargs={"dim": 0}, name="0-d")
    yield S(O(v(0, 3)), kwargs={"dim": 1}, name="empty")
    yield S(O(v(2, 300)), kwargs={"dim": 1}, name="long rows, beyond a CUDA block")
    yield S(O(np.array([[-np.inf, 1, 2], [-np.inf, -np.inf, -np.inf], [np.inf, 0, 1]], v().dtype)),
            kwargs={"dim": 1}, name="-inf, a row of -inf, +inf")


def _layer_norm_samples(op, dtype, rng):
    def v(*shape):
        return floats(shape, dtype, rng)
    yield S(O(v(3, 4)), (O(v(4)), O(v(4))), {"normalized_shape": (4,), "eps": 1e-5}, name="rows")
    yield S(O(v(2, 3, 4)), (O(v(3, 4), "transposed"), O(v(3, 4))), {"normalized_shape": (3, 4), "eps": 1e-3},
            name="two dims, transposed weight")
    yield S(O(v(4, 5), "transposed"), (None, None), {"normalized_shape": (5,), "eps": 1e-5},
            name="transposed, no affine")
    yield S(O(v(0, 4)), (O(v(4)), O(v(4))), {"normalized_shape": (4,), "eps": 1e-5}, name="empty")
    yield S(O(v(2, 3, 4)), (O(v(2, 3, 4)), None), {"normalized_shape": (2, 3, 4), "eps": 1e-5},
            name="every dim, weight only")


def _linear_samples(op, dtype, rng):
    def v(*shape):
        return floats(shape, dtype, rng)
    yield S(O(v(3, 4)), (O(v(5, 4)), O(v(5))), name="matrix")
    yield S(O(v(2, 3, 4)), (O(v(5, 4), "transposed"), O(v(5))), name="batched, transposed weight")
    yield S(O(v(3, 4), "stepped"), (O(v(2, 4)), None), name="stepped, no bias")
    yield S(O(v(4)), (O(v(2, 4)), O(v(2), "stepped")), name="vector, stepped bias")
    yield S(O(v(0, 4)), (O(v(5, 4)), O(v(5))), name="empty")


def _conv_kwargs(nd, stride=1, padding=0, dilation=1, groups=1):
    return {"stride": (stride,) * nd, "padding": (padding,) * nd, "dilation": (dilation,) * nd, "groups": groups}


def _conv1d_samples(op, dtype, rng):
    def v(*shape):
        return floats(shape, dtype, rng)
    yield S(O(v(2, 3, 7)), (O(v(4, 3, 3)), O(v(4))), _conv_kwargs(1), name="plain")
    yield S(O(v(2, 4, 7)), (O(v(6, 2, 3)), O(v(6))), _conv_kwargs(1, stride=2, padding=1, groups=2),
            name="stride, padding, groups")
    yield S(O(v(1, 3, 8), "transposed"), (O(v(2, 3, 2)), None), _conv_kwargs(1, dilation=2, padding=2),
            name="transposed, dilation")
    yield S(O(v(0, 3, 5)), (O(v(2, 3, 3)), O(v(2))), _conv_kwargs(1), name="empty batch")
    yield S(O(v(1, 3, 6)), (O(v(3, 1, 2)), O(v(3))), _conv_kwargs(1, stride=3, groups=3), name="depthwise")


def _conv2d_samples(op, dtype, rng):
    def v(*shape):
        return floats(shape, dtype, rng)
    yield S(O(v(1, 4, 5, 5)), (O(v(4, 2, 3, 3)), O(v(4))), _conv_kwargs(2, stride=2, padding=1, groups=2),
            name="stride, padding, groups")
    yield S(O(v(2, 3, 4, 4), "stepped"), (O(v(2, 3, 2, 2), "transposed"), None), _conv_kwargs(2),
            name="stepped input, transposed weight")
    yield S(O(v(1, 2, 6, 5)), (O(v(3, 2, 2, 3)), O(v(3))), _conv_kwargs(2, padding=1, dilation=2),
            name="dilation, rectangular")
    yield S(O(v(0, 2, 4, 4)), (O(v(2, 2, 3, 3)), O(v(2))), _conv_kwargs(2), name="empty batch")
    yield S(O(v(1, 2, 5, 6)), (O(v(2, 2, 2, 3)), None),
            {"stride": (2, 1), "padding": (1, 0), "dilation": (1, 2), "groups": 1}, name="per-dim parameters")


def _pool_kwargs(kernel, stride, padding=0, **kw):
    return {"kernel": (kernel, kernel), "stride": (stride, stride), "padding": (padding, padding), **kw}


def _max_pool2d_samples(op, dtype, rng):
    def v(*shape):
        return floats(shape, dtype, rng)
    yield S(O(v(1, 2, 4, 4)), kwargs=_pool_kwargs(2, 2, dilation=(1, 1), ceil_mode=False), name="2x2")
    yield S(O(v(2, 1, 5, 5)), kwargs=_pool_kwargs(3, 2, 1, dilation=(1, 1), ceil_mode=False), name="padding")
    yield S(O(v(1, 2, 5, 6), "transposed"), kwargs=_pool_kwargs(2, 2, dilation=(1, 1), ceil_mode=True),
            name="transposed, ceil_mode")
    yield S(O(v(1, 1, 6, 6), "stepped"), kwargs=_pool_kwargs(2, 1, dilation=(2, 2), ceil_mode=False),
            name="stepped, dilation")
    yield S(O(v(0, 2, 4, 4)), kwargs=_pool_kwargs(2, 2, dilation=(1, 1), ceil_mode=False), name="empty batch")
    yield S(O(v(1, 1, 7, 6)), kwargs=_pool_kwargs(3, 2, 1, dilation=(2, 1), ceil_mode=True),
            name="padding, dilation, ceil_mode")
    # NaN wins its window (PyTorch's max propagates it); a window of -inf keeps its first.
    extremal = np.array([[[[1, np.nan, -np.inf, -np.inf], [3, 2, -np.inf, -np.inf]]]], v().dtype)
    yield S(O(extremal), kwargs=_pool_kwargs(2, 2, dilation=(1, 1), ceil_mode=False), name="NaN, -inf")


def _avg_pool2d_samples(op, dtype, rng):
    def v(*shape):
        return floats(shape, dtype, rng)
    yield S(O(v(1, 2, 4, 4)), kwargs=_pool_kwargs(2, 1, 1), name="padding counted")
    yield S(O(v(2, 1, 5, 5), "transposed"), kwargs=_pool_kwargs(3, 2, 1, count_include_pad=False),
            name="transposed, padding not counted")
    yield S(O(v(1, 1, 4, 6), "stepped"), kwargs=_pool_kwargs(2, 2, divisor_override=3), name="stepped, divisor")
    yield S(O(v(0, 2, 4, 4)), kwargs=_pool_kwargs(2, 2), name="empty batch")
    yield S(O(v(1, 2, 5, 6)), kwargs=_pool_kwargs(3, 2, 1, ceil_mode=True), name="ceil_mode, padding counted")
    yield S(O(v(1, 1, 5, 5)), kwargs=_pool_kwargs(2, 2, 1, ceil_mode=True, count_include_pad=False),
            name="ceil_mode, padding not counted")


def _embedding_samples(op, dtype, rng):
    yield S(O(floats((5, 3), dtype, rng)), (O(ints((2, 3), 5, rng)),), name="2-d indices")
    yield S(O(floats((5, 3), dtype, rng), "transposed"), (O(ints((4,), 5, rng), "stepped"),),
            name="transposed weight, stepped indices")
    yield S(O(floats((5, 3), dtype, rng)), (O(np.array(2, np.int64)),), name="0-d index")
    yield S(O(floats((5, 3), dtype, rng)), (O(ints((0,), 5, rng)),), name="empty")


def _nll_samples(log):
    def samples(op, dtype, rng):
        def x(*shape):
            v = floats(shape, dtype, rng, -3, 3)
            return _ref_log_softmax(v.astype(np.float64), 0 if v.ndim == 1 else 1).astype(v.dtype) if log else v
        yield S(O(x(4, 3)), (O(ints((4,), 3, rng)),), name="mean")
        yield S(O(x(4, 3), "transposed"), (O(ints((4,), 3, rng)), O(floats((3,), dtype, rng, 0.5, 2))),
                {"reduction": "sum"}, name="transposed, weight, sum")
        yield S(O(x(5, 3)), (O(np.array([0, 1, 2, 1, 0])), O(floats((3,), dtype, rng, 0.5, 2))),
                {"ignore_index": 1}, name="weight, ignore_index")
        yield S(O(x(2, 3, 4), "stepped"), (O(ints((2, 4), 3, rng)),), {"reduction": "none"},
                name="spatial, stepped, none")
        yield S(O(x(3)), (O(np.array(2, np.int64)),), name="unbatched, 0-d target")
        yield S(O(x(3, 4)), (O(np.array([-100, 2, -100])), O(floats((4,), dtype, rng, 0.5, 2))),
                {"reduction": "none"}, name="default ignore_index, none")
        yield S(O(x(2, 4, 2, 2)), (O(ints((2, 2, 2), 4, rng)), O(floats((4,), dtype, rng, 0.5, 2))),
                name="2-d spatial, weighted mean")
    return samples


def _mse_samples(op, dtype, rng):
    def v(*shape):
        return floats(shape, dtype, rng)
    yield S(O(v(3, 4)), (O(v(3, 4)),), name="mean")
    yield S(O(v(3, 4), "transposed"), (O(v(3, 4), "stepped"),), {"reduction": "sum"}, name="non-contiguous, sum")
    yield S(O(v(2, 3)), (O(v(2, 3)),), {"reduction": "none"}, name="none")
    yield S(O(v()), (O(v()),), name="0-d")
    yield S(O(v(0, 3)), (O(v(0, 3)),), {"reduction": "sum"}, name="empty")


NN_DB = [
    FamilyOpInfo("softmax", "nn", nn_ops.softmax, _ref_softmax, sample_inputs_func=_softmax_samples),
    FamilyOpInfo("log_softmax", "nn", nn_ops.log_softmax, _ref_log_softmax, sample_inputs_func=_softmax_samples),
    FamilyOpInfo("layer_norm", "nn", _layer_norm, _ref_layer_norm, sample_inputs_func=_layer_norm_samples),
    FamilyOpInfo("linear", "nn", nn_ops.linear, _ref_linear, sample_inputs_func=_linear_samples),
    FamilyOpInfo("conv1d", "nn", _conv, _ref_conv, sample_inputs_func=_conv1d_samples),
    FamilyOpInfo("conv2d", "nn", _conv, _ref_conv, sample_inputs_func=_conv2d_samples),
    FamilyOpInfo("max_pool2d", "nn", _max_pool2d, _ref_max_pool2d, sample_inputs_func=_max_pool2d_samples),
    FamilyOpInfo("avg_pool2d", "nn", _avg_pool2d, _ref_avg_pool2d, sample_inputs_func=_avg_pool2d_samples),
    # Reads back one flag: are all indices in range? (the CPU's IndexError, raised on CUDA too)
    FamilyOpInfo("embedding", "nn", nn_ops.embedding, _ref_embedding, sample_inputs_func=_embedding_samples,
                 reads_scalars=True),
    # The losses read back one flag too: is every class index in range?
    FamilyOpInfo("nll_loss", "nn", _nll_loss, _ref_nll_loss, sample_inputs_func=_nll_samples(log=True),
                 reads_scalars=True),
    FamilyOpInfo("cross_entropy", "nn", _cross_entropy, _ref_cross_entropy,
                 sample_inputs_func=_nll_samples(log=False), reads_scalars=True),
    FamilyOpInfo("mse_loss", "nn", _mse_loss, _ref_mse_loss, sample_inputs_func=_mse_samples),
]
