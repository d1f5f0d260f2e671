"""``torch.fft`` (issue 27): every transform against PyTorch (test-only oracle) and NumPy,
with each norm, n/s padding and trimming, dims, dtypes, out= and PyTorch's errors; round
trips and Parseval; fftfreq/rfftfreq and the shifts; the CUDA backend (simulator)."""
import numpy as np
import pytest

import ember_tensor as E

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(0)
REAL = RNG.standard_normal((3, 6, 5))
COMPLEX = REAL + 1j * RNG.standard_normal((3, 6, 5))

ONE_D = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"]
TWO_D = ["fft2", "ifft2", "rfft2", "irfft2", "hfft2", "ihfft2"]
N_D = ["fftn", "ifftn", "rfftn", "irfftn", "hfftn", "ihfftn"]
REAL_ONLY = {"rfft", "ihfft", "rfft2", "ihfft2", "rfftn", "ihfftn"}


def _numpy(t):
    return t.resolve_conj().numpy() if hasattr(t, "resolve_conj") else t.numpy()


def _same(name, array, **kwargs):
    """The transform on ember and on PyTorch: same values, dtype and shape, or the same error."""
    try:
        expected = getattr(torch.fft, name)(torch.from_numpy(array), **kwargs)
    except Exception as error:  # noqa: BLE001 - the oracle's error is the expectation
        with pytest.raises(type(error)) as ours:
            getattr(E.fft, name)(E.from_numpy(array), **kwargs)
        assert str(ours.value) == str(error)
        return
    result = getattr(E.fft, name)(E.from_numpy(array), **kwargs)
    assert result.dtype.name == str(expected.dtype).split(".")[1]
    assert tuple(result.shape) == tuple(expected.shape)
    tol = 1e-4 if array.dtype in (np.float32, np.complex64) else 1e-10
    np.testing.assert_allclose(result.numpy(), _numpy(expected), atol=tol, rtol=tol)


def _inputs(name):
    arrays = [REAL.astype(np.float32), REAL]
    if name not in REAL_ONLY:
        arrays += [COMPLEX.astype(np.complex64), COMPLEX]
    return arrays


@pytest.mark.parametrize("name", ONE_D)
@pytest.mark.parametrize("norm", [None, "backward", "ortho", "forward"])
@pytest.mark.parametrize("kwargs", [{}, {"dim": 0}, {"dim": -2}, {"n": 3}, {"n": 9}, {"n": 8, "dim": 1}],
                         ids=["default", "dim0", "dim-2", "trim", "pad", "pad-dim1"])
def test_one_dimensional_transforms_match_pytorch(name, norm, kwargs):
    for array in _inputs(name):
        _same(name, array, norm=norm, **kwargs)


@pytest.mark.parametrize("name", TWO_D + N_D)
@pytest.mark.parametrize("norm", [None, "ortho", "forward"])
@pytest.mark.parametrize("kwargs", [{}, {"s": (4, 7)}, {"s": (2, -1)}, {"dim": (0, 2)}, {"s": (5, 3), "dim": (2, 0)},
                                    {"dim": (1,)}, {"s": (2, 4, 6)}],
                         ids=["default", "s", "s-1", "dims", "s-dims", "one-dim", "three"])
def test_multi_dimensional_transforms_match_pytorch(name, norm, kwargs):
    if name in TWO_D and len(kwargs.get("dim", (0, 0))) != 2 and "s" not in kwargs:
        pytest.skip("the 2-D forms take two dims")
    for array in _inputs(name):
        _same(name, array, norm=norm, **kwargs)


@pytest.mark.parametrize("name", ONE_D + TWO_D + N_D)
def test_integer_and_bool_inputs_compute_in_the_default_float_dtype(name):
    _same(name, np.arange(12).reshape(3, 4))
    _same(name, (np.arange(12).reshape(3, 4) % 2).astype(bool))
    with _default(E.float64):
        assert getattr(E.fft, name)(E.arange(12).reshape(3, 4)).dtype in (E.complex128, E.float64)


class _default:
    """Set the default dtype for a block."""

    def __init__(self, dtype):
        self.dtype = dtype

    def __enter__(self):
        self.saved = E.get_default_dtype()
        E.set_default_dtype(self.dtype)

    def __exit__(self, *exc):
        E.set_default_dtype(self.saved)


@pytest.mark.parametrize("call", [
    lambda m: m.fft.fft(m.ones(4, dtype=m.float16)),
    lambda m: m.fft.rfft(m.ones(4, dtype=m.bfloat16)),
    lambda m: m.fft.fft(m.ones(4), n=0),
    lambda m: m.fft.fft(m.ones(4), n=-1),
    lambda m: m.fft.fft(m.ones(4), dim=2),
    lambda m: m.fft.fft(m.tensor(1.0)),
    lambda m: m.fft.fft(m.ones(0)),
    lambda m: m.fft.fftn(m.ones(4), s=(1, 2)),
    lambda m: m.fft.fftn(m.ones(2, 4), s=(1, 2), dim=(0,)),
    lambda m: m.fft.fftn(m.ones(2, 4), dim=(0, 0)),
    lambda m: m.fft.fftn(m.ones(2, 4), s=(0, 3)),
    lambda m: m.fft.fftn(m.tensor(1.0), dim=(0,)),
    lambda m: m.fft.irfft(m.ones(4), n=0),
    lambda m: m.fft.irfft(m.ones(1)),
    lambda m: m.fft.irfftn(m.ones(2, 1)),
    lambda m: m.fft.rfft(m.ones(4, dtype=m.complex64)),
    lambda m: m.fft.rfftn(m.ones(4, dtype=m.complex64)),
    lambda m: m.fft.ihfft(m.ones(4, dtype=m.complex64)),
    lambda m: m.fft.ihfft2(m.ones(2, 2, dtype=m.complex64)),
    lambda m: m.fft.irfftn(m.ones(4, 3), s=()),
    lambda m: m.fft.rfftn(m.ones(4, 3), s=()),
    lambda m: m.fft.fft(m.ones(4), norm="bad"),
    lambda m: m.fft.fft(m.ones(4), norm=""),
    lambda m: m.fft.fft(m.ones(4), out=m.empty(4)),
    lambda m: m.fft.irfft(m.ones(4, dtype=m.complex64), out=m.empty(6, dtype=m.complex64)),
    lambda m: m.fft.hfft(m.ones(4, dtype=m.complex64), out=m.empty(6, dtype=m.complex64)),
    lambda m: m.fft.ihfft(m.ones(4), out=m.empty(3)),
    lambda m: m.fft.fft2(m.ones(4)),
    lambda m: m.fft.fftfreq(3, dtype=m.int64),
    lambda m: m.fft.fftfreq(-1),
    lambda m: m.fft.fftshift(m.tensor(1.0)),
], ids=lambda _: "")
def test_errors_match_pytorch(call):
    with pytest.raises(Exception) as expected:
        call(torch)
    with pytest.raises(type(expected.value)) as ours:
        call(E)
    assert str(ours.value) == str(expected.value)


def test_no_transform_over_no_dims_keeps_the_values():
    _same("fftn", REAL, s=())
    _same("fftn", REAL, dim=())
    _same("fftn", np.array(1.5))


def test_out_is_written_and_cast():
    out = E.empty(5, dtype=E.complex128)
    x = E.tensor([1.0, 2.0, 0.5, -1.0, 3.0])
    result = E.fft.fft(x, out=out)
    assert result is out
    np.testing.assert_allclose(out.numpy(), np.fft.fft(x.numpy().astype(np.float64)), rtol=1e-6)
    real_out = E.empty(8)
    E.fft.irfft(E.fft.rfft(E.arange(8.0)), out=real_out)
    np.testing.assert_allclose(real_out.numpy(), np.arange(8.0), atol=1e-5)


def test_non_contiguous_and_broadcast_inputs():
    base = E.from_numpy(COMPLEX)
    view = base.transpose(0, 2)[::2]
    np.testing.assert_allclose(E.fft.fft(view, dim=1).numpy(), np.fft.fft(view.numpy(), axis=1), atol=1e-10)
    expanded = E.from_numpy(REAL[:, :1, :]).expand(3, 4, 5)
    np.testing.assert_allclose(E.fft.rfft2(expanded).numpy(), np.fft.rfft2(expanded.numpy()), atol=1e-10)


def test_float32_stays_in_single_precision():
    x = E.from_numpy(REAL.astype(np.float32))
    assert E.fft.fft(x).dtype == E.complex64
    assert E.fft.irfft(E.fft.rfft(x)).dtype == E.float32
    assert E.fft.hfft(E.fft.fft(x)).dtype == E.float32


@pytest.mark.parametrize("norm", ["backward", "ortho", "forward"])
def test_round_trips(norm):
    x = E.from_numpy(COMPLEX)
    np.testing.assert_allclose(E.fft.ifft(E.fft.fft(x, norm=norm), norm=norm).numpy(), COMPLEX, atol=1e-12)
    np.testing.assert_allclose(E.fft.ifftn(E.fft.fftn(x, norm=norm), norm=norm).numpy(), COMPLEX, atol=1e-12)
    r = E.from_numpy(REAL)
    np.testing.assert_allclose(E.fft.irfft(E.fft.rfft(r, norm=norm), n=5, norm=norm).numpy(), REAL, atol=1e-12)
    np.testing.assert_allclose(E.fft.irfftn(E.fft.rfftn(r, norm=norm), s=r.shape, norm=norm).numpy(), REAL,
                               atol=1e-12)
    np.testing.assert_allclose(E.fft.hfft(E.fft.ihfft(r, norm=norm), n=5, norm=norm).numpy(), REAL, atol=1e-12)
    np.testing.assert_allclose(E.fft.hfftn(E.fft.ihfftn(r, norm=norm), s=r.shape, norm=norm).numpy(), REAL,
                               atol=1e-12)


def test_parseval():
    x = E.from_numpy(COMPLEX)
    energy = (x.abs() ** 2).sum().item()
    assert np.isclose((E.fft.fftn(x, norm="ortho").abs() ** 2).sum().item(), energy)
    assert np.isclose((E.fft.fft(x).abs() ** 2).sum().item() / 5, energy)


def test_matches_numpy_on_a_long_signal():
    x = RNG.standard_normal(1 << 12)
    np.testing.assert_allclose(E.fft.rfft(E.from_numpy(x)).numpy(), np.fft.rfft(x), atol=1e-9)


@pytest.mark.parametrize("n", [0, 1, 4, 5])
@pytest.mark.parametrize("d", [1.0, 0.3])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_frequencies_match_pytorch(n, d, dtype):
    for name in ("fftfreq", "rfftfreq"):
        ours = getattr(E.fft, name)(n, d, dtype=getattr(E, dtype))
        expected = getattr(torch.fft, name)(n, d, dtype=getattr(torch, dtype))
        assert ours.dtype.name == dtype
        np.testing.assert_array_equal(ours.numpy(), expected.numpy())
    assert E.fft.fftfreq(4, requires_grad=True).requires_grad


@pytest.mark.parametrize("dim", [None, 0, 1, (0, 1), (-1,)])
def test_shifts_match_pytorch(dim):
    for shape in ((5,), (4, 5), (3, 6)):
        if dim is not None and len(shape) == 1 and dim not in (0, (-1,)):
            continue
        x = np.arange(int(np.prod(shape))).reshape(shape)
        for name in ("fftshift", "ifftshift"):
            ours = getattr(E.fft, name)(E.from_numpy(x), dim=dim)
            expected = getattr(torch.fft, name)(torch.from_numpy(x), dim=dim)
            np.testing.assert_array_equal(ours.numpy(), expected.numpy())
    x = E.arange(7)
    assert E.fft.ifftshift(E.fft.fftshift(x)).tolist() == list(range(7))


def test_namespace_and_primitives():
    import ember
    assert ember.fft is E.fft
    public = {n for n in dir(torch.fft) if not n.startswith("_") and callable(getattr(torch.fft, n))}
    assert set(E.fft.__all__) == public - {"Tensor"}
    x = E.tensor([1.0, 2.0, 3.0])
    assert E._fft_r2c(x, [0], 0, True).tolist() == torch._fft_r2c(torch.tensor([1.0, 2.0, 3.0]), [0], 0, True).tolist()


@pytest.mark.skipif(not E.cuda.is_available(), reason="no CUDA and no simulator")
def test_cuda_backend_matches_the_cpu():
    x = E.from_numpy(REAL)
    for call in (lambda t: E.fft.rfftn(t, norm="ortho"), lambda t: E.fft.fft(t, n=7, dim=1),
                 lambda t: E.fft.irfft(E.fft.rfft(t), n=5), lambda t: E.fft.hfft2(E.fft.ihfft2(t))):
        on_cuda = call(x.cuda())
        assert on_cuda.device.type == "cuda"
        np.testing.assert_allclose(on_cuda.cpu().numpy(), call(x).numpy(), atol=1e-12)
