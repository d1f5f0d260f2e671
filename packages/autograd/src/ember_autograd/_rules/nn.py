"""Derivatives of the nn kernels (`ember_tensor._ops.nn`).

Linear kernels come in adjoint pairs, and each one's derivative is its partner:
convolution <-> convolution_backward_input/_weight, max_pool_backward <->
take_along_planes, avg_pool <-> avg_pool_backward, im2col <-> col2im,
embedding <-> embedding_backward, nll_loss <-> nll_loss_backward. So their gradients
are themselves differentiable (double backward). The softmax/log_softmax and
normalisation rules use their fused backward kernels unless a graph of the gradient is
wanted (create_graph), when they switch to the same formula in differentiable ops.
"""
import ember_tensor as E
from ember_tensor import nn_ops as K

from ._registry import RESULT, composite, derivative, not_differentiable

# -- convolution --------------------------------------------------------------------------


def _conv_save(input, weight, bias=None, stride=1, padding=0, dilation=1, transposed=False,
               output_padding=0, groups=1):
    return (input, weight, bias is not None, stride, padding, dilation, transposed, groups)


def _conv_name(input, weight, *args, **kwargs):
    return "ConvolutionBackward0"


@derivative("convolution", inputs=("input", "weight", "bias"), save=_conv_save, name=_conv_name)
def convolution(ctx, grad, input, weight, has_bias, stride, padding, dilation, transposed, groups):
    needs = ctx.needs_input_grad
    grad_input = grad_weight = grad_bias = None
    if transposed:
        # A transposed convolution is convolution_backward_input; its adjoints swap roles.
        if needs[0]:
            grad_input = K.convolution(grad, weight, None, stride, padding, dilation, False, 0, groups)
        if needs[1]:
            grad_weight = K.convolution_backward_weight(input, grad, tuple(weight.shape), stride,
                                                                padding, dilation, groups)
    else:
        if needs[0]:
            grad_input = K.convolution_backward_input(grad, weight, tuple(input.shape), stride,
                                                              padding, dilation, groups)
        if needs[1]:
            grad_weight = K.convolution_backward_weight(grad, input, tuple(weight.shape), stride,
                                                                padding, dilation, groups)
    if has_bias and needs[2]:
        # Over each (sample, channel) row of positions first, then over the batch: a sum
        # over dims (0, 2, 3) at once has its kept dim in the middle and is first copied
        # into (channel, rest) order, ~3x slower (64->64 at 16x16 batch 64: 495 us
        # against 182; PyTorch 147).
        positions = list(range(2, grad.dim()))
        grad_bias = (grad.sum(positions) if positions else grad).sum(0)
    return grad_input, grad_weight, grad_bias


@derivative("convolution_backward_input", inputs=("grad_output", "weight"),
            save=lambda grad_output, weight, input_size, stride=1, padding=0, dilation=1, groups=1:
            (grad_output, weight, stride, padding, dilation, groups))
def convolution_backward_input(ctx, a, grad_output, weight, stride, padding, dilation, groups):
    needs = ctx.needs_input_grad
    # <a, B_in(g, w)> = <conv(a, w), g> = <w, B_w(g, a)>
    return (K.convolution(a, weight, None, stride, padding, dilation, False, 0, groups) if needs[0] else None,
            K.convolution_backward_weight(grad_output, a, tuple(weight.shape), stride, padding,
                                                  dilation, groups) if needs[1] else None)


@derivative("convolution_backward_weight", inputs=("grad_output", "input"),
            save=lambda grad_output, input, weight_size, stride=1, padding=0, dilation=1, groups=1:
            (grad_output, input, stride, padding, dilation, groups))
def convolution_backward_weight(ctx, a, grad_output, input, stride, padding, dilation, groups):
    needs = ctx.needs_input_grad
    # <a, B_w(g, x)> = <conv(x, a), g> = <x, B_in(g, a)>
    return (K.convolution(input, a, None, stride, padding, dilation, False, 0, groups) if needs[0] else None,
            K.convolution_backward_input(grad_output, a, tuple(input.shape), stride, padding,
                                                 dilation, groups) if needs[1] else None)


@derivative("linear", inputs=("input", "weight", "bias"), save=lambda input, weight, bias=None: (input, weight))
def linear(ctx, grad, input, weight):
    needs = ctx.needs_input_grad
    out_features = weight.shape[0]
    rows = grad.reshape(-1, out_features)
    # From the (rows, out) matrix: the product matmul would fold a batched grad into, so a
    # strided grad (a batch_first attention's transposed output) is copied once, not twice.
    grad_input = rows.matmul(weight).reshape(input.shape) if needs[0] else None
    # grad^T @ x: the (out, in) gradient comes out contiguous, ready to accumulate.
    grad_weight = rows.t().matmul(input.reshape(-1, input.shape[-1])) if needs[1] else None
    grad_bias = _column_sums(rows) if needs[2] else None
    return grad_input, grad_weight, grad_bias


def _column_sums(rows):
    """rows.sum(0) of a (rows, out) gradient; for float32/float64 as ones @ rows, one BLAS
    GEMV, which reads the rows once at the speed of the products around it (1024 x 256
    float32: 12 us against the column-sum kernel's 47 us; a Transformer step has four)."""
    if rows.dtype in (E.float32, E.float64):
        return rows.new_ones(rows.shape[0]).matmul(rows)
    return rows.sum(0)


# -- pooling ------------------------------------------------------------------------------

def _with_indices(ctx, grads, input_shape, indices):
    grad = grads[0]
    if grad is None:
        return None
    return K.max_pool_backward(grad, indices, input_shape)


@derivative("max_pool_with_indices", name="MaxPoolWithIndicesBackward0",
            save=lambda input, *args, **kwargs: (tuple(input.shape), RESULT[1]))
def max_pool_with_indices(ctx, grads, input_shape, indices):
    return _with_indices(ctx, grads, input_shape, indices)


@derivative("adaptive_max_pool", name="AdaptiveMaxPoolBackward0",
            save=lambda input, output_size: (tuple(input.shape), RESULT[1]))
def adaptive_max_pool(ctx, grads, input_shape, indices):
    return _with_indices(ctx, grads, input_shape, indices)


@derivative("max_pool_backward", inputs=("grad_output",),
            save=lambda grad_output, indices, input_size: (indices,))
def max_pool_backward(ctx, a, indices):
    return K.take_along_planes(a, indices)


@derivative("take_along_planes", save=lambda input, indices: (tuple(input.shape), indices))
def take_along_planes(ctx, grad, input_shape, indices):
    return K.max_pool_backward(grad, indices, input_shape)


@derivative("max_unpool", name="MaxUnpool2DBackward0", save=lambda input, indices, output_size: (indices,))
def max_unpool(ctx, grad, indices):
    return K.take_along_planes(grad, indices)


def _avg_params(kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
                divisor_override=None):
    return (kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)


@derivative("avg_pool", save=lambda input, *args, **kwargs: (tuple(input.shape), _avg_params(*args, **kwargs)))
def avg_pool(ctx, grad, input_shape, params):
    return K.avg_pool_backward(grad, input_shape, *params)


@derivative("avg_pool_backward", inputs=("grad_output",),
            save=lambda grad_output, input_size, *args, **kwargs: (_avg_params(*args, **kwargs),))
def avg_pool_backward(ctx, a, params):
    return K.avg_pool(a, *params)


# -- backward kernels PyTorch refuses under deterministic algorithms -----------------------
# ember-nn wraps the result of such an op (reflection padding, interpolate, adaptive
# average pooling, ...) in this mark: its gradient passes through unchanged, alerting
# first where PyTorch's backward kernel would (on CUDA), so the error comes when the
# backward runs, as PyTorch's does.

def _marked_node_name(input, caller):
    """PyTorch's node name for the op whose kernel `caller` is: reflection_pad2d_backward_cuda
    -> ReflectionPad2DBackward0, grid_sampler_2d_backward_cuda -> GridSampler2DBackward0."""
    op_name = caller.split("_backward")[0]
    words = [w[:-1] + "D" if w[-2:] in ("1d", "2d", "3d") else w for w in op_name.split("_")]
    return "".join(w[:1].upper() + w[1:] for w in words) + "Backward0"


@derivative("nondeterministic_backward", save=lambda input, caller: (caller,), name=_marked_node_name)
def nondeterministic_backward(ctx, grad, caller):
    K.alert_nondeterministic_backward(grad, caller)
    return grad


# -- normalisation ------------------------------------------------------------------------
# First-order backward runs the fused kernels. Under create_graph (grad mode on inside
# backward) the same formula is written in differentiable ops instead, so the gradient
# can be differentiated again (double backward, as PyTorch has for these layers).

def _create_graph():
    from .._grad_mode import is_grad_enabled
    return is_grad_enabled()


def _normalize_backward(grad, x, weight_view, dims, eps, training, invstd_const=None):
    """Differentiable (grad_input, grad_weight-before-sum terms, xhat) of y = xhat * w + b,
    xhat normalised over `dims` of x (batch statistics when `training`)."""
    if training:
        mean = x.mean(dims, keepdim=True)
        centred = x - mean
        invstd = ((centred * centred).mean(dims, keepdim=True) + eps).rsqrt()
    else:
        centred, invstd = x - invstd_const[0], invstd_const[1]
    xhat = centred * invstd
    gxhat = grad if weight_view is None else grad * weight_view
    if training:
        grad_input = invstd * (gxhat - gxhat.mean(dims, keepdim=True)
                               - xhat * (gxhat * xhat).mean(dims, keepdim=True))
    else:
        grad_input = gxhat * invstd
    return grad_input, xhat


def _channel_shape(x):
    return (1, -1) + (1,) * (x.dim() - 2)


@derivative("native_batch_norm", inputs=("input", "weight", "bias"), name="NativeBatchNormBackward0",
            save=lambda input, weight, bias, running_mean, running_var, training, momentum, eps:
            (input, weight, RESULT[1], RESULT[2], training, eps))
def native_batch_norm(ctx, grads, input, weight, mean, invstd, training, eps):
    grad = grads[0]
    if grad is None:
        return None, None, None
    if not _create_graph():
        return K.batch_norm_backward(grad, input, weight, mean, invstd, training)
    dims = [0] + list(range(2, input.dim()))
    shape = _channel_shape(input)
    w = weight.reshape(shape) if weight is not None else None
    const = (mean.reshape(shape), invstd.reshape(shape))
    grad_input, xhat = _normalize_backward(grad, input, w, dims, eps, training, const)
    return grad_input, (grad * xhat).sum(dims), grad.sum(dims)


@derivative("native_layer_norm", inputs=("input", "weight", "bias"), name="NativeLayerNormBackward0",
            save=lambda input, normalized_shape, weight, bias, eps:
            (input, tuple(normalized_shape), weight, RESULT[1], RESULT[2], eps))
def native_layer_norm(ctx, grads, input, normalized_shape, weight, mean, rstd, eps):
    grad = grads[0]
    if grad is None:
        return None, None, None
    if not _create_graph():
        return K.layer_norm_backward(grad, input, normalized_shape, mean, rstd, weight)
    k = len(normalized_shape)
    dims = list(range(input.dim() - k, input.dim()))
    lead = list(range(input.dim() - k))
    grad_input, xhat = _normalize_backward(grad, input, weight, dims, eps, True)
    grad_weight = (grad * xhat).sum(lead) if lead else grad * xhat
    return grad_input, grad_weight, grad.sum(lead) if lead else grad


@derivative("native_group_norm", inputs=("input", "weight", "bias"), name="NativeGroupNormBackward0",
            save=lambda input, weight, bias, num_groups, eps: (input, weight, RESULT[1], RESULT[2], num_groups, eps))
def native_group_norm(ctx, grads, input, weight, mean, rstd, num_groups, eps):
    grad = grads[0]
    if grad is None:
        return None, None, None
    if not _create_graph():
        return K.group_norm_backward(grad, input, mean, rstd, weight, num_groups)
    n, c = input.shape[:2]
    shape = _channel_shape(input)
    scaled = grad * weight.reshape(shape) if weight is not None else grad
    grouped = (n, num_groups, -1)
    grad_input, xhat = _normalize_backward(scaled.reshape(grouped), input.reshape(grouped), None, [2], eps, True)
    dims = [0] + list(range(2, input.dim()))
    xhat = xhat.reshape(input.shape)
    return grad_input.reshape(input.shape), (grad * xhat).sum(dims), grad.sum(dims)


def _not_differentiated_again(op_name):
    def backward(ctx, grads, *saved):
        raise RuntimeError(f"the derivative for '{op_name}' is not implemented: differentiate the "
                           "forward op with create_graph=True to get a differentiable gradient.")
    return backward


# The fused backward kernels only run when no graph is being built for the gradient.
for _name in ("batch_norm_backward", "layer_norm_backward", "group_norm_backward"):
    derivative(_name, inputs=("grad_output",))(_not_differentiated_again(_name))


# -- hardtanh (relu6) ---------------------------------------------------------------------

def _hardtanh_backward(ctx, grad, x, min_val, max_val):
    # PyTorch's hardtanh_backward: zero at and beyond the limits, so a NaN passes its gradient
    # on (as its CUDA kernel and its CPU scalar loop; its vectorised CPU loop zeroes NaN's).
    return E.where((x <= min_val) | (x >= max_val), 0.0, grad)


# The out-of-place form saves its input (its output may be changed in place afterwards);
# the in-place one its result, which sits on the same side of each limit as the input.
derivative("hardtanh", name="HardtanhBackward0",
           save=lambda input, min_val=-1.0, max_val=1.0: (input, min_val, max_val))(_hardtanh_backward)
derivative("hardtanh_", name="HardtanhBackward0",
           save=lambda self, min_val=-1.0, max_val=1.0: (RESULT, min_val, max_val))(_hardtanh_backward)


# relu's backward (threshold_backward) is linear in the gradient and piecewise constant in
# the input: its own gradient is the same mask applied again, and none for the input.
@derivative("threshold_backward", inputs=("grad_output", "input"), name="ThresholdBackwardBackward0",
            save=lambda grad_output, input, threshold: (input, threshold))
def threshold_backward(ctx, grad, input, threshold):
    return K.threshold_backward(grad, input, threshold), None


# -- softmax, losses ----------------------------------------------------------------------

@derivative("softmax", save=lambda input, dim, dtype=None: (RESULT, dim))
def softmax(ctx, grad, output, dim):
    if not _create_graph():
        return K.softmax_backward(grad, output, dim)
    return (grad - (grad * output).sum(dim, keepdim=True)) * output


@derivative("log_softmax", save=lambda input, dim, dtype=None: (RESULT, dim))
def log_softmax(ctx, grad, output, dim):
    if not _create_graph():
        return K.log_softmax_backward(grad, output, dim)
    return grad - output.exp() * grad.sum(dim, keepdim=True)


for _name in ("softmax_backward", "log_softmax_backward"):
    derivative(_name, inputs=("grad_output",))(_not_differentiated_again(_name))


def _nll_save(input, target, weight=None, reduction="mean", ignore_index=-100):
    return (input, target, weight, reduction, ignore_index)


@derivative("nll_loss", name="NllLossBackward0", save=_nll_save)
def nll_loss(ctx, grad, input, target, weight, reduction, ignore_index):
    return K.nll_loss_backward(grad, input, target, weight, reduction, ignore_index)


# cross_entropy_rows is log_softmax then nll_loss in one op: its node takes nll_loss's
# name (the loss's grad_fn in PyTorch); the fused backward writes log_softmax's gradient
# of nll_loss's in one pass, or, for a graph of the gradient, the two composed.
@derivative("cross_entropy_rows", inputs=("input",), name="NllLossBackward0",
            save=lambda input, target, weight=None, reduction="mean", ignore_index=-100:
            (input, target, weight, RESULT[1], reduction, ignore_index))
def cross_entropy_rows(ctx, grads, input, target, weight, saved, reduction, ignore_index):
    grad = grads[0]
    if grad is None:
        return None
    if not _create_graph():
        return K.cross_entropy_rows_backward(grad, input, target, weight, saved, reduction, ignore_index)
    log_probabilities = K.log_softmax(input, 1)
    g = K.nll_loss_backward(grad, log_probabilities, target, weight, reduction, ignore_index)
    return g - log_probabilities.exp() * g.sum(1, keepdim=True)


derivative("cross_entropy_rows_backward", inputs=("grad_output",))(
    _not_differentiated_again("cross_entropy_rows_backward"))


# The other losses are composites: differentiated through the elementwise ops and
# reductions they are made of, as PyTorch's CompositeImplicitAutograd losses are.
composite("mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "kl_div", "poisson_nll_loss",
          "binary_cross_entropy", "binary_cross_entropy_with_logits", "soft_margin_loss",
          "hinge_embedding_loss", "margin_ranking_loss", "cosine_embedding_loss", "triplet_margin_loss",
          "multi_margin_loss", "multilabel_margin_loss", "cross_entropy_loss")
# Composite ops of their own so that autocast's lists name them, as PyTorch's ATen ops.
composite("softplus", "cosine_similarity", "pdist")


@derivative("nll_loss_backward", inputs=("grad_output",),
            save=lambda grad_output, input, target, weight=None, reduction="mean", ignore_index=-100:
            (target, weight, reduction, ignore_index))
def nll_loss_backward(ctx, a, target, weight, reduction, ignore_index):
    return K.nll_loss(a, target, weight, reduction, ignore_index)


# -- index kernels ------------------------------------------------------------------------

@derivative("embedding", inputs=("weight",),
            save=lambda weight, indices, padding_idx=None, scale_grad_by_freq=False:
            (weight.shape[0], indices, padding_idx, scale_grad_by_freq))
def embedding(ctx, grad, num_weights, indices, padding_idx, scale_grad_by_freq):
    return K.embedding_backward(grad, indices, num_weights, padding_idx, scale_grad_by_freq)


@derivative("embedding_backward", inputs=("grad_output",),
            save=lambda grad_output, indices, num_weights, padding_idx=None, scale_grad_by_freq=False:
            (indices, padding_idx))
def embedding_backward(ctx, a, indices, padding_idx):
    picked = K.embedding(a, indices)
    if padding_idx is not None and padding_idx >= 0:
        picked = picked * (indices != padding_idx).unsqueeze(-1)
    return picked


def _bag_save(weight, indices, offsets, scale_grad_by_freq=False, mode=0, sparse=False, per_sample_weights=None,
              include_last_offset=False, padding_idx=-1):
    # The weight itself only for per_sample_weights' gradient (a dot with each looked-up row).
    return (weight.shape[0], None if per_sample_weights is None else weight, indices, RESULT[1], RESULT[2],
            RESULT[3], scale_grad_by_freq, mode, sparse, per_sample_weights,
            None if padding_idx is None or padding_idx < 0 else padding_idx)


def _bag_entry_rows(grad, offset2bag, bag_size, mode, per_sample_weights):
    # Each entry's share of its bag's gradient (sum and mean modes), as differentiable ops:
    # the rows the sparse gradient holds, and the double-backward form of the dense one.
    rows = grad.index_select(0, offset2bag)
    if per_sample_weights is not None:
        rows = rows * per_sample_weights.reshape(-1, 1)
    if mode == 1:
        rows = rows / bag_size.index_select(0, offset2bag).clamp(min=1).unsqueeze(1).to(grad.dtype)
    return rows


def _bag_weight_grad(grad, num_weights, indices, offset2bag, bag_size, max_indices, scale_grad_by_freq, mode,
                     sparse, per_sample_weights, padding_idx):
    if sparse:  # one row per entry, as embedding's sparse gradient (max mode refuses sparse)
        rows = _bag_entry_rows(grad, offset2bag, bag_size, mode, per_sample_weights)
        return K.embedding_sparse_backward(rows, indices, num_weights, padding_idx, scale_grad_by_freq)
    if not _create_graph():
        return K.embedding_bag_backward(grad, indices, offset2bag, bag_size, max_indices, num_weights,
                                        scale_grad_by_freq, mode, per_sample_weights, padding_idx)
    if mode == 2:  # each (bag, column) to its argmax row; empty bags (-1) add nothing
        found = max_indices >= 0
        return E.zeros(num_weights, grad.shape[1], dtype=grad.dtype, device=grad.device).scatter_add(
            0, max_indices.clamp(min=0), grad * found)
    rows = _bag_entry_rows(grad, offset2bag, bag_size, mode, per_sample_weights)
    return K.embedding_backward(rows, indices, num_weights, padding_idx, scale_grad_by_freq)


@derivative("embedding_bag", inputs=("weight", "per_sample_weights"), name="EmbeddingBagBackward0", save=_bag_save)
def embedding_bag(ctx, grads, num_weights, weight, indices, offset2bag, bag_size, max_indices, scale_grad_by_freq,
                  mode, sparse, per_sample_weights, padding_idx):
    grad = grads[0]
    needs = ctx.needs_input_grad
    if grad is None:
        return None, None
    grad_weight = grad_weights = None
    if needs[0]:
        grad_weight = _bag_weight_grad(grad, num_weights, indices, offset2bag, bag_size, max_indices,
                                       scale_grad_by_freq, mode, sparse, per_sample_weights, padding_idx)
    if per_sample_weights is not None and needs[1]:
        if not _create_graph():
            grad_weights = K.embedding_bag_per_sample_weights_backward(grad, weight, indices, offset2bag, mode,
                                                                       padding_idx)
        else:
            dots = (grad.index_select(0, offset2bag) * weight.index_select(0, indices)).sum(1)
            grad_weights = dots if padding_idx is None else dots * (indices != padding_idx)
    return grad_weight, grad_weights


# The fused backward kernels run only when no graph is built for the gradient (the rule
# above composes differentiable ops otherwise).
for _name in ("embedding_bag_backward", "embedding_bag_per_sample_weights_backward"):
    derivative(_name, inputs=("grad",))(_not_differentiated_again(_name))


@derivative("constant_pad_nd", save=lambda input, pad, value=0: (tuple(pad),))
def constant_pad_nd(ctx, grad, pad):
    # Negative padding crops: the gradient is the padded output cut back to the input.
    return K.constant_pad_nd(grad, tuple(-p for p in pad))


def _fold_params(kernel_size, dilation=1, padding=0, stride=1):
    return (kernel_size, dilation, padding, stride)


@derivative("im2col", save=lambda input, *args, **kwargs: (tuple(input.shape[2:]), _fold_params(*args, **kwargs)))
def im2col(ctx, grad, size, params):
    return K.col2im(grad, size, *params)


@derivative("col2im", save=lambda input, output_size, *args, **kwargs: (_fold_params(*args, **kwargs),))
def col2im(ctx, grad, params):
    return K.im2col(grad, *params)


not_differentiable("one_hot")


# -- recurrent layers ---------------------------------------------------------------------
# The fused layer ops run inside ember-nn's one autograd Function per layer call, which
# calls the backward ops itself (and the unfused composition when a graph of the gradient
# is wanted). Called directly on tensors that require grad, they record a node that says so.

def _through_the_module(op_name):
    def backward(ctx, grads, *saved):
        raise RuntimeError(f"the derivative for '{op_name}' is not implemented: use ember.nn's LSTM/GRU/RNN "
                           "modules, whose autograd Function calls the fused backward op.")
    return backward


_RECURRENT_INPUTS = {
    "lstm_layer": ("input", "weight_ih", "weight_hh", "bias_ih", "bias_hh", "hx", "cx"),
    "gru_layer": ("input", "weight_ih", "weight_hh", "bias_ih", "bias_hh", "hx"),
    "rnn_layer": ("input", "weight_ih", "weight_hh", "bias_ih", "bias_hh", "hx"),
    "lstm_layer_backward": ("grad_output", "grad_hy", "grad_cy"),
    "gru_layer_backward": ("grad_output", "grad_hy"),
    "rnn_layer_backward": ("grad_output", "grad_hy"),
}
for _name, _inputs in _RECURRENT_INPUTS.items():
    derivative(_name, inputs=_inputs)(_through_the_module(_name))
