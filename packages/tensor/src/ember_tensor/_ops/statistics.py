"""Statistics over observations: cov, corrcoef, cdist, histogram and histogramdd.

Compositions of reductions, matmul, searchsorted and index_add, after PyTorch's own
algorithms (Correlation.cpp, Distance.cpp, Histogram.cpp), so they run on every device;
cov, corrcoef and cdist are differentiated through their parts (cdist's distances of
zero get a zero gradient, as PyTorch's backward gives).
"""
import math
import warnings

from .. import _dtype as D
from .._dispatch import op
from .._tensor import Tensor
from . import _iter, creation, counting, indexing, linalg, views
from . import elementwise as E
from .reduction import return_types

__all__ = ["cov", "corrcoef", "cdist", "histogram", "histogramdd"]


# --- cov, corrcoef -----------------------------------------------------------------------

def _check_weights(name, w, num_obs, integral):
    if w._data.ndim > 1:
        raise RuntimeError(f"cov(): expected {name} to have one or fewer dimensions but got {name} with "
                           f"{w._data.ndim} dimensions")
    if w.numel() != num_obs:
        raise RuntimeError(f"cov(): expected {name} to have the same numel as there are observations in the "
                           f"input but got {w.numel()} != {num_obs}")
    is_int = w._dtype.category == D._INT and w._dtype is not D.bool
    if integral and not is_int:
        raise RuntimeError(f"cov(): expected {name} to have integral dtype but got {name} with "
                           f"{_iter.type_name(w._dtype)} dtype")
    if not integral and w._dtype.category != D._FLOAT:
        raise RuntimeError(f"cov(): expected {name} to have floating point dtype but got {name} with "
                           f"{_iter.type_name(w._dtype)} dtype")
    if w.numel() and bool(E.lt(w, 0).any()):  # one read back, as PyTorch's check does
        raise RuntimeError(f"cov(): {name} cannot be negative")


@op()
def cov(input, *, correction=1, fweights=None, aweights=None):
    """The covariance matrix of the variables in the rows of `input` (observations in its
    columns); a 1-d input is one variable and gives a 0-d result.

    `correction` is subtracted from the number of observations (1: Bessel's correction);
    `fweights` (integers) repeat observations, `aweights` (floats) weigh them.

    >>> import ember_tensor as torch
    >>> torch.cov(torch.tensor([[0., 1., 2.], [2., 1., 0.]])).tolist()
    [[1.0, -1.0], [-1.0, 1.0]]
    """
    if input._data.ndim > 2:
        raise RuntimeError("cov(): expected input to have two or fewer dimensions but got an input with "
                           f"{input._data.ndim} dimensions")
    x = input if input._data.ndim == 2 else views.reshape(input, (1, -1))
    num_obs = x.shape[1]
    w = None
    if fweights is not None:
        _check_weights("fweights", fweights, num_obs, True)
        w = fweights
    if aweights is not None:
        _check_weights("aweights", aweights, num_obs, False)
        w = aweights if w is None else E.mul(w, aweights)
    if w is None:
        w_sum = num_obs
        avg = E.div(x.sum(1), num_obs)
    else:
        w_sum = w.sum()
        avg = E.div(E.mul(x, w).sum(1), w_sum)
    if w is not None and aweights is not None and correction != 0:
        norm_factor = E.sub(w_sum, E.div(E.mul(E.mul(w, aweights).sum(), correction), w_sum))
    else:
        norm_factor = E.sub(w_sum, correction) if isinstance(w_sum, Tensor) else w_sum - correction
    if float(norm_factor) <= 0:  # one read back, as PyTorch's warning needs
        warnings.warn("cov(): degrees of freedom is <= 0. Correction should be strictly less than the "
                      "number of observations.", UserWarning, stacklevel=3)
        norm_factor = 0.0 if isinstance(norm_factor, (int, float)) else E.mul(norm_factor, 0)
    centered = E.sub(x, views.unsqueeze(avg, 1))
    weighted = centered if w is None else E.mul(centered, w)
    c = linalg.mm(centered, views.t(weighted))
    return views.squeeze(E.div(c, norm_factor))


@op()
def corrcoef(input):
    """Pearson's correlation coefficients of the variables in the rows of `input`
    (observations in its columns), clipped to [-1, 1].

    >>> import ember_tensor as torch
    >>> torch.corrcoef(torch.tensor([[0., 1., 2.], [2., 1., 0.]])).tolist()
    [[1.0, -1.0], [-1.0, 1.0]]
    """
    c = cov(input)
    if c._data.ndim == 0:
        return E.div(c, c)  # one variable: 1, or NaN when it does not vary
    std = E.sqrt(linalg.diag(c))
    c = E.div(E.div(c, views.unsqueeze(std, 1)), views.unsqueeze(std, 0))
    return E.clamp(c, -1, 1)


# --- cdist ---------------------------------------------------------------------------------

_COMPUTE_MODES = ("use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist", "donot_use_mm_for_euclid_dist")


def _root_or_zero(s, p):
    """``s ** (1 / p)`` with a zero gradient where s is 0 (a plain root's is infinite)."""
    positive = E.gt(s, 0)
    root = E.pow(E.where(positive, s, 1.0), 1.0 / p)
    return E.where(positive, root, 0.0)


def _euclidean_by_mm(x1, x2):
    # |a - b|^2 = |a|^2 - 2 a.b + |b|^2 as one batched product (PyTorch's _euclidean_dist).
    x1_norm = E.mul(x1, x1).sum(-1, keepdim=True)
    x2_norm = E.mul(x2, x2).sum(-1, keepdim=True)
    x1_ = indexing.cat([E.mul(x1, -2), x1_norm, creation.ones_like(x1_norm)], -1)
    x2_ = indexing.cat([x2, creation.ones_like(x2_norm), x2_norm], -1)
    squared = E.clamp_min(linalg.matmul(x1_, views.transpose(x2_, -1, -2)), 0)
    return _root_or_zero(squared, 2)


@op()
def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    """The p-norm distance between each row of `x1` (..., P, M) and each row of `x2`
    (..., R, M): a (..., P, R) tensor; batch dims broadcast.

    For p = 2 and more than 25 rows on either side the distances come from one matrix
    product (`compute_mode` chooses: always, never, or by that size rule), as in PyTorch.

    >>> import ember_tensor as torch
    >>> torch.cdist(torch.tensor([[0., 0.]]), torch.tensor([[3., 4.], [1., 0.]])).tolist()
    [[5.0, 1.0]]
    """
    for name, t in (("X1", x1), ("X2", x2)):
        if t._data.ndim < 2:
            raise RuntimeError(f"cdist only supports at least 2D tensors, {name} got: {t._data.ndim}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: {x1.shape[-1]} "
                           f"X2: {x2.shape[-1]}")
    for name, t in (("X1", x1), ("X2", x2)):
        if t._dtype.category != D._FLOAT:
            raise RuntimeError(f"cdist only supports floating-point dtypes, {name} got: "
                               f"{_iter.type_name(t._dtype)}")
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    if compute_mode not in _COMPUTE_MODES:
        raise RuntimeError(f"{compute_mode} is not a valid value for compute_mode")
    rows1, rows2 = x1.shape[-2], x2.shape[-2]
    use_mm = p == 2 and (compute_mode == "use_mm_for_euclid_dist" or (
        compute_mode == "use_mm_for_euclid_dist_if_necessary" and (rows1 > 25 or rows2 > 25)))
    if use_mm:
        return _euclidean_by_mm(x1, x2)
    diff = E.sub(views.unsqueeze(x1, -2), views.unsqueeze(x2, -3))  # (..., P, R, M)
    if p == 0:
        return E.ne(diff, 0).sum(-1).to(diff.dtype)
    if math.isinf(p):
        return E.abs(diff).amax(-1) if diff.shape[-1] else diff.sum(-1)
    if p == 1:
        return E.abs(diff).sum(-1)
    powered = E.mul(diff, diff) if p == 2 else E.pow(E.abs(diff), p)
    return _root_or_zero(powered.sum(-1), p)


# --- histogram, histogramdd ------------------------------------------------------------------

_Histogram = return_types.structseq("histogram", ("hist", "bin_edges"))
_HistogramDD = return_types.structseq("histogramdd", ("hist", "bin_edges"))


def _edges(name, column, bins, bounds, dtype, device):
    """The bin edges of one dimension: a given 1-d tensor, or `bins` equal bins over
    `bounds` (the data's range when None; a zero width is widened to 1)."""
    if isinstance(bins, Tensor):
        if bins._data.ndim != 1:
            raise RuntimeError(f"{name}(): bins tensor should have one dimension, but got {bins._data.ndim} "
                               "dimensions in the bins tensor")
        if bins.numel() < 1:
            raise RuntimeError(f"{name}(): bins tensor should have at least 1 element, but got 0 elements")
        return bins.to(dtype)
    if bins <= 0:
        raise RuntimeError(f"{name}(): bins must be > 0, but got {bins} for dimension 0")
    if bounds is None:
        lo, hi = (float(column.amin()), float(column.amax())) if column.numel() else (0.0, 0.0)
    else:
        lo, hi = float(bounds[0]), float(bounds[1])
        if lo > hi:
            raise RuntimeError(f"{name}(): min should not exceed max, but got min {lo} max {hi} for dimension 0")
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise RuntimeError(f"{name}(): range of [{lo}, {hi}] is not finite")
    if lo == hi:
        lo, hi = lo - 0.5, hi + 0.5
    return creation.linspace(lo, hi, bins + 1, dtype=dtype, device=device)


def _histogramdd(name, input, bins, bounds, weight, density):
    if input._dtype.category != D._FLOAT:
        raise NotImplementedError(f"\"histogramdd\" not implemented for '{_iter.type_name(input._dtype)}'")
    dims = input.shape[-1]
    points = views.reshape(input, (-1, dims))
    if isinstance(bins, (int, Tensor)):
        bins = [bins] * dims
    if len(bins) != dims:
        raise RuntimeError(f"{name}(): expected {dims} sequences of bin edges for each dimension of the input "
                           f"tensor, but got {len(bins)}")
    if bounds is not None and len(bounds) != 2 * dims:
        raise RuntimeError(f"{name}(): expected {2 * dims} values in the range argument, but got {len(bounds)}")
    edges, sizes = [], []
    flat = None
    keep = None
    for d in range(dims):
        column = views.select(points, 1, d)
        e = _edges(name, column, bins[d], None if bounds is None else bounds[2 * d:2 * d + 2], input._dtype,
                   input.device)
        n = e.numel() - 1
        edges.append(e)
        sizes.append(n)
        # Bin i holds [e[i], e[i + 1]); the last bin also holds its right edge.
        position = E.sub(counting.searchsorted(e, column.contiguous(), right=True), 1)
        position = E.where(E.eq(column, views.select(e, 0, n)), n - 1, position)
        inside = E.logical_and(E.ge(position, 0), E.lt(position, n))
        keep = inside if keep is None else E.logical_and(keep, inside)
        position = E.clamp(position, 0, max(n - 1, 0))
        flat = position if flat is None else E.add(E.mul(flat, n), position)
    weights = creation.ones(points.shape[:1], dtype=input._dtype, device=input.device) if weight is None \
        else views.reshape(weight, (-1,)).to(input._dtype)
    weights = E.where(keep, weights, 0.0)
    total = 1
    for n in sizes:
        total *= n
    hist = creation.zeros((total,), dtype=input._dtype, device=input.device)
    if total and points.shape[0]:
        hist = hist.index_add(0, flat, weights)
    hist = views.reshape(hist, tuple(sizes))
    if density:
        hist = E.div(hist, hist.sum())
        for d, e in enumerate(edges):
            width = E.sub(views.narrow(e, 0, 1, sizes[d]), views.narrow(e, 0, 0, sizes[d]))
            shape = [1] * dims
            shape[d] = sizes[d]
            hist = E.div(hist, views.reshape(width, shape))
    return hist, tuple(edges)


@op()
def histogram(input, bins=100, *, range=None, weight=None, density=False, out=None):  # noqa: A002
    """A histogram of the values of `input`: `bins` equal bins over `range` (the data's
    range by default) or the bin edges given as a 1-d tensor. Values outside are ignored;
    the last bin includes its right edge. Returns ``(hist, bin_edges)``.

    With `weight` each value counts its weight; with `density` the histogram integrates to 1.

    >>> import ember_tensor as torch
    >>> torch.histogram(torch.tensor([1., 2., 1.]), bins=4, range=(0., 3.)).hist.tolist()
    [0.0, 2.0, 1.0, 0.0]
    """
    if weight is not None and weight.shape != input.shape:
        raise RuntimeError("histogram(): if weight tensor is provided it should have the same shape as the "
                           "input tensor excluding its innermost dimension")
    hist, edges = _histogramdd("histogram", views.reshape(input, (-1, 1)), [bins], range, weight, density)
    if out is not None:
        E.copy_to_out(hist, out[0])
        E.copy_to_out(edges[0], out[1])
        return _Histogram(out[0], out[1])
    return _Histogram(hist, edges[0])


@op()
def histogramdd(input, bins=10, *, range=None, weight=None, density=False):  # noqa: A002
    """A D-dimensional histogram of the points in the rows of `input` (..., D). `bins` is
    an int (for every dim), a list of ints, or a list of 1-d edge tensors; `range` is
    ``[min_0, max_0, min_1, max_1, ...]``. Returns ``(hist, bin_edges)`` with one edge
    tensor per dim.

    >>> import ember_tensor as torch
    >>> torch.histogramdd(torch.tensor([[0., 0.], [1., 1.]]), bins=[2, 2]).hist.tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    """
    if weight is not None and tuple(weight.shape) != tuple(input.shape[:-1]):
        raise RuntimeError("histogramdd(): if weight tensor is provided it should have the same shape as the "
                           "input tensor excluding its innermost dimension")
    hist, edges = _histogramdd("histogramdd", input, bins, range, weight, density)
    return _HistogramDD(hist, edges)
