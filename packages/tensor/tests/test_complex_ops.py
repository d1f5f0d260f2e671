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

import ember_tensor as et
from cuda_guard import DEVICES
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


# --- logaddexp, logaddexp2, xlogy: which take complex numbers -------------------------------

_PARTS = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-30, -2.5, 100.0, 800.0, 0.5]
_GRID = np.array([complex(re, im) for re in _PARTS for im in _PARTS])


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", ["complex128", "complex64"])
def test_logaddexp_of_complex_special_values_is_pytorchs(dtype, device):
    # Every pair of infinite, NaN, signed-zero, tiny and overflowing parts: PyTorch's
    # formula (ordered by real part, an infinity shared by both, NaN infectious).
    a, b = (x.ravel() for x in np.meshgrid(_GRID, _GRID))
    if dtype == "complex64":
        # PyTorch's float32 log1p (Kahan's log(u) z / (u - 1)) overflows its Smith division
        # to nan where exp(min - max) is subnormal; ember's kernels scale in float64 there.
        with np.errstate(invalid="ignore"):
            kept = ~(np.abs(a.real - b.real) > 87) | ~np.isfinite(a.real - b.real)
        a, b = a[kept], b[kept]
    want = torch.logaddexp(torch.tensor(a, dtype=getattr(torch, dtype)), torch.tensor(b, dtype=getattr(torch, dtype)))
    got = et.logaddexp(et.tensor(a, dtype=getattr(et, dtype), device=device),
                       et.tensor(b, dtype=getattr(et, dtype), device=device))
    assert got.dtype is getattr(et, dtype)
    rtol = 1e-12 if dtype == "complex128" else 1e-5
    for g, w in zip(_parts(got.cpu().numpy()), _parts(want.numpy())):
        np.testing.assert_allclose(g, w, rtol=rtol, atol=0, equal_nan=True)


def test_logaddexp_of_complex_and_real_tensors_promotes_as_pytorch():
    z, x = [1 + 2j, 0.5 - 1j, 3 + 4j], [1.0, -2.0, 0.5]
    for a, b in ((z, x), (x, z)):
        want = torch.logaddexp(torch.tensor(a), torch.tensor(b))
        got = et.logaddexp(et.tensor(a), et.tensor(b))
        assert got.dtype is et.complex64
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)
    want = torch.logaddexp(torch.tensor(z, dtype=torch.complex128), torch.tensor(z, dtype=torch.complex64))
    got = et.logaddexp(et.tensor(z, dtype=et.complex128), et.tensor(z, dtype=et.complex64))
    assert got.dtype is et.complex128
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12)


def _errors(lib, special):
    z = lib.tensor([1 + 1j])
    return [
        lambda: lib.logaddexp(z.to(lib.complex32), z.to(lib.complex32)),
        lambda: lib.logaddexp2(z, z),
        lambda: lib.logaddexp2(lib.tensor([1.0]), z.to(lib.complex128)),
        lambda: lib.xlogy(z, z),
        lambda: lib.xlogy(lib.tensor([1.0]), 1j),
        lambda: lib.xlogy(2.0, z.to(lib.complex128)),
        lambda: special(lib).xlogy(z, lib.tensor([2.0])),
        lambda: z.clone().xlogy_(lib.tensor([2.0])),
        lambda: lib.tensor([2.0]).xlogy_(z),
        lambda: lib.logaddexp(z, lib.tensor([1.0]), out=lib.empty(1)),
    ]


def test_complex_errors_of_logaddexp2_and_xlogy_are_pytorchs():
    # PyTorch 2.13 has no complex kernel for logaddexp2 or xlogy (nor complex32 logaddexp).
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # (PyTorch's "ComplexHalf support is experimental")
        for ours, theirs in zip(_errors(et, lambda lib: et.special), _errors(torch, lambda lib: torch.special)):
            with pytest.raises(Exception) as want:
                theirs()
            with pytest.raises(type(want.value)) as got:
                ours()
            assert str(got.value) == str(want.value)
