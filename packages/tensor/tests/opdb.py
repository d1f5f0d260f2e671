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
import math
import operator
import zlib
from dataclasses import dataclass, field
from typing import Callable

import ml_dtypes
import numpy as np

import ember_tensor as et

try:  # scipy is only a better reference for the special functions; math does without it
    from scipy import special as _special
except ImportError:  # pragma: no cover - depends on the environment
    _special = None

F16, BF16, F32, F64 = et.float16, et.bfloat16, et.float32, et.float64
I8, I16, I32, I64, U8, B = et.int8, et.int16, et.int32, et.int64, et.uint8, et.bool
ALL_DTYPES = (F16, BF16, F32, F64, I8, I16, I32, I64, U8, B)
NP = {F16: np.float16, BF16: ml_dtypes.bfloat16, F32: np.float32, F64: np.float64, I8: np.int8,
      I16: np.int16, I32: np.int32, I64: np.int64, U8: np.uint8, B: np.bool_}
FLOAT_DTYPES = (F16, BF16, F32, F64)
INT_DTYPES = (I8, I16, I32, I64, U8)
# Low-precision dtypes compute in float32 kernels, so testing them costs no compile time.
FLOATING = (F32, F64, F16, BF16)
INTEGRAL = (I64, I32, U8)

# --- PyTorch's promotion rules, as data -------------------------------------------------

_ABBR = {"f16": F16, "bf16": BF16, "f32": F32, "f64": F64, "i8": I8, "i16": I16, "i32": I32,
         "i64": I64, "u8": U8, "b": B}
# torch.promote_types(row, column).
_PROMOTION_TABLE = """
       f16 bf16  f32  f64   i8  i16  i32  i64   u8    b
  f16  f16  f32  f32  f64  f16  f16  f16  f16  f16  f16
 bf16  f32 bf16  f32  f64 bf16 bf16 bf16 bf16 bf16 bf16
  f32  f32  f32  f32  f64  f32  f32  f32  f32  f32  f32
  f64  f64  f64  f64  f64  f64  f64  f64  f64  f64  f64
   i8  f16 bf16  f32  f64   i8  i16  i32  i64  i16   i8
  i16  f16 bf16  f32  f64  i16  i16  i32  i64  i16  i16
  i32  f16 bf16  f32  f64  i32  i32  i32  i64  i32  i32
  i64  f16 bf16  f32  f64  i64  i64  i64  i64  i64  i64
   u8  f16 bf16  f32  f64  i16  i16  i32  i64   u8   u8
    b  f16 bf16  f32  f64   i8  i16  i32  i64   u8    b
"""
# torch.can_cast(row, column): casting never lowers the kind (float > int > bool).
_CAN_CAST_TABLE = """
       f16 bf16  f32  f64   i8  i16  i32  i64   u8    b
  f16    1    1    1    1    0    0    0    0    0    0
 bf16    1    1    1    1    0    0    0    0    0    0
  f32    1    1    1    1    0    0    0    0    0    0
  f64    1    1    1    1    0    0    0    0    0    0
   i8    1    1    1    1    1    1    1    1    1    0
  i16    1    1    1    1    1    1    1    1    1    0
  i32    1    1    1    1    1    1    1    1    1    0
  i64    1    1    1    1    1    1    1    1    1    0
   u8    1    1    1    1    1    1    1    1    1    0
    b    1    1    1    1    1    1    1    1    1    1
"""


def _parse_table(text, cell):
    header, *rows = text.strip().splitlines()
    cols = [_ABBR[c] for c in header.split()]
    table = {}
    for row in rows:
        name, *cells = row.split()
        for col, c in zip(cols, cells):
            table[(_ABBR[name], col)] = cell(c)
    return table


PROMOTE = _parse_table(_PROMOTION_TABLE, lambda c: _ABBR[c])
CAN_CAST = _parse_table(_CAN_CAST_TABLE, lambda c: c == "1")
# PyTorch's names for scalar types in error messages.
TYPE_NAME = {F16: "Half", BF16: "BFloat16", F32: "Float", F64: "Double", I8: "Char", I16: "Short",
             I32: "Int", I64: "Long", U8: "Byte", B: "Bool"}


def _category(d):
    return 2 if d.is_floating_point else (0 if d is B else 1)


def _combine(higher, lower):
    # c10's combine_categories: a lower-priority operand only counts when it is of a
    # higher category than the higher-priority one.
    if higher is None:
        return lower
    if lower is None or higher.is_floating_point:
        return higher
    if higher is B or lower.is_floating_point:
        return PROMOTE[(higher, lower)]
    return higher


def reference_result_type(operands, default=F32):
    """PyTorch's result dtype for tensors and Python numbers (None operands ignored).

    Tensors with dims decide; 0-d tensors and then numbers only count when they are of
    a higher category (bool < int < float); a Python float counts as the default dtype.
    """
    states = [None, None, None]  # dim tensors, 0-d tensors, wrapped numbers
    for x in operands:
        if x is None:
            continue
        if isinstance(x, et.Tensor):
            d, slot = x.dtype, (0 if x.dim() else 1)
        else:
            d = B if isinstance(x, bool) else I64 if isinstance(x, int) else default
            slot = 2
        states[slot] = d if states[slot] is None else PROMOTE[(states[slot], d)]
    return _combine(states[0], _combine(states[1], states[2]))


# --- result-dtype rules -----------------------------------------------------------------


def same(promoted, kwargs):
    return promoted


def to_float(promoted, kwargs):
    """Integer and bool inputs give the default float dtype."""
    return promoted if promoted.is_floating_point else et.get_default_dtype()


def to_bool(promoted, kwargs):
    return B


def _div_result(promoted, kwargs):
    return to_float(promoted, kwargs) if kwargs.get("rounding_mode") is None else promoted


def _square_result(promoted, kwargs):
    return I64 if promoted is B else promoted  # square is pow(x, 2): bool ** int is int64


# --- operands and samples ---------------------------------------------------------------


@dataclass
class Operand:
    """A tensor operand: its values and the memory layout to build it with.

    layout: "contiguous", "transposed" (built transposed, then viewed back), "stepped"
    (every other element of a bigger buffer) or "expanded" (`value` made by
    np.broadcast_to: its stride-0 dims become expand()ed dims).
    """
    value: np.ndarray
    layout: str = "contiguous"

    def tensor(self, dtype):
        v = self.value
        if self.layout == "transposed" and v.ndim >= 2:
            return et.tensor(np.ascontiguousarray(np.swapaxes(v, -1, -2)), dtype=dtype).transpose(-1, -2)
        if self.layout == "stepped" and v.ndim >= 1:
            base = np.zeros(v.shape[:-1] + (2 * v.shape[-1] + 1,), v.dtype)
            base[..., 1::2] = v
            return et.tensor(base, dtype=dtype)[..., 1::2]
        if self.layout == "expanded":
            compact = v[tuple(slice(0, 1) if s == 0 else slice(None) for s in v.strides)]
            return et.tensor(np.ascontiguousarray(compact), dtype=dtype).expand(v.shape)
        return et.tensor(np.array(v, order="C"), dtype=dtype)


@dataclass
class SampleInput:
    """One call: `input` and `args` are Operands, Python numbers or None."""
    input: object
    args: tuple = ()
    kwargs: dict = field(default_factory=dict)
    name: str = ""

    def operands(self):
        return (self.input,) + tuple(self.args)

    def ember(self):
        """The positional operands as ember tensors / numbers."""
        return [_to_ember(x) for x in self.operands()]

    def __repr__(self):
        return f"<{self.name or 'sample'}>"


def _to_ember(x):
    if isinstance(x, Operand):
        return x.tensor(_dtype_of_array(x.value))
    return x


def _dtype_of_array(a):
    return next(d for d, n in NP.items() if np.dtype(n) == a.dtype)


def make_values(shape, dtype, rng, low=None, high=None, nonzero=False):
    """Random values of `dtype` in [low, high] (ints: small and within the dtype's range)."""
    if dtype is B:
        return rng.random(shape) < 0.5
    if dtype.is_floating_point:
        lo, hi = (-5.0 if low is None else low), (5.0 if high is None else high)
        v = rng.uniform(lo, hi, shape)
        if nonzero:
            v = np.where(np.abs(v) < 0.25, np.copysign(0.5, v), v)
        return np.asarray(v).astype(NP[dtype])
    info = np.iinfo(NP[dtype])
    lo = max(info.min, -9 if low is None else math.ceil(low))
    hi = min(info.max, 9 if high is None else math.floor(high))
    if lo > hi:  # no integer inside the domain (logit's (0.01, 0.99)): take its ends
        lo, hi = math.floor(low), math.ceil(high)
    v = rng.integers(lo, hi + 1, shape)
    if nonzero:
        v = np.where(v == 0, 1 if hi >= 1 else -1, v)
    return np.asarray(v).astype(NP[dtype])


EXTREMAL = (math.nan, math.inf, -math.inf, 0.0, -0.0, 0.5, -1.5, 3.0)


def rng_for(name, dtype):
    """A generator seeded by (op, dtype), so samples are the same in every run."""
    return np.random.default_rng(zlib.crc32(f"{name}:{dtype.name}".encode()))


# --- the OpInfo --------------------------------------------------------------------------


@dataclass(frozen=True)
class XFail:
    """An expected failure: `test` (a test function name) fails for `dtypes` (all if empty)."""
    test: str
    reason: str
    dtypes: tuple = ()


@dataclass
class ErrorInput:
    """A call that must raise `exc` with a message matching regex `match`.

    variant: "function" (et.op(...)), "method" (x.op(...)) or "inplace" (x.op_(...)).
    """
    sample: SampleInput
    exc: type
    match: str
    variant: str = "function"


@dataclass
class OpInfo:
    """What the generic tests need to know about one op.

    ref:       NumPy reference called with the operands as arrays (cast to float64 for
               floating results, else to the result/promoted dtype) and the sample kwargs.
    kind:      "unary", "binary" or "custom" (custom: `sample_inputs` must be given).
    result:    rule (promoted dtype, kwargs) -> result dtype; "python" for ops that return
               a Python bool (allclose, equal).
    promote:   positions of the operands that take part in type promotion.
    domain / rhs_domain: (low, high) the first / second operand is drawn from.
    scalars:   Python numbers used as the second operand (for int/bool dtypes, floats are
               dropped when `int_scalars_only`).
    scalar_lhs: the function also takes a number first (torch.pow(2, x)).
    sample_kwargs: kwarg sets (per dtype) some samples are also run with.
    out_dtype_error: for ops whose out= must have exactly the result's dtype (no
               widening), PyTorch's message with {result} and {out} type names.
    cast_error_names: the names PyTorch gives self's dtype in the in-place can't-cast
               error where they are not the usual ones (clamp_ with numbers: 'long int').
    """
    name: str
    ref: Callable
    dtypes: tuple
    kind: str = "binary"
    result: object = same
    promote: tuple = None
    domain: tuple = (None, None)
    rhs_domain: tuple = (None, None)
    rhs_nonzero: bool = False
    scalars: tuple = (3, -2.5)
    int_scalars_only: bool = False
    scalar_lhs: bool = False
    sample_kwargs: Callable = None
    sample_inputs_func: Callable = None
    error_inputs_func: Callable = None
    operator: Callable = None
    roperator: Callable = None
    ioperator: Callable = None
    method: bool = True
    inplace: bool = True
    supports_out: bool = True
    extremal: bool = True
    ref_wants_dtype: bool = False
    tol: dict = field(default_factory=dict)
    out_dtype_error: str = None
    cast_error_names: dict = None
    xfails: tuple = ()
    aliases: tuple = ()

    @property
    def fn(self):
        return getattr(et, self.name)

    def method_of(self, t):
        return getattr(t, self.name)

    def inplace_of(self, t):
        return getattr(t, self.name + "_")

    def promoted_operands(self, operands):
        idx = range(len(operands)) if self.promote is None else self.promote
        return [operands[i] for i in idx if i < len(operands)]

    def result_dtype(self, operands, kwargs):
        """The dtype PyTorch gives the result for these (ember) operands."""
        promoted = reference_result_type(self.promoted_operands(operands))
        return self.result(promoted, kwargs)

    def sample_inputs(self, dtype):
        rng = rng_for(self.name, dtype)
        gen = self.sample_inputs_func or {"unary": _unary_samples, "binary": _binary_samples}[self.kind]
        return list(gen(self, dtype, rng))

    def error_inputs(self):
        return list(self.error_inputs_func(self)) if self.error_inputs_func else []

    def reference(self, numpy_operands, kwargs, result_dtype):
        with np.errstate(all="ignore"):
            if self.ref_wants_dtype:
                return self.ref(*numpy_operands, result_dtype=result_dtype, **kwargs)
            return self.ref(*numpy_operands, **kwargs)

    def xfail(self, test, dtype=None):
        """The reason `test` is expected to fail for `dtype`, or None."""
        for x in self.xfails:
            if x.test == test and (not x.dtypes or dtype in x.dtypes):
                return x.reason
        return None


def _kwargs_for(op, dtype):
    return op.sample_kwargs(dtype) if op.sample_kwargs else []


def _unary_samples(op, dtype, rng):
    def v(shape):
        return make_values(shape, dtype, rng, *op.domain)
    yield SampleInput(Operand(v(())), name="0-d")
    yield SampleInput(Operand(v((7,))), name="1-d")
    yield SampleInput(Operand(v((3, 5))), name="2-d")
    yield SampleInput(Operand(v((4, 3)), "transposed"), name="transposed")
    yield SampleInput(Operand(v((2, 3, 4)), "stepped"), name="stepped")
    yield SampleInput(Operand(np.broadcast_to(v((1, 4)), (3, 4)), "expanded"), name="expanded")
    yield SampleInput(Operand(v((0, 3))), name="empty")
    for kw in _kwargs_for(op, dtype):
        yield SampleInput(Operand(v((3, 5))), kwargs=kw, name=f"kwargs {kw}")
        yield SampleInput(Operand(v((4, 3)), "transposed"), kwargs=kw, name=f"transposed, kwargs {kw}")
    if op.extremal and dtype.is_floating_point:
        yield SampleInput(Operand(np.array(EXTREMAL).astype(NP[dtype])), name="extremal")


def _scalars_for(op, dtype):
    if op.int_scalars_only:
        return [s for s in op.scalars if not isinstance(s, float)]
    return list(op.scalars)


def _binary_samples(op, dtype, rng):
    def a(shape):
        return make_values(shape, dtype, rng, *op.domain)

    def b(shape):
        return make_values(shape, dtype, rng, *op.rhs_domain, nonzero=op.rhs_nonzero)
    S, O = SampleInput, Operand
    yield S(O(a((3, 5))), (O(b((3, 5))),), name="same shape")
    yield S(O(a((3, 1))), (O(b((1, 5))),), name="broadcast both")
    yield S(O(a((2, 3, 4))), (O(b((4,))),), name="broadcast rank")
    yield S(O(a((3, 5))), (O(b(())),), name="0-d other")
    yield S(O(a(())), (O(b((3, 5))),), name="0-d input")
    yield S(O(a(())), (O(b(())),), name="0-d both")
    yield S(O(a((3, 4)), "transposed"), (O(b((3, 4))),), name="transposed input")
    yield S(O(a((4, 3))), (O(b((4, 3)), "transposed"),), name="transposed other")
    yield S(O(a((2, 6)), "stepped"), (O(np.broadcast_to(b((1, 6)), (2, 6)), "expanded"),),
            name="stepped and expanded")
    yield S(O(a((0, 3))), (O(b((1, 3))),), name="empty")
    for s in _scalars_for(op, dtype):
        yield S(O(a((3, 5))), (s,), name=f"number other {s!r}")
        if op.scalar_lhs:
            yield S(s, (O(b((3, 5))),), name=f"number input {s!r}")
    for kw in _kwargs_for(op, dtype):
        yield S(O(a((3, 5))), (O(b((3, 5))),), kwargs=kw, name=f"kwargs {kw}")
        yield S(O(a((3, 1))), (O(b(())),), kwargs=kw, name=f"0-d other, kwargs {kw}")
        yield S(O(a((3, 4)), "transposed"), (O(b((3, 4))),), kwargs=kw, name=f"transposed, kwargs {kw}")
    if op.extremal and dtype.is_floating_point:
        vals = np.array(EXTREMAL)
        lhs = np.repeat(vals, len(vals)).astype(NP[dtype])
        rhs = np.tile(vals, len(vals)).astype(NP[dtype])
        yield S(O(lhs), (O(rhs),), name="extremal")


# --- reference values -------------------------------------------------------------------

TOLERANCE = {F64: (1e-7, 1e-7), F32: (1.3e-6, 1e-5), F16: (1e-3, 1e-5), BF16: (1.6e-2, 1e-5)}


def reference_operands(op, sample, result_dtype):
    """The sample's operands as NumPy arrays to feed `op.ref`.

    Operands that take part in promotion are cast to the computation dtype: float64 when
    the result or the promoted inputs are floating, else the result dtype (the promoted
    dtype for bool results), so integer results wrap like PyTorch's. Python numbers are
    cast the same way (-1 into uint8 is 255, as in PyTorch).
    """
    operands = sample.operands()
    promoted = reference_result_type(op.promoted_operands(sample.ember()))
    # result_dtype is None for ops returning a Python bool (allclose, equal): compare in float64.
    if result_dtype is None or result_dtype.is_floating_point or promoted.is_floating_point:
        compute = np.float64
    else:
        compute = NP[promoted if result_dtype is B else result_dtype]
    arrays = []
    for i, x in enumerate(operands):
        takes_part = op.promote is None or i in op.promote
        if x is None:
            arrays.append(None)
        elif isinstance(x, Operand):
            native = x.value
            if takes_part:
                arrays.append(native.astype(compute))
            else:
                arrays.append(native.astype(np.float64) if _dtype_of_array(native).is_floating_point else native)
        else:
            arrays.append(np.array(x).astype(compute) if takes_part else x)
    return arrays


def expected_result(op, sample, result_dtype):
    """The reference result as an array of `result_dtype` (or a Python bool)."""
    with np.errstate(all="ignore"):
        value = op.reference(reference_operands(op, sample, result_dtype), sample.kwargs, result_dtype)
        if op.result == "python":
            return value
        return np.asarray(value).astype(NP[result_dtype])


def _vectorized(f):
    return np.vectorize(f, otypes=[np.float64])


def _lgamma_scalar(x):
    try:
        return math.lgamma(x)
    except ValueError:  # poles: 0 and the negative integers
        return math.inf


def _erfinv_scalar(y):
    # Bisection on math.erf: slow but independent of any erfinv implementation.
    if math.isnan(y) or abs(y) > 1:
        return math.nan
    if abs(y) == 1:
        return math.copysign(math.inf, y)
    lo, hi = -6.0, 6.0
    for _ in range(100):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if math.erf(mid) < y else (lo, mid)
    return (lo + hi) / 2


def _digamma_scalar(x):
    # Central difference of lgamma (error ~1e-9), or the reflection formula below 0.5.
    if math.isnan(x) or x == -math.inf:
        return math.nan
    if x == math.inf:
        return math.inf
    if x == 0:
        return -math.copysign(math.inf, x) if math.copysign(1, x) > 0 else math.inf
    if x < 0 and x == math.floor(x):
        return math.nan
    if x < 0.5:
        return _digamma_scalar(1 - x) - math.pi / math.tan(math.pi * x)
    h = 1e-5 * max(1.0, x)
    return (math.lgamma(x + h) - math.lgamma(x - h)) / (2 * h)


if _special is not None:
    _erf, _erfc, _erfinv, _digamma = _special.erf, _special.erfc, _special.erfinv, _special.digamma

    def _lgamma(x):
        # PyTorch (like C's lgamma) has lgamma(-inf) = +inf; scipy's gammaln gives -inf.
        return np.where(x == -np.inf, np.inf, _special.gammaln(x))
else:  # pragma: no cover - exercised where scipy is missing
    _erf, _erfc = _vectorized(math.erf), _vectorized(math.erfc)
    _erfinv, _digamma, _lgamma = (_vectorized(_erfinv_scalar), _vectorized(_digamma_scalar),
                                  _vectorized(_lgamma_scalar))


def _ref_sign(x):
    if x.dtype == np.bool_:
        return x
    return np.where(np.isnan(x), 0, np.sign(x)) if x.dtype.kind == "f" else np.sign(x)


def _ref_round(x, decimals=0):
    return np.round(x, decimals)


def _ref_logit(x, eps=None, *, result_dtype):
    if eps is not None:  # PyTorch takes the bounds in the result's dtype (rounded for half types)
        lo = float(NP[result_dtype](eps))
        x = np.clip(x, lo, float(NP[result_dtype](1 - lo)))
    return np.log(x / (1 - x))


_FLOAT_MAX = {F16: 65504.0, BF16: float(ml_dtypes.finfo(ml_dtypes.bfloat16).max),
              F32: float(np.finfo(np.float32).max), F64: float(np.finfo(np.float64).max)}


def _ref_nan_to_num(x, nan=0.0, posinf=None, neginf=None, *, result_dtype):
    if not result_dtype.is_floating_point:
        return x
    big = _FLOAT_MAX[result_dtype]
    x = np.where(np.isnan(x), nan, x)
    x = np.where(x == np.inf, big if posinf is None else posinf, x)
    return np.where(x == -np.inf, -big if neginf is None else neginf, x)


def _ref_add(a, b, alpha=1):
    return a + np.array(alpha).astype(b.dtype) * b if alpha != 1 else a + b


def _ref_sub(a, b, alpha=1):
    return a - np.array(alpha).astype(b.dtype) * b if alpha != 1 else a - b


def _ref_div(a, b, rounding_mode=None):
    if rounding_mode is None:
        return np.true_divide(a, b)
    if rounding_mode == "floor":
        return np.floor_divide(a, b)
    if a.dtype.kind == "f":
        return np.trunc(a / b)
    return np.trunc(a.astype(np.float64) / b).astype(a.dtype)  # small values: exact


def _ref_pow(a, b):
    if a.dtype.kind == "f":
        return np.power(a, b)
    # Integer powers with a negative exponent: 1 and -1 keep their magnitude, the rest are 0.
    a, b = np.broadcast_arrays(a, b)
    negative = b < 0
    r = np.power(a, np.where(negative, 0, b).astype(b.dtype))
    special = np.where(a == 1, 1, np.where(a == -1, np.where(b % 2 != 0, -1, 1), 0))
    return np.where(negative, special.astype(r.dtype), r)


def _ref_lshift(a, b):
    bits = a.dtype.itemsize * 8
    out_of_range = (b < 0) | (b >= bits)
    r = np.left_shift(a, np.where(out_of_range, 0, b).astype(a.dtype))
    return np.where(out_of_range, 0, r).astype(a.dtype)


def _ref_rshift(a, b):
    signed = a.dtype.kind == "i"
    max_shift = a.dtype.itemsize * 8 - signed
    out_of_range = (b < 0) | (b >= max_shift)
    # Shifting a signed value by too much leaves its sign; an unsigned one becomes 0.
    r = np.right_shift(a, np.where(out_of_range, max_shift if signed else 0, b).astype(a.dtype))
    return r if signed else np.where(out_of_range, 0, r).astype(a.dtype)


def _ref_clamp(x, min=None, max=None):  # noqa: A002 - PyTorch's names
    if min is not None:
        x = np.maximum(x, min)
    if max is not None:
        x = np.minimum(x, max)
    return x


def _ref_lerp(start, end, weight):
    return start + weight * (end - start)


def _ref_addcmul(x, t1, t2, value=1):
    return x + np.array(value).astype(x.dtype) * t1 * t2


def _ref_addcdiv(x, t1, t2, value=1):
    return x + np.array(value).astype(x.dtype) * (t1 / t2)


def _ref_isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    # PyTorch's formula for every dtype (integers too): |a - b| <= atol + |rtol * b|.
    a64, b64 = np.asarray(a, np.float64), np.asarray(b, np.float64)
    close = a64 == b64
    err = np.abs(a64 - b64)
    close |= np.isfinite(err) & (err <= atol + np.abs(rtol * b64))
    if equal_nan:
        close |= np.isnan(a64) & np.isnan(b64)
    return close


def _ref_allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    return bool(np.all(_ref_isclose(a, b, rtol, atol, equal_nan)))


def _ref_equal(a, b):
    return a.shape == b.shape and bool(np.all(np.asarray(a, np.float64) == np.asarray(b, np.float64)))


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
    num = 2.5 if dtype.is_floating_point else (True if dtype is B else 3)
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
    value = 0.5 if dtype.is_floating_point else 2
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
    if dtype.is_floating_point:
        # Relative perturbations far from the tolerance boundaries (none, tiny, large).
        factors = rng.choice([0.0, 1e-7, 1e-3, 0.5], size=a.shape)
        b = (a.astype(np.float64) * (1 + factors)).astype(NP[dtype])
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
    if op.name == "allclose" and dtype.is_floating_point:
        yield S(O(a), (O((a.astype(np.float64) * (1 + 1e-3)).astype(NP[dtype])),), {"rtol": 1e-2}, name="rtol")


def _pow_samples(op, dtype, rng):
    yield from _binary_samples(op, dtype, rng)
    if not dtype.is_floating_point:
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


# --- the entries ------------------------------------------------------------------------

_FLOAT_RESULT = FLOATING + (I64, B)           # int/bool inputs run the float32 kernels
_WIDE_FLOAT_RESULT = _FLOAT_RESULT + (I32, U8)
_SAME_NO_BOOL = FLOATING + (I64,)


def _unary(name, ref, dtypes=_FLOAT_RESULT, result=to_float, **kw):
    return OpInfo(name, ref, dtypes, kind="unary", result=result, **kw)


def _binary(name, ref, dtypes, **kw):
    return OpInfo(name, ref, dtypes, kind="binary", **kw)


_ARITH = dict(scalar_lhs=True)
# clamp_ with number bounds names self's dtype by its C++ type in the can't-cast error.
_CLAMP_CAST_NAMES = {I64: "long int", I32: "int", I16: "short int", I8: "signed char", U8: "unsigned char"}
OP_DB = [
    # --- arithmetic ---
    _binary("add", _ref_add, FLOATING + (I64, B, I32, U8), operator=operator.add, ioperator=operator.iadd,
            sample_kwargs=lambda d: [{"alpha": True}, {"alpha": 2}] if d is B else [
                {"alpha": 0.5 if d.is_floating_point else 2}],
            error_inputs_func=_errors_alpha, **_ARITH),
    _binary("sub", _ref_sub, FLOATING + (I64, U8), operator=operator.sub, ioperator=operator.isub,
            sample_kwargs=lambda d: [{"alpha": 0.5 if d.is_floating_point else 2}],
            error_inputs_func=_errors_sub, **_ARITH),
    _binary("mul", np.multiply, FLOATING + (I64, B, I32, U8), operator=operator.mul, ioperator=operator.imul,
            **_ARITH),
    _binary("div", _ref_div, FLOATING + (I64, B), result=_div_result, rhs_nonzero=True,
            operator=operator.truediv, ioperator=operator.itruediv, scalars=(3, -2.5),
            sample_kwargs=lambda d: [] if d is B else [{"rounding_mode": "trunc"}, {"rounding_mode": "floor"}],
            error_inputs_func=_errors_div, **_ARITH),
    _binary("true_divide", np.true_divide, (F32, F64, I64), result=to_float, rhs_nonzero=True, **_ARITH),
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
    _binary("pow", _ref_pow, (F32, F64, BF16, I64, U8), domain=(0.1, 3), rhs_domain=(-2, 3),
            scalars=(2, 0.5), sample_inputs_func=_pow_samples, operator=operator.pow, ioperator=operator.ipow,
            error_inputs_func=_errors_pow, **_ARITH),
    _unary("neg", np.negative, _SAME_NO_BOOL + (I32, U8), result=same, operator=operator.neg,
           error_inputs_func=_errors_neg),
    _unary("abs", np.abs, _SAME_NO_BOOL + (I32,), result=same, operator=abs,
           error_inputs_func=_errors_unsupported("abs_cpu", (B,))),
    _unary("sign", _ref_sign, _SAME_NO_BOOL + (B,), result=same),
    _unary("sgn", _ref_sign, (F32, F64, I64), result=same),
    _unary("square", np.square, _SAME_NO_BOOL + (B, I32), result=_square_result),
    _unary("reciprocal", np.reciprocal, domain=(-4, 4), extremal=True),
    # --- exponentials, logarithms, powers ---
    _unary("exp", np.exp, _WIDE_FLOAT_RESULT),
    _unary("exp2", np.exp2),
    _unary("expm1", np.expm1),
    _unary("log", np.log, _WIDE_FLOAT_RESULT, domain=(0.1, 10)),
    _unary("log2", np.log2, domain=(0.1, 10)),
    _unary("log10", np.log10, domain=(0.1, 10)),
    _unary("log1p", np.log1p, domain=(-0.9, 10)),
    _unary("sqrt", np.sqrt, _WIDE_FLOAT_RESULT, domain=(0, 10)),
    _unary("rsqrt", lambda x: 1 / np.sqrt(x), domain=(0.1, 10)),
    # --- trigonometric and hyperbolic ---
    _unary("sin", np.sin, _WIDE_FLOAT_RESULT),
    _unary("cos", np.cos),
    _unary("tan", np.tan, domain=(-1.3, 1.3)),
    _unary("asin", np.arcsin, domain=(-0.99, 0.99)),
    _unary("acos", np.arccos, domain=(-0.99, 0.99)),
    _unary("atan", np.arctan),
    _binary("atan2", np.arctan2, (F32, F64, F16, I64, B), result=to_float, scalars=()),
    _unary("sinh", np.sinh),
    _unary("cosh", np.cosh),
    _unary("tanh", np.tanh),
    _unary("asinh", np.arcsinh),
    _unary("acosh", np.arccosh, domain=(1, 10)),
    _unary("atanh", np.arctanh, domain=(-0.99, 0.99)),
    # --- special functions ---
    _unary("sigmoid", lambda x: 1 / (1 + np.exp(-x)), domain=(-10, 10)),
    _unary("logit", _ref_logit, domain=(0.01, 0.99), sample_kwargs=lambda d: [{"eps": 0.2}], ref_wants_dtype=True),
    _unary("erf", _erf),
    _unary("erfc", _erfc),
    _unary("erfinv", _erfinv, domain=(-0.99, 0.99)),
    _unary("lgamma", _lgamma, domain=(0.1, 10)),
    _unary("digamma", _digamma, domain=(0.1, 10)),
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
    OpInfo("where", np.where, ALL_DTYPES[:4] + (I64, B), kind="custom", promote=(1, 2),
           sample_inputs_func=_where_samples, error_inputs_func=_errors_where, inplace=False, method=False,
           out_dtype_error="Expected out type to be {result} but got {out}"),
    OpInfo("lerp", _ref_lerp, FLOATING, kind="custom", promote=(0, 1), sample_inputs_func=_lerp_samples,
           error_inputs_func=_errors_lerp),
    OpInfo("addcmul", _ref_addcmul, FLOATING + (I64,), kind="custom", sample_inputs_func=_addc_samples,
           error_inputs_func=_errors_addcmul),
    OpInfo("addcdiv", _ref_addcdiv, FLOATING, kind="custom", sample_inputs_func=_addc_samples,
           error_inputs_func=_errors_addcdiv),
    _binary("hypot", np.hypot, (F32, F64, BF16), scalars=(),
            error_inputs_func=_errors_float_only_binary("hypot_cpu")),
    _binary("copysign", np.copysign, (F32, F64, F16, I64, B), result=to_float, scalars=(-1, 2.5)),
    _unary("nan_to_num", _ref_nan_to_num, FLOATING + (I64, B), result=same, ref_wants_dtype=True,
           sample_kwargs=lambda d: [{"nan": 1.5, "posinf": 100.0, "neginf": -100.0}, {"posinf": 7.0}]
           if d.is_floating_point else [],
           out_dtype_error="nan_to_num: dtype of out: {out} should be same as input: {result}"),
    # --- predicates ---
    _unary("isnan", np.isnan, (F32, F64, BF16, I64, B), result=to_bool, inplace=False, supports_out=False),
    _unary("isinf", np.isinf, (F32, F64, F16, I64, B), result=to_bool, inplace=False, supports_out=False),
    _unary("isfinite", np.isfinite, (F32, F64, F16, I64, B), result=to_bool, inplace=False, supports_out=False),
    # --- comparisons ---
    *(_binary(name, ref, (F32, F64, BF16, I64, B, U8) if name in ("eq", "lt") else (F32, F64, I64, B),
              result=to_bool, scalars=(3, -2.5, True), operator=opr)
      for name, ref, opr in (("eq", np.equal, operator.eq), ("ne", np.not_equal, operator.ne),
                             ("lt", np.less, operator.lt), ("le", np.less_equal, operator.le),
                             ("gt", np.greater, operator.gt), ("ge", np.greater_equal, operator.ge))),
    OpInfo("isclose", _ref_isclose, (F32, F64, F16, I64, B), kind="custom", result=to_bool,
           sample_inputs_func=_isclose_samples, error_inputs_func=_errors_isclose, inplace=False,
           supports_out=False),
    OpInfo("allclose", _ref_allclose, (F32, F64, I64), kind="custom", result="python",
           sample_inputs_func=_equal_samples, error_inputs_func=_errors_isclose, inplace=False,
           supports_out=False),
    OpInfo("equal", _ref_equal, (F32, F64, I64, B), kind="custom", result="python", promote=(),
           sample_inputs_func=_equal_samples, inplace=False, supports_out=False),
    # --- logical ---
    *(_binary(name, ref, (F32, F64, I64, B), result=to_bool, scalars=())
      for name, ref in (("logical_and", np.logical_and), ("logical_or", np.logical_or),
                        ("logical_xor", np.logical_xor))),
    _unary("logical_not", np.logical_not, (F32, F64, I64, B), result=to_bool),
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
    _binary("bitwise_left_shift", _ref_lshift, (I64, I32, U8), rhs_domain=(0, 5), domain=(-9, 9),
            scalars=(2,), int_scalars_only=True, sample_inputs_func=_shift_samples,
            operator=operator.lshift, ioperator=operator.ilshift,
            error_inputs_func=_errors_bitwise("lshift_cpu", with_bool=True), **_ARITH),
    _binary("bitwise_right_shift", _ref_rshift, (I64, I32, U8), rhs_domain=(0, 5), scalars=(2,),
            int_scalars_only=True, sample_inputs_func=_shift_samples,
            operator=operator.rshift, ioperator=operator.irshift,
            error_inputs_func=_errors_bitwise("rshift_cpu", with_bool=True), **_ARITH),
]

OPS = {op.name: op for op in OP_DB}
assert len(OPS) == len(OP_DB), "an op is listed twice"


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

    ref:      NumPy reference ref(x, axis, keepdims, **kwargs); x is float64 (int64 for
              integer results, bool for all/any); axis is None or a tuple of dims.
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
    return d if d.is_floating_point else I64


def _mean_result(d, kwargs):
    return kwargs.get("dtype") or d


def _logsumexp_result(d, kwargs):
    return d if d.is_floating_point else F32


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
    v = np.sum((x - mean) ** 2, axis=axis, keepdims=keepdims) / max(0, n - ddof)
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

REDUCTION_DB = [
    ReductionInfo("sum", _with_dtype(np.sum), _NUMERIC, result=_sum_result,
                  kwargs=({}, {"dtype": F64}, {"dtype": I64})),
    ReductionInfo("mean", _with_dtype(np.mean), FLOATING, result=_mean_result, kwargs=({}, {"dtype": F64})),
    ReductionInfo("prod", _with_dtype(np.prod), _NUMERIC, dims="int", result=_sum_result,
                  kwargs=({}, {"dtype": F64})),
    ReductionInfo("amax", np.max, _NUMERIC, empty_error=_EMPTY),
    ReductionInfo("amin", np.min, _NUMERIC, empty_error=_EMPTY),
    ReductionInfo("max", _ref_extreme("max"), _NUMERIC, dims="int", pair=True, empty_error=_EMPTY),
    ReductionInfo("min", _ref_extreme("min"), _NUMERIC, dims="int", pair=True, empty_error=_EMPTY),
    ReductionInfo("argmax", _ref_arg("max"), FLOATING + (I64, I32, U8), dims="int", result=_argextreme_result,
                  empty_error=_EMPTY_ARG),
    ReductionInfo("argmin", _ref_arg("min"), FLOATING + (I64, I32, U8), dims="int", result=_argextreme_result,
                  empty_error=_EMPTY_ARG),
    ReductionInfo("var", _ref_var, FLOATING, kwargs=_VAR_KWARGS),
    ReductionInfo("std", lambda x, axis, keepdims, **kw: _ref_var(x, axis, keepdims, sqrt=True, **kw), FLOATING,
                  kwargs=_VAR_KWARGS),
    ReductionInfo("var_mean", _ref_var_mean, FLOATING, kwargs=_VAR_KWARGS, supports_out=False, method=False),
    ReductionInfo("std_mean", lambda x, axis, keepdims, **kw: _ref_var_mean(x, axis, keepdims, sqrt=True, **kw),
                  FLOATING, kwargs=_VAR_KWARGS, supports_out=False, method=False),
    ReductionInfo("norm", _ref_norm, FLOATING, kwargs=_NORM_KWARGS, domain=(-2.0, 2.0)),
    ReductionInfo("logsumexp", _ref_logsumexp, FLOATING + (I64, B), dims="required", result=_logsumexp_result,
                  domain=(-5.0, 5.0)),
    ReductionInfo("all", _ref_all_any("all"), _NUMERIC, result=_all_any_result, domain=(-1.0, 1.0)),
    ReductionInfo("any", _ref_all_any("any"), _NUMERIC, result=_all_any_result, domain=(-1.0, 1.0)),
    ReductionInfo("count_nonzero", _ref_count_nonzero, _NUMERIC, result=_count_result, keepdim=False,
                  supports_out=False, domain=(-1.0, 1.0)),
]
REDUCTIONS = {r.name: r for r in REDUCTION_DB}
assert len(REDUCTIONS) == len(REDUCTION_DB), "a reduction is listed twice"
