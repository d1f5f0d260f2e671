"""The op database: one `OpInfo` per elementwise op, consumed by generic tests.

Like PyTorch's OpInfo (torch/testing/_internal/opinfo/core.py), an entry says what an op
takes and computes, as data: sample-input generators (0-d, broadcast, non-contiguous —
transposed, stepped slices, expanded — and Python numbers on either side), a NumPy
reference, the dtypes it supports, the domain its inputs are drawn from, error inputs
with PyTorch's exception type and message, and expected failures with their reason.
PyTorch's type-promotion rules live here too, as a table (checked against torch, where it
is installed, by test_promotion.py; the error inputs by test_ops.py). Nothing here
imports torch.
"""
import operator

import numpy as np

from .core import *  # noqa: F401,F403 - the database's public names live here too
from .refs import (
    _digamma, _erf, _erfc, _erfinv, _lgamma, _ref_add, _ref_addcdiv, _ref_addcmul, _ref_allclose, _ref_clamp,
    _ref_div, _ref_equal, _ref_isclose, _ref_lerp, _ref_logit, _ref_lshift, _ref_nan_to_num, _ref_pow,
    _ref_round, _ref_rshift, _ref_sgn, _ref_sign, _ref_sub, _ref_logaddexp, _ref_xlogy, _ref_float_power,
    _ref_heaviside,
)
from .inputs import (
    _addc_samples, _chain, _clamp_samples, _equal_samples, _errors_addcdiv, _errors_addcmul, _errors_alpha,
    _errors_abs_complex_inplace, _errors_bitwise, _errors_clamp, _errors_div, _errors_float_only_binary, _errors_isclose, _errors_lerp,
    _errors_heaviside, _errors_neg, _errors_pow, _errors_round, _errors_sub, _errors_unsupported, _errors_where,
    _errors_zero_division, _isclose_samples, _lerp_samples, _pow_samples, _shift_samples, _where_samples,
)
from .reductions import REDUCTION_DB, REDUCTIONS, ReductionInfo  # noqa: E402,F401
from .families import (  # noqa: F401 - the other families' database
    FAMILIES, FAMILY_DB, FAMILY_OPS, FAMILY_TOLERANCE, FamilyOpInfo, XFailOn,
)


# --- the entries ------------------------------------------------------------------------

_FLOAT_RESULT = FLOATING + (I64, B)           # int/bool inputs run the float32 kernels
_WIDE_FLOAT_RESULT = _FLOAT_RESULT + (I32, U8)
_SAME_NO_BOOL = FLOATING + (I64,)
# The complex entries: every op PyTorch has for complex64/complex128 samples both
# (values against NumPy's complex128 and, in test_complex_ops.py, special values against
# PyTorch's c10::complex where torch is installed).
_C = COMPLEX
_FLOAT_RESULT_C = _FLOAT_RESULT + _C


def _unary(name, ref, dtypes=_FLOAT_RESULT, result=to_float, **kw):
    return OpInfo(name, ref, dtypes, kind="unary", result=result, **kw)


def _binary(name, ref, dtypes, **kw):
    return OpInfo(name, ref, dtypes, kind="binary", **kw)


_ARITH = dict(scalar_lhs=True)
# The comparisons sample float32, float64, int64 and bool, and some a dtype or two more
# whose kernels they have: eq and lt bfloat16 and uint8, ne int32, gt float16.
_COMPARISON_DTYPES = {"eq": (F32, F64, BF16, I64, B, U8) + COMPLEX, "lt": (F32, F64, BF16, I64, B, U8),
                      "ne": (F32, F64, I64, B, I32) + COMPLEX, "gt": (F32, F64, I64, B, F16)}
# clamp_ with number bounds names self's dtype by its C++ type in the can't-cast error.
_CLAMP_CAST_NAMES = {I64: "long int", I32: "int", I16: "short int", I8: "signed char", U8: "unsigned char"}
OP_DB = [
    # --- arithmetic ---
    # int8 and int32 have kernels of their own: add and sub (ne and sign too, below) sample them.
    _binary("add", _ref_add, FLOATING + (I64, B, I32, I8, U8) + _C, operator=operator.add, ioperator=operator.iadd,
            sample_kwargs=lambda d: [{"alpha": True}, {"alpha": 2}] if d is B else [
                {"alpha": 0.5 if d.is_floating_point else 2}],
            error_inputs_func=_errors_alpha, **_ARITH),
    _binary("sub", _ref_sub, FLOATING + (I64, I32, U8) + _C, operator=operator.sub, ioperator=operator.isub,
            sample_kwargs=lambda d: [{"alpha": 0.5 if d.is_floating_point else 2}],
            error_inputs_func=_errors_sub, **_ARITH),
    _binary("mul", np.multiply, FLOATING + (I64, B, I32, U8) + _C, operator=operator.mul, ioperator=operator.imul,
            **_ARITH),
    _binary("div", _ref_div, FLOATING + (I64, B) + _C, result=_div_result, rhs_nonzero=True,
            operator=operator.truediv, ioperator=operator.itruediv, scalars=(3, -2.5),
            sample_kwargs=lambda d: [] if d is B or d.is_complex else [{"rounding_mode": "trunc"},
                                                                       {"rounding_mode": "floor"}],
            error_inputs_func=_errors_div, **_ARITH),
    _binary("true_divide", np.true_divide, (F32, F64, I64) + _C, result=to_float, rhs_nonzero=True, **_ARITH),
    _binary("floor_divide", np.floor_divide, (F32, F64, F16, I64, U8), rhs_nonzero=True,
            operator=operator.floordiv, ioperator=operator.ifloordiv,
            error_inputs_func=_chain(_errors_zero_division, _errors_unsupported("div_floor_cpu", (B,), unary=False)),
            **_ARITH),
    _binary("remainder", np.remainder, (F32, F64, BF16, I64, U8), rhs_nonzero=True,
            operator=operator.mod, ioperator=operator.imod,
            error_inputs_func=_chain(_errors_zero_division, _errors_unsupported("remainder_cpu", (B,), unary=False)),
            **_ARITH),
    _binary("fmod", np.fmod, (F32, F64, F16, I64), rhs_nonzero=True,
            error_inputs_func=_chain(_errors_zero_division, _errors_unsupported("fmod_cpu", (B,), unary=False))),
    _binary("pow", _ref_pow, (F32, F64, BF16, I64, U8) + _C, domain=(0.1, 3), rhs_domain=(-2, 3),
            scalars=(2, 0.5), sample_inputs_func=_pow_samples, operator=operator.pow, ioperator=operator.ipow,
            error_inputs_func=_errors_pow, **_ARITH),
    _unary("neg", np.negative, _SAME_NO_BOOL + (I32, U8) + _C, result=same, operator=operator.neg,
           error_inputs_func=_errors_neg),
    _unary("abs", np.abs, _SAME_NO_BOOL + (I32,) + _C, result=lambda d, kw: d.to_real() if d.is_complex else d,
           operator=abs, error_inputs_func=_chain(_errors_unsupported("abs_cpu", (B,)), _errors_abs_complex_inplace)),
    _unary("sign", _ref_sign, _SAME_NO_BOOL + (B, I32), result=same),
    _unary("sgn", _ref_sgn, (F32, F64, I64) + _C, result=same),
    _unary("square", np.square, _SAME_NO_BOOL + (B, I32) + _C, result=_square_result),
    _unary("reciprocal", np.reciprocal, _FLOAT_RESULT_C, domain=(-4, 4), extremal=True),
    # --- exponentials, logarithms, powers ---
    _unary("exp", np.exp, _WIDE_FLOAT_RESULT + _C),
    # 2 ** (x + 800j) in complex64: PyTorch rounds 800 ln 2 to float32 (an ulp of a 554 rad angle)
    _unary("exp2", np.exp2, _FLOAT_RESULT_C, tol={C64: (5e-5, 2e-4)}),
    _unary("expm1", np.expm1, _FLOAT_RESULT_C),
    _unary("log", np.log, _WIDE_FLOAT_RESULT + _C, domain=(0.1, 10)),
    _unary("log2", np.log2, _FLOAT_RESULT_C, domain=(0.1, 10)),
    _unary("log10", np.log10, _FLOAT_RESULT_C, domain=(0.1, 10)),
    _unary("log1p", np.log1p, _FLOAT_RESULT_C, domain=(-0.9, 10)),
    _unary("sqrt", np.sqrt, _WIDE_FLOAT_RESULT + _C, domain=(0, 10)),
    _unary("rsqrt", lambda x: 1 / np.sqrt(x), _FLOAT_RESULT_C, domain=(0.1, 10)),
    # --- trigonometric and hyperbolic ---
    _unary("sin", np.sin, _WIDE_FLOAT_RESULT + _C),
    _unary("cos", np.cos, _FLOAT_RESULT_C),
    _unary("tan", np.tan, _FLOAT_RESULT_C, domain=(-1.3, 1.3)),
    _unary("asin", np.arcsin, _FLOAT_RESULT_C, domain=(-0.99, 0.99)),
    _unary("acos", np.arccos, _FLOAT_RESULT_C, domain=(-0.99, 0.99)),
    _unary("atan", np.arctan, _FLOAT_RESULT_C),
    _binary("atan2", np.arctan2, (F32, F64, F16, I64, B), result=to_float, scalars=()),
    _unary("sinh", np.sinh, _FLOAT_RESULT_C),
    _unary("cosh", np.cosh, _FLOAT_RESULT_C),
    _unary("tanh", np.tanh, _FLOAT_RESULT_C),
    _unary("asinh", np.arcsinh, _FLOAT_RESULT_C),
    _unary("acosh", np.arccosh, _FLOAT_RESULT_C, domain=(1, 10)),
    _unary("atanh", np.arctanh, _FLOAT_RESULT_C, domain=(-0.99, 0.99)),
    # --- special functions ---
    _unary("sigmoid", lambda x: 1 / (1 + np.exp(-x)), _FLOAT_RESULT_C, domain=(-10, 10)),
    _unary("logit", _ref_logit, domain=(0.01, 0.99), sample_kwargs=lambda d: [{"eps": 0.2}], ref_wants_dtype=True),
    _unary("erf", _erf),
    _unary("erfc", _erfc),
    _unary("erfinv", _erfinv, domain=(-0.99, 0.99)),
    _unary("lgamma", _lgamma, domain=(0.1, 10)),
    _unary("digamma", _digamma, domain=(0.1, 10)),
    # the activation's kernel (nn.functional.relu calls it): max(x, 0), NaN kept
    _unary("relu", lambda x: np.where(np.isnan(x), x, np.maximum(x, 0)) if x.dtype.kind == "f" else np.maximum(x, 0),
           _SAME_NO_BOOL, result=same, supports_out=False),
    # --- rounding ---
    _unary("floor", np.floor, _SAME_NO_BOOL, result=same, error_inputs_func=_errors_unsupported("floor_vml_cpu", (B,))),
    _unary("ceil", np.ceil, _SAME_NO_BOOL, result=same, error_inputs_func=_errors_unsupported("ceil_vml_cpu", (B,))),
    _unary("trunc", np.trunc, _SAME_NO_BOOL, result=same, error_inputs_func=_errors_unsupported("trunc_vml_cpu", (B,))),
    _unary("round", _ref_round, _SAME_NO_BOOL, result=same, error_inputs_func=_errors_round,
           sample_kwargs=lambda d: [{"decimals": 2}, {"decimals": -1}] if d.is_floating_point else []),
    _unary("frac", lambda x: x - np.trunc(x), FLOATING, result=same,
           error_inputs_func=_errors_unsupported("frac_cpu", (I64, I32, U8, B))),
    # --- clamping, selection, interpolation ---
    OpInfo("clamp", _ref_clamp, FLOATING + (I64, U8), kind="custom", sample_inputs_func=_clamp_samples,
           error_inputs_func=_errors_clamp, cast_error_names=_CLAMP_CAST_NAMES),
    OpInfo("clip", _ref_clamp, (F32, I64), kind="custom", sample_inputs_func=_clamp_samples,
           cast_error_names=_CLAMP_CAST_NAMES),
    # PyTorch has no maximum_ / minimum_ / fmax_ / fmin_.
    _binary("maximum", np.maximum, (F32, F64, F16, I64, B), scalars=(), inplace=False),
    _binary("minimum", np.minimum, (F32, F64, BF16, I64, B), scalars=(), inplace=False),
    _binary("fmax", np.fmax, (F32, F64, I64), scalars=(), inplace=False),
    _binary("fmin", np.fmin, (F32, F64, I64), scalars=(), inplace=False),
    OpInfo("where", np.where, ALL_DTYPES[:4] + (I64, B) + _C, kind="custom", promote=(1, 2),
           sample_inputs_func=_where_samples, error_inputs_func=_errors_where, inplace=False, method=False,
           out_dtype_error="Expected out type to be {result} but got {out}"),
    OpInfo("lerp", _ref_lerp, FLOATING + _C, kind="custom", promote=(0, 1), sample_inputs_func=_lerp_samples,
           error_inputs_func=_errors_lerp),
    OpInfo("addcmul", _ref_addcmul, FLOATING + (I64,) + _C, kind="custom", sample_inputs_func=_addc_samples,
           error_inputs_func=_errors_addcmul),
    OpInfo("addcdiv", _ref_addcdiv, FLOATING + _C, kind="custom", sample_inputs_func=_addc_samples,
           error_inputs_func=_errors_addcdiv),
    _binary("hypot", np.hypot, (F32, F64, BF16), scalars=(),
            error_inputs_func=_errors_float_only_binary("hypot_cpu")),
    _binary("copysign", np.copysign, (F32, F64, F16, I64, B), result=to_float, scalars=(-1, 2.5)),
    # --- compositions of the log/exp/pow kernels ---
    # PyTorch has complex logaddexp, but neither complex logaddexp2 nor complex xlogy.
    _binary("logaddexp", _ref_logaddexp, (F32, F64) + _C, scalars=(), inplace=False,
            error_inputs_func=_errors_float_only_binary("logaddexp_cpu")),
    _binary("logaddexp2", np.logaddexp2, (F32, F64), scalars=(), inplace=False,
            error_inputs_func=_chain(_errors_float_only_binary("logaddexp2_cpu"),
                                     _errors_unsupported("logaddexp2_cpu", _C, unary=False))),
    _binary("xlogy", _ref_xlogy, (F32, F64, I64, B), result=to_float, domain=(0, 3), rhs_domain=(0.1, 3),
            scalars=(3, 2.5), scalar_lhs=True,
            error_inputs_func=_chain(_errors_unsupported("xlogy_cpu", _C, unary=False),
                                     _errors_unsupported("xlogy_cpu", (C64,), unary=False, other=2.5))),
    # float_power_ needs a float64 self (its own error): tests/test_more_ops.py covers it.
    _binary("float_power", _ref_float_power, (F32, F64, I64) + _C,
            result=lambda promoted, kwargs: C128 if promoted.is_complex else F64,
            domain=(0.1, 3), rhs_domain=(-2, 3), scalars=(2, 0.5), scalar_lhs=True, inplace=False),
    _unary("signbit", np.signbit, (F32, F64, I64), result=to_bool, inplace=False),
    _unary("nan_to_num", _ref_nan_to_num, FLOATING + (I64, B) + _C, result=same, ref_wants_dtype=True,
           sample_kwargs=lambda d: [{"nan": 1.5, "posinf": 100.0, "neginf": -100.0}, {"posinf": 7.0}]
           if is_inexact(d) else [],
           out_dtype_error="nan_to_num: dtype of out: {out} should be same as input: {result}"),
    # --- predicates ---
    _unary("isnan", np.isnan, (F32, F64, BF16, I64, B) + _C, result=to_bool, inplace=False, supports_out=False),
    _unary("isinf", np.isinf, (F32, F64, F16, I64, B) + _C, result=to_bool, inplace=False, supports_out=False),
    _unary("isfinite", np.isfinite, (F32, F64, F16, I64, B) + _C, result=to_bool, inplace=False, supports_out=False),
    # --- comparisons ---
    *(_binary(name, ref, _COMPARISON_DTYPES.get(name, (F32, F64, I64, B)),
              result=to_bool, scalars=(3, -2.5, True), operator=opr)
      for name, ref, opr in (("eq", np.equal, operator.eq), ("ne", np.not_equal, operator.ne),
                             ("lt", np.less, operator.lt), ("le", np.less_equal, operator.le),
                             ("gt", np.greater, operator.gt), ("ge", np.greater_equal, operator.ge))),
    OpInfo("isclose", _ref_isclose, (F32, F64, F16, I64, B) + _C, kind="custom", result=to_bool,
           sample_inputs_func=_isclose_samples, error_inputs_func=_errors_isclose, inplace=False,
           supports_out=False),
    OpInfo("allclose", _ref_allclose, (F32, F64, I64) + _C, kind="custom", result="python",
           sample_inputs_func=_equal_samples, error_inputs_func=_errors_isclose, inplace=False,
           supports_out=False),
    OpInfo("equal", _ref_equal, (F32, F64, I64, B) + _C, kind="custom", result="python", promote=(),
           sample_inputs_func=_equal_samples, inplace=False, supports_out=False),
    # --- logical ---
    *(_binary(name, ref, (F32, F64, I64, B) + _C, result=to_bool, scalars=())
      for name, ref in (("logical_and", np.logical_and), ("logical_or", np.logical_or),
                        ("logical_xor", np.logical_xor))),
    _unary("logical_not", np.logical_not, (F32, F64, I64, B) + _C, result=to_bool),
    # --- bitwise ---
    _binary("bitwise_and", np.bitwise_and, (I64, I32, U8, B), scalars=(3, True), int_scalars_only=True,
            operator=operator.and_, ioperator=operator.iand, error_inputs_func=_errors_bitwise("bitwise_and_cpu"),
            **_ARITH),
    _binary("bitwise_or", np.bitwise_or, (I64, U8, B), scalars=(3, True), int_scalars_only=True,
            operator=operator.or_, ioperator=operator.ior, error_inputs_func=_errors_bitwise("bitwise_or_cpu"),
            **_ARITH),
    _binary("bitwise_xor", np.bitwise_xor, (I64, I32, B), scalars=(3, True), int_scalars_only=True,
            operator=operator.xor, ioperator=operator.ixor, error_inputs_func=_errors_bitwise("bitwise_xor_cpu"),
            **_ARITH),
    _unary("bitwise_not", np.invert, (I64, U8, B), result=same, operator=operator.invert,
           error_inputs_func=_errors_unsupported("bitwise_not_cpu", (F32, F64, F16, BF16))),
    _binary("bitwise_left_shift", _ref_lshift, (I64, I32, I16, I8, U8), rhs_domain=(0, 5), domain=(-9, 9),
            scalars=(2,), int_scalars_only=True, sample_inputs_func=_shift_samples,
            operator=operator.lshift, ioperator=operator.ilshift,
            error_inputs_func=_errors_bitwise("lshift_cpu", with_bool=True), **_ARITH),
    _binary("bitwise_right_shift", _ref_rshift, (I64, I32, I16, I8, U8), rhs_domain=(0, 5), scalars=(2,),
            int_scalars_only=True, sample_inputs_func=_shift_samples,
            operator=operator.rshift, ioperator=operator.irshift,
            error_inputs_func=_errors_bitwise("rshift_cpu", with_bool=True), **_ARITH),
    _binary("heaviside", _ref_heaviside, (F32, F64, F16, I64, U8, B), scalars=(),
            error_inputs_func=_errors_heaviside),
    # --- integer-only ---
    _binary("gcd", np.gcd, (I64, I32, I16, I8, U8), domain=(-30, 30), scalars=(),
            error_inputs_func=_errors_unsupported("gcd_cpu", (F32, F64, B), unary=False)),
    _binary("lcm", np.lcm, (I64, I32, I16, U8), domain=(-30, 30), scalars=(),
            error_inputs_func=_errors_unsupported("lcm_cpu", (F32, F64, B), unary=False)),
]

# Where ember's special values still part from PyTorch's (test_complex_ops.py holds these as
# expected failures). None now: exp, pow, log1p, expm1, the trigonometric and hyperbolic
# functions and their inverses are written out in scalar_complex.py with C99's Annex G values
# (glibc's, which PyTorch's CPU kernels call).
COMPLEX_SPECIAL_VALUES_DIFFER = {}

OPS = {op.name: op for op in OP_DB}
assert len(OPS) == len(OP_DB), "an op is listed twice"
