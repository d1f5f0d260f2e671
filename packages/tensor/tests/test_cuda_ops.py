"""Ops on CUDA tensors compared with the CPU: unary and binary elementwise ops over dtypes
and layouts (contiguous, broadcast, transposed), compound ops, casts, setitem, and matmul
over ranks, dtypes and an empty inner dim.

Runs on Numba's CUDA simulator (conftest.py sets NUMBA_ENABLE_CUDASIM=1 unless it is
set already), which runs one Python thread per CUDA thread: shapes stay tiny.
"""
import warnings

import numpy as np
import pytest

import ember_tensor as et
from cuda_guard import same_as_cpu as _same

pytestmark = pytest.mark.skipif(not et.cuda.is_available(), reason="no CUDA and no simulator")

A = [[0.5, -1.5, 2.0], [3.25, -0.0, 7.0]]
B = [1.0, 2.0, -3.0]
AI = [[1, -2, 3], [4, 5, -6]]
BI = [2, 3, 1]


def _check(fn, *args, tol=1e-6):
    """fn on CPU tensors and on the same tensors moved to CUDA agree."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = fn(*args)
        got = fn(*[a.cuda() if isinstance(a, et.Tensor) else a for a in args])
    _same(expected, got, tol)


def _inputs(dtype):
    """(a, b) of `dtype`: a 2x3 matrix and a broadcast row, as given by the layout cases."""
    if dtype.is_floating_point:
        return et.tensor(A, dtype=dtype), et.tensor(B, dtype=dtype)
    if dtype is et.bool:
        return et.tensor(A) > 0, et.tensor(B) > 0
    return et.tensor(AI).abs().to(dtype), et.tensor(BI, dtype=dtype)


# layout name -> (a, b) -> operands: contiguous, broadcast, transposed, strided, 0-d, scalar
LAYOUTS = {
    "contiguous": lambda a, b: (a, a.flip(1).contiguous()),
    "broadcast": lambda a, b: (a, b),
    "transposed": lambda a, b: (a.t(), a[:, :1].t()),
    "strided": lambda a, b: (a[:, ::2], b[::2]),
    "zero_dim": lambda a, b: (a[1, 2], b),
    "scalar": lambda a, b: (a, 2),
}


UNARY = {
    et.float32: ["neg", "abs", "exp", "log", "sqrt", "sin", "tanh", "sigmoid", "floor", "round",
                 "erf", "lgamma", "isnan", "reciprocal", "sign"],
    et.float64: ["exp", "log1p", "rsqrt", "atan", "trunc", "frac"],
    et.float16: ["exp", "neg", "ceil"],
    et.bfloat16: ["exp", "abs"],
    et.int64: ["neg", "abs", "bitwise_not", "square"],
    et.int32: ["neg", "sign"],
    et.uint8: ["bitwise_not"],
    et.bool: ["logical_not", "bitwise_not"],
}


BINARY = {
    et.float32: ["add", "sub", "mul", "div", "pow", "atan2", "maximum", "fmod", "remainder", "lt",
                 "eq", "hypot", "copysign", "floor_divide"],
    et.float64: ["add", "div", "minimum", "ge"],
    et.float16: ["add", "mul", "gt"],
    et.bfloat16: ["add", "sub"],
    et.int64: ["add", "mul", "floor_divide", "remainder", "bitwise_and", "bitwise_left_shift", "div"],
    et.int32: ["sub", "bitwise_xor", "ne"],
    et.int8: ["add"],
    et.uint8: ["mul", "bitwise_or"],
    et.bool: ["logical_and", "logical_xor", "add", "bitwise_and"],
}


@pytest.mark.parametrize("dtype,name", [(d, n) for d, names in UNARY.items() for n in names],
                         ids=str)
def test_unary_matches_cpu(dtype, name):
    a, _ = _inputs(dtype)
    fn = getattr(et, name)
    _check(fn, a)
    _check(fn, a.t())  # non-contiguous
    _check(fn, a[1, 1])  # 0-d


@pytest.mark.parametrize("dtype,name", [(d, n) for d, names in BINARY.items() for n in names],
                         ids=str)
def test_binary_matches_cpu(dtype, name):
    a, b = _inputs(dtype)
    fn = getattr(et, name)
    layouts = ("broadcast", "transposed") if dtype is not et.float32 else tuple(LAYOUTS)
    for layout in layouts:
        x, y = LAYOUTS[layout](a, b)
        _check(fn, x, y)


@pytest.mark.parametrize("case", [
    ("where", lambda a, b: et.where(a > 0, a, b)),
    ("lerp", lambda a, b: et.lerp(a, b, 0.25)),
    ("addcmul", lambda a, b: et.addcmul(a, a.t().t(), b, value=0.5)),
    ("clamp_tensors", lambda a, b: et.clamp(a, b, b + 1)),
    ("div_floor", lambda a, b: et.div(a, b, rounding_mode="floor")),
    ("mixed_dtypes", lambda a, b: a.long() + b.half()),
    ("in_place", lambda a, b: a.clone().add_(b, alpha=2).mul_(3)),
    ("in_place_strided", lambda a, b: a.clone().t().sub_(1)),
    ("setitem", lambda a, b: _setitem(a.clone(), (slice(None), 1), 9.0)),
    ("setitem_tensor", lambda a, b: _setitem(a.clone(), 0, b)),
    ("cast_chain", lambda a, b: (a.int(), a.half(), a.bool(), a.double(), a.bfloat16())),
    ("contiguous", lambda a, b: a.t().contiguous()),
    ("expand_clone", lambda a, b: b.expand(4, 3).clone()),
], ids=lambda c: c[0])
def test_compound_ops_match_cpu(case):
    a, b = _inputs(et.float32)
    _check(case[1], a, b)


def _setitem(t, index, value):
    t[index] = value
    return t


@pytest.mark.parametrize("name,fn", [
    ("mm", lambda a, b: a @ b),
    ("mm_transposed", lambda a, b: a.t().t() @ b.t().contiguous().t()),
    ("mv", lambda a, b: a @ b[:, 0]),
    ("vm", lambda a, b: a[0] @ b),
    ("dot", lambda a, b: a[0] @ a[1]),
    ("batched_broadcast", lambda a, b: a.expand(2, 3, 5) @ b),
    ("int64", lambda a, b: a.long() @ b.long()),
    ("float64", lambda a, b: a.double() @ b.double()),
    ("float16", lambda a, b: a.half() @ b.half()),
    ("bfloat16", lambda a, b: a.bfloat16() @ b.bfloat16()),
    ("bfloat16_batched_transposed", lambda a, b: a.bfloat16().expand(2, 3, 5) @ b.bfloat16().t().t()),
    ("float16_k_zero", lambda a, b: a.half()[:, :0] @ b.half()[:0]),
    ("k_zero", lambda a, b: a[:, :0] @ b[:0]),
], ids=lambda v: v if isinstance(v, str) else "")
def test_matmul_matches_cpu(name, fn):
    a = et.tensor(np.arange(15, dtype=np.float32).reshape(3, 5) / 4 - 1)
    b = et.tensor(np.arange(10, dtype=np.float32).reshape(5, 2) / 3 - 1)
    _check(fn, a, b, tol=1e-5)
