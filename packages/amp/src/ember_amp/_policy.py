"""PyTorch's autocast op lists, per device type, keyed by ember's op names.

The lists are PyTorch's (aten/src/ATen/autocast_mode.cpp and autocast_mode.h, the
"Autocast Op Reference" of the AMP docs), written as data. A name that ember has no
operator for (``conv_tbc``, ``_native_multi_head_attention``, ...) stays in the list: it
documents PyTorch's list and costs nothing. Where ember's operator covers several of
PyTorch's ops, its name is added next to theirs: ``convolution`` serves conv1d/2d/3d and the
transposed convolutions, ``native_layer_norm``/``native_group_norm`` serve layer_norm and
group_norm.

Policies (PyTorch's ``CastPolicy``):
    LOWER               cast eligible floating inputs to the region's dtype (bf16/fp16)
    FP32                cast eligible floating inputs to float32
    FP32_SET_OPT_DTYPE  when the first input is eligible and no ``dtype=`` is given, pass
                        ``dtype=float32`` (the op accumulates and returns float32)
    FP32_APPEND_DTYPE   like FP32_SET_OPT_DTYPE, for ``norm``, whose dtype the op would not
                        otherwise widen
    PROMOTE             run in the widest floating dtype among the eligible inputs

An input is eligible when it is a floating tensor on the region's device type and not
float64.
"""

__all__ = ["LOWER", "FP32", "FP32_SET_OPT_DTYPE", "FP32_APPEND_DTYPE", "PROMOTE", "POLICIES", "BANNED",
           "DECOMPOSED"]

LOWER = "lower_precision_fp"
FP32 = "fp32"
FP32_SET_OPT_DTYPE = "fp32_set_opt_dtype"
FP32_APPEND_DTYPE = "fp32_append_dtype"
PROMOTE = "promote"

_CUDA_LOWER = [
    "_convolution", "conv1d", "conv2d", "conv3d", "conv_tbc", "conv_transpose1d", "conv_transpose2d",
    "conv_transpose3d", "convolution", "cudnn_convolution", "cudnn_convolution_transpose", "prelu",
    "addmm", "addmv", "addr", "matmul", "einsum", "mm", "mv", "linalg_vecdot", "linear", "addbmm",
    "baddbmm", "bmm", "chain_matmul", "linalg_multi_dot", "_thnn_fused_lstm_cell", "_thnn_fused_gru_cell",
    "lstm_cell", "gru_cell", "rnn_tanh_cell", "rnn_relu_cell", "_scaled_dot_product_flash_attention",
    "scaled_dot_product_attention",
]
_CUDA_FP32 = [
    "acos", "asin", "cosh", "erfinv", "exp", "expm1", "log", "log10", "log2", "log1p", "reciprocal",
    "rsqrt", "sinh", "tan", "pow", "softplus", "layer_norm", "native_layer_norm", "group_norm",
    "native_group_norm", "frobenius_norm", "nuclear_norm", "cosine_similarity", "poisson_nll_loss",
    "cosine_embedding_loss", "nll_loss", "nll_loss2d", "hinge_embedding_loss", "kl_div", "l1_loss",
    "smooth_l1_loss", "huber_loss", "mse_loss", "margin_ranking_loss", "multilabel_margin_loss",
    "soft_margin_loss", "triplet_margin_loss", "multi_margin_loss", "binary_cross_entropy_with_logits",
    "dist", "pdist", "cdist", "renorm", "logsumexp", "upsample_nearest1d", "_upsample_nearest_exact1d",
    "upsample_nearest2d", "_upsample_nearest_exact2d", "upsample_nearest3d", "_upsample_nearest_exact3d",
    "upsample_linear1d", "upsample_bilinear2d", "_upsample_bilinear2d_aa", "upsample_trilinear3d",
    "upsample_bicubic2d", "_upsample_bicubic2d_aa",
]
_CUDA_FP32_SET_OPT_DTYPE = [
    "prod", "softmax", "log_softmax", "cumprod", "cumsum", "linalg_vector_norm", "linalg_matrix_norm", "sum",
]
_CUDA_FP32_APPEND_DTYPE = ["norm"]
_CUDA_PROMOTE = [
    "addcdiv", "addcmul", "atan2", "bilinear", "cross", "dot", "vdot", "grid_sampler", "index_put",
    "tensordot", "scatter_add",
]

_CPU_LOWER = [
    "conv1d", "conv2d", "conv3d", "bmm", "mm", "linalg_vecdot", "baddbmm", "addmm", "_addmm_activation",
    "addbmm", "linear", "_convolution", "convolution", "matmul", "conv_tbc", "mkldnn_rnn_layer",
    "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "prelu", "scaled_dot_product_attention",
    "_native_multi_head_attention",
]
_CPU_FP32 = [
    "avg_pool3d", "binary_cross_entropy", "grid_sampler", "polar", "prod", "quantile", "nanquantile",
    "stft", "cdist", "grid_sampler_2d", "_grid_sampler_2d_cpu_fallback", "grid_sampler_3d", "trace",
    "view_as_complex", "cholesky", "cholesky_inverse", "cholesky_solve", "inverse", "lu_solve", "orgqr",
    "ormqr", "pinverse", "max_pool3d", "max_unpool2d", "max_unpool3d", "max_unpool", "adaptive_avg_pool3d",
    "reflection_pad1d", "reflection_pad2d", "replication_pad1d", "replication_pad2d", "replication_pad3d",
    "mse_loss", "cosine_embedding_loss", "nll_loss", "nll_loss2d", "hinge_embedding_loss",
    "poisson_nll_loss", "smooth_l1_loss", "cross_entropy_loss", "l1_loss", "huber_loss",
    "margin_ranking_loss", "soft_margin_loss", "triplet_margin_loss", "multi_margin_loss", "ctc_loss",
    "kl_div", "multilabel_margin_loss", "binary_cross_entropy_with_logits", "fft_fft", "fft_ifft",
    "fft_fft2", "fft_ifft2", "fft_fftn", "fft_ifftn", "fft_rfft", "fft_irfft", "fft_rfft2", "fft_irfft2",
    "fft_rfftn", "fft_irfftn", "fft_hfft", "fft_ihfft", "linalg_cond", "linalg_matrix_rank", "linalg_solve",
    "linalg_cholesky", "linalg_svdvals", "linalg_eigvals", "linalg_eigvalsh", "linalg_inv",
    "linalg_householder_product", "linalg_tensorinv", "linalg_tensorsolve", "fake_quantize_per_tensor_affine",
    "geqrf", "_lu_with_info", "qr", "svd", "triangular_solve", "fractional_max_pool2d",
    "fractional_max_pool3d", "adaptive_max_pool3d", "multilabel_margin_loss_forward", "linalg_qr",
    "linalg_cholesky_ex", "linalg_svd", "linalg_eig", "linalg_eigh", "linalg_lstsq", "linalg_inv_ex",
]
_CPU_PROMOTE = ["stack", "cat", "index_copy"]


def _table(**lists):
    table = {}
    for policy, names in lists.items():
        for name in names:
            table[name] = policy
    return table


# device type -> {op name: policy}
POLICIES = {
    "cpu": _table(**{LOWER: _CPU_LOWER, FP32: _CPU_FP32, PROMOTE: _CPU_PROMOTE}),
    "cuda": _table(**{LOWER: _CUDA_LOWER, FP32: _CUDA_FP32, FP32_SET_OPT_DTYPE: _CUDA_FP32_SET_OPT_DTYPE,
                      FP32_APPEND_DTYPE: _CUDA_FP32_APPEND_DTYPE, PROMOTE: _CUDA_PROMOTE}),
}

# Ops that autocast refuses, per device type, with PyTorch's message.
BANNED = {
    "cuda": {
        "binary_cross_entropy": (
            "torch.nn.functional.binary_cross_entropy and torch.nn.BCELoss are unsafe to autocast.\n"
            "Many models use a sigmoid layer right before the binary cross entropy layer.\n"
            "In this case, combine the two layers using torch.nn.functional.binary_cross_entropy_with_logits\n"
            "or torch.nn.BCEWithLogitsLoss.  binary_cross_entropy_with_logits and BCEWithLogits are\n"
            "safe to autocast."),
    },
    "cpu": {},
}

# Ops whose insides autocast sees where no list names them, as it sees PyTorch's
# CompositeImplicitAutograd ops (einsum, tensordot, inner and matrix_power decompose into
# bmm/mm there, which the lists name; cross_entropy_loss, named by the CPU's float32 list
# only, decomposes on CUDA into log_softmax and nll_loss, which CUDA's list names). Every
# other ember op runs as one kernel does in PyTorch: the ops an ember op calls inside (mv
# and dot call matmul, say) are its implementation, not autocast's business.
DECOMPOSED = frozenset({"einsum", "tensordot", "inner", "matrix_power", "cross_entropy_loss"})
