"""The op database's core: PyTorch's promotion tables, operands, samples and `OpInfo`.

Everything the entries (`opdb`) and the generic tests share: the dtype tables, the
`Operand` / `SampleInput` / `ErrorInput` / `XFail` data, the `OpInfo` class with its
default unary and binary sample generators, tolerances and the reference evaluation.
"""
import math
import operator
import zlib
from dataclasses import dataclass, field
from typing import Callable

import ml_dtypes
import numpy as np

import ember_tensor as et

__all__ = [
    "F16", "BF16", "F32", "F64", "I8", "I16", "I32", "I64", "U8", "B", "C64", "C128", "COMPLEX", "ALL_DTYPES", "NP",
    "FLOAT_DTYPES", "COMPLEX_EXTREMAL", "is_inexact",
    "INT_DTYPES", "FLOATING", "INTEGRAL", "_ABBR", "_PROMOTION_TABLE", "_CAN_CAST_TABLE", "_parse_table",
    "PROMOTE", "CAN_CAST", "TYPE_NAME", "_category", "_combine", "reference_result_type", "same", "to_float",
    "to_real", "to_bool", "_div_result", "_square_result", "Operand", "SampleInput", "_to_ember", "_dtype_of_array",
    "make_values", "EXTREMAL", "SPECIAL", "rng_for", "XFail", "ErrorInput", "OpInfo", "_kwargs_for", "_unary_samples",
    "_scalars_for", "_binary_samples", "TOLERANCE", "reference_operands", "expected_result"
]

F16, BF16, F32, F64 = et.float16, et.bfloat16, et.float32, et.float64
I8, I16, I32, I64, U8, B = et.int8, et.int16, et.int32, et.int64, et.uint8, et.bool
C64, C128 = et.complex64, et.complex128
# The real dtypes: the promotion tests draw from these (their real kernels). An entry
# adds COMPLEX to its dtypes where PyTorch has the op for complex numbers.
ALL_DTYPES = (F16, BF16, F32, F64, I8, I16, I32, I64, U8, B)
COMPLEX = (C64, C128)
NP = {F16: np.float16, BF16: ml_dtypes.bfloat16, F32: np.float32, F64: np.float64, I8: np.int8,
      I16: np.int16, I32: np.int32, I64: np.int64, U8: np.uint8, B: np.bool_, C64: np.complex64,
      C128: np.complex128}
FLOAT_DTYPES = (F16, BF16, F32, F64)
INT_DTYPES = (I8, I16, I32, I64, U8)
# Low-precision dtypes compute in float32 kernels, so testing them costs no compile time.
FLOATING = (F32, F64, F16, BF16)
INTEGRAL = (I64, I32, U8)

# --- PyTorch's promotion rules, as data -------------------------------------------------

_ABBR = {"f16": F16, "bf16": BF16, "f32": F32, "f64": F64, "i8": I8, "i16": I16, "i32": I32,
         "i64": I64, "u8": U8, "b": B, "c64": C64, "c128": C128}
# torch.promote_types(row, column).
_PROMOTION_TABLE = """
       f16 bf16  f32  f64   i8  i16  i32  i64   u8    b  c64 c128
  f16  f16  f32  f32  f64  f16  f16  f16  f16  f16  f16  c64 c128
 bf16  f32 bf16  f32  f64 bf16 bf16 bf16 bf16 bf16 bf16  c64 c128
  f32  f32  f32  f32  f64  f32  f32  f32  f32  f32  f32  c64 c128
  f64  f64  f64  f64  f64  f64  f64  f64  f64  f64  f64 c128 c128
   i8  f16 bf16  f32  f64   i8  i16  i32  i64  i16   i8  c64 c128
  i16  f16 bf16  f32  f64  i16  i16  i32  i64  i16  i16  c64 c128
  i32  f16 bf16  f32  f64  i32  i32  i32  i64  i32  i32  c64 c128
  i64  f16 bf16  f32  f64  i64  i64  i64  i64  i64  i64  c64 c128
   u8  f16 bf16  f32  f64  i16  i16  i32  i64   u8   u8  c64 c128
    b  f16 bf16  f32  f64   i8  i16  i32  i64   u8    b  c64 c128
  c64  c64  c64  c64 c128  c64  c64  c64  c64  c64  c64  c64 c128
 c128 c128 c128 c128 c128 c128 c128 c128 c128 c128 c128 c128 c128
"""
# torch.can_cast(row, column): casting never lowers the kind (complex > float > int > bool).
_CAN_CAST_TABLE = """
       f16 bf16  f32  f64   i8  i16  i32  i64   u8    b  c64 c128
  f16    1    1    1    1    0    0    0    0    0    0    1    1
 bf16    1    1    1    1    0    0    0    0    0    0    1    1
  f32    1    1    1    1    0    0    0    0    0    0    1    1
  f64    1    1    1    1    0    0    0    0    0    0    1    1
   i8    1    1    1    1    1    1    1    1    1    0    1    1
  i16    1    1    1    1    1    1    1    1    1    0    1    1
  i32    1    1    1    1    1    1    1    1    1    0    1    1
  i64    1    1    1    1    1    1    1    1    1    0    1    1
   u8    1    1    1    1    1    1    1    1    1    0    1    1
    b    1    1    1    1    1    1    1    1    1    1    1    1
  c64    0    0    0    0    0    0    0    0    0    0    1    1
 c128    0    0    0    0    0    0    0    0    0    0    1    1
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
             I32: "Int", I64: "Long", U8: "Byte", B: "Bool", C64: "ComplexFloat", C128: "ComplexDouble"}


def is_inexact(d):
    """Floating or complex: compared within a tolerance, computed in float64/complex128."""
    return d.is_floating_point or d.is_complex


def _category(d):
    return 3 if d.is_complex else 2 if d.is_floating_point else (0 if d is B else 1)


def _combine(higher, lower):
    # c10's combine_categories: a lower-priority operand only counts when it is of a
    # higher category than the higher-priority one (bool < int < float < complex).
    if higher is None:
        return lower
    if lower is None or _category(lower) <= _category(higher):
        return higher
    return PROMOTE[(higher, lower)]


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
            d = (B if isinstance(x, bool) else I64 if isinstance(x, int)
                 else default.to_complex() if isinstance(x, complex) else default)
            slot = 2
        states[slot] = d if states[slot] is None else PROMOTE[(states[slot], d)]
    return _combine(states[0], _combine(states[1], states[2]))


# --- result-dtype rules -----------------------------------------------------------------


def same(promoted, kwargs):
    return promoted


def to_float(promoted, kwargs):
    """Integer and bool inputs give the default float dtype (complex ones stay complex)."""
    return promoted if is_inexact(promoted) else et.get_default_dtype()


def to_real(promoted, kwargs):
    """Complex inputs give their real dtype (abs, angle); the others `to_float`'s."""
    return promoted.to_real() if promoted.is_complex else to_float(promoted, kwargs)


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
    """Random values of `dtype` in [low, high] (ints: small and within the dtype's range;
    complex: real and imaginary parts each drawn from [low, high])."""
    if dtype is B:
        return rng.random(shape) < 0.5
    if dtype.is_complex:
        real = dtype.to_real()
        parts = make_values(shape, real, rng, low, high, nonzero), make_values(shape, real, rng, low, high)
        return (parts[0] + 1j * parts[1]).astype(NP[dtype])
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
# A unary op's special values besides: poles (+-1, negative integers), overflow to inf
# (800 even in float64), underflow and values past each dtype's range (1e300 is inf in
# float32), where compiled code and the CPU most easily part ways.
SPECIAL = EXTREMAL + (1.0, -1.0, -2.5, -3.0, 1e-30, 100.0, -100.0, 800.0, -800.0, 1e300, -1e300)


# A complex op's special values: every pair of these as (real, imaginary) parts. Signed
# zeros pick a side of a branch cut, infinities and NaN follow C99's Annex G (PyTorch's
# c10::complex), 800 overflows exp, 1e-30 takes the paths for tiny arguments.
_COMPLEX_PARTS = (0.0, -0.0, 0.5, -1.5, 3.0, 800.0, 1e-30, math.inf, -math.inf, math.nan)
COMPLEX_EXTREMAL = tuple(complex(re, im) for re in _COMPLEX_PARTS for im in _COMPLEX_PARTS)


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
    if op.extremal and dtype.is_complex:
        special = np.array(COMPLEX_EXTREMAL).astype(NP[dtype])
        yield SampleInput(Operand(special), name="complex extremal")
        yield SampleInput(Operand(special[1::3], "stepped"), name="complex extremal, stepped")
    if op.extremal and dtype.is_floating_point:
        with np.errstate(over="ignore"):  # 1e300 is inf in float32
            special = np.array(SPECIAL).astype(NP[dtype])
        yield SampleInput(Operand(special), name="extremal")
        yield SampleInput(Operand(special[1::3], "stepped"), name="extremal, stepped")
        yield SampleInput(Operand(special[1]), name="extremal, 0-d inf")


def _scalars_for(op, dtype):
    if op.int_scalars_only:
        return [s for s in op.scalars if not isinstance(s, float)]
    if dtype.is_complex and op.scalars:  # a Python complex too, beside the real numbers
        return list(op.scalars) + [2 - 1.5j]
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
    if op.extremal and dtype.is_complex:
        vals = np.array(COMPLEX_EXTREMAL[::7])  # a spread of 15: every pair of them
        lhs = np.repeat(vals, len(vals)).astype(NP[dtype])
        rhs = np.tile(vals, len(vals)).astype(NP[dtype])
        yield S(O(lhs), (O(rhs),), name="complex extremal")
    if op.extremal and dtype.is_floating_point:
        vals = np.array(EXTREMAL)
        lhs = np.repeat(vals, len(vals)).astype(NP[dtype])
        rhs = np.tile(vals, len(vals)).astype(NP[dtype])
        yield S(O(lhs), (O(rhs),), name="extremal")


# --- reference values -------------------------------------------------------------------

TOLERANCE = {F64: (1e-7, 1e-7), F32: (1.3e-6, 1e-5), F16: (1e-3, 1e-5), BF16: (1.6e-2, 1e-5),
             C128: (1e-7, 1e-7), C64: (2e-6, 1e-5)}


def reference_operands(op, sample, result_dtype):
    """The sample's operands as NumPy arrays to feed `op.ref`.

    Operands that take part in promotion are cast to the computation dtype: complex128
    when the result or the promoted inputs are complex, float64 when they are floating,
    else the result dtype (the promoted
    dtype for bool results), so integer results wrap like PyTorch's. Python numbers are
    cast the same way (-1 into uint8 is 255, as in PyTorch).
    """
    operands = sample.operands()
    promoted = reference_result_type(op.promoted_operands(sample.ember()))
    # result_dtype is None for ops returning a Python bool (allclose, equal): compare in float64.
    complex_operand = any(isinstance(x, Operand) and x.value.dtype.kind == "c" for x in operands)
    if (result_dtype or promoted or B).is_complex or (promoted or B).is_complex or \
            (result_dtype is None and complex_operand):
        compute = np.complex128
    elif result_dtype is None or result_dtype.is_floating_point or promoted.is_floating_point:
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
                arrays.append(native.astype(np.complex128) if native.dtype.kind == "c" else
                              native.astype(np.float64) if native.dtype.kind == "f" else native)
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
