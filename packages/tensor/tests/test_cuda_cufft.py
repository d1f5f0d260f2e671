"""The cuFFT calls of `_backends.cuda.fft` / `cufft`, checked against cuFFT's contract without a GPU.

Under Numba's simulator device arrays live in host memory, so a stand-in for nvmath's
`cufft` bindings module can do what cuFFT documents for a plan over the basic data layout
(``cufftMakePlanMany64`` with NULL embeddings): read `batch` contiguous signals at the input
pointer, write their unnormalized transforms at the output pointer, and (complex-to-real)
overwrite its input. Transforms routed through it must equal the CPU's: wrong layouts,
pointers, plan types, directions or scalings show up as wrong numbers or a broken rule.
On a real GPU the `gpu` tests run cuFFT itself.
"""
import ctypes
import os

import numpy as np
import pytest

import ember_tensor as et

pytestmark = pytest.mark.skipif(not et.cuda.is_available(), reason="no CUDA and no simulator")
SIMULATED = os.environ.get("NUMBA_ENABLE_CUDASIM", "0") not in ("", "0")

# cufftType_t (cufft.h): (input dtype, output dtype, entry point).
TYPES = {0x29: (np.complex64, np.complex64, "exec_c2c"), 0x69: (np.complex128, np.complex128, "exec_z2z"),
         0x2A: (np.float32, np.complex64, "exec_r2c"), 0x6A: (np.float64, np.complex128, "exec_d2z"),
         0x2C: (np.complex64, np.float32, "exec_c2r"), 0x6C: (np.complex128, np.float64, "exec_z2d")}


def _at(ptr, dtype, shape):
    """The C-contiguous array of `shape` at device pointer `ptr` (host memory here)."""
    count = int(np.prod(shape))
    buf = (ctypes.c_uint8 * (count * np.dtype(dtype).itemsize)).from_address(ptr)
    return np.ctypeslib.as_array(buf).view(dtype).reshape(shape)


class FakeCufft:
    """Stands in for `nvmath.bindings.cufft`: computes what cuFFT would, records the calls."""

    def __init__(self):
        self.plans, self.calls, self.destroyed, self.next = {}, [], [], 100

    def get_version(self):
        return 11000

    def create(self):
        self.next += 1
        self.plans[self.next] = None
        return self.next

    def make_plan_many64(self, handle, rank, n, inembed, istride, idist, onembed, ostride, odist, fft_type, batch):
        assert handle in self.plans and self.plans[handle] is None, "a handle is planned once"
        assert 1 <= rank <= 3 and len(n) == rank and all(s >= 1 for s in n)
        assert inembed == 0 and onembed == 0, "the basic layout: NULL embeddings"
        assert fft_type in TYPES and batch >= 1
        self.plans[handle] = (tuple(n), fft_type, batch)
        return 0

    def set_stream(self, handle, stream):
        assert self.plans.get(handle) is not None and isinstance(stream, int)

    def destroy(self, handle):
        self.destroyed.append(self.plans.pop(handle))

    def _run(self, entry, handle, src, dst, direction=None):
        n, fft_type, batch = self.plans[handle]
        in_type, out_type, expected_entry = TYPES[fft_type]
        assert entry == expected_entry, f"{entry} called on a plan of {expected_entry}"
        half = n[:-1] + (n[-1] // 2 + 1,)
        in_shape = (batch,) + (half if entry in ("exec_c2r", "exec_z2d") else n)
        out_shape = (batch,) + (half if entry in ("exec_r2c", "exec_d2z") else n)
        x, out = _at(src, in_type, in_shape), _at(dst, out_type, out_shape)
        axes = tuple(range(1, len(n) + 1))
        self.calls.append((entry, n, batch, direction))
        if entry in ("exec_c2c", "exec_z2z"):
            assert direction in (-1, 1)
            result = np.fft.fftn(x, axes=axes) if direction == -1 else np.fft.ifftn(x, axes=axes, norm="forward")
        elif entry in ("exec_r2c", "exec_d2z"):
            result = np.fft.rfftn(x, axes=axes)
        else:
            result = np.fft.irfftn(x, s=n, axes=axes, norm="forward")
            x[...] = np.nan  # cuFFT's complex-to-real transforms overwrite their input
        out[...] = result.astype(out_type)

    def __getattr__(self, entry):
        if entry.startswith("exec_"):
            return lambda handle, src, dst, *direction: self._run(entry, handle, src, dst, *direction)
        raise AttributeError(entry)


@pytest.fixture
def cufft(monkeypatch):
    """Route CUDA transforms to the stand-in, as on a GPU with nvmath-python installed."""
    if not SIMULATED:
        pytest.skip("the stand-in reads device memory as host memory: simulator only")
    from ember_tensor._backends.cuda import cufft as _cufft
    fake = FakeCufft()
    monkeypatch.setattr(_cufft, "available", lambda: True)
    monkeypatch.setattr(_cufft, "_bindings", lambda: fake)
    monkeypatch.setattr(_cufft, "_plans", type(_cufft._plans)())
    monkeypatch.setattr(_cufft, "_stream_handle", lambda stream: 0)  # the simulator's streams have no handle
    monkeypatch.setattr(_cufft, "_destroy", lambda bindings, handle: bindings.destroy(handle))
    return fake


RNG = np.random.default_rng(0)
REAL = RNG.standard_normal((3, 4, 5, 6))
COMPLEX = REAL + 1j * RNG.standard_normal(REAL.shape)

TRANSFORMS = [
    ("fft last", lambda t: et.fft.fft(t.to(et.complex128))),
    ("fft dim 1 n=7", lambda t: et.fft.fft(t.to(et.complex128), n=7, dim=1)),
    ("ifft2 ortho", lambda t: et.fft.ifft2(t.to(et.complex128), norm="ortho")),
    ("fftn 4 dims", lambda t: et.fft.fftn(t.to(et.complex128), norm="forward")),
    ("fftn dims 2,0", lambda t: et.fft.fftn(t.to(et.complex128), dim=(2, 0))),
    ("fft transposed", lambda t: et.fft.fft(t.to(et.complex128).transpose(0, 3), dim=1)),
    ("rfft", lambda t: et.fft.rfft(t)),
    ("fft of a real signal", lambda t: et.fft.fft(t, dim=2)),
    ("ifft of a real signal", lambda t: et.fft.ifft(t.float(), norm="ortho")),
    ("rfft2 dims 0,2", lambda t: et.fft.rfft2(t, dim=(0, 2))),
    ("rfftn 4 dims ortho", lambda t: et.fft.rfftn(t, norm="ortho")),
    ("irfft n=5", lambda t: et.fft.irfft(et.fft.rfft(t), n=5)),
    ("irfft n=12 padded", lambda t: et.fft.irfft(et.fft.rfft(t), n=12)),
    ("irfftn 4 dims", lambda t: et.fft.irfftn(et.fft.rfftn(t), s=t.shape)),
    ("irfft2 forward", lambda t: et.fft.irfft2(et.fft.rfft2(t), norm="forward")),
    ("hfft", lambda t: et.fft.hfft(et.fft.ihfft(t))),
    ("float32 rfft", lambda t: et.fft.rfft(t.float())),
    ("complex64 fft", lambda t: et.fft.fft(t.to(et.complex64), dim=0)),
]


@pytest.mark.parametrize("name,fn", TRANSFORMS, ids=[n for n, _ in TRANSFORMS])
def test_cufft_calls_compute_the_cpu_transform(cufft, name, fn):
    """Every transform goes through cuFFT plans of at most three dims and gives the CPU's result."""
    x = et.from_numpy(REAL)
    expected = fn(x)
    got = fn(x.cuda())
    assert cufft.calls, "not computed by the stand-in cuFFT"
    assert all(len(n) <= 3 for _, n, _, _ in cufft.calls)
    assert got.device.type == "cuda" and got.dtype == expected.dtype and got.shape == expected.shape
    tol = 1e-5 if expected.dtype in (et.float32, et.complex64) else 1e-12
    np.testing.assert_allclose(got.cpu().numpy(), expected.numpy(), rtol=tol, atol=tol)


def test_plans_are_cached_and_the_complex_to_real_input_is_a_copy(cufft):
    """A second transform of the same shape reuses its plan; c2r's overwritten input is ember's copy."""
    spectrum = et.fft.rfft(et.from_numpy(REAL)).cuda()
    kept = spectrum.cpu().numpy().copy()
    et.fft.irfft(spectrum, n=6)
    et.fft.irfft(spectrum, n=6)
    assert len(cufft.plans) == 1
    np.testing.assert_array_equal(spectrum.cpu().numpy(), kept)


def test_the_plan_cache_destroys_the_least_recently_used(cufft, monkeypatch):
    from ember_tensor._backends.cuda import cufft as _cufft
    monkeypatch.setattr(_cufft, "PLAN_CACHE_SIZE", 2)
    x = et.from_numpy(COMPLEX).cuda()
    for n in (4, 5, 4, 6):
        et.fft.fft(x, n=n)
    assert [plan[0] for plan in cufft.destroyed] == [(5,)]
    _cufft.clear_plans()
    assert not cufft.plans


def test_complex_transforms_use_the_direction_codes(cufft):
    x = et.from_numpy(COMPLEX).cuda()
    et.fft.fft(x)
    et.fft.ifft(x)
    assert [direction for _, _, _, direction in cufft.calls] == [-1, 1]


STFTS = [
    dict(n_fft=16, hop_length=4, center=True, pad_mode="reflect"),
    dict(n_fft=16, hop_length=5, win_length=10, center=True, pad_mode="constant", normalized=True),
    dict(n_fft=12, hop_length=3, center=True, pad_mode="replicate"),
    dict(n_fft=8, hop_length=8, center=True, pad_mode="circular"),
    dict(n_fft=10, hop_length=2, center=False),
]


@pytest.mark.parametrize("windowed", [False, True])
@pytest.mark.parametrize("kwargs", STFTS, ids=[f"{k['n_fft']}-{k.get('pad_mode', 'none')}" for k in STFTS])
@pytest.mark.parametrize("batched", [False, True])
def test_stft_frames_on_the_device_and_matches_the_cpu(cufft, kwargs, windowed, batched):
    """stft frames, pads and windows on the device and runs one batched r2c plan."""
    signal = et.from_numpy(RNG.standard_normal((2, 50)) if batched else RNG.standard_normal(50)).float()
    window = et.hann_window(kwargs.get("win_length", kwargs["n_fft"])) if windowed else None
    expected = et.stft(signal, window=window, return_complex=True, **kwargs)
    got = et.stft(signal.cuda(), window=None if window is None else window.cuda(), return_complex=True, **kwargs)
    assert [entry for entry, _, _, _ in cufft.calls] == ["exec_r2c"]
    assert got.shape == expected.shape and got.dtype == expected.dtype
    np.testing.assert_allclose(got.cpu().numpy(), expected.numpy(), rtol=1e-5, atol=1e-5)


def test_the_stand_in_matches_nvmath_and_cufft_constants():
    """Where nvmath-python is installed, the plan types and entry points are cuFFT's."""
    nvmath_cufft = pytest.importorskip("nvmath.bindings.cufft")
    from ember_tensor._backends.cuda import cufft as _cufft
    Type = nvmath_cufft.Type
    assert (_cufft.C2C, _cufft.Z2Z, _cufft.R2C, _cufft.D2Z, _cufft.C2R, _cufft.Z2D) == (
        Type.C2C, Type.Z2Z, Type.R2C, Type.D2Z, Type.C2R, Type.Z2D)
    for _, _, entry in TYPES.values():
        assert callable(getattr(nvmath_cufft, entry))


@pytest.mark.gpu
def test_cufft_computes_the_cpu_transforms_on_a_gpu(monkeypatch):
    """On a real GPU with nvmath-python: every transform above, and stft, through cuFFT itself."""
    from ember_tensor._backends.cuda import cufft as _cufft
    if not _cufft.available():
        pytest.skip("nvmath-python (cuFFT bindings) is not installed")
    calls, execute = [], _cufft.execute
    monkeypatch.setattr(_cufft, "execute", lambda *args: calls.append(execute(*args)) or calls[-1])
    x = et.from_numpy(REAL)
    for name, fn in TRANSFORMS:
        calls.clear()
        got = fn(x.cuda())
        assert calls and all(calls), f"{name}: not computed by cuFFT"
        expected = fn(x)
        tol = 1e-5 if expected.dtype in (et.float32, et.complex64) else 1e-12
        np.testing.assert_allclose(got.cpu().numpy(), expected.numpy(), rtol=tol, atol=tol, err_msg=name)
    for kwargs in STFTS:
        kwargs = {k: v for k, v in kwargs.items() if k != "win_length"}
        signal = et.from_numpy(RNG.standard_normal((2, 50))).float()
        calls.clear()
        got = et.stft(signal.cuda(), window=et.hann_window(kwargs["n_fft"], device="cuda"), return_complex=True,
                      **kwargs)
        assert calls and all(calls)
        expected = et.stft(signal, window=et.hann_window(kwargs["n_fft"]), return_complex=True, **kwargs)
        np.testing.assert_allclose(got.cpu().numpy(), expected.numpy(), rtol=1e-4, atol=1e-4)
