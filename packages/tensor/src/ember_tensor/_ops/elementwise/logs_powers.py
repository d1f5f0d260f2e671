"""Elementwise ops composed of the log/exp/pow kernels: logaddexp, logaddexp2, xlogy,
float_power, and the sign tests signbit and heaviside.

Each is a composition of existing elementwise ops (maximum, log1p, exp, where, pow, ...),
so it runs on every device and autograd differentiates it through its parts. They keep
PyTorch's dtype rules: logaddexp/logaddexp2 reject integers, xlogy computes integers in
the default float dtype, float_power always computes in float64. Of complex dtypes,
PyTorch has logaddexp (complex64/complex128: one kernel, `logaddexp_complex`, with its own
derivative rule) and float_power; logaddexp2 and xlogy refuse them.
"""
import math

from ... import _dtype as D
from ..._dispatch import op
from ..._tensor import Tensor
from .. import _iter, creation
from .arithmetic import (
    _not_implemented, add, binary, copy_to_out, copysign, maximum, mul, pow, require_tensors, sub,
)
from .logic import eq, gt, logical_and, lt
from .composite import where
from .pointwise import abs, exp, exp2, isinf, isnan, log, log1p

__all__ = ["logaddexp", "logaddexp2", "xlogy", "xlogy_", "float_power", "float_power_", "signbit", "heaviside"]


def _operands(input, other, dtype):
    """`input` and `other` as tensors of `dtype`; numbers become CPU 0-d tensors, which
    may meet a tensor of any device."""
    def as_tensor(x):
        if isinstance(x, Tensor):
            return x if x._dtype is dtype else x.to(dtype)
        return creation.tensor(x, dtype=dtype)
    return as_tensor(input), as_tensor(other)


def _float_operands(name, input, other):
    result = D.result_type(input, other)
    if result.category != D._FLOAT:
        raise _not_implemented(name, result, *(x for x in (input, other) if isinstance(x, Tensor)))
    return _operands(input, other, result)


def _to_out(result, out):
    """`copy_to_out` after PyTorch's check that out= is not of a lower kind than the result."""
    if out is not None:
        _iter.check_out_cast(result._dtype, out._dtype)
    return copy_to_out(result, out)


def _log_add(a, b, log1p_of_exp_neg):
    # max(a, b) + log1p(exp(-|a - b|)) never overflows; where both are the same infinity
    # a - b is NaN, and the answer is that infinity.
    high = maximum(a, b)
    result = add(high, log1p_of_exp_neg(abs(sub(a, b))))
    return where(logical_and(isinf(high), eq(a, b)), a, result)


@op()
def logaddexp(input, other, *, out=None):
    """``log(exp(input) + exp(other))``, computed without overflow.

    >>> import ember_tensor as torch
    >>> torch.logaddexp(torch.tensor([0., 1000.], dtype=torch.float64), torch.tensor([0., 1000.], dtype=torch.float64))
    tensor([6.9315e-01, 1.0007e+03], dtype=torch.float64)
    """
    require_tensors("logaddexp", input, other)
    result = D.result_type(input, other)
    if result in (D.complex64, D.complex128):
        return _to_out(logaddexp_complex(*_operands(input, other, result)), out)
    a, b = _float_operands("logaddexp_cpu", input, other)
    return _to_out(_log_add(a, b, lambda d: log1p(exp(-d))), out)


@op("logaddexp_complex")
def logaddexp_complex(input, other):
    """`logaddexp` of two complex tensors of one dtype: PyTorch's formula in one kernel
    (`_backends/scalar_complex.py`), an op of its own so that autograd has PyTorch's rule
    for it (LogaddexpBackward0)."""
    return binary("logaddexp", input, other)


@op()
def logaddexp2(input, other, *, out=None):
    """``log2(2**input + 2**other)``, computed without overflow.

    >>> import ember_tensor as torch
    >>> torch.logaddexp2(torch.tensor([1.]), torch.tensor([1.])).tolist()
    [2.0]
    """
    require_tensors("logaddexp2", input, other)
    a, b = _float_operands("logaddexp2_cpu", input, other)
    return _to_out(_log_add(a, b, lambda d: mul(log1p(exp2(-d)), 1 / math.log(2))), out)


def _xlogy(input, other):
    result = D.result_type(input, other)
    if result.category == D._COMPLEX:
        raise _not_implemented("xlogy_cpu", result, *(x for x in (input, other) if isinstance(x, Tensor)))
    if result.category != D._FLOAT:
        result = D.get_default_dtype()
    x, y = _operands(input, other, result)
    # 0 * log(0) is 0 by definition; a NaN y stays NaN even where x is 0.
    value = where(eq(x, 0), 0.0, mul(x, log(y)))
    return where(isnan(y), y, value)


@op()
def xlogy(input, other, *, out=None):
    """``input * log(other)``, and 0 where input is 0 (unless other is NaN).

    Integer operands compute in the default float dtype.

    >>> import ember_tensor as torch
    >>> torch.xlogy(torch.tensor([0., 2.]), torch.tensor([0., 1.])).tolist()
    [0.0, 0.0]
    """
    return _to_out(_xlogy(input, other), out)


@op("xlogy_", inplace=True)
def xlogy_(self, other):
    """In-place `xlogy`."""
    result = D.result_type(self, other)
    if result.category == D._COMPLEX and self._dtype.category != D._COMPLEX:
        raise RuntimeError(f"result type {_iter.type_name(result)} can't be cast to the desired output type "
                           f"{_iter.type_name(self._dtype)}")
    if self._dtype.category not in (D._FLOAT, D._COMPLEX):
        raise RuntimeError(f"result type Float can't be cast to the desired output type "
                           f"{_iter.type_name(self._dtype)}")
    return self.copy_(_xlogy(self, other))


def _float_power_wide(input, exponent):
    """float64, or complex128 where an operand is complex (PyTorch's rule)."""
    complex_operand = any(x._dtype.is_complex if isinstance(x, Tensor) else isinstance(x, complex)
                          for x in (input, exponent))
    return D.complex128 if complex_operand else D.float64


def _float_power_operands(input, exponent):
    wide = _float_power_wide(input, exponent)

    def as_wide(x):
        if isinstance(x, Tensor):
            return x if x._dtype is wide else x.to(wide)
        return complex(x) if wide is D.complex128 else float(x)
    return as_wide(input), as_wide(exponent)


@op()
def float_power(input, exponent, *, out=None):
    """`input` to the power `exponent`, computed in float64 (complex128 for complex operands).

    >>> import ember_tensor as torch
    >>> torch.float_power(torch.tensor([2, 3]), 2)
    tensor([4., 9.], dtype=torch.float64)
    """
    if not isinstance(input, Tensor):
        wide = _float_power_wide(input, exponent)
        input = creation.tensor(complex(input) if wide is D.complex128 else float(input), dtype=wide,
                                device=exponent.device)
    base, exp_ = _float_power_operands(input, exponent)
    return _to_out(pow(base, exp_), out)


@op("float_power_", inplace=True)
def float_power_(self, exponent):
    """In-place `float_power`: `self` must already be float64 (complex128 for complex operands)."""
    wide = _float_power_wide(self, exponent)
    if self._dtype is not wide:
        raise RuntimeError(f"the base given to float_power_ has dtype {_iter.type_name(self._dtype)} "
                           f"but the operation's result requires dtype {_iter.type_name(wide)}")
    return self.copy_(pow(self, _float_power_operands(self, exponent)[1]))


@op()
def signbit(input, *, out=None):
    """Whether each element's sign bit is set (True for -0.0 and negative NaN too).

    >>> import ember_tensor as torch
    >>> torch.signbit(torch.tensor([-1., -0., 0., 2.])).tolist()
    [True, True, False, False]
    """
    if input._dtype.category != D._FLOAT:
        return _to_out(lt(input, 0), out)
    # copysign(1, x) carries x's sign bit, so -0.0 and -NaN count as negative.
    ones = creation.ones((), dtype=input._dtype)
    return _to_out(lt(copysign(ones, input), 0), out)


@op()
def heaviside(input, values, *, out=None):
    """The Heaviside step: 0 where `input` < 0 (or NaN), `values` where it is 0, 1 where it
    is > 0. `values` is a tensor of `input`'s dtype that broadcasts with it.

    >>> import ember_tensor as torch
    >>> torch.heaviside(torch.tensor([-1., 0., 2.]), torch.tensor(0.5)).tolist()
    [0.0, 0.5, 1.0]
    """
    if not isinstance(values, Tensor):
        raise TypeError(f"heaviside(): argument 'values' (position 2) must be Tensor, not {type(values).__name__}")
    if input._dtype is not values._dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")
    return _to_out(where(eq(input, 0), values, gt(input, 0).to(input._dtype)), out)


def heaviside_(input, values):
    """In-place ``heaviside`` (a Tensor method only, as in PyTorch)."""
    return input.copy_(heaviside(input, values))
