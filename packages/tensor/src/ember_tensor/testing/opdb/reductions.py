"""The op database's reductions: `ReductionInfo` entries with NumPy references."""
import math
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

import ember_tensor as et

from .core import (
    B, COMPLEX, F32, F64, FLOATING, I32, I64, NP, U8, is_inexact,
)

__all__ = ["ReductionInfo", "REDUCTION_DB", "REDUCTIONS"]

# === reductions ===========================================================================
#
# A smaller OpInfo for reductions: the generic tests (test_reductions.py) draw inputs of
# every layout (3-d, transposed, stepped, expanded, 0-d, empty, extremal values), reduce
# them over each dim form the op takes (all, int, negative int, tuple) with and without
# keepdim, and compare with the NumPy reference computed in float64 (int64 for integers).

_NAN_MAX = {"amax", "max"}


@dataclass
class ReductionInfo:
    """What the reduction tests need to know about one reduction.

    ref:      NumPy reference ref(x, axis, keepdims, **kwargs); x is float64 (complex128
              for complex inputs, int64 for integer results); axis is None or a tuple of dims.
    dims:     "tuple" (None, an int or a tuple), "int" (None or one int), "required"
              (an int or a tuple, never None) or "none" (always over all elements).
    result:   rule (input dtype, kwargs) -> result dtype.
    pair:     with an int dim, returns (values, indices) (max, min).
    kwargs:   extra kwarg sets every sample is also run with (var's correction ...).
    domain:   (low, high) floating inputs are drawn from (integers: [-2, 2]).
    empty_error: (exception, message) of a full reduction of an empty tensor, or None
              when that gives the identity; `{name}` is formatted in.
    """
    name: str
    ref: Callable
    dtypes: tuple
    dims: str = "tuple"
    result: Callable = None
    pair: bool = False
    keepdim: bool = True
    kwargs: tuple = ({},)
    domain: tuple = (0.5, 2.0)
    empty_error: tuple = None
    supports_out: bool = True
    method: bool = True
    tol: dict = field(default_factory=dict)

    @property
    def fn(self):
        return getattr(et, self.name)

    def result_dtype(self, dtype, kwargs):
        return self.result(dtype, kwargs) if self.result else dtype


def _sum_result(d, kwargs):
    if kwargs.get("dtype") is not None:
        return kwargs["dtype"]
    return d if is_inexact(d) else I64


def _real_result(d, kwargs):
    """var, std and the norms of complex inputs are real."""
    return d.to_real() if d.is_complex else d


def _mean_result(d, kwargs):
    return kwargs.get("dtype") or d


def _logsumexp_result(d, kwargs):
    return d if is_inexact(d) else F32


def _all_any_result(d, kwargs):
    return U8 if d is U8 else B


def _count_result(d, kwargs):
    return I64


def _argextreme_result(d, kwargs):
    return I64


def _with_dtype(f):
    # dtype= casts the input first (PyTorch's rule), then reduces.
    def ref(x, axis, keepdims, dtype=None, **kw):
        if dtype is not None:
            with np.errstate(all="ignore"):
                x = x.astype(NP[dtype]).astype(np.float64 if dtype.is_floating_point else np.int64)
        return f(x, axis=axis, keepdims=keepdims, **kw)
    return ref


def _ref_var(x, axis, keepdims, unbiased=None, correction=None, sqrt=False):
    ddof = correction if correction is not None else (0 if unbiased is False else 1)
    n = x.size if axis is None else int(np.prod([x.shape[a] for a in axis]))
    mean = np.mean(x, axis=axis, keepdims=True)
    v = np.sum(np.abs(x - mean) ** 2, axis=axis, keepdims=keepdims) / max(0, n - ddof)
    return np.sqrt(v) if sqrt else v


def _ref_var_mean(x, axis, keepdims, sqrt=False, **kw):
    return _ref_var(x, axis, keepdims, sqrt=sqrt, **kw), np.mean(x, axis=axis, keepdims=keepdims)


def _ref_norm(x, axis, keepdims, p="fro"):
    a = np.abs(x)
    if p in ("fro", 2):
        return np.sqrt(np.sum(a * a, axis=axis, keepdims=keepdims))
    if p == 1:
        return np.sum(a, axis=axis, keepdims=keepdims)
    return np.max(a, axis=axis, keepdims=keepdims)  # inf: NaN propagates through max


def _ref_logsumexp(x, axis, keepdims):
    return np.log(np.sum(np.exp(x), axis=axis, keepdims=keepdims))


def _ref_arg(which):
    def ref(x, axis, keepdims):
        f = np.argmax if which == "max" else np.argmin
        if axis is None:  # the flat index; keepdim keeps every dim as size 1
            r = np.asarray(f(x))
            return r.reshape((1,) * x.ndim) if keepdims else r
        (a,) = axis
        r = f(x, axis=a)
        return np.expand_dims(r, a) if keepdims else r
    return ref


def _ref_extreme(which):
    # NumPy's max/min propagate NaN and argmax/argmin find the first NaN: PyTorch's rules.
    values = np.max if which == "max" else np.min

    def ref(x, axis, keepdims):
        if axis is None:
            return values(x)
        return values(x, axis=axis, keepdims=keepdims), _ref_arg(which)(x, axis, keepdims)
    return ref


def _ref_all_any(which):
    f = np.all if which == "all" else np.any

    def ref(x, axis, keepdims):
        return f(x != 0, axis=axis, keepdims=keepdims)
    return ref


def _ref_count_nonzero(x, axis, keepdims):
    return np.sum(x != 0, axis=axis, keepdims=keepdims)


_EMPTY = (RuntimeError, "{name}(): Expected reduction dim to be specified for input.numel() == 0. "
                        "Specify the reduction dim with the 'dim' argument.")
_EMPTY_ARG = (IndexError, "{name}(): Expected reduction dim to be specified for input.numel() == 0.")
_VAR_KWARGS = ({}, {"unbiased": False}, {"correction": 0}, {"correction": 2})
_NORM_KWARGS = ({}, {"p": 1}, {"p": 2}, {"p": math.inf}, {"p": "fro"})
_NUMERIC = FLOATING + (I64, I32, U8, B)
# The reductions PyTorch has for complex inputs sample complex64/complex128 too (nansum,
# the extremes and arg-extremes refuse them: test_reductions' error table).
_C = COMPLEX

REDUCTION_DB = [
    ReductionInfo("sum", _with_dtype(np.sum), _NUMERIC + _C, result=_sum_result,
                  kwargs=({}, {"dtype": F64}, {"dtype": I64})),
    ReductionInfo("mean", _with_dtype(np.mean), FLOATING + _C, result=_mean_result, kwargs=({}, {"dtype": F64})),
    ReductionInfo("nansum", _with_dtype(np.nansum), _NUMERIC, result=_sum_result,
                  kwargs=({}, {"dtype": F64})),
    ReductionInfo("nanmean", _with_dtype(np.nanmean), FLOATING, result=_mean_result, kwargs=({}, {"dtype": F64})),
    ReductionInfo("prod", _with_dtype(np.prod), _NUMERIC + _C, dims="int", result=_sum_result,
                  kwargs=({}, {"dtype": F64})),
    ReductionInfo("amax", np.max, _NUMERIC, empty_error=_EMPTY),
    ReductionInfo("amin", np.min, _NUMERIC, empty_error=_EMPTY),
    ReductionInfo("max", _ref_extreme("max"), _NUMERIC, dims="int", pair=True, empty_error=_EMPTY),
    ReductionInfo("min", _ref_extreme("min"), _NUMERIC, dims="int", pair=True, empty_error=_EMPTY),
    ReductionInfo("argmax", _ref_arg("max"), FLOATING + (I64, I32, U8), dims="int", result=_argextreme_result,
                  empty_error=_EMPTY_ARG),
    ReductionInfo("argmin", _ref_arg("min"), FLOATING + (I64, I32, U8), dims="int", result=_argextreme_result,
                  empty_error=_EMPTY_ARG),
    ReductionInfo("var", _ref_var, FLOATING + _C, result=_real_result, kwargs=_VAR_KWARGS),
    ReductionInfo("std", lambda x, axis, keepdims, **kw: _ref_var(x, axis, keepdims, sqrt=True, **kw), FLOATING + _C,
                  result=_real_result, kwargs=_VAR_KWARGS),
    # (var_mean/std_mean: result names the first output's dtype; the mean keeps the input's)
    ReductionInfo("var_mean", _ref_var_mean, FLOATING + _C, result=_real_result, kwargs=_VAR_KWARGS,
                  supports_out=False, method=False),
    ReductionInfo("std_mean", lambda x, axis, keepdims, **kw: _ref_var_mean(x, axis, keepdims, sqrt=True, **kw),
                  FLOATING + _C, result=_real_result, kwargs=_VAR_KWARGS, supports_out=False, method=False),
    ReductionInfo("norm", _ref_norm, FLOATING + _C, result=_real_result, kwargs=_NORM_KWARGS, domain=(-2.0, 2.0)),
    ReductionInfo("logsumexp", _ref_logsumexp, FLOATING + (I64, B) + _C, dims="required", result=_logsumexp_result,
                  domain=(-5.0, 5.0)),
    ReductionInfo("all", _ref_all_any("all"), _NUMERIC + _C, result=_all_any_result, domain=(-1.0, 1.0)),
    ReductionInfo("any", _ref_all_any("any"), _NUMERIC + _C, result=_all_any_result, domain=(-1.0, 1.0)),
    ReductionInfo("count_nonzero", _ref_count_nonzero, _NUMERIC + _C, result=_count_result, keepdim=False,
                  supports_out=False, domain=(-1.0, 1.0)),
]
REDUCTIONS = {r.name: r for r in REDUCTION_DB}
assert len(REDUCTIONS) == len(REDUCTION_DB), "a reduction is listed twice"
