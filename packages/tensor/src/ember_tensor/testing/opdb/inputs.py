"""Custom sample generators and PyTorch's error inputs for the op database's entries."""
import math

import numpy as np

from .core import (
    B, C64, EXTREMAL, ErrorInput, F16, F32, F64, I32, I64, NP, Operand, PROMOTE, SampleInput, TYPE_NAME, U8,
    _binary_samples, make_values,
)

__all__ = [
    "_clamp_samples", "_where_samples", "_lerp_samples", "_addc_samples", "_isclose_samples", "_equal_samples",
    "_pow_samples", "_shift_samples", "_t", "_not_implemented", "_errors_unsupported", "_chain", "_errors_neg",
    "_BOOL_SUB", "_errors_sub", "_errors_alpha", "_errors_zero_division", "_errors_div", "_errors_pow",
    "_errors_where", "_errors_clamp", "_errors_lerp", "_errors_addcmul", "_errors_addcdiv", "_errors_isclose",
    "_errors_round", "_errors_float_only_binary", "_errors_bitwise", "_errors_heaviside", "_errors_abs_complex_inplace"
]


# --- custom sample generators -----------------------------------------------------------

def _clamp_samples(op, dtype, rng):
    S, O = SampleInput, Operand

    def v(shape, lo=None, hi=None):
        return make_values(shape, dtype, rng, lo, hi)
    lo, hi = (-1.5, 2.5) if dtype.is_floating_point else (-1, 2)
    yield S(O(v((3, 5))), (lo, hi), name="numbers")
    yield S(O(v((3, 5))), (lo, None), name="min only")
    yield S(O(v((3, 5))), (None, hi), name="max only")
    yield S(O(v((4, 3)), "transposed"), (hi, lo), name="min > max")
    yield S(O(v(())), (lo, hi), name="0-d")
    yield S(O(v((3, 5))), (O(v((3, 1), -5, 0)), O(v((5,), 0, 5))), name="tensor bounds")
    yield S(O(v((2, 6)), "stepped"), (O(v((), -5, 0)), None), name="0-d tensor min")
    yield S(O(v((3, 4))), (None, O(np.broadcast_to(v((1, 4), 0, 5), (3, 4)), "expanded")),
            name="expanded max")
    if not dtype.is_floating_point:
        yield S(O(v((3, 5))), (0.5, None), name="float min promotes")
    if dtype.is_floating_point:
        yield S(O(np.array(EXTREMAL).astype(NP[dtype])), (-1.0, 1.0), name="extremal")


def _where_samples(op, dtype, rng):
    S, O = SampleInput, Operand

    def cond(shape):
        return O(rng.random(shape) < 0.5)

    def v(shape):
        return make_values(shape, dtype, rng)
    num = 2.5 if dtype.is_floating_point else 2.5 - 1j if dtype.is_complex else (True if dtype is B else 3)
    yield S(cond((3, 5)), (O(v((3, 5))), O(v((3, 5)))), name="same shape")
    yield S(cond((3, 1)), (O(v((1, 5))), O(v((5,)))), name="broadcast")
    yield S(cond(()), (O(v(())), O(v(()))), name="0-d")
    yield S(cond((3, 4)), (O(v((3, 4)), "transposed"), O(v((2, 3, 4)), "stepped")), name="non-contiguous")
    yield S(cond((3, 5)), (O(v((3, 5))), num), name="number other")
    yield S(cond((3, 5)), (num, O(v(()))), name="number input, 0-d other")
    yield S(cond((3, 5)), (O(v((3, 5))), O(v(()))), name="0-d other")


def _lerp_samples(op, dtype, rng):
    S, O = SampleInput, Operand

    def v(shape, lo=None, hi=None):
        return make_values(shape, dtype, rng, lo, hi)
    yield S(O(v((3, 5))), (O(v((3, 5))), 0.3), name="weight < 0.5")
    yield S(O(v((3, 5))), (O(v((3, 5))), 0.8), name="weight >= 0.5")
    yield S(O(v((3, 1))), (O(v((5,))), O(v((3, 5), 0, 1))), name="tensor weight, broadcast")
    yield S(O(v(())), (O(v(())), O(v((), 0, 1))), name="0-d")
    yield S(O(v((3, 4)), "transposed"), (O(v((2, 3, 4)), "stepped"), O(v((3, 1), 0, 1))), name="non-contiguous")
    yield S(O(v((2, 3, 4)), "stepped"), (O(v((3, 4)), "transposed"), 0.7), name="non-contiguous, in place")
    yield S(O(v((3, 5))), (O(v((3, 5))), O(v((), 0, 1))), name="0-d weight")


def _addc_samples(op, dtype, rng):
    S, O = SampleInput, Operand
    nonzero = op.name == "addcdiv"

    def v(shape, nz=False):
        return make_values(shape, dtype, rng, nonzero=nz)
    value = 0.5 if dtype.is_floating_point or dtype.is_complex else 2
    yield S(O(v((3, 5))), (O(v((3, 5))), O(v((3, 5), nonzero))), name="same shape")
    yield S(O(v((3, 5))), (O(v((3, 5))), O(v((3, 5), nonzero))), {"value": value}, name="value")
    yield S(O(v((3, 1))), (O(v((5,))), O(v((3, 5), nonzero))), {"value": value}, name="broadcast")
    yield S(O(v(())), (O(v(())), O(v((), nonzero))), name="0-d")
    yield S(O(v((3, 4))), (O(v((3, 4)), "transposed"), O(v((2, 3, 4), nonzero), "stepped")),
            name="non-contiguous")
    yield S(O(v((2, 3, 4)), "stepped"), (O(v((3, 4)), "transposed"), O(v((1, 4), nonzero))),
            name="non-contiguous, in place")


def _isclose_samples(op, dtype, rng):
    S, O = SampleInput, Operand
    a = make_values((4, 6), dtype, rng)
    if dtype.is_floating_point or dtype.is_complex:
        # Relative perturbations far from the tolerance boundaries (none, tiny, large),
        # turned as well as scaled for complex numbers.
        factors = rng.choice([0.0, 1e-7, 1e-3, 0.5], size=a.shape) * (1j if dtype.is_complex else 1)
        b = (a.astype(np.complex128 if dtype.is_complex else np.float64) * (1 + factors)).astype(NP[dtype])
        special = np.array([math.nan, math.inf, -math.inf, math.nan, 1.0, math.inf]).astype(NP[dtype])
        special_other = np.array([math.nan, math.inf, math.inf, 1.0, math.nan, 1e4]).astype(NP[dtype])
        kwargs = ({}, {"rtol": 0.1, "atol": 0.5}, {"equal_nan": True})
    else:
        b = (a.astype(np.int64) + rng.integers(0, 2, a.shape)).astype(NP[dtype])
        if dtype is B:
            b = rng.random(a.shape) < 0.5
        special = special_other = None
        kwargs = ({}, {"rtol": 0.5, "atol": 0.0}, {"atol": 1.0})
    for kw in kwargs:
        yield S(O(a), (O(b),), kw, name=f"kwargs {kw}")
    yield S(O(a[:, :1]), (O(b[:1]),), name="broadcast")
    yield S(O(a[0, 0]), (O(b),), name="0-d input")
    yield S(O(a.T.copy(), "transposed"), (O(b.T.copy()),), name="transposed")
    if special is not None:
        for kw in ({}, {"equal_nan": True}):
            yield S(O(special), (O(special_other),), kw, name=f"nan and inf, {kw}")


def _equal_samples(op, dtype, rng):
    S, O = SampleInput, Operand
    a = make_values((3, 4), dtype, rng)
    b = a.copy()
    b.reshape(-1)[5] = make_values((), dtype, rng, 6, 9) if dtype is not B else not b.reshape(-1)[5]
    yield S(O(a), (O(a.copy()),), name="equal")
    yield S(O(a), (O(b),), name="one element differs")
    yield S(O(a, "transposed"), (O(a.copy(), "stepped"),), name="non-contiguous, equal")
    yield S(O(a[:1]), (O(np.broadcast_to(a[:1], (3, 4))),), name="shapes differ")
    yield S(O(a[0, 0]), (O(a[0, 0].copy()),), name="0-d")
    if op.name == "allclose" and (dtype.is_floating_point or dtype.is_complex):
        yield S(O(a), (O((a * (1 + 1e-3)).astype(NP[dtype])),), {"rtol": 1e-2}, name="rtol")


def _pow_samples(op, dtype, rng):
    yield from _binary_samples(op, dtype, rng)
    if dtype.is_complex:  # zero bases to exponents of positive real part: 0 (others: see extremal)
        base = np.zeros(4, NP[dtype])
        exp = np.array([2, 0.5 + 1j, 1.5, 3 - 2j]).astype(NP[dtype])
        yield SampleInput(Operand(base), (Operand(exp),), name="zero bases")
    elif not dtype.is_floating_point:
        base = np.array([0, 1, -1, 2, -1, 3, 1, -2]).astype(NP[dtype])
        exp = np.array([-1, -3, -3, -1, -2, 0, 5, 3]).astype(NP[dtype])
        yield SampleInput(Operand(base), (Operand(exp),), name="negative integer exponents")
        yield SampleInput(2, (Operand(exp),), name="number base, negative integer exponents")


def _shift_samples(op, dtype, rng):
    yield from _binary_samples(op, dtype, rng)
    values = np.array([1, -1, 5, -7, 3, 1, -1, 1, 1, -2]).astype(NP[dtype])
    shifts = np.array([-1, 0, 3, 7, 8, 31, 32, 63, 64, 70])
    keep = shifts <= np.iinfo(NP[dtype]).max
    yield SampleInput(Operand(values[keep]), (Operand(shifts[keep].astype(NP[dtype])),),
                      name="shift amounts out of range")


# --- error inputs -----------------------------------------------------------------------


def _t(values, dtype):
    return Operand(np.array(values).astype(NP[dtype]))


def _not_implemented(kernel, dtype):
    return f'"{kernel}" not implemented for \'{TYPE_NAME[dtype]}\''


def _errors_unsupported(kernel, dtypes, *, unary=True, other=None):
    """NotImplementedError for each dtype in `dtypes` (PyTorch's dispatch-macro error)."""
    def gen(op):
        for d in dtypes:
            args = () if unary else ((_t([1, 0], d) if other is None else other),)
            yield ErrorInput(SampleInput(_t([1, 0], d), args), NotImplementedError,
                             _not_implemented(kernel, d))
    return gen


def _chain(*gens):
    def gen(op):
        for g in gens:
            yield from g(op)
    return gen


def _errors_neg(op):
    yield ErrorInput(SampleInput(_t([True], B)), RuntimeError,
                     r"Negation, the `-` operator, on a bool tensor is not supported. If you are "
                     r"trying to invert a mask, use the `~` or `logical_not\(\)` operator instead.")


_BOOL_SUB = (r"Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying "
             r"to invert a mask, use the `~` or `logical_not\(\)` operator instead.")


def _errors_sub(op):
    yield ErrorInput(SampleInput(_t([True], B), (_t([False], B),)), RuntimeError,
                     r"Subtraction, the `-` operator, with two bool tensors is not supported. "
                     r"Use the `\^` or `logical_xor\(\)` operator instead.")
    yield ErrorInput(SampleInput(_t([1.0], F32), (_t([True], B),)), RuntimeError, _BOOL_SUB)
    yield ErrorInput(SampleInput(_t([True], B), (_t([2], I64),)), RuntimeError, _BOOL_SUB)
    yield ErrorInput(SampleInput(_t([1.0], F32), (True,)), RuntimeError, _BOOL_SUB)
    yield from _errors_alpha(op)


def _errors_alpha(op):
    yield ErrorInput(SampleInput(_t([1], I64), (_t([2], I64),), {"alpha": 0.5}), RuntimeError,
                     "For integral input tensors, argument alpha must not be a floating point number.")
    yield ErrorInput(SampleInput(_t([1.0], F32), (_t([2.0], F32),), {"alpha": True}), RuntimeError,
                     "Boolean alpha only supported for Boolean results.")


def _errors_zero_division(op):
    yield ErrorInput(SampleInput(_t([1, 2], I64), (0,)), RuntimeError, "ZeroDivisionError")
    yield ErrorInput(SampleInput(_t([1, 2], I32), (_t([1, 0], I32),)), RuntimeError, "ZeroDivisionError")
    yield ErrorInput(SampleInput(_t([1, 2], I64), (_t([1, 0], I64),)), RuntimeError, "ZeroDivisionError",
                     variant="inplace")


def _errors_div(op):
    yield ErrorInput(SampleInput(_t([1.0], F32), (_t([2.0], F32),), {"rounding_mode": "foo"}), RuntimeError,
                     "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found 'foo'")
    for mode in ("trunc", "floor"):
        yield ErrorInput(SampleInput(_t([1, 2], I64), (0,), {"rounding_mode": mode}), RuntimeError,
                         "ZeroDivisionError")


def _errors_pow(op):
    yield ErrorInput(SampleInput(_t([1, 2], I64), (-1,)), RuntimeError,
                     "Integers to negative integer powers are not allowed.")
    yield ErrorInput(SampleInput(_t([1, 2], U8), (-2,)), RuntimeError,
                     "Integers to negative integer powers are not allowed.")
    yield ErrorInput(SampleInput(_t([True], B), (_t([True], B),)), NotImplementedError,
                     _not_implemented("pow", B))


def _errors_where(op):
    x = _t([1.0, 2.0], F32)
    for d in (I64, F32):
        yield ErrorInput(SampleInput(_t([1, 0], d), (x, x)), RuntimeError,
                         f"where expected condition to be a boolean tensor, but got a tensor with "
                         f"dtype {TYPE_NAME[d]}")


def _errors_clamp(op):
    yield ErrorInput(SampleInput(_t([1.0], F32), (None, None)), RuntimeError,
                     "torch.clamp: At least one of 'min' or 'max' must not be None")
    yield ErrorInput(SampleInput(_t([True], B), (_t([False], B), _t([True], B))), NotImplementedError,
                     _not_implemented("clamp_cpu", B))
    yield ErrorInput(SampleInput(_t([1, 2], I64), (0.5, None)), RuntimeError,
                     "result type Float can't be cast to the desired output type long int", variant="inplace")


def _errors_lerp(op):
    yield ErrorInput(SampleInput(_t([1, 2], I64), (_t([3, 4], I64), 0.5)), NotImplementedError,
                     _not_implemented("lerp_kernel_scalar", I64))
    yield ErrorInput(SampleInput(_t([1.0], F32), (_t([2.0], F64), 0.5)), RuntimeError,
                     "expected dtype float for `end` but got dtype double")
    yield ErrorInput(SampleInput(_t([1.0], F32), (_t([2.0], F32), _t([0.5], F64))), RuntimeError,
                     "expected dtype float for `weight` but got dtype double")


def _errors_addcmul(op):
    yield ErrorInput(SampleInput(_t([True], B), (_t([True], B), _t([False], B))), NotImplementedError,
                     _not_implemented("addcmul_cpu_out", B))


def _errors_addcdiv(op):
    msg = (r"Integer division with addcdiv is no longer supported, and in a future  release addcdiv "
           r"will perform a true division of tensor1 and tensor2.")
    yield ErrorInput(SampleInput(_t([1], I64), (_t([1], I64), _t([2], I64))), RuntimeError, msg)
    yield ErrorInput(SampleInput(_t([1.0], F32), (_t([1], I64), _t([2], I32))), RuntimeError, msg)


def _errors_isclose(op):
    yield ErrorInput(SampleInput(_t([1.0], F32), (_t([1.0], F64),)), RuntimeError, "Float did not match Double")
    yield ErrorInput(SampleInput(_t([1], I64), (_t([1.0], F32),)), RuntimeError, "Long did not match Float")
    for name in ("rtol", "atol"):
        yield ErrorInput(SampleInput(_t([1.0], F32), (_t([1.0], F32),), {name: -1}), RuntimeError,
                         f"{name} must be greater than or equal to zero, but got -1")


def _errors_round(op):
    yield from _errors_unsupported("round_vml_cpu", (B,))(op)
    for d in (I64, I32):
        yield ErrorInput(SampleInput(_t([1, 2], d), (), {"decimals": 1}), NotImplementedError,
                         _not_implemented("round_cpu", d))


def _errors_float_only_binary(kernel):
    def gen(op):
        for d in (I64, I32, U8, B):
            yield ErrorInput(SampleInput(_t([3, 1], d), (_t([4, 1], d),)), NotImplementedError,
                             _not_implemented(kernel, d))
    return gen


def _errors_bitwise(kernel, with_bool=False):
    def gen(op):
        for a, b in ((F32, F32), (I64, F64), (F16, I64), (B, F32)):
            promoted = PROMOTE[(a, b)]
            yield ErrorInput(SampleInput(_t([1, 0], a), (_t([1, 1], b),)), NotImplementedError,
                             _not_implemented(kernel, promoted))
        yield ErrorInput(SampleInput(_t([1, 0], I64), (2.5,)), NotImplementedError,
                         _not_implemented(kernel, F32))
        if with_bool:
            yield ErrorInput(SampleInput(_t([True], B), (_t([True], B),)), NotImplementedError,
                             _not_implemented(kernel, B))
    return gen


def _errors_abs_complex_inplace(op):
    yield ErrorInput(SampleInput(_t([1 + 1j], C64)), RuntimeError, "In-place abs is not supported for complex tensors.",
                     variant="inplace")


def _errors_heaviside(op):
    yield ErrorInput(SampleInput(_t([1, 0], I64), (_t([1, 1], F32),)), RuntimeError,
                     "heaviside is not yet implemented for tensors with different dtypes.")
