"""Complex dtypes (complex32/64/128) and the float8 dtype names: promotion, creation,
printing, conversions, views, elementwise kernels, reductions and errors, against PyTorch
(test-only oracle) and NumPy."""
import warnings

import numpy as np
import pytest

import ember_tensor as E
from cuda_guard import DEVICES

torch = pytest.importorskip("torch")

Z = [1 + 2j, -0.5 + 0.25j, 3 - 1j, 0j, -2 + 3j]


def _t(dtype_name):
    return getattr(E, dtype_name), getattr(torch, dtype_name)


# -- dtypes and promotion -----------------------------------------------------------------

DTYPES = ["float16", "bfloat16", "float32", "float64", "int64", "bool", "uint8", "complex32", "complex64",
          "complex128"]


@pytest.mark.parametrize("a", DTYPES)
@pytest.mark.parametrize("b", ["complex32", "complex64", "complex128"])
def test_promote_types_matches_pytorch(a, b):
    assert E.promote_types(getattr(E, a), getattr(E, b)).name == str(
        torch.promote_types(getattr(torch, a), getattr(torch, b))).split(".")[1]


@pytest.mark.parametrize("name", ["float16", "bfloat16", "float32", "float64", "int32", "bool"])
def test_python_complex_scalar_promotes_like_pytorch(name):
    ours = (E.ones(2, dtype=getattr(E, name)) * 1j).dtype.name
    assert ours == str((torch.ones(2, dtype=getattr(torch, name)) * 1j).dtype).split(".")[1]


def test_dtype_attributes_and_default_complex():
    for name in ["complex32", "complex64", "complex128"]:
        ours, ref = _t(name)
        assert (ours.is_complex, ours.is_floating_point, ours.itemsize, ours.is_signed) == \
               (ref.is_complex, ref.is_floating_point, ref.itemsize, ref.is_signed)
        assert str(ours.to_real()) == str(ref.to_real())
    assert E.float32.to_complex() is E.complex64 and E.bfloat16.to_complex() is E.complex64
    assert E.cfloat is E.complex64 and E.cdouble is E.complex128 and E.chalf is E.complex32
    with pytest.raises(RuntimeError, match="Unknown Complex ScalarType for Int"):
        E.int32.to_complex()
    assert E.tensor([1 + 2j]).dtype is E.complex64
    E.set_default_dtype(E.float64)
    try:
        assert E.tensor([1j]).dtype is E.complex128
        assert (E.ones(1, dtype=E.int32) * 1j).dtype is E.complex128
    finally:
        E.set_default_dtype(E.float32)


@pytest.mark.parametrize("name", ["complex64", "complex128", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz",
                                  "float8_e5m2fnuz"])
def test_finfo_matches_pytorch(name):
    ours, ref = _t(name)
    assert repr(E.finfo(ours)) == repr(torch.finfo(ref))


def test_float8_mixes_are_refused_like_pytorch():
    with pytest.raises(RuntimeError, match="Promotion for Float8 Types is not supported, attempted to "
                                           "promote Float8_e4m3fn and Float"):
        E.promote_types(E.float8_e4m3fn, E.float32)
    x = E.tensor([1.5, 2.0, 300.0]).to(E.float8_e4m3fn)
    ref = torch.tensor([1.5, 2.0, 300.0]).to(torch.float8_e4m3fn)
    assert x.to(E.float32).tolist() == ref.to(torch.float32).tolist()
    assert x.type() == ref.type()


# -- creation, printing, conversion ---------------------------------------------------------

REPRS = [
    lambda m: m.tensor([[1 + 2j, 3.25 - 1e-5j], [1e10j, float("nan")]]),
    lambda m: m.tensor([1.5 + 2j, -3 - 1j], dtype=m.complex128),
    lambda m: m.tensor([1 + 2j, 3 - 1j]),
    lambda m: m.tensor(1j),
    lambda m: m.tensor([[1 + 2j]] * 30).T,
    lambda m: m.zeros(0, dtype=m.complex64),
    lambda m: m.tensor([1 + 2j, -3 - 4j], dtype=m.complex32),
    lambda m: m.full((2,), 1 - 1j),
    lambda m: m.tensor([1e-10 + 2j]),
]


@pytest.mark.parametrize("make", REPRS)
def test_repr_matches_pytorch(make):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PyTorch's "ComplexHalf support is experimental"
        assert repr(make(E)) == repr(make(torch))


def test_item_tolist_type_and_numpy():
    z = E.tensor(Z)
    assert z.tolist() == pytest.approx(torch.tensor(Z).tolist())
    assert E.tensor(1 + 2j).item() == 1 + 2j and isinstance(E.tensor(1 + 2j).item(), complex)
    assert z.type() == "torch.ComplexFloatTensor" and z.cdouble().type() == "torch.ComplexDoubleTensor"
    assert z.numpy().dtype == np.complex64
    a = np.array([1 + 1j, 2 - 1j])
    t = E.from_numpy(a)
    t[0] = 5j
    assert t.dtype is E.complex128 and a[0] == 5j  # shares memory
    with pytest.raises(TypeError, match="Got unsupported ScalarType ComplexHalf"):
        E.zeros(2, dtype=E.chalf).numpy()
    assert float(E.tensor(2 + 0j)) == 2.0
    with pytest.raises(RuntimeError):
        float(E.tensor(2 + 1j))


def test_creation_and_casts():
    for factory in ("zeros", "ones", "empty"):
        assert getattr(E, factory)(2, 3, dtype=E.cfloat).dtype is E.complex64
    assert E.ones(2, dtype=E.cfloat).tolist() == [1 + 0j, 1 + 0j]
    half = E.tensor([1.5 + 2j, -3 - 4j]).to(E.chalf)
    assert half.dtype is E.complex32 and half.to(E.cdouble).tolist() == [1.5 + 2j, -3 - 4j]
    with pytest.warns(UserWarning, match="Casting complex values to real discards the imaginary part"):
        assert E.tensor([1 + 2j]).to(E.float32).tolist() == [1.0]


def test_randn_complex_has_unit_variance_split_between_the_parts():
    E.manual_seed(0)
    z = E.randn(200_000, dtype=E.cdouble)
    assert z.dtype is E.complex128
    assert abs(z.real.var().item() - 0.5) < 0.01 and abs(z.imag.var().item() - 0.5) < 0.01
    assert abs(z.mean().item()) < 0.01


# -- views --------------------------------------------------------------------------------

def test_real_imag_view_as_real_share_memory():
    z = E.tensor(Z)
    r = E.view_as_real(z)
    assert r.shape == (5, 2) and r.stride() == (2, 1)
    r[0, 1] = 7.0
    assert z[0].item() == 1 + 7j
    z.imag[1] = -1.0
    assert z[1].item() == -0.5 - 1j
    z.real = E.zeros(5)
    assert z.real.tolist() == [0.0] * 5
    sub = E.tensor([[1 + 2j, 3 + 4j], [5 + 6j, 7 + 8j]])[1:]
    ref = torch.tensor([[1 + 2j, 3 + 4j], [5 + 6j, 7 + 8j]])[1:]
    for ours, theirs in [(sub.imag, ref.imag), (E.view_as_real(sub), torch.view_as_real(ref))]:
        assert (ours.stride(), ours.storage_offset(), ours.tolist()) == \
               (theirs.stride(), theirs.storage_offset(), theirs.tolist())
    back = E.view_as_complex(E.arange(8.0).view(4, 2))
    assert back.tolist() == [0 + 1j, 2 + 3j, 4 + 5j, 6 + 7j]
    x = E.ones(3)
    assert x.real is x


@pytest.mark.parametrize("make, message", [
    (lambda m: m.view_as_complex(m.ones(3, 3)), "Tensor must have a last dimension of size 2"),
    (lambda m: m.view_as_complex(m.ones(2, dtype=m.int64)), "view_as_complex is only supported for half"),
    (lambda m: m.view_as_complex(m.ones(3, 3)[:, :2]), "stride divisible by 2"),
    (lambda m: m.view_as_complex(m.ones(7)[1:].view(3, 2)), "storage_offset divisible by 2"),
    (lambda m: m.view_as_real(m.ones(2)), "view_as_real is only supported for complex tensors"),
    (lambda m: m.ones(2).imag, "imag is not implemented for tensors with non-complex dtypes."),
    (lambda m: m.complex(m.ones(2), m.ones(2, dtype=m.float64)), "Expected object of scalar type Float"),
    (lambda m: m.ones(2, dtype=m.cfloat) < 1, "\"lt_cpu\" not implemented for 'ComplexFloat'"),
    (lambda m: m.ones(2, dtype=m.cfloat).max(), "\"max_all\" not implemented for 'ComplexFloat'"),
    (lambda m: m.ones(2, dtype=m.cfloat).amax(), "\"max_values_cpu\" not implemented"),
    (lambda m: m.ones(2, dtype=m.cfloat).argmax(), "argmax\\(\\): does not support complex input"),
    (lambda m: m.ones(2, dtype=m.cfloat).sort(), "Sort does not support complex dtypes"),
    (lambda m: m.ones(2, dtype=m.cfloat).sign(), "torch.sgn instead"),
    (lambda m: m.ones(2, dtype=m.cfloat).floor(), "floor is not supported for complex inputs"),
    (lambda m: m.ones(2, dtype=m.cfloat).erf(), "\"erf_vml_cpu\" not implemented for 'ComplexFloat'"),
    (lambda m: m.maximum(m.ones(2, dtype=m.cfloat), m.ones(2, dtype=m.cfloat)), "maximum not implemented"),
])
def test_errors_match_pytorch(make, message):
    with pytest.raises(Exception, match=message) as ours:
        make(E)
    with pytest.raises(Exception, match=message) as theirs:
        make(torch)
    assert ours.type is theirs.type


# -- elementwise, reductions, linear algebra -------------------------------------------------------

UNARY = ["abs", "angle", "sgn", "conj", "neg", "reciprocal", "square", "exp", "log", "log2", "log10", "log1p",
         "expm1", "sqrt", "rsqrt", "sin", "cos", "tan", "sinh", "cosh", "tanh", "asin", "acos", "atan", "asinh",
         "acosh", "atanh", "sigmoid", "isnan", "isinf", "isfinite"]


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("name", UNARY)
def test_unary_matches_pytorch(name, dtype):
    values = [v for v in Z if v != 0] + [complex(np.inf, 1), complex(np.nan, 0)] if name.startswith("is") else Z[:3]
    ours = getattr(E.tensor(values, dtype=getattr(E, dtype)), name)()
    ref = getattr(torch.tensor(values, dtype=getattr(torch, dtype)), name)().resolve_conj()
    assert ours.dtype.name == str(ref.dtype).split(".")[1]
    rtol = 1e-5 if dtype == "complex64" else 1e-12
    np.testing.assert_allclose(ours.numpy(), ref.numpy(), rtol=rtol, atol=rtol)


# Written out in scalar_complex.py with C99's Annex G special values (glibc's signs where
# C99 leaves one open): every pair of these parts, on each device (the CUDA simulator runs
# them as Python with NumPy's real functions, the CPU and GPUs compiled with math's).
# 1 is a branch point of the inverse functions; 2^-26 + inf j is where PyTorch's complex64
# and complex128 log1p part (1 + 2^-26 rounds to 1 in float32 only); 1e300 needs their
# asymptotic forms in complex128 and is inf in complex64.
C99_UNARY = ["sin", "cos", "tan", "sinh", "cosh", "tanh", "acosh", "expm1",
             "asin", "acos", "atan", "asinh", "atanh", "log1p"]
_PARTS = (0.0, -0.0, 1e-30, 2.0 ** -26, 0.5, 1.0, -1.5, 3.0, 720.0, -2000.0, 1e300, np.inf, -np.inf, np.nan)
SPECIAL = [complex(re, im) for re in _PARTS for im in _PARTS]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("name", C99_UNARY)
def test_special_values_match_pytorch(name, dtype, device):
    """Infinite, NaN, signed-zero, tiny and overflowing parts give PyTorch's values, signed zeros included."""
    ours = getattr(E, name)(E.tensor(SPECIAL, dtype=getattr(E, dtype), device=device)).cpu().numpy()
    ref = getattr(torch, name)(torch.tensor(SPECIAL, dtype=getattr(torch, dtype))).numpy()
    rtol, atol = (1e-5, 1e-37) if dtype == "complex64" else (1e-12, 1e-300)
    if device == "cuda":
        # A GPU contracts multiply-adds into FMAs (as PyTorch's CUDA builds do): a part that
        # is the cancellation residue of O(1) terms moves by an ulp of 1 (acos(1 + 1e-30j)'s
        # real part, 1e-15 exactly: PyTorch's CPU 8.9e-16, ember's H200 1.1e-15).
        atol = 4 * np.finfo(dtype).eps
    for part in ("real", "imag"):
        got, want = getattr(ours, part), getattr(ref, part)
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, equal_nan=True, err_msg=f"{name} {part}")
        zero = want == 0
        if name == "expm1" and dtype == "complex64":
            # PyTorch's float32 2 sin(y/2)^2 underflows to +0 at y = 1e-30; ember's float64
            # one is 2e-60 until the result rounds to -0.0 when stored.
            zero &= np.abs(np.array(SPECIAL).imag) != 1e-30
        assert (np.signbit(got[zero]) == np.signbit(want[zero])).all(), f"{name} {part}: signed zeros"


def _hard_arguments(n=400, seed=0):
    # Finite arguments where formulas lose accuracy: magnitudes 1e-300..1e300, near and on
    # the branch cuts with either signed zero, at the branch points +-1 and +-j, subnormal,
    # and past the float range's square root.
    rng = np.random.default_rng(seed)
    sign = lambda: rng.choice([1.0, -1.0], n)  # noqa: E731
    zero = lambda: rng.choice([0.0, -0.0], n)  # noqa: E731
    tiny = lambda: 10.0 ** rng.uniform(-300, -1, n)  # noqa: E731
    wide = rng.uniform(-3, 3, n)
    parts = [(10.0 ** rng.uniform(-300, 300, n) * sign(), 10.0 ** rng.uniform(-300, 300, n) * sign()),
             (rng.standard_normal(n) * 3, rng.standard_normal(n) * 3),
             (wide, zero()), (zero(), wide), (wide, tiny() * sign()), (tiny() * sign(), wide),
             (sign(), tiny() * sign()), (tiny() * sign(), sign()),
             (10.0 ** rng.uniform(-320, -300, n) * sign(), 10.0 ** rng.uniform(-320, -300, n) * sign()),
             (10.0 ** rng.uniform(150, 308, n) * sign(), 10.0 ** rng.uniform(150, 308, n) * sign())]
    return np.concatenate([re + 1j * im for re, im in parts])


@pytest.mark.parametrize("name", ["asin", "acos", "atan", "asinh", "atanh", "acosh", "log1p"])
def test_inverse_functions_are_accurate_against_pytorch(name):
    """complex128 parts within a few ulps of PyTorch's (glibc's) on thousands of hard arguments."""
    z = _hard_arguments()
    ours = getattr(E, name)(E.from_numpy(z.copy())).numpy()
    ref = getattr(torch, name)(torch.from_numpy(z)).numpy()
    # acos is pi/2 - asin z in PyTorch's complex128 too: a real part near 0 is exact to
    # pi/2's ulp, not its own. log1p's real part near |1 + z| = 1 is c10's formula's, exact
    # to |log1p z|'s ulp; at subnormal imaginary parts PyTorch's division overflows to nan
    # where log1p z = z.
    atol = 2e-15 * np.abs(ref) if name in ("acos", "log1p") else 1e-300
    if name == "log1p":
        overflowed = np.isnan(ref) & (np.abs(z.imag) < 1e-307)
        assert (ours[overflowed] == z[overflowed]).all()
        ours, ref, atol = ours[~overflowed], ref[~overflowed], atol[~overflowed]
    for part in ("real", "imag"):
        got, want = getattr(ours, part), getattr(ref, part)
        assert (np.abs(got - want) <= 2e-15 * np.abs(want) + atol).all(), f"{name} {part}"


def test_unary_on_strided_and_0d_inputs():
    z = E.tensor([[1 + 2j, 3 - 1j], [0.5j, -2 + 0j]]).t()
    np.testing.assert_allclose(z.exp().numpy(), np.exp(z.numpy()), rtol=1e-6)
    assert abs(E.tensor(1j).exp().item() - np.exp(1j)) < 1e-6


@pytest.mark.parametrize("op", ["add", "sub", "mul", "div", "pow", "eq", "ne"])
@pytest.mark.parametrize("other", ["tensor", "complex", "float", "int", "float64_tensor"])
def test_binary_matches_pytorch(op, other):
    a, ta = E.tensor(Z[:3]), torch.tensor(Z[:3])
    b, tb = {"tensor": (E.tensor([2 - 1j, 0.5j, -1 + 0j]), torch.tensor([2 - 1j, 0.5j, -1 + 0j])),
             "complex": (2 - 1j, 2 - 1j), "float": (2.5, 2.5), "int": (3, 3),
             "float64_tensor": (E.tensor([1.5, 2.0, -0.5], dtype=E.float64),
                                torch.tensor([1.5, 2.0, -0.5], dtype=torch.float64))}[other]
    ours, ref = getattr(E, op)(a, b), getattr(torch, op)(ta, tb)
    assert ours.dtype.name == str(ref.dtype).split(".")[1]
    np.testing.assert_allclose(ours.numpy(), ref.numpy(), rtol=1e-5)


def test_division_by_zero_gives_pytorchs_infinities():
    z = E.tensor([1 + 1j, 0j, 1 + 0j, -2 + 3j])
    ref = torch.tensor([1 + 1j, 0j, 1 + 0j, -2 + 3j])
    np.testing.assert_array_equal((z / 0).numpy(), (ref / 0).numpy())
    np.testing.assert_allclose(z.reciprocal().numpy(), ref.reciprocal().numpy(), rtol=1e-6)  # inf/NaN parts exact


def test_reductions_norms_and_matmul_against_numpy():
    rng = np.random.default_rng(0)
    a = (rng.standard_normal((3, 4)) + 1j * rng.standard_normal((3, 4))).astype(np.complex128)
    b = (rng.standard_normal((4, 2)) + 1j * rng.standard_normal((4, 2))).astype(np.complex128)
    A, B = E.from_numpy(a.copy()), E.from_numpy(b.copy())
    np.testing.assert_allclose(A.sum().item(), a.sum())
    np.testing.assert_allclose(A.sum(0).numpy(), a.sum(0))
    np.testing.assert_allclose(A.mean(1).numpy(), a.mean(1))
    np.testing.assert_allclose(A.prod(1).numpy(), a.prod(1))
    norm = E.linalg.vector_norm(A)
    assert norm.dtype is E.float64
    np.testing.assert_allclose(norm.item(), np.linalg.norm(a))
    np.testing.assert_allclose((A @ B).numpy(), a @ b)
    np.testing.assert_allclose(A.mm(B).numpy(), a @ b)
    np.testing.assert_allclose(E.einsum("ij,jk->ik", A, B).numpy(), a @ b)
    np.testing.assert_allclose(E.bmm(A[None], B[None])[0].numpy(), a @ b)
    assert E.allclose(A, A + 1e-12j) and not E.allclose(A, A + 1e-3j)
    assert E.isclose(A, A).all()


def test_complex_polar_conj_and_indexing():
    re, im = E.tensor([1.0, -2.0]), E.tensor([0.5, 3.0])
    np.testing.assert_allclose(E.complex(re, im).numpy(), torch.complex(torch.tensor([1.0, -2.0]),
                                                                    torch.tensor([0.5, 3.0])).numpy())
    np.testing.assert_allclose(E.polar(re.abs(), im).numpy(),
                               torch.polar(torch.tensor([1.0, 2.0]), torch.tensor([0.5, 3.0])).numpy(), rtol=1e-6)
    z = E.tensor(Z)
    assert not z.conj().is_conj() and z.resolve_conj() is z
    assert E.conj_physical(z).tolist() == [v.conjugate() for v in E.tensor(Z).tolist()]
    assert E.cat([z[:2], z[3:]]).tolist() == E.tensor(Z[:2] + Z[3:]).tolist()
    assert z[E.tensor([4, 0])].tolist() == E.tensor([Z[4], Z[0]]).tolist()
    assert E.isreal(E.tensor([1 + 0j, 1j])).tolist() == [True, False]


@pytest.mark.parametrize("device", DEVICES)
def test_elementwise_on_each_device(device):
    z = E.tensor(Z[:3], device=device)
    expected = np.exp(np.array(Z[:3], np.complex64)) * 2 + 1j
    np.testing.assert_allclose((z.exp() * 2 + 1j).cpu().numpy(), expected, rtol=1e-5)
    np.testing.assert_allclose(z.abs().cpu().numpy(), np.abs(np.array(Z[:3])), rtol=1e-6)
    np.testing.assert_allclose(z.sum().cpu().item(), sum(Z[:3]), rtol=1e-6)
