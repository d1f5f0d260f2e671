"""ember-tensor: PyTorch's tensor API on NumPy storage and Numba kernels (CPU and CUDA).

>>> import ember_tensor as torch
>>> torch.tensor([[1., 2.], [3., 4.]]) @ torch.ones(2)
tensor([3., 7.])
"""
import math as _math

from ._backends.cpu.startup import (keep_freed_memory as _keep_freed_memory, prefer_wide_vectors as
                                    _prefer_wide_vectors, quiet_openmp_spinning as _quiet_openmp_spinning,
                                    tune_openblas as _tune_openblas)

_tune_openblas()  # must run before NumPy is first imported
_quiet_openmp_spinning()  # must run before the first parallel kernel starts OpenMP
_keep_freed_memory()  # glibc: freed arrays' memory is reused, not faulted in anew
_prefer_wide_vectors()  # must run before Numba is first imported: 512-bit vectors on AVX-512

from .version import __version__  # noqa: E402
from . import _dtype
from ._dtype import (
    bfloat16, bool, can_cast, cdouble, cfloat, chalf, complex32, complex64, complex128, double, dtype, float,
    float8_e4m3fn, float8_e4m3fnuz, float8_e5m2, float8_e5m2fnuz, float16, float32, float64, get_default_dtype,
    half, int, int8, int16, int32, int64, long, promote_types, result_type, set_default_dtype, short,
    uint8,
)
from ._device import device, get_default_device, set_default_device
from ._dtype_limits import finfo, iinfo
from ._runtime.threads import get_num_interop_threads, get_num_threads, set_num_interop_threads, set_num_threads
from ._runtime.determinism import (
    are_deterministic_algorithms_enabled, get_deterministic_debug_mode, is_deterministic_algorithms_warn_only_enabled,
    set_deterministic_debug_mode, use_deterministic_algorithms,
)
from ._runtime.matmul_precision import get_float32_matmul_precision, set_float32_matmul_precision
from ._size import Size
from ._layout import (
    channels_last, channels_last_3d, contiguous_format, layout, memory_format, preserve_format, sparse_coo, strided,
)
from ._tensor import Tensor, is_tensor
from ._dispatch import Operator, register_wrapper, unregister_wrapper, operators
from ._printing import get_printoptions, set_printoptions, printoptions
from ._ops import methods as _methods
from ._ops.creation import (
    LEGACY_TYPES as _LEGACY_TYPES, arange, as_tensor, asarray, empty, empty_like, empty_strided, eye,
    from_numpy, frombuffer, full, full_like, linspace, logspace, ones, ones_like, range, scalar_tensor, tensor,
    zeros, zeros_like,
)
from ._ops.elementwise import *  # noqa: F401,F403 - the elementwise op namespace
from ._ops.elementwise import allclose, equal, isclose, where, clamp, clip
from ._ops.elementwise.special import polygamma
from ._ops._iter import broadcast_shapes_public as broadcast_shapes
from ._ops.views import (
    as_strided, diagonal, expand, flatten, movedim, moveaxis, narrow, permute, ravel, reshape, select, squeeze,
    swapaxes, swapdims, t, transpose, unflatten, unsqueeze, view,
)
from ._ops.view_splits import chunk, dsplit, hsplit, split, tensor_split, unbind, vsplit
from ._ops.convert import clone, contiguous, detach
from ._ops.complex_views import real, imag, view_as_complex, view_as_complex_copy, view_as_real, view_as_real_copy
from ._ops.views_inplace import as_strided_
from ._ops.shape_ops import (
    atleast_1d, atleast_2d, atleast_3d, block_diag, broadcast_tensors, broadcast_to, flip, fliplr, flipud,
    meshgrid, repeat_interleave, roll, rot90, tile, tril, triu,
)
from ._ops.reduction import *  # noqa: F401,F403 - sum, mean, amax, max, ...
from ._ops.reduction_stats import *  # noqa: F401,F403 - var, std, norm, logsumexp, median
from ._ops.quantiles import nanquantile, quantile
from ._ops.statistics import cdist, corrcoef, cov, histogram, histogramdd
from ._ops.combinatorics import (
    cartesian_prod, combinations, isin, tril_indices, triu_indices, unravel_index, vander,
)
from ._ops.view_scatters import diagonal_scatter, select_scatter, slice_scatter
from ._ops.integration import cumulative_trapezoid, trapezoid, trapz
from ._ops.finite_differences import gradient
from ._ops.indexing import cat, concat, concatenate, hstack, stack, vstack
from ._ops.indexing import index_put, index_put_
from ._ops.index_ops import (
    argwhere, gather, index_add, index_copy, index_fill, index_reduce, index_select, masked_fill, masked_scatter,
    masked_select, nonzero, put, scatter, scatter_add, scatter_reduce, take, take_along_dim,
)
from ._ops.sorting import (
    argsort, bincount, bucketize, histc, kthvalue, mode, msort, nanmedian, searchsorted, sort, topk, unique,
    unique_consecutive,
)
from ._ops.scans import cummax, cummin, cumprod, cumsum, diff, logcumsumexp
from ._ops.fused_optim import _fused_adagrad_, _fused_adam_, _fused_adamw_, _fused_sgd_  # optimizer steps
from ._ops.amp import _amp_foreach_non_finite_check_and_unscale_, _amp_update_scale_  # GradScaler's
from ._random import (
    Generator, default_generator, get_rng_state, initial_seed, manual_seed, seed, set_rng_state,
)
from ._ops.random import (
    bernoulli, multinomial, normal, poisson, rand, rand_like, randint, randint_like, randn, randn_like,
    randperm,
)
from ._ops.linalg.products import diag, diag_embed, trace, addmm, addmv, baddbmm, bmm, dot, ger, inner_product, matmul, mm, mv, outer
from ._ops.linalg.products import addbmm, addr, cross, inner, kron, matrix_exp, matrix_power, vdot
from ._ops.einsum import einsum, tensordot
from ._ops.aliases import *  # noqa: F401,F403 - deg2rad, dist, column_stack, resolve_conj, ...
from ._ops.linalg.legacy import (
    cholesky, cholesky_inverse, cholesky_solve, det, geqrf, inverse, logdet, lu, lu_solve, orgqr, ormqr, pinverse, qr,
    slogdet, svd,
)
from ._ops.linalg.lu import lu_unpack
from . import linalg, special
from .serialization import load, save
from ._ops.nn import log_softmax, softmax  # noqa: E402 -- also registers the nn kernels (conv, pooling, ...)
from ._ops.fft.primitives import _fft_c2c, _fft_c2r, _fft_r2c  # noqa: E402 -- as torch._fft_c2c ...
from . import fft  # noqa: E402 -- torch.fft
from ._ops.signal.windows import (  # noqa: E402
    bartlett_window, blackman_window, hamming_window, hann_window, kaiser_window,
)
from ._ops.signal.stft import istft, stft  # noqa: E402
from . import signal  # noqa: E402 -- torch.signal.windows

from ._custom import kernel, raw_kernel, reduce_kernel  # noqa: E402 -- ops written in Python

_methods.install()
from .sparse._coo import SparseTensor as _SparseTensor, sparse_coo_tensor  # noqa: E402
from .sparse import _nn as _sparse_nn, _ops as _sparse_ops  # noqa: E402,F401 -- register the sparse COO ops
from . import sparse  # noqa: E402,F401 -- torch.sparse
from .sparse import spmm  # noqa: E402
globals().update(_LEGACY_TYPES)


# PyTorch's constants at the top level (torch.pi, torch.inf, x[:, torch.newaxis]).
pi, e, inf, nan, newaxis = _math.pi, _math.e, _math.inf, _math.nan, None


def numel(input):
    """Number of elements of `input`."""
    return input.numel()


def is_floating_point(input):
    """Whether `input` has a floating dtype."""
    return input.is_floating_point()


def is_signed(input):
    """Whether `input` has a signed dtype."""
    return input.is_signed()


def is_nonzero(input):
    """The truth value of a one-element tensor."""
    return bool(input)


def __getattr__(name):
    # Submodules that cost import time load on first use: ember_tensor.cuda, .testing, ...
    if name in ("cuda", "testing", "accelerator", "backend_flags", "types", "multiprocessing", "hub", "xpu", "mps",
                "random"):
        import importlib
        return importlib.import_module(f".{name}", __name__)
    if name == "OutOfMemoryError":  # torch.OutOfMemoryError is torch.cuda's, which loads on first use
        return __getattr__("cuda").OutOfMemoryError
    raise AttributeError(f"module 'ember_tensor' has no attribute '{name}'")


# The surfaces declared for the layers above (dispatch, nn_ops, sparse_ops, version) are
# modules of their own, not part of torch's namespace.
_SURFACES = ("dispatch", "nn_ops", "sparse_ops", "version")
__all__ = [n for n in globals() if not n.startswith("_") and n not in ("annotations", *_SURFACES)]
