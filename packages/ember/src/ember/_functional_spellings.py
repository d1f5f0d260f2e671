"""PyTorch's top-level spellings of torch.nn.functional's ops: ``torch.conv2d``,
``torch.layer_norm``, ``torch.dropout``, ``torch.embedding``, ...

PyTorch exposes its ATen operators at the top level with ATen's signatures, which differ
from torch.nn.functional's in ways programs depend on: ``torch.embedding(weight, indices)``
takes its arguments in the other order, ``torch.batch_norm`` puts weight and bias before the
running statistics and has no defaults, ``torch.dropout(input, p, train)`` requires all
three, losses take ``reduction`` as ATen's integer (0 none, 1 mean, 2 sum), and a pooling
``stride=[]`` means "the kernel size". Each function here adapts that signature onto
ember-nn's functional op, which does the work.

They live in the meta-package because ember_tensor (the top level's owner) may not import
ember-nn; ember-nn is imported at the first call, so ``import ember`` stays light.
"""

import importlib

__all__ = [
    "adaptive_avg_pool1d", "adaptive_max_pool1d", "alpha_dropout", "alpha_dropout_", "avg_pool1d",
    "batch_norm", "bilinear", "binary_cross_entropy_with_logits", "celu", "celu_", "channel_shuffle",
    "conv1d", "conv2d", "conv3d", "conv_tbc", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
    "cosine_embedding_loss", "cosine_similarity", "ctc_loss", "dropout", "dropout_", "embedding",
    "feature_alpha_dropout", "feature_alpha_dropout_", "feature_dropout", "feature_dropout_", "group_norm",
    "hardshrink", "hinge_embedding_loss", "instance_norm", "kl_div", "layer_norm", "margin_ranking_loss",
    "max_pool1d", "max_pool1d_with_indices", "max_pool2d", "max_pool3d", "native_channel_shuffle",
    "pairwise_distance", "pdist", "pixel_shuffle", "pixel_unshuffle", "poisson_nll_loss", "prelu",
    "rms_norm", "rrelu", "rrelu_", "selu", "selu_", "threshold", "threshold_", "triplet_margin_loss",
]

# ATen's at::Reduction enum, which the top-level losses take instead of a string
_REDUCTIONS = {0: "none", 1: "mean", 2: "sum"}


def _functional():
    return importlib.import_module("ember_nn.functional")


def _reduction(code):
    if isinstance(code, str):  # tolerated: PyTorch would raise, but the meaning is unambiguous
        return code
    try:
        return _REDUCTIONS[int(code)]
    except (KeyError, TypeError, ValueError):
        raise ValueError(f"{code} is not a valid value for reduction") from None


def _stride(stride):
    """ATen's ``stride=[]`` (its default) means the kernel size, as F's ``stride=None``."""
    if stride is None or (isinstance(stride, (list, tuple)) and len(stride) == 0):
        return None
    return stride


# -- convolution and pooling: same argument order as F, ATen's defaults ---------------------

def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """``torch.conv1d``: ``torch.nn.functional.conv1d``."""
    return _functional().conv1d(input, weight, bias, stride, padding, dilation, groups)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """``torch.conv2d``: ``torch.nn.functional.conv2d``."""
    return _functional().conv2d(input, weight, bias, stride, padding, dilation, groups)


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """``torch.conv3d``: ``torch.nn.functional.conv3d``."""
    return _functional().conv3d(input, weight, bias, stride, padding, dilation, groups)


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """``torch.conv_transpose1d``: ``torch.nn.functional.conv_transpose1d``."""
    return _functional().conv_transpose1d(input, weight, bias, stride, padding, output_padding, groups, dilation)


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """``torch.conv_transpose2d``: ``torch.nn.functional.conv_transpose2d``."""
    return _functional().conv_transpose2d(input, weight, bias, stride, padding, output_padding, groups, dilation)


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """``torch.conv_transpose3d``: ``torch.nn.functional.conv_transpose3d``."""
    return _functional().conv_transpose3d(input, weight, bias, stride, padding, output_padding, groups, dilation)


def conv_tbc(input, weight, bias, pad=0):
    """``torch.conv_tbc(input, weight, bias, pad=0)``: 1-d convolution of (time, batch, channel)."""
    return _functional().conv_tbc(input, weight, bias, pad)


def avg_pool1d(input, kernel_size, stride=(), padding=0, ceil_mode=False, count_include_pad=True):
    """``torch.avg_pool1d``: ``stride=[]`` (the default) is the kernel size."""
    return _functional().avg_pool1d(input, kernel_size, _stride(stride), padding, ceil_mode, count_include_pad)


def max_pool1d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    """``torch.max_pool1d``: ``stride=[]`` (the default) is the kernel size."""
    return _functional().max_pool1d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode)


def max_pool1d_with_indices(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    """``torch.max_pool1d_with_indices``: the pooled values and their flat indices."""
    return _functional().max_pool1d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode,
                                    return_indices=True)


def max_pool2d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    """``torch.max_pool2d``: ``stride=[]`` (the default) is the kernel size."""
    return _functional().max_pool2d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode)


def max_pool3d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    """``torch.max_pool3d``: ``stride=[]`` (the default) is the kernel size."""
    return _functional().max_pool3d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode)


def adaptive_avg_pool1d(input, output_size):
    """``torch.adaptive_avg_pool1d``."""
    return _functional().adaptive_avg_pool1d(input, output_size)


def adaptive_max_pool1d(input, output_size):
    """``torch.adaptive_max_pool1d``: ATen's form always returns (values, indices)."""
    return _functional().adaptive_max_pool1d(input, output_size, return_indices=True)


# -- normalization: ATen's argument orders -------------------------------------------------

def batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps, cudnn_enabled):
    """``torch.batch_norm``: weight and bias come before the running statistics, every argument
    is required, and ``cudnn_enabled`` is accepted and ignored (ember has no cuDNN)."""
    return _functional().batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


def instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps, cudnn_enabled):
    """``torch.instance_norm``: ATen's argument order; ``cudnn_enabled`` is ignored."""
    return _functional().instance_norm(input, running_mean, running_var, weight, bias, use_input_stats,
                                       momentum, eps)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-05, cudnn_enable=True):
    """``torch.layer_norm``; ``cudnn_enable`` is ignored."""
    return _functional().layer_norm(input, normalized_shape, weight, bias, eps)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-05, cudnn_enabled=True):
    """``torch.group_norm``; ``cudnn_enabled`` is ignored."""
    return _functional().group_norm(input, num_groups, weight, bias, eps)


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """``torch.rms_norm``."""
    return _functional().rms_norm(input, normalized_shape, weight, eps)


# -- dropout: ``train`` is required --------------------------------------------------------

def dropout(input, p, train):
    """``torch.dropout(input, p, train)``."""
    return _functional().dropout(input, p, train)


def dropout_(input, p, train):
    """``torch.dropout_(input, p, train)``: in place."""
    return _functional().dropout(input, p, train, inplace=True)


def alpha_dropout(input, p, train):
    """``torch.alpha_dropout(input, p, train)``."""
    return _functional().alpha_dropout(input, p, train)


def alpha_dropout_(input, p, train):
    """``torch.alpha_dropout_(input, p, train)``: in place."""
    return _functional().alpha_dropout(input, p, train, inplace=True)


def feature_dropout(input, p, train):
    """``torch.feature_dropout(input, p, train)``: zero whole channels of (N, C, *)."""
    return _functional().feature_dropout(input, p, train)


def feature_dropout_(input, p, train):
    """``torch.feature_dropout_(input, p, train)``: in place."""
    return _functional().feature_dropout(input, p, train, inplace=True)


def feature_alpha_dropout(input, p, train):
    """``torch.feature_alpha_dropout(input, p, train)``."""
    return _functional().feature_alpha_dropout(input, p, train)


def feature_alpha_dropout_(input, p, train):
    """``torch.feature_alpha_dropout_(input, p, train)``: in place."""
    return _functional().feature_alpha_dropout(input, p, train, inplace=True)


# -- activations ---------------------------------------------------------------------------

def celu(input, alpha=1.0):
    """``torch.celu``."""
    return _functional().celu(input, alpha)


def celu_(input, alpha=1.0):
    """``torch.celu_``: in place."""
    return _functional().celu_(input, alpha)


def selu(input):
    """``torch.selu``."""
    return _functional().selu(input)


def selu_(input):
    """``torch.selu_``: in place."""
    return _functional().selu_(input)


def rrelu(input, lower=0.125, upper=1.0 / 3.0, training=False, generator=None):
    """``torch.rrelu``; ``generator`` other than None is refused (ember draws from its global RNG)."""
    _no_generator(generator)
    return _functional().rrelu(input, lower, upper, training)


def rrelu_(input, lower=0.125, upper=1.0 / 3.0, training=False, generator=None):
    """``torch.rrelu_``: in place."""
    _no_generator(generator)
    return _functional().rrelu_(input, lower, upper, training)


def _no_generator(generator):
    if generator is not None:
        raise NotImplementedError("rrelu: a generator argument is not supported by ember; seed with manual_seed")


def threshold(input, threshold, value):
    """``torch.threshold(input, threshold, value)``."""
    return _functional().threshold(input, threshold, value)


def threshold_(input, threshold, value):
    """``torch.threshold_``: in place."""
    return _functional().threshold_(input, threshold, value)


def hardshrink(input, lambd=0.5):
    """``torch.hardshrink`` (also ``Tensor.hardshrink``)."""
    return _functional().hardshrink(input, lambd)


def prelu(input, weight):
    """``torch.prelu`` (also ``Tensor.prelu``)."""
    return _functional().prelu(input, weight)


# -- shuffles, distances, bilinear, embedding ---------------------------------------------

def pixel_shuffle(input, upscale_factor):
    """``torch.pixel_shuffle``."""
    return _functional().pixel_shuffle(input, upscale_factor)


def pixel_unshuffle(input, downscale_factor):
    """``torch.pixel_unshuffle``."""
    return _functional().pixel_unshuffle(input, downscale_factor)


def channel_shuffle(input, groups):
    """``torch.channel_shuffle``."""
    return _functional().channel_shuffle(input, groups)


def native_channel_shuffle(input, groups):
    """``torch.native_channel_shuffle``: channel_shuffle."""
    return _functional().native_channel_shuffle(input, groups)


def cosine_similarity(x1, x2, dim=1, eps=1e-08):
    """``torch.cosine_similarity``."""
    return _functional().cosine_similarity(x1, x2, dim, eps)


def pairwise_distance(x1, x2, p=2.0, eps=1e-06, keepdim=False):
    """``torch.pairwise_distance``."""
    return _functional().pairwise_distance(x1, x2, p, eps, keepdim)


def pdist(input, p=2.0):
    """``torch.pdist``."""
    return _functional().pdist(input, p)


def bilinear(input1, input2, weight, bias=None):
    """``torch.bilinear``."""
    return _functional().bilinear(input1, input2, weight, bias)


def embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    """``torch.embedding(weight, indices, ...)``: the weight comes first, and ATen's
    ``padding_idx=-1`` means "no padding index" (F normalises negative indices before ATen)."""
    padding = None if padding_idx is None or padding_idx < 0 else padding_idx
    return _functional().embedding(indices, weight, padding, None, 2.0, scale_grad_by_freq, sparse)


# -- losses: ``reduction`` is ATen's integer ----------------------------------------------

def binary_cross_entropy_with_logits(input, target, weight=None, pos_weight=None, reduction=1):
    """``torch.binary_cross_entropy_with_logits``: ``reduction`` 0 none, 1 mean, 2 sum."""
    return _functional().binary_cross_entropy_with_logits(input, target, weight, reduction=_reduction(reduction),
                                                          pos_weight=pos_weight)


def kl_div(input, target, reduction=1, *, log_target=False):
    """``torch.kl_div``: ``reduction`` 0 none, 1 mean (over elements), 2 sum."""
    return _functional().kl_div(input, target, reduction=_reduction(reduction), log_target=log_target)


def cosine_embedding_loss(input1, input2, target, margin=0.0, reduction=1):
    """``torch.cosine_embedding_loss``: ``reduction`` 0 none, 1 mean, 2 sum."""
    return _functional().cosine_embedding_loss(input1, input2, target, margin, reduction=_reduction(reduction))


def hinge_embedding_loss(input, target, margin=1.0, reduction=1):
    """``torch.hinge_embedding_loss``: ``reduction`` 0 none, 1 mean, 2 sum."""
    return _functional().hinge_embedding_loss(input, target, margin, reduction=_reduction(reduction))


def margin_ranking_loss(input1, input2, target, margin=0.0, reduction=1):
    """``torch.margin_ranking_loss``: ``reduction`` 0 none, 1 mean, 2 sum."""
    return _functional().margin_ranking_loss(input1, input2, target, margin, reduction=_reduction(reduction))


def poisson_nll_loss(input, target, log_input, full, eps, reduction):
    """``torch.poisson_nll_loss``: every argument required; ``reduction`` 0 none, 1 mean, 2 sum."""
    return _functional().poisson_nll_loss(input, target, log_input, full, eps=eps, reduction=_reduction(reduction))


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction=1, zero_infinity=False):
    """``torch.ctc_loss``: ``reduction`` 0 none, 1 mean, 2 sum."""
    return _functional().ctc_loss(log_probs, targets, input_lengths, target_lengths, blank,
                                  _reduction(reduction), zero_infinity)


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2.0, eps=1e-06, swap=False, reduction=1):
    """``torch.triplet_margin_loss``: ``reduction`` 0 none, 1 mean, 2 sum."""
    return _functional().triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap,
                                             reduction=_reduction(reduction))


def install_tensor_methods(tensor_class):
    """``Tensor.hardshrink`` and ``Tensor.prelu``: methods whose op lives in ember-nn."""
    def tensor_hardshrink(self, lambd=0.5):
        """``Tensor.hardshrink(lambd=0.5)``: see torch.nn.functional.hardshrink."""
        return hardshrink(self, lambd)

    def tensor_prelu(self, weight):
        """``Tensor.prelu(weight)``: see torch.nn.functional.prelu."""
        return prelu(self, weight)

    tensor_class.hardshrink = tensor_hardshrink
    tensor_class.prelu = tensor_prelu
