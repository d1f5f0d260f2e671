"""The op database's complex samples against PyTorch (test-only oracle).

test_ops.py holds every complex64/complex128 sample of OP_DB to its NumPy reference, but
NumPy's special values (infinite and NaN parts, signed zeros on branch cuts, 0 ** z) are
not C99's Annex G, which PyTorch's c10::complex follows. Here every sample, the complex
extremal ones included, is run through ember and through torch and compared part by part:
the same NaN parts, the same infinities, finite parts within the dtype's tolerance.
"""
import warnings

import numpy as np
import pytest

from ember_tensor.testing.opdb import (ALL_DTYPES, CAN_CAST, COMPLEX, COMPLEX_SPECIAL_VALUES_DIFFER, OP_DB, PROMOTE,
                                      TOLERANCE, Operand)

torch = pytest.importorskip("torch")


def _torch_operand(x):
    return torch.from_numpy(np.array(x.value, order="C")) if isinstance(x, Operand) else x  # (0-d stays 0-d)


def _parts(a):
    a = np.asarray(a)
    return (a.real, a.imag) if a.dtype.kind == "c" else (a,)


def _assert_same(op, sample, dtype, got, want):
    what = f"{op.name}, sample {sample.name!r}, {dtype}"
    if isinstance(want, bool):
        assert got is want, what
        return
    assert str(got.dtype).split(".")[1] == str(want.dtype).split(".")[1], f"{what}: dtype {got.dtype}, {want.dtype}"
    got, want = got.numpy(), want.resolve_conj().numpy()
    assert got.shape == want.shape, what
    if got.dtype.kind in "fc":
        rtol, atol = op.tol.get(dtype, TOLERANCE[dtype])
        for g, w in zip(_parts(got), _parts(want)):
            np.testing.assert_allclose(g.astype(np.float64), w.astype(np.float64), rtol=rtol, atol=atol,
                                       equal_nan=True, err_msg=what)
    else:
        np.testing.assert_array_equal(got, want, err_msg=what)


def _run(op, dtype, special):
    checked = 0
    for sample in op.sample_inputs(dtype):
        if sample.name.startswith("complex extremal") is not special:
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            got = op.fn(*sample.ember(), **sample.kwargs)
            want = getattr(torch, op.name)(*(_torch_operand(x) for x in sample.operands()), **sample.kwargs)
        _assert_same(op, sample, dtype, got, want)
        checked += 1
    return checked


_COMPLEX_OPS = [op for op in OP_DB if set(COMPLEX) & set(op.dtypes)]


@pytest.mark.parametrize("dtype", COMPLEX, ids=lambda d: d.name)
@pytest.mark.parametrize("op", _COMPLEX_OPS, ids=lambda op: op.name)
def test_complex_samples_match_torch(op, dtype):
    """Every finite complex sample (0-d, broadcast, non-contiguous, numbers) gives PyTorch's values and dtype."""
    assert _run(op, dtype, special=False)


def _special_params():
    params = []
    for op in _COMPLEX_OPS:
        if not op.extremal or op.kind == "custom":  # (custom samplers have no complex extremal sample)
            continue
        reason = COMPLEX_SPECIAL_VALUES_DIFFER.get(op.name)
        marks = [pytest.mark.xfail(reason=reason, strict=True)] if reason else []
        for dtype in COMPLEX:
            params.append(pytest.param(op, dtype, marks=marks, id=f"{op.name}-{dtype.name}"))
    return params


@pytest.mark.parametrize("op, dtype", _special_params())
def test_complex_special_values_match_torch(op, dtype):
    """Infinite, NaN and signed-zero parts, overflow and 0 ** z give PyTorch's (C99's) values."""
    assert _run(op, dtype, special=True), "the op has no complex extremal samples"


@pytest.mark.parametrize("a", ALL_DTYPES + COMPLEX, ids=lambda d: d.name)
def test_complex_rows_of_the_dtype_tables_are_pytorchs(a):
    """PROMOTE and CAN_CAST's complex rows and columns (the complex samples' result dtypes) are torch's."""
    for b in COMPLEX:
        ta, tb = getattr(torch, a.name), getattr(torch, b.name)
        assert PROMOTE[(a, b)].name == str(torch.promote_types(ta, tb)).split(".")[1], (a, b)
        assert CAN_CAST[(a, b)] is torch.can_cast(ta, tb) and CAN_CAST[(b, a)] is torch.can_cast(tb, ta), (a, b)
