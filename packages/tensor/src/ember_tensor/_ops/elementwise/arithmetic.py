"""Elementwise ops: the binary arithmetic ones and the runners every elementwise op uses
(`binary`, `unary`, PyTorch's dtype rules and errors); the comparisons, logical and bit
ops are in `logic`, on the same runners.

Each op states its dtype rule (how the result dtype follows from the promoted inputs)
and runs one scalar kernel from `_backends/scalar.py` through `_iter.run_kernel`. The
unary ops (`unary`) and the three-operand and composite ones (`composite`) build on these
runners; the package `_ops.elementwise` is the namespace of all three.
"""
from ... import _backends
from ... import _dtype as D
from ..._dispatch import op
from ..._tensor import Tensor
from .. import _iter
from .._kernel_names import kernel_name

# Result-dtype rules. "same": the promoted type; "float": integers become the default
# float; "bool": comparisons and predicates; "real": a complex input gives its real type
# (abs, angle), any other keeps its own.
_SAME, _FLOAT, _BOOL, _REAL = "same", "float", "bool", "real"
_NOT_FLOAT = (D.uint8, D.int8, D.int16, D.int32, D.int64, D.bool)
_FLOATS = (D.float16, D.bfloat16, D.float32, D.float64)
# Read on every op's fast path: module globals, not attribute chains.
_LOW_PRECISION, _COMPLEX_CATEGORY, _FLOAT_CATEGORY = _iter.LOW_PRECISION, D._COMPLEX, D._FLOAT
_wrap = Tensor._wrap


def _not_implemented(kernel, dtype, *where):
    """PyTorch's dispatch error for a dtype a kernel does not support (NotImplementedError),
    naming the CPU `kernel` or, when an operand in `where` is on CUDA, its CUDA twin."""
    return NotImplementedError(f'"{kernel_name(kernel, *where)}" not implemented for \'{_iter.type_name(dtype)}\'')


def _reject_dtypes(kernel, dtype, rejected, *where):
    if dtype in rejected:
        raise _not_implemented(kernel, dtype, *where)


def _plan(result, rule):
    """(kernel dtype, kernel output dtype, result dtype) for a promoted input dtype."""
    if rule == _BOOL:
        return _iter.compute_dtype(result), D.bool, D.bool
    if rule == _REAL and result.category == D._COMPLEX:
        k = _iter.compute_dtype(result)
        return k, k.to_real(), result.to_real()
    if rule == _FLOAT and result.category < D._FLOAT:
        result = D.get_default_dtype()
    k = _iter.compute_dtype(result)
    return k, k, result


# Complex operands: the ops whose real kernel is right for complex numbers as it is, and
# those with a `<name>_complex` twin in `_backends/scalar_complex.py`. Any other op refuses
# complex dtypes with PyTorch's dispatch error.
_COMPLEX_AS_IS = frozenset((
    "mul", "neg", "copy", "square", "eq", "ne", "logical_and", "logical_or",
    "logical_xor", "logical_not"))
_COMPLEX_TWINS = frozenset((
    "div", "reciprocal", "abs", "angle", "sgn", "conj", "isnan", "isinf", "isfinite", "exp", "exp2",
    "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "sin", "cos", "tan", "asin", "acos", "atan",
    "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "sigmoid", "pow", "lerp", "add", "sub", "logaddexp"))


def complex_kernel(name, dtype, *where):
    """The scalar kernel computing op kernel `name` on complex operands of `dtype`, or
    PyTorch's error naming the op's CPU (or CUDA) kernel."""
    if name in _COMPLEX_AS_IS:
        return name
    if name in _COMPLEX_TWINS:
        return name + "_complex"
    if name in ("maximum", "minimum"):
        raise RuntimeError(f"{name} not implemented for complex tensors.")
    # PyTorch's vectorised (VML) kernels carry a suffix in its dispatch error.
    raise _not_implemented(f"{name}_vml_cpu" if name in ("erf", "erfc", "erfinv", "lgamma") else f"{name}_cpu",
                           dtype, *where)


def binary(name, a, b, out=None, rule=_SAME, kernel=None, inplace=False):
    """Run binary kernel `kernel or name` on tensors/scalars `a`, `b` with broadcasting."""
    a_t, b_t = isinstance(a, Tensor), isinstance(b, Tensor)
    if out is None and not inplace and rule == _SAME:
        if a_t and b_t:
            # Fast path for the common case: same dtype and device, no out=, no casting.
            dtype, device = a._dtype, a._device
            if dtype is b._dtype and device is b._device and dtype not in _LOW_PRECISION:
                fast = kernel or name  # (not `kernel`: the general path below names its own)
                if dtype.category == _COMPLEX_CATEGORY:
                    fast = complex_kernel(fast, dtype, a, b)
                data = _backends.get(device).elementwise.binary_fresh(fast, a._data, b._data)
                if data is not None:
                    return _wrap(data, dtype, device)
        elif a_t or b_t:
            # Fast path: tensor with a Python float (float tensor) or int (int64 tensor).
            t, s = (a, b) if a_t else (b, a)
            cls, dtype = s.__class__, t._dtype
            if ((cls is float or cls is int) and dtype.category == _FLOAT_CATEGORY and dtype not in _LOW_PRECISION) or \
                    (cls is int and dtype is D.int64 and -2 ** 63 <= s < 2 ** 63):
                data = _backends.get(t._device).elementwise.binary_scalar_fresh(
                    kernel or name, t._data, dtype.np.type(s), a_t)
                if data is not None:
                    return _wrap(data, dtype, t._device)
    if a_t and b_t and a._dtype is b._dtype and a._device is b._device:
        promoted, device = a._dtype, a._device
    else:
        promoted = D.result_type_of((a, b))
        device = _iter.common_device((a, b))
    kdtype, kout, result = _plan(promoted, rule)
    if kdtype.category == D._COMPLEX:
        kernel = complex_kernel(kernel or name, promoted, a, b)
    shape = _iter.broadcast_shapes(a._data.shape if a_t else (), b._data.shape if b_t else ())
    if inplace:
        _iter.check_inplace_shape(a, shape)
        _iter.check_out_cast(result, a._dtype)
        out = a
    elif out is not None:
        _iter.check_out_cast(result, out._dtype)
        _iter.resize_out(out, shape)
    arrays = (_iter.operand_array(a, kdtype, device, shape), _iter.operand_array(b, kdtype, device, shape))
    return _iter.run_kernel("binary", kernel or name, arrays, shape, kdtype, result, device, out, kout)


def unary(name, x, out=None, rule=_SAME, inplace=False):
    """Run unary kernel `name` on tensor `x`."""
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not {type(x).__name__}")
    dtype = x._dtype
    category = dtype.category
    complex_input = category == _COMPLEX_CATEGORY
    if complex_input:
        name = complex_kernel(name, dtype, x)
    if out is None and not inplace and (rule == _SAME or category == _FLOAT_CATEGORY
                                        or (rule == _FLOAT and complex_input)) and \
            rule != _BOOL and dtype not in _LOW_PRECISION:
        device = x._device
        data = _backends.get(device).elementwise.unary_fresh(name, x._data)
        if data is not None:
            return _wrap(data, dtype, device)
    kdtype, kout, result = _plan(dtype, rule)
    shape = tuple(x._data.shape)
    if inplace:
        _iter.check_out_cast(result, x._dtype)
        out = x
    elif out is not None:
        _iter.check_out_cast(result, out._dtype)
        _iter.resize_out(out, shape)
    arrays = (_iter.operand_array(x, kdtype, x._device, shape),)
    return _iter.run_kernel("unary", name, arrays, shape, kdtype, result, x._device, out, kout)


def _check_alpha(a, b, alpha):
    """other * alpha, after PyTorch's checks of alpha against the result dtype."""
    if alpha == 1 and not isinstance(alpha, bool):  # True == 1, but must still be checked
        return b
    promoted = D.result_type_of((a, b))
    if isinstance(alpha, bool) and promoted is not D.bool:
        raise RuntimeError("Boolean alpha only supported for Boolean results.")
    if promoted.category < D._FLOAT and isinstance(alpha, float):
        raise RuntimeError(
            "For integral input tensors, argument alpha must not be a floating point number.")
    if alpha == 1:
        return b
    # A bool result stays bool: alpha acts as a bool too (add(True, True, alpha=2) is True).
    return b * (bool(alpha) if promoted is D.bool else alpha)


def _is_bool(x):
    # A Python bool takes part as a bool tensor would (PyTorch wraps it into one).
    return (isinstance(x, Tensor) and x._dtype is D.bool) or isinstance(x, bool)


def _check_bool_sub(a, b):
    a_bool, b_bool = _is_bool(a), _is_bool(b)
    if a_bool and b_bool:
        raise RuntimeError(
            "Subtraction, the `-` operator, with two bool tensors is not supported. "
            "Use the `^` or `logical_xor()` operator instead.")
    if a_bool or b_bool:
        raise RuntimeError(
            "Subtraction, the `-` operator, with a bool tensor is not supported. If you are "
            "trying to invert a mask, use the `~` or `logical_not()` operator instead.")


@op()
def add(input, other, *, alpha=1, out=None):
    """input + alpha * other, broadcasting. ``add(tensor([1., 2.]), 1)`` -> ``tensor([2., 3.])``."""
    if alpha.__class__ is not int or alpha != 1:  # the default needs no check (a bool is no int here)
        other = _check_alpha(input, other, alpha)
    return binary("add", input, other, out)


@op("add_", inplace=True)
def add_(self, other, *, alpha=1):
    """In-place `add`."""
    return binary("add", self, _check_alpha(self, other, alpha), inplace=True)


@op()
def sub(input, other, *, alpha=1, out=None):
    """input - alpha * other, broadcasting."""
    _check_bool_sub(input, other)
    if alpha.__class__ is not int or alpha != 1:
        other = _check_alpha(input, other, alpha)
    return binary("sub", input, other, out)


@op("sub_", inplace=True)
def sub_(self, other, *, alpha=1):
    """In-place `sub`."""
    _check_bool_sub(self, other)
    return binary("sub", self, _check_alpha(self, other, alpha), inplace=True)


@op()
def mul(input, other, *, out=None):
    """input * other, broadcasting."""
    return binary("mul", input, other, out)


@op("mul_", inplace=True)
def mul_(self, other):
    """In-place `mul`."""
    return binary("mul", self, other, inplace=True)


def _div(input, other, rounding_mode, out, inplace):
    if rounding_mode is None:
        return binary("div", input, other, out, rule=_FLOAT, inplace=inplace)
    if rounding_mode == "floor":
        _check_int_zero_division(input, other, "div_floor_cpu")
        return binary("floor_divide", input, other, out, inplace=inplace,
                      kernel=_float_kernel("floor_divide", input, other))
    if rounding_mode == "trunc":
        _check_int_zero_division(input, other, "div_trunc_cpu")
        promoted = D.result_type_of((input, other))
        if promoted.category == D._FLOAT:
            quotient = binary("div", input, other)
            return unary("trunc", quotient, out=input if inplace else out)
        return binary("div", input, other, out, kernel="div_trunc", inplace=inplace)
    raise RuntimeError(
        f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '{rounding_mode}'")


def _check_int_zero_division(a, b, kernel):
    """Integer division by zero is PyTorch's error; bool has no division kernel at all."""
    promoted = D.result_type_of((a, b))
    _reject_dtypes(kernel, promoted, (D.bool,), a, b)
    if promoted.category >= D._FLOAT:
        return
    zero = (b == 0) if not isinstance(b, Tensor) else bool((b == 0).any())
    if zero:
        raise RuntimeError("ZeroDivisionError")


@op()
def div(input, other, *, rounding_mode=None, out=None):
    """input / other; true division unless `rounding_mode` is 'trunc' or 'floor'."""
    return _div(input, other, rounding_mode, out, False)


@op("div_", inplace=True)
def div_(self, other, *, rounding_mode=None):
    """In-place `div`."""
    return _div(self, other, rounding_mode, None, True)


@op()
def floor_divide(input, other, *, out=None):
    """Division rounded toward negative infinity (Python's //)."""
    _check_int_zero_division(input, other, "div_floor_cpu")
    return binary("floor_divide", input, other, out, kernel=_float_kernel("floor_divide", input, other))


@op("floor_divide_", inplace=True)
def floor_divide_(self, other):
    """In-place `floor_divide`."""
    _check_int_zero_division(self, other, "div_floor_cpu")
    return binary("floor_divide", self, other, inplace=True, kernel=_float_kernel("floor_divide", self, other))


@op()
def remainder(input, other, *, out=None):
    """Python-style modulus: the result has the sign of `other`."""
    _check_int_zero_division(input, other, "remainder_cpu")
    return binary("remainder", input, other, out, kernel=_float_kernel("remainder", input, other))


@op("remainder_", inplace=True)
def remainder_(self, other):
    """In-place `remainder`."""
    _check_int_zero_division(self, other, "remainder_cpu")
    return binary("remainder", self, other, inplace=True, kernel=_float_kernel("remainder", self, other))


@op()
def fmod(input, other, *, out=None):
    """C-style modulus: the result has the sign of `input`."""
    _check_int_zero_division(input, other, "fmod_cpu")
    return binary("fmod", input, other, out, kernel=_int_kernel("fmod", input, other))


@op("fmod_", inplace=True)
def fmod_(self, other):
    """In-place `fmod`."""
    _check_int_zero_division(self, other, "fmod_cpu")
    return binary("fmod", self, other, inplace=True, kernel=_int_kernel("fmod", self, other))


def _int_kernel(name, a, b):
    """Integer twin of a float kernel (`fmod_int`, `pow_int`) when the inputs promote to ints."""
    return name + "_int" if D.result_type_of((a, b)).category < D._FLOAT else name


def _float_kernel(name, a, b):
    """Float twin of an integer-safe kernel (`floor_divide_float`, `remainder_float`: an
    infinite divisor written out) when the inputs promote to a floating type."""
    return name + "_float" if D.result_type_of((a, b)).category == D._FLOAT else name


def _check_pow(base, exponent):
    promoted = D.result_type_of((base, exponent))
    _reject_dtypes("pow", promoted, (D.bool,))
    # Only a Python number exponent is refused; a tensor of negative exponents gives 0
    # (or +-1 for bases +-1) elementwise, as in PyTorch.
    if promoted.category == D._INT and not isinstance(exponent, Tensor) and exponent < 0:
        raise RuntimeError("Integers to negative integer powers are not allowed.")


# The number exponents PyTorch's pow computes without pow for float32/float64 and complex
# (its pow_tensor_scalar_optimized_kernel): products, roots and reciprocals. ember does
# the same, for PyTorch's values (x ** 3 is (x * x) * x there, not the correctly rounded
# cube; x ** 0.5 is sqrt(x): -0 at -0 and NaN at -inf) and a multiply at memory speed
# instead of a powf call per element.
_FLOAT_SPECIAL_EXPONENTS = frozenset((1, 2, 3, 0.5, -0.5, -1, -2))
_COMPLEX_SPECIAL_EXPONENTS = frozenset((1, 2, 3))


def _pow_by_special_number(base, exponent, out, inplace):
    """`base ** exponent` as PyTorch computes the exponents it special-cases, or None."""
    # (float16/bfloat16: PyTorch computes them with pow in float32, as ember does.)
    if not isinstance(base, Tensor) or exponent.__class__ not in (int, float) or base._dtype in _LOW_PRECISION:
        return None
    category = base._dtype.category
    allowed = (_FLOAT_SPECIAL_EXPONENTS if category == _FLOAT_CATEGORY else
               _COMPLEX_SPECIAL_EXPONENTS if category == _COMPLEX_CATEGORY else ())
    if exponent not in allowed:
        return None
    if exponent == 1:  # a copy (pow_Tensor_Scalar_out copies base), as pow's gradient at 2 asks
        return unary("copy", base, out, inplace=inplace) if not inplace else base
    if exponent == 0.5 or exponent == -0.5:
        return unary("sqrt" if exponent == 0.5 else "rsqrt", base, out, inplace=inplace)
    if exponent == -1:
        return unary("reciprocal", base, out, inplace=inplace)
    if exponent == 2:
        return binary("mul", base, base, out, inplace=inplace)
    if exponent == -2:  # the reciprocal of the square
        if inplace:
            return unary("reciprocal", binary("mul", base, base, inplace=True), inplace=True)
        return unary("reciprocal", binary("mul", base, base), out, inplace=out is None)
    square = binary("mul", base, base)  # 3: (x * x) * x
    if inplace:
        return binary("mul", base, square, inplace=True)
    return binary("mul", square, base, out)


@op()
def pow(input, exponent, *, out=None):  # noqa: A001
    """input ** exponent, broadcasting; `input` may be a number."""
    _check_pow(input, exponent)
    special = _pow_by_special_number(input, exponent, out, False)
    if special is not None:
        return special
    return binary("pow", input, exponent, out, kernel=_int_kernel("pow", input, exponent))


@op("pow_", inplace=True)
def pow_(self, exponent):
    """In-place `pow`."""
    _check_pow(self, exponent)
    special = _pow_by_special_number(self, exponent, None, True)
    if special is not None:
        return special
    return binary("pow", self, exponent, inplace=True, kernel=_int_kernel("pow", self, exponent))


def require_tensors(name, input, other):
    """PyTorch's TypeError for the binary ops that take no Python number (atan2, maximum,
    hypot, logical_and, ...): their schema has no Scalar overload."""
    for position, (argument, value) in enumerate((("input", input), ("other", other)), 1):
        if not isinstance(value, Tensor):
            raise TypeError(f"{name}(): argument '{argument}' (position {position}) must be Tensor, not "
                            f"{type(value).__name__}")


def _binary_op(name, rule=_SAME, doc="", tensors_only=False):
    def fn(input, other, *, out=None):
        if tensors_only:
            require_tensors(name, input, other)
        return binary(name, input, other, out, rule=rule)
    fn.__name__ = name
    fn.__doc__ = doc
    return op(name)(fn)


def _binary_inplace(name, rule=_SAME, tensors_only=False):
    def fn(self, other):
        if tensors_only:
            require_tensors(name + "_", self, other)
        return binary(name, self, other, rule=rule, inplace=True)
    fn.__name__ = name + "_"
    fn.__doc__ = f"In-place `{name}`."
    return op(name + "_", inplace=True)(fn)


atan2 = _binary_op("atan2", _FLOAT, "Elementwise arctangent of input / other, in the right quadrant.",
                   tensors_only=True)
atan2_ = _binary_inplace("atan2", _FLOAT, tensors_only=True)


@op()
def hypot(input, other, *, out=None):
    """sqrt(input**2 + other**2) without overflow; floating tensors only."""
    require_tensors("hypot", input, other)
    _reject_dtypes("hypot_cpu", D.result_type_of((input, other)), _NOT_FLOAT, input, other)
    return binary("hypot", input, other, out, rule=_FLOAT)


@op("hypot_", inplace=True)
def hypot_(self, other):
    """In-place `hypot`."""
    require_tensors("hypot_", self, other)
    _reject_dtypes("hypot_cpu", D.result_type_of((self, other)), _NOT_FLOAT, self, other)
    return binary("hypot", self, other, rule=_FLOAT, inplace=True)


copysign = _binary_op("copysign", _FLOAT, "|input| with the sign of other.")
copysign_ = _binary_inplace("copysign", _FLOAT)
maximum = _binary_op("maximum", _SAME, "Elementwise maximum; NaN propagates.", tensors_only=True)
minimum = _binary_op("minimum", _SAME, "Elementwise minimum; NaN propagates.", tensors_only=True)
fmax = _binary_op("fmax", _SAME, "Elementwise maximum ignoring NaN.", tensors_only=True)
fmin = _binary_op("fmin", _SAME, "Elementwise minimum ignoring NaN.", tensors_only=True)


def copy_to_out(result, out):
    """Copy `result` into `out` (resizing it) and return out, or return result if no out."""
    if out is None:
        return result
    _iter.resize_out(out, tuple(result._data.shape))
    out.copy_(result)
    return out
