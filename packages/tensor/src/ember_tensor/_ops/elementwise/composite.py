"""Elementwise ops of three operands or built from other elementwise ops.

clamp/clip (number or tensor bounds), where, lerp, addcmul, addcdiv, logit (with eps),
nan_to_num, isclose, allclose and equal. They follow PyTorch's dtype rules and errors,
and compute float16/bfloat16 in float32, rounding once. `elementwise` re-exports them.
"""
import ml_dtypes

from ... import _dtype as D
from ..._dispatch import op
from ..._tensor import Tensor
from .. import _iter
from .arithmetic import (
    _FLOAT, _NOT_FLOAT, _check_alpha, _reject_dtypes, add, binary, copy_to_out, div, mul, sub, unary,
)
from .logic import eq, le, logical_and, logical_or
from ..complex_views import imag, real
from .complex_numbers import complex as complex_from_parts
from .pointwise import abs, isfinite, isnan, isneginf, isposinf

__all__ = [
    "clamp", "clamp_", "clip", "clip_", "clamp_min", "clamp_max", "where", "lerp", "lerp_", "addcmul", "addcmul_",
    "addcdiv", "addcdiv_", "logit", "logit_", "nan_to_num", "nan_to_num_", "isclose", "allclose", "equal",
]


def _clamp_bound(x, bound, kernel, out):
    if bound is None:
        return x
    return binary(kernel, x, bound, out)


# The C++ type names PyTorch's clamp_ with number bounds uses in its can't-cast error.
_C_TYPE_NAMES = {D.uint8: "unsigned char", D.int8: "signed char", D.int16: "short int", D.int32: "int",
                 D.int64: "long int", D.bool: "bool"}


def _check_clamp(input, min, max):  # noqa: A002
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    numbers = not isinstance(min, Tensor) and not isinstance(max, Tensor)
    kernel = "clamp_scalar_cpu" if numbers else "clamp_cpu"
    _reject_dtypes(kernel, D.result_type_of((input, min, max)), (D.bool,), input, min, max)


@op()
def clamp(input, min=None, max=None, *, out=None):  # noqa: A002
    """Clamp every element into [min, max]; bounds may be numbers or tensors."""
    _check_clamp(input, min, max)
    lo = _clamp_bound(input, min, "maximum", None if max is not None else out)
    if max is None:
        return lo
    return binary("minimum", lo, max, out)


@op("clamp_", inplace=True)
def clamp_(self, min=None, max=None):  # noqa: A002
    """In-place `clamp`."""
    result = clamp(self, min, max)
    if not D.can_cast(result._dtype, self._dtype):
        numbers = not isinstance(min, Tensor) and not isinstance(max, Tensor)
        target = _C_TYPE_NAMES[self._dtype] if numbers else _iter.type_name(self._dtype)
        raise RuntimeError(f"result type {_iter.type_name(result._dtype)} can't be cast to the desired "
                           f"output type {target}")
    return self.copy_(result)


clip, clip_ = clamp, clamp_


@op()
def clamp_min(input, min):  # noqa: A002
    """max(input, min) elementwise."""
    return clamp(input, min=min)


@op()
def clamp_max(input, max):  # noqa: A002
    """min(input, max) elementwise."""
    return clamp(input, max=max)


@op()
def where(condition, input=None, other=None, *, out=None):
    """Elementwise `input` where `condition` else `other`; one-argument form is nonzero()."""
    if input is None and other is None:
        return condition.nonzero(as_tuple=True)
    if not isinstance(condition, Tensor) or condition._dtype is not D.bool:
        if isinstance(condition, Tensor) and condition._dtype is D.uint8:
            condition = condition.bool()
        else:
            raise RuntimeError(
                f"where expected condition to be a boolean tensor, but got a tensor with dtype "
                f"{_iter.type_name(condition._dtype) if isinstance(condition, Tensor) else type(condition).__name__}")
    promoted = D.result_type_of((input, other))
    device = _iter.common_device((condition, input, other))
    kdtype = _iter.compute_dtype(promoted)
    shape = _iter.broadcast_shapes(condition._data.shape, _shape(input), _shape(other))
    if out is not None:
        if out._dtype is not promoted:  # where does not cast into out=, unlike most ops
            raise RuntimeError(f"Expected out type to be {_iter.type_name(promoted)} but got "
                               f"{_iter.type_name(out._dtype)}")
        _iter.resize_out(out, shape)
    arrays = (_iter.operand_array(condition, D.bool, device, shape),
              _iter.operand_array(input, kdtype, device, shape),
              _iter.operand_array(other, kdtype, device, shape))
    arrays = tuple(_full_array(a, shape, device) for a in arrays)
    return _iter.run_kernel("ternary", "where", arrays, shape, kdtype, promoted, device, out)


def _shape(x):
    return tuple(x._data.shape) if isinstance(x, Tensor) else ()


def _full_array(a, shape, device):
    """Ternary kernels take arrays only: a scalar operand becomes a stride-0 array."""
    if a.ndim:  # operand_array already broadcast it
        return a
    from ... import _backends
    backend = _backends.get(device)
    arr = backend.storage.empty((), a.dtype)
    backend.storage.copy_(arr, a)
    return backend.storage.broadcast_to(arr, shape)


# How PyTorch's lerp names dtypes (C++ type names) in its dtype-mismatch errors.
_LERP_NAMES = {D.float32: "float", D.float64: "double", D.float16: "c10::Half", D.bfloat16: "c10::BFloat16"}


def _check_lerp(input, end, weight):
    """lerp does not promote: `end` (and a tensor `weight`) must have input's dtype."""
    kernel = "lerp_kernel_tensor" if isinstance(weight, Tensor) else "lerp_kernel_scalar"
    _reject_dtypes(kernel, input._dtype, _NOT_FLOAT)
    for what, x in (("end", end), ("weight", weight)):  # (complex: c10::complex<float> in PyTorch's words)
        if isinstance(x, Tensor) and x._dtype is not input._dtype:
            raise RuntimeError(f"expected dtype {_LERP_NAMES[input._dtype]} for `{what}` but got dtype "
                               f"{_LERP_NAMES.get(x._dtype, _iter.type_name(x._dtype))}")
    return input._dtype


@op()
def lerp(input, end, weight, *, out=None):
    """input + weight * (end - input), computed stably for weight near 1."""
    promoted = _check_lerp(input, end, weight)
    device = _iter.common_device((input, end, weight))
    kdtype = _iter.compute_dtype(promoted)
    shape = _iter.broadcast_shapes(_shape(input), _shape(end), _shape(weight))
    if out is not None:
        _iter.check_out_cast(promoted, out._dtype)
        _iter.resize_out(out, shape)
    arrays = tuple(_full_array(_iter.operand_array(x, kdtype, device, shape), shape, device)
                   for x in (input, end, weight))
    kernel = "lerp_complex" if promoted.is_complex else "lerp"  # which end: |weight| < 0.5
    return _iter.run_kernel("ternary", kernel, arrays, shape, kdtype, promoted, device, out)


@op("lerp_", inplace=True)
def lerp_(self, end, weight):
    """In-place `lerp`."""
    result = lerp(self, end, weight)
    _iter.check_inplace_shape(self, tuple(result._data.shape))
    return self.copy_(result)


def _addc(kind, input, tensor1, tensor2, value):
    """input + value * (tensor1 * tensor2 | tensor1 / tensor2) in the compute dtype, rounded once.

    float16/bfloat16 are computed in float32 and rounded at the end, as PyTorch does, so
    the result does not carry the rounding of each intermediate step.
    """
    promoted = D.result_type_of((input, tensor1, tensor2))
    if kind == "addcmul":
        _reject_dtypes("addcmul_cpu_out", promoted, (D.bool,))
    elif tensor1._dtype.category < D._FLOAT and tensor2._dtype.category < D._FLOAT:  # both integral or bool
        raise RuntimeError(
            "Integer division with addcdiv is no longer supported, and in a future  release "
            "addcdiv will perform a true division of tensor1 and tensor2. The historic addcdiv "
            "behavior can be implemented as (input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) "
            "for integer inputs and as (input + value * tensor1 / tensor2) for float inputs. The future "
            "addcdiv behavior is just the latter implementation: (input + value * tensor1 / tensor2), "
            "for all dtypes.")
    _check_alpha(input, tensor1, value)  # value follows add's alpha rules
    kdtype = _iter.compute_dtype(promoted)
    t1, t2 = tensor1.to(kdtype), tensor2.to(kdtype)
    term = mul(t1, t2) if kind == "addcmul" else div(t1, t2)
    if value != 1:
        term = mul(term, value)
    return promoted, add(input.to(kdtype), term)


@op()
def addcmul(input, tensor1, tensor2, *, value=1, out=None):
    """input + value * tensor1 * tensor2."""
    promoted, result = _addc("addcmul", input, tensor1, tensor2, value)
    return _copy_checked(result.to(promoted), out) if out is not None else result.to(promoted)


@op("addcmul_", inplace=True)
def addcmul_(self, tensor1, tensor2, *, value=1):
    """In-place `addcmul`."""
    return _addc_inplace("addcmul", self, tensor1, tensor2, value)


def _addc_inplace(kind, self, tensor1, tensor2, value):
    promoted, result = _addc(kind, self, tensor1, tensor2, value)
    _iter.check_inplace_shape(self, tuple(result._data.shape))
    _iter.check_out_cast(promoted, self._dtype)
    return self.copy_(result)


@op()
def addcdiv(input, tensor1, tensor2, *, value=1, out=None):
    """input + value * tensor1 / tensor2."""
    promoted, result = _addc("addcdiv", input, tensor1, tensor2, value)
    return _copy_checked(result.to(promoted), out) if out is not None else result.to(promoted)


@op("addcdiv_", inplace=True)
def addcdiv_(self, tensor1, tensor2, *, value=1):
    """In-place `addcdiv`."""
    return _addc_inplace("addcdiv", self, tensor1, tensor2, value)


@op()
def nan_to_num(input, nan=0.0, posinf=None, neginf=None, *, out=None):
    """Replace NaN, +inf and -inf by `nan`, `posinf` (default: dtype max), `neginf` (min)."""
    if out is not None and out._dtype is not input._dtype:
        raise RuntimeError(f"nan_to_num: dtype of out: {_iter.type_name(out._dtype)} should be same as "
                           f"input: {_iter.type_name(input._dtype)}")
    if input._dtype.is_complex:  # each part on its own, with the real dtype's bounds
        parts = (nan_to_num(part(input), nan, posinf, neginf) for part in (real, imag))
        return copy_to_out(complex_from_parts(*parts), out)
    if input._dtype.category != D._FLOAT:
        return copy_to_out(input.clone(), out)
    info = ml_dtypes.finfo(input._dtype.np)  # NumPy's finfo does not know bfloat16
    posinf = float(info.max) if posinf is None else posinf
    neginf = float(info.min) if neginf is None else neginf
    result = where(isnan(input), nan, input)
    result = where(isposinf(input), posinf, result)
    result = where(isneginf(input), neginf, result)
    return copy_to_out(result.to(input._dtype), out)


@op("nan_to_num_", inplace=True)
def nan_to_num_(self, nan=0.0, posinf=None, neginf=None):
    """In-place `nan_to_num`."""
    return self.copy_(nan_to_num(self, nan, posinf, neginf))


@op()
def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """|input - other| <= atol + rtol * |other|, elementwise (inf equal to inf)."""
    if input._dtype is not getattr(other, "_dtype", input._dtype):
        raise RuntimeError(f"{_iter.type_name(input._dtype)} did not match {_iter.type_name(other._dtype)}")
    for name, tol in (("rtol", rtol), ("atol", atol)):
        if tol < 0:
            raise RuntimeError(f"{name} must be greater than or equal to zero, but got {tol}")
    close = eq(input, other)
    if input._dtype is D.bool:  # PyTorch measures bools as the default float dtype
        input, other = input.to(D.get_default_dtype()), other.to(D.get_default_dtype())
    # PyTorch's formula for every dtype; integers meet a float tolerance, so it is float.
    allowed = add(abs(mul(other, rtol)), atol)
    actual = abs(sub(input, other))
    close = logical_or(close, logical_and(isfinite(actual), le(actual, allowed)))
    if equal_nan:
        close = logical_or(close, logical_and(isnan(input), isnan(other)))
    return close


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Whether every element of `input` is close to `other` (a Python bool)."""
    return bool(isclose(input, other, rtol, atol, equal_nan).all())


def equal(input, other):
    """Whether both tensors have the same shape and elements (a Python bool)."""
    if input.shape != other.shape:
        return False
    return bool(eq(input, other).all())


def _logit_input(input, eps):
    if eps is None:
        return input
    # PyTorch's kernel takes the bounds eps and 1 - eps in the input's dtype (so rounded
    # for float16/bfloat16), then computes in float32 for those types.
    dtype = input._dtype if input._dtype.category == D._FLOAT else D.get_default_dtype()
    lo = float(dtype.np.type(eps))
    hi = float(dtype.np.type(1 - lo))
    return clamp(input.to(_iter.compute_dtype(dtype)), lo, hi)


@op()
def logit(input, eps=None, *, out=None):
    """log(p / (1 - p)), with `input` clamped to [eps, 1 - eps] when eps is given."""
    x = _logit_input(input, eps)
    if x is input:
        return unary("logit", x, out, _FLOAT)
    result = unary("logit", x).to(input._dtype if input._dtype.category == D._FLOAT else D.get_default_dtype())
    return result if out is None else _copy_checked(result, out)


@op("logit_", inplace=True)
def logit_(self, eps=None):
    """In-place `logit`."""
    _iter.check_out_cast(self._dtype if self._dtype.category == D._FLOAT else D.get_default_dtype(),
                         self._dtype)
    if eps is None:
        return unary("logit", self, None, _FLOAT, inplace=True)
    return self.copy_(logit(self, eps))


def _copy_checked(result, out):
    """Copy `result` into `out=` after PyTorch's can't-cast check."""
    _iter.check_out_cast(result._dtype, out._dtype)
    return copy_to_out(result, out)
