"""The trapezoidal rule along a dim: trapezoid (and its older name trapz) and
cumulative_trapezoid.

Compositions of slicing, sum, cumsum and diff (PyTorch's own formulas), so they run on
every device and autograd differentiates them through their parts. Integer samples
integrate in the default float dtype; bool samples are refused, as in PyTorch.
"""
from .. import _dtype as D
from .._dispatch import op
from .._tensor import Tensor, wrap_dim
from . import creation, reduction, scans, views
from . import elementwise as E

__all__ = ["trapezoid", "trapz", "cumulative_trapezoid"]


def _check(name, y, x, dx):
    if y._dtype is D.bool:
        raise RuntimeError(f"{name}: received a bool input for `y`, but bool is not supported")
    if x is not None and dx is not None:
        raise TypeError(f"{name}() received an invalid combination of arguments: give the sample points `x` "
                        "or the spacing `dx`, not both")
    if x is not None and not isinstance(x, Tensor):
        raise TypeError(f"{name}(): argument 'x' (position 2) must be Tensor, not {type(x).__name__}")
    if y.dim() == 0:
        raise IndexError("Dimension specified as -1 but tensor has no dimensions")


def _slices(y, dim):
    """y[1:] and y[:-1] along `dim`."""
    n = y.shape[dim]
    return views.narrow(y, dim, 1, n - 1), views.narrow(y, dim, 0, n - 1)


def _spacings(name, y, x, dim):
    """The spacings x[i+1] - x[i], shaped to broadcast with y's pairs along `dim`."""
    if x.dim() == 1:
        if x.shape[0] != y.shape[dim]:
            raise RuntimeError(f"{name}: There must be one `x` value for each sample point")
        shape = [1] * y.dim()
        shape[dim] = x.shape[0]
        x = views.reshape(x, shape)
    elif x.dim() < y.dim():
        x = views.reshape(x, (1,) * (y.dim() - x.dim()) + tuple(x.shape))
    right, left = _slices(x, dim)
    return E.sub(right, left)


@op()
def trapezoid(y, x=None, *, dx=None, dim=-1):
    """The integral of samples `y` along `dim` by the trapezoidal rule, with sample points
    `x` (a tensor) or a constant spacing `dx` (default 1).

    >>> import ember_tensor as torch
    >>> torch.trapezoid(torch.tensor([1., 2., 3.])).item()
    4.0
    """
    _check("trapezoid", y, x, dx)
    dim = wrap_dim(dim, y.dim())
    if y.shape[dim] == 0:
        return creation.zeros_like(reduction.sum(y, dim), dtype=E.mul(y, 0.5)._dtype)
    if x is None:
        ends = E.add(views.select(y, dim, 0), views.select(y, dim, -1))
        return E.mul(E.sub(reduction.sum(y, dim), E.mul(ends, 0.5)), 1 if dx is None else dx)
    right, left = _slices(y, dim)
    return E.div(reduction.sum(E.mul(_spacings("trapezoid", y, x, dim), E.add(right, left)), dim), 2.0)


def trapz(y, x=None, *, dx=None, dim=-1):
    """PyTorch's older name of ``trapezoid``."""
    return trapezoid(y, x, dx=dx, dim=dim)


@op()
def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    """The running integral of `y` along `dim` by the trapezoidal rule: one element fewer
    than `y` along `dim` (sample points `x` or a constant spacing `dx`, default 1).

    >>> import ember_tensor as torch
    >>> torch.cumulative_trapezoid(torch.tensor([1., 2., 3.])).tolist()
    [1.5, 4.0]
    """
    _check("cumulative_trapezoid", y, x, dx)
    dim = wrap_dim(dim, y.dim())
    if y.shape[dim] == 0:
        return E.mul(y, 0.5)
    right, left = _slices(y, dim)
    if x is None:
        return scans.cumsum(E.mul(E.add(right, left), (1 if dx is None else dx) / 2.0), dim)
    return E.div(scans.cumsum(E.mul(_spacings("cumulative_trapezoid", y, x, dim), E.add(right, left)), dim), 2.0)
