"""The sample frequencies of a transform (`fftfreq`, `rfftfreq`) and the shifts that put
frequency 0 in the middle of a spectrum (`fftshift`, `ifftshift`).

>>> import ember_tensor as torch
>>> torch.fft.fftfreq(4)
tensor([ 0.0000,  0.2500, -0.5000, -0.2500])
>>> torch.fft.fftshift(torch.fft.fftfreq(4))
tensor([-0.5000, -0.2500,  0.0000,  0.2500])
"""
import numpy as np

from ... import _dtype as D
from ..._tensor import wrap_dim
from ..creation import _dtype_or_default, _into, from_host, parse_shape
from ..shape_ops import roll

__all__ = ["fftfreq", "rfftfreq", "fftshift", "ifftshift"]


def _frequencies(name, indices, n, d, out, dtype, device, requires_grad):
    dtype = _dtype_or_default(dtype)
    if dtype.category == D._COMPLEX:
        raise NotImplementedError(f'"arange_cpu" not implemented for \'{D.scalar_type_name(dtype)}\'')
    if dtype.category != D._FLOAT:
        raise RuntimeError(f"{name} requires a floating point or complex dtype")
    # PyTorch multiplies the indices by 1/(n*d) in the result's precision (its opmath:
    # float32 for the half types), so compute there too, not in float64 and round.
    compute = np.float64 if dtype == D.float64 else np.float32
    scale = compute(1.0 / (n * d)) if n * d else compute(np.inf)  # as C++'s 1.0 / 0: rfftfreq(0) is [nan]
    with np.errstate(invalid="ignore"):
        values = indices.astype(compute) * scale
    return _into(out, from_host(values, dtype, device, requires_grad))


def fftfreq(n, d=1.0, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """The sample frequencies of an `n`-point transform with sample spacing `d`:
    [0, 1, ..., (n - 1) // 2, -(n // 2), ..., -1] / (d * n).

    >>> import ember_tensor as torch
    >>> torch.fft.fftfreq(5, d=0.5)
    tensor([ 0.0000,  0.4000,  0.8000, -0.8000, -0.4000])
    """
    parse_shape((n,), "fftfreq")
    indices = np.arange(n, dtype=np.int64)
    indices[(n + 1) // 2:] -= n
    return _frequencies("fftfreq", indices, n, d, out, dtype, device, requires_grad)


def rfftfreq(n, d=1.0, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """The non-negative sample frequencies of an `n`-point `rfft`: [0, 1, ..., n // 2] / (d * n).

    >>> import ember_tensor as torch
    >>> torch.fft.rfftfreq(4)
    tensor([0.0000, 0.2500, 0.5000])
    """
    parse_shape((n,), "rfftfreq")
    return _frequencies("rfftfreq", np.arange(n // 2 + 1, dtype=np.int64), n, d, out, dtype, device,
                        requires_grad)


def _shift(input, dim, amount):
    dims = range(input.dim()) if dim is None else ([dim] if isinstance(dim, int) else dim)
    dims = [wrap_dim(d, input.dim()) for d in dims]
    if not dims:  # a 0-d tensor, or dim=(): PyTorch's roll refuses empty shifts
        raise RuntimeError("`shifts` required")
    return roll(input, [amount(input.shape[d]) for d in dims], dims)


def fftshift(input, dim=None):
    """`input` rolled so that frequency 0 is in the middle of each of `dim` (default all),
    as `fftfreq` orders frequencies.

    >>> import ember_tensor as torch
    >>> torch.fft.fftshift(torch.arange(5))
    tensor([3, 4, 0, 1, 2])
    """
    return _shift(input, dim, lambda size: size // 2)


def ifftshift(input, dim=None):
    """The inverse of `fftshift`.

    >>> import ember_tensor as torch
    >>> torch.fft.ifftshift(torch.arange(5))
    tensor([2, 3, 4, 0, 1])
    """
    return _shift(input, dim, lambda size: (size + 1) // 2)
