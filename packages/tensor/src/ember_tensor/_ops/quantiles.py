"""quantile and nanquantile: a sort along the reduced dim, a gather at the two ranks around
each quantile, and an interpolation between them (PyTorch's algorithm).

A composition of sort, gather and elementwise ops, so it runs on every device and autograd
differentiates it through the sorted values it picks.
"""
from .. import _dtype as D
from .._dispatch import op
from .._tensor import Tensor, wrap_dim
from . import creation, elementwise as E
from .elementwise import copy_to_out

__all__ = ["quantile", "nanquantile"]

_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _check(input, q, interpolation):
    """`q` as a 1-d tensor of `input`'s dtype and device, after PyTorch's checks."""
    if input._dtype not in (D.float32, D.float64):
        raise RuntimeError("quantile() input tensor must be either float or double dtype")
    if input._data.size == 0:
        raise RuntimeError("quantile() input tensor must be non-empty")
    if interpolation not in _INTERPOLATIONS:
        raise RuntimeError("quantile() interpolation must be one of linear, lower, higher, midpoint or nearest, "
                           f"but got {interpolation}")
    if isinstance(q, Tensor):
        if q._data.ndim > 1:
            raise RuntimeError("quantile() q must be a scalar or 1D tensor")
        if q._dtype is not input._dtype:
            raise RuntimeError("quantile() q tensor must be same dtype as the input tensor")
        if q.device != input.device:
            raise RuntimeError("quantile() q tensor must be on the same device as the input tensor")
        qs = q.reshape(-1)
        # One read back, as PyTorch's range check does.
        if qs.numel() and not bool(E.logical_and(E.ge(qs, 0), E.le(qs, 1)).all()):
            raise RuntimeError("quantile() q values must be in the range [0, 1]")
        return qs
    if not 0 <= q <= 1:
        raise RuntimeError(f"quantile() q must be in the range [0, 1] but got {q}")
    return creation.tensor([float(q)], dtype=input._dtype, device=input.device)


def _quantile(input, q, dim, keepdim, interpolation, ignore_nan):
    qs = _check(input, q, interpolation)
    scalar_q = not isinstance(q, Tensor) or q._data.ndim == 0
    if dim is None:
        rows, d = input.reshape(1, -1), None
    else:
        d = wrap_dim(dim, input._data.ndim)
        rows = input.reshape(1) if input._data.ndim == 0 else input.movedim(d, -1)
        rows = rows.unsqueeze(0) if rows._data.ndim == 1 else rows
    values = rows.sort(-1).values  # NaN sorts last
    n = values.shape[-1]
    nan_count = E.isnan(values).sum(-1, keepdim=True)
    if ignore_nan:
        valid = E.sub(n, nan_count).to(input._dtype)  # (..., 1)
    else:
        valid = creation.full((1,), n, dtype=input._dtype, device=input.device)
    rank = E.mul(qs, E.sub(valid, 1))  # (..., nq)
    if interpolation == "lower":
        rank = E.floor(rank)
    elif interpolation == "higher":
        rank = E.ceil(rank)
    elif interpolation == "nearest":
        rank = E.round(rank)
    # A row of NaN only has valid == 0 and a negative rank: its result is NaN below anyway.
    below = E.clamp(E.floor(rank), 0, n - 1).to(D.int64)
    above = E.clamp(E.ceil(rank), 0, n - 1).to(D.int64)
    shape = tuple(values.shape[:-1]) + (qs.numel(),)
    low = values.gather(-1, below.expand(shape))
    high = values.gather(-1, above.expand(shape))
    weight = 0.5 if interpolation == "midpoint" else E.sub(rank, below.to(input._dtype)).expand(shape)
    result = E.lerp(low, high, weight)
    # quantile: a row holding NaN gives NaN; nanquantile: only a row of NaN does.
    no_answer = E.eq(nan_count, n) if ignore_nan else E.gt(nan_count, 0)
    result = E.where(no_answer, float("nan"), result)
    result = result.movedim(-1, 0)  # (nq, rows...)
    if dim is None:
        result = result.reshape((qs.numel(),) + ((1,) * input._data.ndim if keepdim else ()))
    else:
        out_shape = list(input.shape)
        if out_shape:
            if keepdim:
                out_shape[d] = 1
            else:
                del out_shape[d]
        result = result.reshape([qs.numel()] + out_shape)
    return result.squeeze(0) if scalar_q else result


@op()
def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear", out=None):
    """The `q`-th quantiles of `input` (over all elements, or along `dim`).

    `q` is a number or a 1-d tensor in [0, 1]; with a tensor the quantiles make the first
    dim of the result. `interpolation` says how to pick between the two ranks around a
    quantile: 'linear', 'lower', 'higher', 'midpoint' or 'nearest'. A NaN gives NaN.

    >>> import ember_tensor as torch
    >>> torch.quantile(torch.tensor([1., 2., 3., 4.]), 0.5).item()
    2.5
    """
    return copy_to_out(_quantile(input, q, dim, keepdim, interpolation, False), out)


@op()
def nanquantile(input, q, dim=None, keepdim=False, *, interpolation="linear", out=None):
    """`quantile` ignoring NaN: the quantiles of the other values (NaN where all are NaN).

    >>> import ember_tensor as torch
    >>> torch.nanquantile(torch.tensor([1., float("nan"), 3.]), 0.5).item()
    2.0
    """
    return copy_to_out(_quantile(input, q, dim, keepdim, interpolation, True), out)
