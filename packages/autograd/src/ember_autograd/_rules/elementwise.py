"""Derivatives of elementwise ops (PyTorch's derivatives.yaml formulas).

Every formula uses differentiable ember ops, so it can be differentiated again. Gradients
of broadcast inputs are not summed here (the engine does it, in one place).
"""
import cmath
import math

import ember_tensor as E
from ember_tensor import Tensor

from ._conjugate import conj
from ._registry import RESULT, composite, derivative, not_differentiable


def _input(input, *args, **kwargs):
    return (input,)


def _result(*args, **kwargs):
    return (RESULT,)


def _is_complex(x):
    return isinstance(x, complex) or (isinstance(x, Tensor) and x.dtype.is_complex)


def _zeros(ctx, grad, *saved):
    return tuple(E.zeros_like(grad) if need else None for need in ctx.needs_input_grad)


# -- unary ------------------------------------------------------------------------------

def _unary(name, save, formula):
    derivative(name, name + "_", save=save)(formula)


_unary("neg", None, lambda ctx, grad: -grad)
# Complex inputs follow PyTorch's convention: the gradient is the conjugate Wirtinger
# derivative, so a holomorphic op's formula multiplies by the conjugate of its derivative
# (`conj` of a real tensor is the tensor itself, so real inputs are unchanged).
_unary("abs", _input, lambda ctx, grad, x: grad * x.sgn())
_unary("exp", _result, lambda ctx, grad, result: grad * conj(result))
_unary("exp2", _result, lambda ctx, grad, result: grad * conj(result) * math.log(2.0))
_unary("expm1", _result, lambda ctx, grad, result: grad * conj(result + 1))
_unary("log", _input, lambda ctx, grad, x: grad / conj(x))
_unary("log2", _input, lambda ctx, grad, x: grad / (conj(x) * math.log(2.0)))
_unary("log10", _input, lambda ctx, grad, x: grad / (conj(x) * math.log(10.0)))
_unary("log1p", _input, lambda ctx, grad, x: grad / conj(x + 1))
_unary("sqrt", _result, lambda ctx, grad, result: grad / (2 * conj(result)))
_unary("rsqrt", _result, lambda ctx, grad, result: -0.5 * grad * conj(result ** 3))
_unary("reciprocal", _result, lambda ctx, grad, result: -grad * conj(result * result))
_unary("square", _input, lambda ctx, grad, x: grad * (2 * conj(x)))
_unary("sin", _input, lambda ctx, grad, x: grad * conj(x.cos()))
_unary("cos", _input, lambda ctx, grad, x: -grad * conj(x.sin()))
_unary("tan", _result, lambda ctx, grad, result: grad * conj(1 + result * result))
_unary("asin", _input, lambda ctx, grad, x: grad * conj((1 - x * x).rsqrt()))
_unary("acos", _input, lambda ctx, grad, x: -grad * conj((1 - x * x).rsqrt()))
_unary("atan", _input, lambda ctx, grad, x: grad / conj(1 + x * x))
_unary("sinh", _input, lambda ctx, grad, x: grad * conj(x.cosh()))
_unary("cosh", _input, lambda ctx, grad, x: grad * conj(x.sinh()))
_unary("tanh", _result, lambda ctx, grad, result: grad * conj(1 - result * result))
_unary("asinh", _input, lambda ctx, grad, x: grad * conj((x * x + 1).rsqrt()))
# Complex: 1 / (sqrt(z + 1) sqrt(z - 1)), acosh's own branch cut rather than that of
# sqrt(z^2 - 1) (PyTorch's); real: 1 / sqrt(x^2 - 1), finite below -1 too.
_unary("acosh", _input, lambda ctx, grad, x: grad * (conj((x + 1).rsqrt() * (x - 1).rsqrt()) if x.is_complex()
                                                     else (x * x - 1).rsqrt()))
_unary("atanh", _input, lambda ctx, grad, x: grad / conj(1 - x * x))
_unary("sigmoid", _result, lambda ctx, grad, result: grad * conj(result * (1 - result)))
# PyTorch's threshold_backward: zero where result <= 0, so a NaN passes its gradient on.
_unary("relu", _result, lambda ctx, grad, result: E.nn_ops.threshold_backward(grad, result, 0))
_unary("erf", _input, lambda ctx, grad, x: grad * (2.0 / math.sqrt(math.pi)) * (-(x * x)).exp())
_unary("erfc", _input, lambda ctx, grad, x: grad * (-2.0 / math.sqrt(math.pi)) * (-(x * x)).exp())
_unary("erfinv", _result,
       lambda ctx, grad, result: grad * (math.sqrt(math.pi) / 2.0) * (result * result).exp())
_unary("lgamma", _input, lambda ctx, grad, x: grad * x.digamma())
_unary("frac", None, lambda ctx, grad: grad)
for _name in ("floor", "ceil", "trunc", "sign"):
    derivative(_name, _name + "_")(_zeros)
derivative("sgn_", inputs=("self",), name="SgnBackward0")(_zeros)  # sgn itself is composite (sign)
derivative("round", "round_", name=lambda input, decimals=0, **_: "RoundBackward1" if decimals else "RoundBackward0")(_zeros)


def trigamma(x):
    """polygamma(1, x) from ember ops: recurrence up to x + 6, then the asymptotic series,
    and the reflection formula for x < 0.5 (ember_tensor has no polygamma kernel yet)."""
    reflect = x < 0.5
    y = E.where(reflect, 1 - x, x)
    acc = E.zeros_like(y)
    for _ in range(6):
        acc = acc + 1 / (y * y)
        y = y + 1
    inv = 1 / y
    inv2 = inv * inv
    series = inv + inv2 / 2 + inv * inv2 * (1.0 / 6 - inv2 * (1.0 / 30 - inv2 * (1.0 / 42 - inv2 / 30)))
    value = acc + series
    reflected = (math.pi ** 2) / (x * math.pi).sin() ** 2 - value
    return E.where(reflect, reflected, value)


_unary("digamma", _input, lambda ctx, grad, x: grad * trigamma(x))


@derivative("logit", "logit_", save=lambda input, eps=None, **_: (input, eps))
def logit(ctx, grad, x, eps):
    g = grad / (x * (1 - x))
    if eps is None:
        # Outside [0, 1] logit is nan, and so is PyTorch's gradient there.
        return E.where((x < 0) | (x > 1), math.nan, g)
    return E.where((x < eps) | (x > 1 - eps), 0.0, g)


# -- binary -----------------------------------------------------------------------------

def _rsub_name(input, other, **_):
    return "SubBackward0" if isinstance(input, Tensor) else "RsubBackward1"


def _alpha(input, other, alpha=1, **_):
    # Nothing to save in the usual alpha=1 case (add is the most frequent op of all).
    return None if alpha == 1 else (alpha,)


@derivative("add", "add_", inputs=("input", "other"), save=_alpha)
def add(ctx, grad, alpha=1):
    return grad, (grad if alpha == 1 else grad * alpha) if ctx.needs_input_grad[1] else None


@derivative("sub", "sub_", inputs=("input", "other"), name=_rsub_name,
            save=_alpha)
def sub(ctx, grad, alpha=1):
    return grad, (-grad if alpha == 1 else grad * -alpha) if ctx.needs_input_grad[1] else None


def _needed_by(value, other):
    """`value` if the gradient of `other` reads it, else None. PyTorch saves only what the
    formulas of the inputs that need a gradient read, so ``x * 0.5`` keeps no reference to
    ``x``, and writing into ``x`` afterwards is no error (as in PyTorch); numbers are kept
    (they have no versions)."""
    if isinstance(value, Tensor) and not (isinstance(other, Tensor) and other._requires_grad):
        return None
    return value


@derivative("mul", "mul_", inputs=("input", "other"),
            save=lambda input, other, **_: (_needed_by(input, other), _needed_by(other, input)))
def mul(ctx, grad, input, other):
    needs = ctx.needs_input_grad
    return (grad * conj(other) if needs[0] else None,
            grad * conj(input) if needs[1] else None)


def _div_name(input, other, rounding_mode=None, **_):
    return "DivBackward0" if rounding_mode is None else "DivBackward2"


@derivative("div", "div_", inputs=("input", "other"), name=_div_name,
            save=lambda input, other, rounding_mode=None, **_: (_needed_by(input, other), other, rounding_mode))
def div(ctx, grad, input, other, rounding_mode):
    needs = ctx.needs_input_grad
    if rounding_mode is not None:
        return _zeros(ctx, grad)
    return (grad / conj(other) if needs[0] else None,
            -grad * conj((input / other) / other) if needs[1] else None)  # (PyTorch's order: finite / inf**2 is 0)


def _pow_name(input, exponent, **_):
    if not isinstance(input, Tensor):
        return "PowBackward2"
    return "PowBackward1" if isinstance(exponent, Tensor) else "PowBackward0"


@derivative("pow", "pow_", inputs=("input", "exponent"), name=_pow_name,
            save=lambda input, exponent, **_: (input, exponent, RESULT))
def pow(ctx, grad, input, exponent, result):  # noqa: A001
    needs = ctx.needs_input_grad
    grad_input = grad_exponent = None
    if needs[0]:
        if isinstance(exponent, Tensor):
            grad_input = E.where(exponent == 0, 0.0, grad * conj(exponent * input ** (exponent - 1)))
        elif exponent == 0:
            grad_input = E.zeros_like(grad)
        elif exponent == 2:  # input ** 1 is input, bit for bit: one pass less (squared losses)
            grad_input = grad * conj(exponent * input)
        else:
            grad_input = grad * conj(exponent * input ** (exponent - 1))
    if needs[1]:
        # 0 ** x has no gradient for real x >= 0 (a complex x: imaginary part 0, PyTorch's rule).
        if _is_complex(exponent):
            real_exponent = E.where(exponent.imag == 0, exponent.real, -1.0) if isinstance(exponent, Tensor) \
                else (exponent.real if exponent.imag == 0 else -1.0)
        else:
            real_exponent = exponent
        if isinstance(input, Tensor):
            at_zero = (input == 0) & (real_exponent >= 0)
            grad_exponent = E.where(at_zero, 0.0, grad * conj(result * E.log(E.where(at_zero, 1.0, input))))
        elif input == 0:
            # 0 ** x: no gradient where x >= 0 (PyTorch's convention), -inf * result below.
            grad_exponent = E.where(real_exponent >= 0, 0.0, grad * result * -math.inf)
        elif isinstance(input, complex) or _is_complex(exponent):
            grad_exponent = grad * conj(result * cmath.log(input))
        else:
            # log of a negative base is nan in PyTorch's rule: s ** x is not real-differentiable.
            grad_exponent = grad * result * (math.log(input) if input > 0 else math.nan)
    return grad_input, grad_exponent


@derivative("atan2", "atan2_", inputs=("input", "other"), save=lambda input, other, **_: (input, other))
def atan2(ctx, grad, input, other):
    # PyTorch zeroes an infinite reciprocal, so at input = other = 0 the gradient is 0.
    recip = (input * input + other * other).reciprocal()
    scale = grad * E.where(recip.isinf(), 0.0, recip)
    return scale * other, -scale * input


@derivative("hypot", "hypot_", inputs=("input", "other"),
            save=lambda input, other, **_: (input, other, RESULT))
def hypot(ctx, grad, input, other, result):
    return grad * input / result, grad * other / result


@derivative("copysign", "copysign_", inputs=("input", "other"),
            save=lambda input, other, **_: (input, RESULT))
def copysign(ctx, grad, input, result):
    ratio = E.where(input == 0, 0.0, result / E.where(input == 0, 1.0, input))
    return grad * ratio, E.zeros_like(grad) if ctx.needs_input_grad[1] else None


def _max_min(pick):
    # PyTorch's rule: equal values share the gradient, and only the losing side gets none, so
    # where either is NaN (which wins) both get the whole gradient.
    def formula(ctx, grad, input, other):
        half = grad / 2
        grad_input = E.where(input == other, half, E.where(pick(other, input), 0.0, grad))
        grad_other = E.where(input == other, half, E.where(pick(input, other), 0.0, grad))
        return grad_input, grad_other
    return formula


derivative("maximum", inputs=("input", "other"), save=lambda input, other, **_: (input, other))(
    _max_min(lambda a, b: a > b))
derivative("minimum", inputs=("input", "other"), save=lambda input, other, **_: (input, other))(
    _max_min(lambda a, b: a < b))


def _fmax_fmin(keeps_input):
    def formula(ctx, grad, input, other):
        to_input = keeps_input(input, other) | other.isnan()
        return E.where(to_input, grad, 0.0), E.where(to_input, 0.0, grad)
    return formula


derivative("fmax", inputs=("input", "other"), save=lambda input, other, **_: (input, other))(
    _fmax_fmin(lambda a, b: a >= b))
derivative("fmin", inputs=("input", "other"), save=lambda input, other, **_: (input, other))(
    _fmax_fmin(lambda a, b: a <= b))


@derivative("remainder", "remainder_", inputs=("input", "other"), save=lambda input, other, **_: (input, other))
def remainder(ctx, grad, input, other):
    # PyTorch's -floor_divide(input, other), not floor(input / other): they differ where
    # other is infinite (-5 // inf is -1, floor(-5 / inf) is -0).
    return grad, -grad * E.div(input, other, rounding_mode="floor") if ctx.needs_input_grad[1] else None


@derivative("fmod", "fmod_", inputs=("input", "other"), save=lambda input, other, **_: (input, other))
def fmod(ctx, grad, input, other):
    return grad, -grad * (input / other).trunc() if ctx.needs_input_grad[1] else None


@derivative("floor_divide", "floor_divide_", inputs=("input", "other"), name="NotImplemented")
def floor_divide(ctx, grad):
    raise RuntimeError("the derivative for 'floor_divide' is not implemented.")


# A step is flat or a jump: PyTorch's result requires grad and its backward raises.
@derivative("heaviside", inputs=("input", "values"), name="NotImplemented")
def heaviside(ctx, grad):
    raise RuntimeError("derivative for aten::heaviside is not implemented")


for _name in ("eq", "ne", "lt", "le", "gt", "ge"):
    # In place on a float tensor the result stays float, with a zero gradient.
    derivative(_name + "_", inputs=("self", "other"), name=_name.capitalize() + "Backward0")(_zeros)


# -- three operands ---------------------------------------------------------------------

@derivative("where", inputs=("input", "other"), save=lambda condition, input=None, other=None, **_: (condition,))
def where(ctx, grad, condition):
    needs = ctx.needs_input_grad
    return (E.where(condition, grad, 0.0) if needs[0] else None,
            E.where(condition, 0.0, grad) if needs[1] else None)


@derivative("lerp", "lerp_", inputs=("input", "end", "weight"),
            save=lambda input, end, weight, **_: (input, end, weight))
def lerp(ctx, grad, input, end, weight):
    needs = ctx.needs_input_grad
    return (grad * conj(1 - weight) if needs[0] else None,
            grad * conj(weight) if needs[1] else None,
            grad * conj(end - input) if needs[2] else None)


def _clamp_name(input, min=None, max=None, **_):  # noqa: A002
    return "ClampBackward0" if isinstance(min, Tensor) or isinstance(max, Tensor) else "ClampBackward1"


@derivative("clamp", "clamp_", inputs=("input", "min", "max"), name=_clamp_name,
            save=lambda input, min=None, max=None, **_: (input, min, max))
def clamp(ctx, grad, input, lo, hi):
    inside = None
    if lo is not None:
        inside = input >= lo
    if hi is not None:
        inside = (input <= hi) if inside is None else inside & (input <= hi)
    needs = ctx.needs_input_grad
    return (E.where(inside, grad, 0.0) if needs[0] else None,
            E.where(input < lo, grad, 0.0) if needs[1] else None,
            E.where(input > hi, grad, 0.0) if needs[2] else None)


# The other elementwise ops are made of the ones above, or have no gradient.
# (In-place ops that read their input before overwriting it, like lerp_ and clamp_, need
# their own rule: as composites, the copy back into the input would invalidate what the
# inner op saved.)
composite("positive", "clamp_min", "clamp_max", "addcmul", "addcmul_", "addcdiv",
          "addcdiv_", "nan_to_num", "nan_to_num_")
not_differentiable(
    "isnan", "isinf", "isfinite", "isposinf", "isneginf", "isclose",
    "eq", "ne", "lt", "le", "gt", "ge",
    "logical_and", "logical_or", "logical_xor", "logical_not",
    "logical_and_", "logical_or_", "logical_xor_", "logical_not_",
    "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift", "bitwise_right_shift",
    "bitwise_not", "bitwise_and_", "bitwise_or_", "bitwise_xor_", "bitwise_left_shift_",
    "bitwise_right_shift_", "bitwise_not_",
)


# logaddexp, logaddexp2 and float_power are compositions of the ops above. Their in-place
# forms read `self` before overwriting it, so they have rules of their own.
composite("logaddexp", "logaddexp2", "float_power")
not_differentiable("signbit")
not_differentiable("gcd", "gcd_", "lcm", "lcm_")  # integers only


# Complex logaddexp is one kernel (PyTorch's formula); its rule is PyTorch's, conjugated
# for the complex case: d/da log(e^a + e^b) = 1 / (1 + e^(b - a)).
@derivative("logaddexp_complex", inputs=("input", "other"), save=lambda input, other: (input, other),
            name="LogaddexpBackward0")
def logaddexp_complex(ctx, grad, input, other):
    needs = ctx.needs_input_grad
    grad_input = grad / (1 + E.exp(other - input)).conj() if needs[0] else None
    grad_other = grad / (1 + E.exp(input - other)).conj() if needs[1] else None
    return grad_input, grad_other


@derivative("xlogy", inputs=("input", "other"), save=lambda input, other, **_: (input, other))
def xlogy(ctx, grad, input, other):
    # PyTorch's rule, not the composition's: d/dx is log(y) even where x = 0 (inf at
    # y = inf), and 0 only where x = 0 and y <= 0 (the points xlogy defines as 0).
    needs = ctx.needs_input_grad
    grad_input = grad_other = None
    if needs[0]:
        grad_input = E.where((input == 0) & (other <= 0), 0.0, E.xlogy(grad, other))
    if needs[1]:
        grad_other = grad * input / other
    return grad_input, grad_other


derivative("xlogy_", inputs=("self", "other"), save=lambda self, other: (self, other))(xlogy)


derivative("float_power_", inputs=("self", "exponent"), name="PowBackward0",
           save=lambda self, exponent: (self, exponent, RESULT))(pow)
