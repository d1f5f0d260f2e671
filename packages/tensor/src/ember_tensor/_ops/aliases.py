"""PyTorch's names that are one line over ops ember already has: unit conversions, the
in-place forms of the BLAS-like ops, stacking helpers, and the answers about conjugate
and negative bits (ember has no complex dtypes and no lazy negation, so a tensor never
has either bit set). Each is also a Tensor method where PyTorch's is, and its gradient
comes from the ops it calls.
"""
import math

from .. import _dtype as D
from .._dispatch import op
from .._tensor import Tensor
from . import elementwise as E
from . import convert, indexing, linalg, shape_ops, view_splits, views
from .convert import detach_, fill_, zero_

__all__ = [
    "deg2rad", "deg2rad_", "rad2deg", "rad2deg_", "clamp_min_", "clamp_max_", "diagflat", "dist",
    "addmm_", "addmv_", "addbmm_", "baddbmm_", "addr_", "row_stack", "column_stack", "dstack",
    "is_same_size", "is_conj", "is_neg", "resolve_conj", "resolve_neg", "is_inference", "fill", "fill_", "zero_",
    "detach_", "get_device", "split_with_sizes", "typename", "rsub", "ldexp", "ldexp_",
]


def deg2rad(input, *, out=None):
    """Degrees to radians (integers give the default float dtype)."""
    return E.mul(input, math.pi / 180, out=out)


def deg2rad_(input):
    """In-place ``deg2rad``."""
    return E.mul_(input, math.pi / 180)


def rad2deg(input, *, out=None):
    """Radians to degrees (integers give the default float dtype)."""
    return E.mul(input, 180 / math.pi, out=out)


def rad2deg_(input):
    """In-place ``rad2deg``."""
    return E.mul_(input, 180 / math.pi)


def clamp_min_(input, min):  # noqa: A002 - PyTorch's name
    """In-place ``clamp_min``."""
    return E.clamp_(input, min=min)


def clamp_max_(input, max):  # noqa: A002 - PyTorch's name
    """In-place ``clamp_max``."""
    return E.clamp_(input, max=max)


def diagflat(input, offset=0):
    """A matrix with the flattened input on its `offset`-th diagonal."""
    return linalg.diag(views.flatten(input), offset)


@op(composite=True)
def dist(input, other, p=2):
    """The p-norm of ``input - other`` (broadcast), over all elements (an op of its own, as
    ATen's, so that autocast's CUDA float32 list applies)."""
    return E.sub(input, other).norm(p)


def addmm_(input, mat1, mat2, *, beta=1, alpha=1):
    """In-place ``addmm``."""
    return input.copy_(linalg.addmm(input, mat1, mat2, beta=beta, alpha=alpha))


def addmv_(input, mat, vec, *, beta=1, alpha=1):
    """In-place ``addmv``."""
    return input.copy_(linalg.addmv(input, mat, vec, beta=beta, alpha=alpha))


def addbmm_(input, batch1, batch2, *, beta=1, alpha=1):
    """In-place ``addbmm``."""
    return input.copy_(linalg.addbmm(input, batch1, batch2, beta=beta, alpha=alpha))


def baddbmm_(input, batch1, batch2, *, beta=1, alpha=1):
    """In-place ``baddbmm``."""
    return input.copy_(linalg.baddbmm(input, batch1, batch2, beta=beta, alpha=alpha))


def addr_(input, vec1, vec2, *, beta=1, alpha=1):
    """In-place ``addr``."""
    return input.copy_(linalg.addr(input, vec1, vec2, beta=beta, alpha=alpha))


row_stack = indexing.vstack


def column_stack(tensors):
    """Stack as columns: 0-d and 1-d tensors become columns, the rest are joined on dim 1."""
    return indexing.hstack([views.reshape(t, (t.numel(), 1)) if t.dim() <= 1 else t for t in tensors])


def dstack(tensors):
    """Stack depthwise (dim 2), after ``atleast_3d``."""
    return indexing.cat([shape_ops.atleast_3d(t) for t in tensors], 2)


def is_same_size(input, other):
    """Whether the two shapes are equal."""
    return tuple(input.shape) == tuple(other.shape)


def is_conj(input):
    """False: ember conjugates eagerly (`conj` computes new values), so no conjugate bit."""
    return False


def is_neg(input):
    """False: ember negates eagerly, so no negative bit."""
    return False


def resolve_conj(input):
    """`input` itself: ember's `conj` is eager, so there is no conjugate bit to materialise."""
    return input


def resolve_neg(input):
    """`input` itself: there is no negative bit to materialise."""
    return input


def is_inference(input):
    """False: ember's ``inference_mode`` does not create inference tensors."""
    return False


def fill(input, value):
    """A copy of `input` with every element `value` (a number or a 0-d tensor, whose
    gradient is the sum of the incoming one); ``torch.fill_``/``torch.zero_`` are the
    in-place methods at the top level."""
    return fill_(convert.clone(input), value)


def get_device(input):
    """The CUDA device index of `input`, -1 for a CPU tensor (``Tensor.get_device``)."""
    return input.get_device()


def split_with_sizes(input, split_sizes, dim=0):
    """Views of `input` along `dim` of the given sizes, which must sum to its size there.

    >>> import ember_tensor as torch
    >>> [t.tolist() for t in torch.split_with_sizes(torch.arange(3), [1, 2])]
    [[0], [1, 2]]
    """
    if isinstance(split_sizes, int) or not all(isinstance(s, int) for s in split_sizes):
        raise TypeError("split_with_sizes(): argument 'split_sizes' (position 2) must be tuple of ints, "
                        f"not {type(split_sizes).__name__}")
    sizes = list(split_sizes)
    if any(s < 0 for s in sizes):
        raise RuntimeError(f"split_with_sizes expects split_sizes have only non-negative entries, but got "
                           f"split_sizes={sizes}")
    return view_splits.split(input, sizes, dim)


def typename(obj, /):
    """The qualified name of `obj`'s type: ``x.type()`` for a tensor ('torch.FloatTensor')."""
    if isinstance(obj, Tensor):
        return obj.type()
    module = getattr(obj, "__module__", "") or ""
    if hasattr(obj, "__qualname__"):
        qualname = obj.__qualname__
    elif hasattr(obj, "__name__"):
        qualname = obj.__name__
    else:
        module, qualname = obj.__class__.__module__ or "", obj.__class__.__qualname__
    return qualname if module in ("", "builtins") else f"{module}.{qualname}"


def rsub(input, other, *, alpha=1):
    """``other - alpha * input`` (sub with its operands swapped; a function only, as in PyTorch)."""
    return E.sub(other, input, alpha=alpha)


def _float_dtype(input, other):
    result = D.promote_types(input.dtype, other.dtype)
    return result if result.is_floating_point else D.get_default_dtype()


def ldexp(input, other, *, out=None):
    """``input * 2 ** other`` (`other` a tensor; integers give the default float dtype).

    >>> import ember_tensor as torch
    >>> torch.ldexp(torch.tensor([1., 3.]), torch.tensor([2, -1])).tolist()
    [4.0, 1.5]
    """
    if not isinstance(other, Tensor):
        raise TypeError(f"ldexp(): argument 'other' (position 2) must be Tensor, not {type(other).__name__}")
    dtype = _float_dtype(input, other)
    return E.mul(input.to(dtype), E.pow(2.0, other.to(dtype)), out=out)


def ldexp_(input, other):
    """In-place ``ldexp``."""
    return input.copy_(ldexp(input, other))
