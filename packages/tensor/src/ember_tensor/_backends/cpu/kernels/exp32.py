"""float32 exp, sigmoid, tanh and log for the CPU that LLVM vectorises, with IEEE edges.

Numba has no SVML here, so ``math.exp`` on float32 is a scalar call into libm's ``expf``
per element (~4 ns: a 1e7-element exp took ~42 ms against PyTorch's ~3 ms at one thread).
The functions below are straight-line arithmetic that LLVM inlines into a loop and turns
into vector instructions. Every CPU kernel of ember that takes a float32 exp uses them: the
elementwise loops and fused programs (through `scalar_functions`), softmax, log_softmax
and the cross entropy rows (`kernels.row_passes`) and the recurrent gates (`kernels.rnn`).

How: the float32 input is widened to float64, ``y = x log2(e)`` is split into
``n + f`` (n the nearest integer, found by adding 1.5 * 2**52, which also leaves n in
the low bits of the sum; |f| <= 1/2, exact), ``2**f`` is a degree-7 polynomial
(relative error ~2**-33, a Chebyshev fit; evaluated with explicit fused multiply-adds, so
the bits do not depend on LLVM's contraction choices) and ``2**n`` is built in the
exponent bits. The product is exact in float64's range, which covers every float32
result from 2**-152 to 2**129, so the one rounding to float32 at the end gives:

- accuracy: within 0.5 ulp + ~2**-33 relative of the exact value, i.e. correctly
  rounded but for inputs whose exact exp lies within ~2**-9 ulp of a tie (an
  exhaustive sweep of every float32 in [-104, 89]: max error 0.5013 ulp; a dense one
  in `tests/test_exp32.py`); float32 denormals come out correctly rounded, not flushed;
- edges: exp(0) = 1 exactly, +inf above ~88.72 and for +inf, 0 below ~-103.97 and for
  -inf, NaN for NaN (the input clamp lets a NaN through and it propagates).

sigmoid is ``1 / (1 + 2**(-x log2 e))`` and tanh ``1 - 2 / (2**(2|x| log2 e) + 1)`` with
x's sign, both in float64 with one rounding at the end (tanh takes its Taylor series
below |x| = 1/16, where the formula would cancel): exhaustive sweeps gave at most 0.5013
ulp (sigmoid, [-105, 20]) and 0.5035 ulp (tanh, [-10, 10]).

log splits the float64 x into 2**k m with m in [sqrt(1/2), sqrt(2)) (a float32
denormal is a normal float64, so its exponent field serves too) and takes
``k ln 2 + 2 atanh(s)``, ``s = (m - 1) / (m + 1)``, |s| < 0.172, by seven terms of
atanh's series: an exhaustive sweep of every positive float32 found no result more than
0.5 ulp off (0 gives -inf, negatives and -inf NaN, +inf inf, NaN NaN).

float64 inputs never come here: they keep libm (``math.exp``). Nor does CUDA: its
kernels compile `_backends.scalar`'s functions unchanged, i.e. libdevice's ``expf`` and
``tanhf``, the code PyTorch's CUDA kernels call too (a GPU's exp is memory-bound with it).
"""
import llvmlite.binding as llvm
import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils, config
from numba.extending import intrinsic

__all__ = ["exp32", "exp32_rows", "sigmoid32", "tanh32", "log32"]


def _bitcast(source, target):
    """An intrinsic reinterpreting a `source` value's bits as a `target` (free in registers)."""
    @intrinsic
    def cast(typingctx, value):
        def codegen(context, builder, signature, args):
            return builder.bitcast(args[0], context.get_value_type(target))
        return target(source), codegen
    return cast


def _fused_multiply_add(kind):
    """An intrinsic ``a * b + c`` of `kind` values rounded once (LLVM's fma: a vector FMA
    instruction on x86-64 since 2013)."""
    @intrinsic
    def fma(typingctx, a, b, c):
        def codegen(context, builder, signature, args):
            return builder.fma(*args)
        return kind(kind, kind, kind), codegen
    return fma


_float64_bits = _bitcast(types.float64, types.int64)
_float64_from_bits = _bitcast(types.int64, types.float64)
_float32_bits = _bitcast(types.float32, types.int32)
_float32_from_bits = _bitcast(types.int32, types.float32)
_fma = _fused_multiply_add(types.float64)
_fma32 = _fused_multiply_add(types.float32)


@intrinsic
def _ldexp32(typingctx, value, exponent):
    """``value * 2**exponent`` of a float32 and an int32, rounded once (LLVM's ldexp)."""
    def codegen(context, builder, signature, args):
        kind = ir.FunctionType(ir.FloatType(), [ir.FloatType(), ir.IntType(32)])
        return builder.call(cgutils.get_or_insert_function(builder.module, kind, "llvm.ldexp.f32.i32"), args)
    return types.float32(types.float32, types.int32), codegen


def _compiles_for_avx512():
    """Whether Numba compiles for a CPU with AVX-512F (its own choice of features: the
    NUMBA_CPU_FEATURES setting, else the host's), where LLVM makes a vector ldexp one
    ``vscalefps``; elsewhere it is a libm call per element."""
    try:
        features = config.CPU_FEATURES if config.CPU_FEATURES is not None else llvm.get_host_cpu_features().flatten()
    except RuntimeError:  # no feature list on this platform
        return False
    return "+avx512f" in features.split(",")


# Read when a kernel compiles (a constant in its code); Numba's disk cache is keyed by the
# CPU features, so a kernel cached for one choice is never served to the other.
_SCALE_BY_LDEXP = _compiles_for_avx512()


# fastmath=False explicitly: a function that leaves fastmath unset inherits its first
# caller's flags when that caller compiles it (Numba's ConfigStack), and Numba's disk cache
# does not key on flags. Compiled first under softmax's reassociating sums, (y + 1.5 * 2**52)
# - 1.5 * 2**52 became y and every exp an exact power of two, in that process and, from
# the cache, in every later one.
_OPTIONS = dict(cache=True, error_model="numpy", fastmath=False)

# 1.5 * 2**52: adding it to a float64 of magnitude < 2**51 rounds that to the nearest
# integer (ties to even) and leaves the integer in the sum's low mantissa bits.
_ROUNDING_SHIFT = 6755399441055744.0
_LOG2_E = 1.4426950408889634
_LN_2 = 0.6931471805599453
_SQRT_2 = 1.4142135623730951
# The clamp of y = x log2(e): beyond it every float32 result is 0 or inf (2**-152 rounds to
# 0, 2**129 to inf), inside it 2**n stays a normal float64.
_Y_MIN, _Y_MAX = -152.0, 152.0


@njit(**_OPTIONS)
def _exp2_clamped(y):
    # 2**y for y in [_Y_MIN, _Y_MAX] (or NaN, which propagates), in float64.
    t = y + _ROUNDING_SHIFT
    f = y - (t - _ROUNDING_SHIFT)  # exact: |f| <= 1/2
    # 2**f = 1 + f q(f): q is a degree-6 Chebyshev fit of (2**f - 1) / f on [-1/2, 1/2]
    # (max relative error of the whole 2**-33.1), so that f = 0 gives exactly 1.
    p = _fma(1.5303705916251186e-05, f, 0.00015461451598603295)
    p = _fma(p, f, 0.0013333478456296767)
    p = _fma(p, f, 0.009618056659549054)
    p = _fma(p, f, 0.05550410906340133)
    p = _fma(p, f, 0.24022650922391192)
    p = _fma(p, f, 0.6931471805568308)
    p = _fma(p, f, 1.0)
    # t's low mantissa bits hold n (two's complement); shifting n + 1023 into the exponent
    # field drops the rest of t's bits: the float64 2**n.
    return p * _float64_from_bits((_float64_bits(t) + 1023) << 52)


@njit(**_OPTIONS)
def exp32(x):
    """exp of a float32, as a float32 (see the module docstring for accuracy and edges).

    Example:
        >>> import numpy as np
        >>> [float(exp32(np.float32(v))) for v in (0.0, 1.0, -np.inf, np.inf, 89.0)]
        [1.0, 2.7182817459106445, 0.0, inf, inf]
    """
    y = np.float64(x) * _LOG2_E
    # min/max spelled out (each builtin min/max compiles a function of its own); a NaN
    # fails both tests and goes through.
    y = _Y_MIN if y < _Y_MIN else y
    y = _Y_MAX if y > _Y_MAX else y
    return np.float32(_exp2_clamped(y))


_F32 = np.float32
_F32_SHIFT = _F32(12582912.0)  # 1.5 * 2**23: y + it rounds y (|y| < 2**22) to an integer n in the low bits
_F32_SHIFT_BITS = 0x4B400000   # its bit pattern


@njit(**_OPTIONS)
def exp32_rows(x):
    """exp of a float32 in float32 arithmetic, for the softmax and cross entropy rows:
    twice exp32's lanes per vector (16 in a 512-bit register), within ~1 ulp (a dense sweep
    in tests/test_exp32.py), with exp32's edges (0 from ~-103.97 and for -inf, denormals
    rounded once, +inf from ~88.72, NaN for NaN). PyTorch's softmax kernels likewise take
    a faster exp than its elementwise ``exp``; ember's softmax measured 1.57x PyTorch's
    time with exp32 (float64 inside) against 1.21x with a float32 evaluation.

    How: n = round(x log2 e) (the 1.5 * 2**23 shift), r = x - n ln 2 (ln 2 in two parts,
    n ln2_hi exact), exp(r) on |r| <= ln2/2 by Cephes' expf polynomial, and 2**n applied as
    two exact powers 2**(n >> 1) 2**(n - (n >> 1)), so that a result in the denormal range
    is rounded once and one past the largest float becomes inf; where Numba compiles for
    AVX-512, by an ldexp instead (one ``vscalefps``, the same bits).

    Example:
        >>> import numpy as np
        >>> [float(exp32_rows(np.float32(v))) for v in (0.0, -np.inf, np.inf, -104.0)]
        [1.0, 0.0, inf, 0.0]
    """
    # Clamped (a NaN fails both tests and goes through): exp(-104) rounds to 0, exp(89) to inf.
    x = _F32(-104.0) if x < _F32(-104.0) else x
    x = _F32(89.0) if x > _F32(89.0) else x
    # Explicit fused multiply-adds: half the instructions, and bits that do not depend on
    # LLVM's contraction choices.
    t = _fma32(x, _F32(1.4426950408889634), _F32_SHIFT)
    n_float = t - _F32_SHIFT
    r = _fma32(n_float, _F32(-0.693359375), x)
    r = _fma32(n_float, _F32(2.12194440e-4), r)
    p = _fma32(_F32(1.9875691500e-4), r, _F32(1.3981999507e-3))
    p = _fma32(p, r, _F32(8.3334519073e-3))
    p = _fma32(p, r, _F32(4.1665795894e-2))
    p = _fma32(p, r, _F32(1.6666665459e-1))
    p = _fma32(p, r, _F32(5.0000001201e-1))
    p = _fma32(p, r * r, r) + _F32(1.0)
    # n from t's bits (defined for a NaN too, where a float-to-int conversion is not).
    n = _float32_bits(t) - np.int32(_F32_SHIFT_BITS)
    if _SCALE_BY_LDEXP:
        # p 2**n rounded once, in one vscalefps for 16 lanes: the bits of the two exact
        # powers below (the same single rounding of the exact product; a sweep of 35M
        # inputs, edges and random bit patterns found no difference), ~8 instructions
        # fewer: softmax (1000, 1000)'s kernel 0.64 -> 0.52 ms.
        return _ldexp32(p, n)
    half = n >> np.int32(1)
    first = _float32_from_bits((half + np.int32(127)) << np.int32(23))
    second = _float32_from_bits((n - half + np.int32(127)) << np.int32(23))
    return p * first * second


@njit(**_OPTIONS)
def sigmoid32(x):
    """1 / (1 + exp(-x)) of a float32, as a float32, rounded once from float64.

    Example:
        >>> import numpy as np
        >>> [float(sigmoid32(np.float32(v))) for v in (0.0, -np.inf, np.inf)]
        [0.5, 0.0, 1.0]
    """
    y = np.float64(x) * -_LOG2_E
    y = _Y_MIN if y < _Y_MIN else y
    y = _Y_MAX if y > _Y_MAX else y
    return np.float32(1.0 / (1.0 + _exp2_clamped(y)))


@njit(**_OPTIONS)
def tanh32(x):
    """tanh of a float32, as a float32, rounded once from float64.

    Example:
        >>> import numpy as np
        >>> [float(tanh32(np.float32(v))) for v in (0.0, -np.inf, 20.0)]
        [0.0, -1.0, 1.0]
    """
    a = np.float64(x)
    m = -a if a < 0.0 else a
    y = m * (2.0 * _LOG2_E)
    y = _Y_MAX if y > _Y_MAX else y
    # 1 - 2 / (e**2|x| + 1) loses |x|'s leading digits to cancellation for small |x|:
    # below 1/16 the series x - x**3/3 + 2x**5/15 - 17x**7/315 (next term < 2**-37 x).
    big = 1.0 - 2.0 / (_exp2_clamped(y) + 1.0)
    big = -big if a < 0.0 else big
    s = a * a
    # x (1 + ...), not x + x (...): keeps -0's sign.
    small = a * (1.0 + s * (-1.0 / 3.0 + s * (2.0 / 15.0 + s * (-17.0 / 315.0))))
    return np.float32(small if m < 0.0625 else big)


@njit(**_OPTIONS)
def log32(x):
    """Natural log of a float32, as a float32, rounded once from float64.

    Example:
        >>> import numpy as np
        >>> [float(log32(np.float32(v))) for v in (1.0, 0.0, -1.0, np.inf)]
        [0.0, -inf, nan, inf]
    """
    d = np.float64(x)
    bits = _float64_bits(d)
    k = np.float64((bits >> 52) - 1023)  # a positive finite x's exponent (the sign bit is 0)
    m = _float64_from_bits((bits & 0x000FFFFFFFFFFFFF) | 0x3FF0000000000000)  # in [1, 2)
    above = m > _SQRT_2
    m = m * 0.5 if above else m
    k = k + 1.0 if above else k
    # log m = 2 atanh(s) = 2 (s + s**3/3 + ... + s**15/15), s = (m - 1) / (m + 1): the next
    # term is below 2**-40 of the sum.
    t = m - 1.0
    s = t / (2.0 + t)
    z = s * s
    p = _fma(z, 1.0 / 15.0, 1.0 / 13.0)
    p = _fma(p, z, 1.0 / 11.0)
    p = _fma(p, z, 1.0 / 9.0)
    p = _fma(p, z, 1.0 / 7.0)
    p = _fma(p, z, 1.0 / 5.0)
    p = _fma(p, z, 1.0 / 3.0)
    r = _fma(k, _LN_2, 2.0 * s + 2.0 * s * z * p)
    # The edges, selected last (no branches in the loop): +inf and NaN give themselves,
    # +-0 -inf, anything below 0 (-inf included) a positive quiet NaN (PyTorch's bits).
    r = d if d - d != d - d else r
    r = -np.inf if d == 0.0 else r
    r = np.nan if d < 0.0 else r
    return np.float32(r)
