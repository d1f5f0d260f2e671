"""torch.gradient: derivatives estimated from samples by finite differences.

Central differences inside, one-sided ones of first or second order at the two ends, with
a constant spacing (a number per dim) or sample coordinates (a 1-d tensor per dim) for
unevenly spaced samples: NumPy's `gradient` formulas, which PyTorch uses too. Built from
slicing and arithmetic, so every device runs them and autograd differentiates them.
Integer samples give the default float dtype.
"""
from numbers import Number

from .. import _dtype as D
from .._dispatch import op
from .._tensor import Tensor, wrap_dim
from . import indexing, views
from . import elementwise as E

__all__ = ["gradient"]


def _dims(f, dim):
    if dim is None:
        return list(range(f.dim()))
    dims = [dim] if isinstance(dim, int) else list(dim)
    wrapped = [wrap_dim(d, f.dim()) for d in dims]
    if len(set(wrapped)) != len(wrapped):
        raise RuntimeError("dim appears multiple times in the list of dims")
    return wrapped


def _spacings(f, spacing, dims, dim_given):
    """One spacing per dim of `dims`: a Python number or a 1-d coordinate tensor."""
    if spacing is None:
        return [1.0] * len(dims)
    if isinstance(spacing, (Number, Tensor)) and not (isinstance(spacing, Tensor) and spacing.dim() > 0):
        value = spacing.item() if isinstance(spacing, Tensor) else spacing
        return [value] * len(dims)
    spacing = list(spacing)
    if len(spacing) != len(dims):
        if dim_given:
            raise RuntimeError("torch.gradient expected spacing to be unspecified, a scalar or it's spacing and "
                               f"dim arguments to have the same length, but got a spacing argument of length "
                               f"{len(spacing)} and a dim argument of length {len(dims)}.")
        raise RuntimeError("torch.gradient expected spacing to be unspecified, a scalar, or a list of length "
                           f"equal to 'self.dim() = {f.dim()}', since dim argument was not given, but got a "
                           f"list of length {len(spacing)}")
    for s, d in zip(spacing, dims):
        if isinstance(s, Tensor) and s.dim() == 1 and s.shape[0] != f.shape[d]:
            raise RuntimeError(f"torch.gradient expected each tensor to be on the same device and to have the "
                               f"same number of elements as input's dimension {d}, but got {s.shape[0]} and "
                               f"{f.shape[d]}")
    return [s.item() if isinstance(s, Tensor) and s.dim() == 0 else s for s in spacing]


def _along(t, dim, ndim):
    """A 1-d tensor `t` shaped to broadcast along `dim` of an `ndim`-d tensor."""
    shape = [1] * ndim
    shape[dim] = t.shape[0]
    return views.reshape(t, shape)


def _part(f, dim, start, stop):
    """f[start:stop] along `dim` (0 <= start <= stop <= size)."""
    return views.narrow(f, dim, start, stop - start)


def _uniform(f, dim, h, edge_order):
    n = f.shape[dim]
    inner = E.div(E.sub(_part(f, dim, 2, n), _part(f, dim, 0, n - 2)), 2.0 * h)
    first, second, last, before = (_part(f, dim, i, i + 1) for i in (0, 1, n - 1, n - 2))
    if edge_order == 1:
        start = E.div(E.sub(second, first), h)
        end = E.div(E.sub(last, before), h)
    else:
        third, third_last = _part(f, dim, 2, 3), _part(f, dim, n - 3, n - 2)
        start = E.div(E.add(E.sub(E.mul(second, 4.0), E.mul(first, 3.0)), E.neg(third)), 2.0 * h)
        end = E.div(E.add(E.sub(E.mul(last, 3.0), E.mul(before, 4.0)), third_last), 2.0 * h)
    return indexing.cat([start, inner, end], dim)


def _coordinates(f, dim, x, edge_order):
    n, ndim = f.shape[dim], f.dim()
    x = x.to(f.dtype)
    steps = E.sub(views.narrow(x, 0, 1, n - 1), views.narrow(x, 0, 0, n - 1))  # h[i] = x[i+1] - x[i]
    hd = _along(views.narrow(steps, 0, 0, n - 2), dim, ndim)  # to the left of each inner point
    hs = _along(views.narrow(steps, 0, 1, n - 2), dim, ndim)  # to the right
    numerator = E.sub(E.add(E.mul(E.mul(hd, hd), _part(f, dim, 2, n)),
                            E.mul(E.sub(E.mul(hs, hs), E.mul(hd, hd)), _part(f, dim, 1, n - 1))),
                      E.mul(E.mul(hs, hs), _part(f, dim, 0, n - 2)))
    inner = E.div(numerator, E.mul(E.mul(hs, hd), E.add(hd, hs)))
    first, second, last, before = (_part(f, dim, i, i + 1) for i in (0, 1, n - 1, n - 2))
    if edge_order == 1:
        start = E.div(E.sub(second, first), views.select(steps, 0, 0))
        end = E.div(E.sub(last, before), views.select(steps, 0, n - 2))
    else:
        third, third_last = _part(f, dim, 2, 3), _part(f, dim, n - 3, n - 2)
        d1, d2 = views.select(steps, 0, 0), views.select(steps, 0, 1)
        a = E.neg(E.div(E.add(E.mul(d1, 2.0), d2), E.mul(d1, E.add(d1, d2))))
        b = E.div(E.add(d1, d2), E.mul(d1, d2))
        c = E.neg(E.div(d1, E.mul(d2, E.add(d1, d2))))
        start = E.add(E.add(E.mul(a, first), E.mul(b, second)), E.mul(c, third))
        d1, d2 = views.select(steps, 0, n - 3), views.select(steps, 0, n - 2)
        a = E.div(d2, E.mul(d1, E.add(d1, d2)))
        b = E.neg(E.div(E.add(d2, d1), E.mul(d1, d2)))
        c = E.div(E.add(E.mul(d2, 2.0), d1), E.mul(d2, E.add(d1, d2)))
        end = E.add(E.add(E.mul(a, third_last), E.mul(b, before)), E.mul(c, last))
    return indexing.cat([start, inner, end], dim)


@op(composite=True)
def gradient(input, *, spacing=None, dim=None, edge_order=1):
    """The derivative of the samples `input` along each of `dim` (all dims by default),
    one tensor per dim, by central differences inside and one-sided differences of order
    `edge_order` (1 or 2) at the ends. `spacing`: a number, one number per dim, or one
    1-d tensor of sample coordinates per dim.

    >>> import ember_tensor as torch
    >>> torch.gradient(torch.tensor([1., 2., 4., 7., 11.]))
    (tensor([1.0000, 1.5000, 2.5000, 3.5000, 4.0000]),)
    """
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    dims = _dims(input, dim)
    spacings = _spacings(input, spacing, dims, dim is not None)
    for d in dims:
        if input.shape[d] < edge_order + 1:
            raise RuntimeError("torch.gradient expected each dimension size to be at least edge_order+1")
    f = input if input._dtype.category in (D._FLOAT, D._COMPLEX) else input.to(D.get_default_dtype())
    results = []
    for d, s in zip(dims, spacings):
        if isinstance(s, Tensor):
            results.append(_coordinates(f, d, s, edge_order))
        else:
            results.append(_uniform(f, d, s, edge_order))
    return tuple(results)
