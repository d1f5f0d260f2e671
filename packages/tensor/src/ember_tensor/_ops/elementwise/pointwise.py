"""Unary elementwise ops: math (exp, log, sin, ...), rounding, sign, predicates, logical
and bitwise NOT, relu.

Each op states PyTorch's dtype rule (keep the dtype, or integers become the default
float, or bool) and PyTorch's dtype errors, and runs one scalar kernel from
`_kernels/scalar.py` through `elementwise.unary`. `elementwise` re-exports them.
"""
from ... import _dtype as D
from ..._dispatch import op
from ..._tensor import Tensor
from .. import _iter
from .arithmetic import (
    _BOOL, _FLOAT, _REAL, _FLOATS, _NOT_FLOAT, _SAME, _not_implemented, _reject_dtypes, copy_to_out, div, mul, unary,
)
from .logic import gt, logical_and, lt

# --- unary -----------------------------------------------------------------------------

_UNARY_RULES = {
    # Keep integer dtypes.
    "neg": _SAME, "abs": _REAL, "sign": _SAME, "square": _SAME,
    # Integers become the default float.
    "exp": _FLOAT, "exp2": _FLOAT, "expm1": _FLOAT, "log": _FLOAT, "log2": _FLOAT,
    "log10": _FLOAT, "log1p": _FLOAT, "sqrt": _FLOAT, "rsqrt": _FLOAT, "reciprocal": _FLOAT,
    "sin": _FLOAT, "cos": _FLOAT, "tan": _FLOAT, "asin": _FLOAT, "acos": _FLOAT,
    "atan": _FLOAT, "sinh": _FLOAT, "cosh": _FLOAT, "tanh": _FLOAT, "asinh": _FLOAT,
    "acosh": _FLOAT, "atanh": _FLOAT, "sigmoid": _FLOAT, "erf": _FLOAT, "erfc": _FLOAT,
    "erfinv": _FLOAT, "lgamma": _FLOAT, "digamma": _FLOAT,
}
# Rounding is the identity on integers, as in PyTorch.
_ROUNDING = ("floor", "ceil", "trunc", "frac")


def _reject_bool_neg(x):
    if isinstance(x, Tensor) and x._dtype is D.bool:
        raise RuntimeError(
            "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to "
            "invert a mask, use the `~` or `logical_not()` operator instead.")
    return x


def _reject_bool_abs(x, inplace):
    if isinstance(x, Tensor):
        _reject_dtypes("abs_cpu", x._dtype, (D.bool,))
        if inplace and x._dtype.is_complex:  # |z| is real: it cannot be written into z
            raise RuntimeError("In-place abs is not supported for complex tensors.")
    return x


def _square_input(x, inplace):
    # square is pow(x, 2): a bool tensor squares to int64, which bool cannot hold in place.
    if isinstance(x, Tensor) and x._dtype is D.bool:
        if inplace:
            _iter.check_out_cast(D.int64, D.bool)
        return x.to(D.int64)
    return x


# Argument checks that run before a unary kernel: (input, inplace) -> the input to use.
_UNARY_CHECKS = {"neg": lambda x, inplace: _reject_bool_neg(x), "abs": _reject_bool_abs,
                 "square": _square_input, "sign": lambda x, inplace: _reject_complex_sign(x)}


def _reject_complex_sign(x):
    if isinstance(x, Tensor) and x._dtype.category == D._COMPLEX:
        raise NotImplementedError(
            "Unlike NumPy, torch.sign is not intended to support complex numbers. Please use torch.sgn instead.")
    return x


def _unary_op(name, rule):
    check = _UNARY_CHECKS.get(name)
    if check is None:  # most ops: no check to call on every use
        def fn(input, *, out=None):
            return unary(name, input, out, rule)

        def fn_(self):
            return unary(name, self, None, rule, inplace=True)
    else:
        def fn(input, *, out=None):
            return unary(name, check(input, False), out, rule)

        def fn_(self):
            check(self, True)
            return unary(name, self, None, rule, inplace=True)
    fn.__name__, fn_.__name__ = name, name + "_"
    fn.__doc__ = f"Elementwise {name}."
    fn_.__doc__ = f"In-place `{name}`."
    return op(name)(fn), op(name + "_", inplace=True)(fn_)


_G = globals()
for _name, _rule in _UNARY_RULES.items():
    _G[_name], _G[_name + "_"] = _unary_op(_name, _rule)


def _check_rounding(name, x):
    """frac needs floats; the others refuse only bool (PyTorch's vectorised kernel names)."""
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not {type(x).__name__}")
    if x._dtype.category == D._COMPLEX:
        if name in ("floor", "ceil", "trunc"):
            raise NotImplementedError(f"{name} is not supported for complex inputs")
        raise _not_implemented("frac_cpu" if name == "frac" else f"{name}_vml_cpu", x._dtype, x)
    if name == "frac":
        _reject_dtypes("frac_cpu", x._dtype, _NOT_FLOAT, x)
    else:
        _reject_dtypes(f"{name}_vml_cpu", x._dtype, (D.bool,), x)


def _rounding_op(name):
    def fn(input, *, out=None):
        _check_rounding(name, input)
        if input._dtype.category != D._FLOAT:
            return copy_to_out(input.clone(), out)
        return unary(name, input, out)

    def fn_(self):
        _check_rounding(name, self)
        if self._dtype.category != D._FLOAT:
            self._bump_version()  # the identity, but still a write as far as autograd knows
            return self
        return unary(name, self, None, inplace=True)
    fn.__name__, fn_.__name__ = name, name + "_"
    fn.__doc__ = f"Elementwise {name} (the identity on integer tensors)."
    fn_.__doc__ = f"In-place `{name}`."
    return op(name)(fn), op(name + "_", inplace=True)(fn_)


for _name in _ROUNDING:
    _G[_name], _G[_name + "_"] = _rounding_op(_name)


@op()
def round(input, *, decimals=0, out=None):  # noqa: A001
    """Round half to even, optionally to `decimals` decimal places."""
    _check_rounding("round", input)
    if input._dtype.category != D._FLOAT:
        if decimals != 0:
            raise _not_implemented("round_cpu", input._dtype, input)
        return copy_to_out(input.clone(), out)
    if decimals == 0:
        return unary("round", input, out)
    scale = 10.0 ** decimals
    return div(unary("round", mul(input, scale)), scale, out=out)


@op("round_", inplace=True)
def round_(self, *, decimals=0):
    """In-place `round`."""
    result = round(self, decimals=decimals)
    if self._dtype.category != D._FLOAT:
        self._bump_version()  # the identity on integers
        return self
    return self.copy_(result)


@op()
def isnan(input):
    """Bool tensor: True where `input` is NaN."""
    return unary("isnan", input, rule=_BOOL)


@op()
def isinf(input):
    """Bool tensor: True where `input` is +inf or -inf."""
    return unary("isinf", input, rule=_BOOL)


@op()
def isfinite(input):
    """Bool tensor: True where `input` is neither NaN nor infinite."""
    return unary("isfinite", input, rule=_BOOL)


@op()
def isposinf(input):
    """Bool tensor: True where `input` is +inf."""
    return logical_and(isinf(input), gt(input, 0))


@op()
def isneginf(input):
    """Bool tensor: True where `input` is -inf."""
    return logical_and(isinf(input), lt(input, 0))


@op()
def logical_not(input, *, out=None):
    """Elementwise logical NOT (zero is True)."""
    return unary("logical_not", input, out, _BOOL)


@op("logical_not_", inplace=True)
def logical_not_(self):
    """In-place `logical_not`."""
    return unary("logical_not", self, None, _BOOL, inplace=True)


@op()
def bitwise_not(input, *, out=None):
    """Elementwise NOT of integer tensors (logical NOT for bool)."""
    _reject_dtypes("bitwise_not_cpu", input._dtype, _FLOATS, input)
    if input._dtype is D.bool:
        return logical_not(input, out=out)
    return unary("bitwise_not", input, out)


@op("bitwise_not_", inplace=True)
def bitwise_not_(self):
    """In-place `bitwise_not`."""
    return self.copy_(bitwise_not(self))


@op()
def relu(input):
    """max(input, 0) elementwise."""
    return unary("relu", input)


@op("relu_", inplace=True)
def relu_(self):
    """In-place `relu`."""
    return unary("relu", self, inplace=True)


@op()
def positive(input):
    """Returns `input` itself (unary plus)."""
    return input


__all__ = sorted(
    [name for name in _UNARY_RULES] + [name + "_" for name in _UNARY_RULES]
    + [name for name in _ROUNDING] + [name + "_" for name in _ROUNDING]
    + ["round", "round_", "isnan", "isinf", "isfinite", "isposinf", "isneginf",
       "logical_not", "logical_not_", "bitwise_not", "bitwise_not_", "relu", "relu_", "positive"])
