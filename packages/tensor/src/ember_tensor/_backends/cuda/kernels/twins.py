"""CUDA twins of scalar functions: what CUDA kernels apply where `_backends.scalar.py`'s version
cannot serve as is (`_backends.cuda.kernels.loops.scalar_function` picks among them).

CUDA_TWINS       real GPU only: numba-cuda lowers only part of NumPy's ufuncs on scalars
                 in device code (np.sqrt, np.floor, np.rint, np.fmod, ... are missing in
                 0.30), so these are written with `math`; on CUDA, `math.floor` and
                 friends return floats of their argument's type, as the ufuncs do.
GUARDED_TWINS    both targets: special values guarded explicitly (sin/cos/tan of +-inf),
                 so that the simulator and a real GPU give the CPU's result.
SIMULATOR_TWINS  simulator only: it runs kernels as plain Python, where `math` raises
                 (math.floor(nan), math.exp(1000), poles of lgamma) and storing an
                 out-of-range number into an array raises, where compiled code (CPU and
                 GPU alike) returns inf/NaN or wraps like C. Real GPUs compile scalar.py.
CUDA_ONLY        bfloat16 <-> float32 conversions on bit patterns.
UNCONTRACTED_PRODUCTS
                 real GPU only, per dtype: the products of fused programs
                 (``ember_tensor.fusion``), which NVVM must not contract (below).

The CUDA_TWINS and GUARDED_TWINS are compiled to PTX in the tests (no GPU needed); they
have not run on a real GPU yet.
"""
import math

import numpy as np
from numba.cuda import libdevice

from ... import scalar as _scalar

__all__ = ["CUDA_TWINS", "GUARDED_TWINS", "SIMULATOR_TWINS", "CUDA_ONLY", "UNCONTRACTED_PRODUCTS"]

# --- real-GPU twins of scalar functions whose NumPy ufuncs numba-cuda cannot lower -----


def _sqrt(a):
    return math.sqrt(a)


def _rsqrt(a):
    return 1.0 / math.sqrt(a)


def _log1p(a):
    return math.log1p(a)


def _floor(a):
    return math.floor(a)


def _ceil(a):
    return math.ceil(a)


def _trunc(a):
    return math.trunc(a)


def _frac(a):
    return a - math.trunc(a)


def _round(a):
    # Half to even, as torch.round; floor/fmod are exact, so no rounding error creeps in.
    f = math.floor(a)
    d = a - f
    if d > 0.5 or (d == 0.5 and math.fmod(f, 2.0) != 0.0):
        return f + 1.0
    return f


def _fmod(a, b):
    return math.fmod(a, b)


# sin/cos/tan of +-inf are NaN in compiled code (CPU and libdevice) but raise "math domain
# error" in Python's math, which the simulator runs. An explicit guard, on both targets,
# keeps the simulator and a real GPU in step with the CPU; inf - inf is a NaN of a's type.


def _sin(a):
    if a == math.inf or a == -math.inf:
        return a - a
    return math.sin(a)


def _cos(a):
    if a == math.inf or a == -math.inf:
        return a - a
    return math.cos(a)


def _tan(a):
    if a == math.inf or a == -math.inf:
        return a - a
    return math.tan(a)


# --- simulator twins: where Python's math or NumPy's scalar rules differ from compiled code --


def _sim_lgamma(a):
    # Python's math.lgamma raises at the poles (0, -1, -2, ...) instead of returning inf as
    # compiled code (CPU or GPU) does, and math.floor(+-inf) raises: lgamma(+-inf) is inf.
    if a == math.inf or a == -math.inf:
        return math.inf
    if a <= 0.0 and math.floor(a) == a:
        return math.inf
    return math.lgamma(a)


def _sim_digamma(a):
    # scalar.digamma tests -inf with math.floor, which raises in Python; compiled code
    # gives NaN there (a negative integer, as PyTorch says), and +inf goes through as inf.
    if a == -math.inf:
        return math.nan
    return _scalar.digamma(a)


def _sim_bitwise_left_shift(a, b):
    # scalar.py shifts in 64 bits and lets the narrowing store keep the low bits, as C and
    # compiled code do; the simulator's store refuses an out-of-range Python int instead.
    # Keep the low bits of a's own width here (the operands come in the compute dtype).
    shifted = _scalar.bitwise_left_shift(a, b)
    return np.asarray(shifted).astype(np.asarray(a).dtype)[()]


def _sim_copy(a):
    # The copy kernel also converts between dtypes. The simulator stores a NumPy scalar into
    # the output element, which raises for NaN/inf/out-of-range floats into an integer
    # array; a 0-d array is stored with NumPy's unsafe cast instead: the CPU's astype result
    # (C leaves these conversions undefined: a real GPU saturates, NaN -> 0, as PyTorch's).
    return np.asarray(a)


def _sim_overflow_to_inf(fn, odd=False):
    # Python's math.exp and friends raise OverflowError where compiled code returns inf
    # (-inf for an odd function of a large negative argument, as sinh).
    def guarded(a):
        try:
            return fn(a)
        except OverflowError:
            return -math.inf if odd and a < 0 else math.inf
    return guarded


# --- bfloat16 <-> float32 on bit patterns (Numba has no bfloat16 arrays) ----------------


def _bf16_bits_to_f32_bits(h):
    # int() first: the simulator computes on NumPy scalars, where uint16 << 16 is 0.
    return int(h) << 16


def _f32_bits_to_bf16_bits(x):
    # Round to nearest even, as ml_dtypes and PyTorch do; NaN stays a (quiet) NaN.
    bits = int(x)
    if (bits & 0x7FFFFFFF) > 0x7F800000:
        return (bits >> 16) | 0x40
    return (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16



CUDA_TWINS = {
    "sqrt": _sqrt, "rsqrt": _rsqrt, "log1p": _log1p, "floor": _floor, "ceil": _ceil,
    "trunc": _trunc, "frac": _frac, "round": _round, "fmod": _fmod,
}
# Used on both targets: the real GPU and the simulator.
GUARDED_TWINS = {"sin": _sin, "cos": _cos, "tan": _tan}
SIMULATOR_TWINS = {
    "copy": _sim_copy, "lgamma": _sim_lgamma, "digamma": _sim_digamma,
    "bitwise_left_shift": _sim_bitwise_left_shift,
    "exp": _sim_overflow_to_inf(_scalar.exp), "expm1": _sim_overflow_to_inf(_scalar.expm1),
    "cosh": _sim_overflow_to_inf(_scalar.cosh), "sinh": _sim_overflow_to_inf(_scalar.sinh, odd=True),
}
CUDA_ONLY = {
    "bf16_bits_to_f32_bits": _bf16_bits_to_f32_bits,
    "f32_bits_to_bf16_bits": _f32_bits_to_bf16_bits,
}


# --- products of fused programs ------------------------------------------------------------
# NVVM contracts a multiply and an add or subtract that uses it into one fused multiply-add
# (fma.rn: rounded once). Eager ember runs `x * w + b` as two kernels, rounding the product
# to the dtype in between; a fused program (a chain, or a prologue of a reduction, softmax
# or layer norm) compiled with plain products lets NVVM contract them and gives other bits
# (seen on an H200: every fused `x * w + b` differed in the last bit). libdevice's
# round-to-nearest multiplies are never contracted, so a fused program keeps eager's
# bits. (The simulator runs Python floats: nothing to contract there.)


def _mul_rn32(a, b):
    return libdevice.fmul_rn(a, b)


def _mul_rn64(a, b):
    return libdevice.dmul_rn(a, b)


def _square_rn32(a):
    return libdevice.fmul_rn(a, a)


def _square_rn64(a):
    return libdevice.dmul_rn(a, a)


UNCONTRACTED_PRODUCTS = {
    np.dtype(np.float32): {"mul": _mul_rn32, "square": _square_rn32},
    np.dtype(np.float64): {"mul": _mul_rn64, "square": _square_rn64},
}
