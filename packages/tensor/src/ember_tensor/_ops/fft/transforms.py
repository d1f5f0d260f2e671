"""The public discrete Fourier transforms of ``torch.fft``: 1-D, 2-D and n-D forms of
fft/ifft (complex), rfft/irfft (real signals, onesided spectra) and hfft/ihfft (Hermitian
signals, real spectra), each composed as PyTorch composes it from the three primitives
(`primitives.py`), so that autograd differentiates them through those.

Every transform takes ``norm`` ("backward", the default: the inverse scales by 1/n;
"forward": the forward does; "ortho": both by 1/sqrt(n)), zero-pads or trims the input to
``n`` / ``s`` points, and writes to ``out=`` when given. Real float32 inputs give
complex64, float64 give complex128, integers compute in the default float dtype.

>>> import ember_tensor as torch
>>> torch.fft.fft(torch.tensor([1., 2., 3., 4.]))
tensor([10.+0.j, -2.+2.j, -2.+0.j, -2.-2.j])
>>> torch.fft.irfft(torch.fft.rfft(torch.tensor([1., 2., 3., 4.])))
tensor([1., 2., 3., 4.])
"""
from ... import _dtype as D
from ..._dispatch import op
from .plan import (
    c2r_shape_and_dims, check_out, check_points, fft_dim, norm_code, promote, resize, shape_and_dims, to_out,
)
from .primitives import _fft_c2c, _fft_c2r, _fft_r2c

__all__ = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fft2", "ifft2", "rfft2", "irfft2", "hfft2", "ihfft2",
           "fftn", "ifftn", "rfftn", "irfftn", "hfftn", "ihfftn"]


# --- the three shapes of a 1-D transform (ATen's fft_c2c, fft_r2c, fft_c2r) ----------------

def _c2c(name, input, n, dim, norm, forward, out):
    check_out(name, out, want_complex=True)
    x = promote(input, require_complex=True)
    d = fft_dim(dim, x.dim())
    n = x.shape[d] if n is None else n
    check_points(n)
    x = resize(x, [d], [n])
    return to_out(_fft_c2c(x, [d], norm_code(norm, forward), forward), out)


def _r2c(name, input, n, dim, norm, forward, onesided, out):
    if input.is_complex():
        raise RuntimeError(f"{name} expects a real input tensor, but got {D.scalar_type_name(input.dtype)}")
    check_out(name, out, want_complex=True)
    x = promote(input)
    d = fft_dim(dim, x.dim())
    n = x.shape[d] if n is None else n
    check_points(n)
    x = resize(x, [d], [n])
    result = _fft_r2c(x, [d], norm_code(norm, forward), onesided)
    # There is no native inverse r2c: the inverse of a real signal is the conjugate of
    # its forward transform (with the inverse's scaling).
    return to_out(result if forward else result.conj(), out)


def _c2r(name, input, n, dim, norm, forward, out):
    check_out(name, out, want_complex=False)
    x = promote(input, require_complex=True)
    d = fft_dim(dim, x.dim())
    size = 2 * (x.shape[d] - 1) if n is None else n
    check_points(size)
    if n is not None:
        x = resize(x, [d], [size // 2 + 1])
    if forward:  # hfft: the forward transform of a Hermitian signal is irfft of its conjugate
        x = x.conj()
    return to_out(_fft_c2r(x, [d], norm_code(norm, forward), size), out)


# --- 1-D ------------------------------------------------------------------------------------

@op("fft_fft")
def fft(input, n=None, dim=-1, norm=None, *, out=None):
    """The 1-D discrete Fourier transform of `input` along `dim`.

    Args:
        n: signal length: the input is zero-padded or trimmed to `n` points first.
        dim: the dim to transform.
        norm: "backward" (no scaling, the default), "ortho" (1/sqrt(n)) or "forward" (1/n).

    >>> import ember_tensor as torch
    >>> torch.fft.fft(torch.tensor([1., 0., 0., 0.]))
    tensor([1.+0.j, 1.+0.j, 1.+0.j, 1.+0.j])
    """
    if input.is_complex():
        return _c2c("fft", input, n, dim, norm, True, out)
    return _r2c("fft", input, n, dim, norm, True, False, out)


@op("fft_ifft")
def ifft(input, n=None, dim=-1, norm=None, *, out=None):
    """The 1-D inverse discrete Fourier transform of `input` along `dim` (scaled by 1/n
    under the default norm="backward").

    >>> import ember_tensor as torch
    >>> torch.fft.ifft(torch.tensor([4., 0., 0., 0.]))
    tensor([1.+0.j, 1.+0.j, 1.+0.j, 1.+0.j])
    """
    if input.is_complex():
        return _c2c("ifft", input, n, dim, norm, False, out)
    return _r2c("ifft", input, n, dim, norm, False, False, out)


@op("fft_rfft")
def rfft(input, n=None, dim=-1, norm=None, *, out=None):
    """The 1-D Fourier transform of real `input`: its n//2 + 1 non-negative frequencies.

    >>> import ember_tensor as torch
    >>> torch.fft.rfft(torch.tensor([1., 1., 1., 1.]))
    tensor([4.+0.j, 0.+0.j, 0.+0.j])
    """
    return _r2c("rfft", input, n, dim, norm, True, True, out)


@op("fft_irfft")
def irfft(input, n=None, dim=-1, norm=None, *, out=None):
    """The inverse of `rfft`: a real signal of `n` points (default 2 * (m - 1) for m
    frequencies) from its non-negative frequencies.

    >>> import ember_tensor as torch
    >>> torch.fft.irfft(torch.tensor([4 + 0j, 0j, 0j]))
    tensor([1., 1., 1., 1.])
    """
    return _c2r("irfft", input, n, dim, norm, False, out)


@op("fft_hfft")
def hfft(input, n=None, dim=-1, norm=None, *, out=None):
    """The Fourier transform of a Hermitian signal given by its first half: a real
    spectrum of `n` points (default 2 * (m - 1)).

    >>> import ember_tensor as torch
    >>> torch.fft.hfft(torch.tensor([1 + 0j, 0j, 0j]))
    tensor([1., 1., 1., 1.])
    """
    return _c2r("hfft", input, n, dim, norm, True, out)


@op("fft_ihfft")
def ihfft(input, n=None, dim=-1, norm=None, *, out=None):
    """The inverse of `hfft`: the first half (n//2 + 1 points) of the Hermitian signal
    whose spectrum is real `input`.

    >>> import ember_tensor as torch
    >>> torch.fft.ihfft(torch.tensor([1., 1., 1., 1.]))
    tensor([1.-0.j, 0.-0.j, 0.-0.j])
    """
    return _r2c("ihfft", input, n, dim, norm, False, True, out)


# --- n-D (and 2-D: the same over dim=(-2, -1)) ------------------------------------------------

def _fftn_c2c(name, input, s, dim, norm, forward, out):
    check_out(name, out, want_complex=True)
    sizes, dims = shape_and_dims(input, s, dim)
    x = resize(promote(input, require_complex=True), dims, sizes)
    return to_out(_fft_c2c(x, dims, norm_code(norm, forward), forward), out)


def _rfftn(name, input, s, dim, norm, out):
    if input.is_complex():
        raise RuntimeError(f"{name} expects a real-valued input tensor, but got {D.scalar_type_name(input.dtype)}")
    check_out(name, out, want_complex=True)
    sizes, dims = shape_and_dims(input, s, dim)
    if not sizes:
        raise RuntimeError(f"{name} must transform at least one axis")
    x = resize(promote(input), dims, sizes)
    return to_out(_fft_r2c(x, dims, norm_code(norm, True), True), out)


def _irfftn(name, input, s, dim, norm, out):
    check_out(name, out, want_complex=False)
    sizes, dims, last_size = c2r_shape_and_dims(name, input, s, dim)
    x = resize(promote(input, require_complex=True), dims, sizes)
    return to_out(_fft_c2r(x, dims, norm_code(norm, False), last_size), out)


def _hfftn(name, input, s, dim, norm, out):
    check_out(name, out, want_complex=False)
    sizes, dims, last_size = c2r_shape_and_dims(name, input, s, dim)
    x = resize(promote(input, require_complex=True), dims, sizes)
    code = norm_code(norm, True)
    if len(dims) > 1:  # the full dims first, then the Hermitian last dim
        x = _fft_c2c(x, dims[:-1], code, True)
    return to_out(_fft_c2r(x.conj(), dims[-1:], code, last_size), out)


def _ihfftn(name, input, s, dim, norm, out):
    if input.is_complex():
        raise RuntimeError(f"Only supports floating-point dtypes, but found: {D.scalar_type_name(input.dtype)}")
    check_out(name, out, want_complex=True)
    sizes, dims = shape_and_dims(input, s, dim)
    if not sizes:
        raise RuntimeError(f"{name} must transform at least one axis")
    x = resize(promote(input), dims, sizes)
    code = norm_code(norm, False)
    result = _fft_r2c(x, dims[-1:], code, True).conj()
    if len(dims) > 1:
        result = _fft_c2c(result, dims[:-1], code, False)
    return to_out(result, out)


@op("fft_fft2")
def fft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """The 2-D discrete Fourier transform over `dim` (`fftn` over two dims).

    >>> import ember_tensor as torch
    >>> torch.fft.fft2(torch.ones(2, 2))
    tensor([[4.+0.j, 0.+0.j],
            [0.+0.j, 0.+0.j]])
    """
    return _fftn_c2c("fft2", input, s, dim, norm, True, out)


@op("fft_ifft2")
def ifft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """The 2-D inverse discrete Fourier transform over `dim`."""
    return _fftn_c2c("ifft2", input, s, dim, norm, False, out)


@op("fft_rfft2")
def rfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """The 2-D Fourier transform of real `input`, onesided along the last of `dim`."""
    return _rfftn("rfft2", input, s, dim, norm, out)


@op("fft_irfft2")
def irfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """The inverse of `rfft2`: a real 2-D signal from its onesided spectrum."""
    return _irfftn("irfft2", input, s, dim, norm, out)


@op("fft_hfft2")
def hfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """The 2-D Fourier transform of a Hermitian signal given by its onesided half: real."""
    return _hfftn("hfft2", input, s, dim, norm, out)


@op("fft_ihfft2")
def ihfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """The inverse of `hfft2`: the onesided half of a Hermitian signal from real `input`."""
    return _ihfftn("ihfft2", input, s, dim, norm, out)


@op("fft_fftn")
def fftn(input, s=None, dim=None, norm=None, *, out=None):
    """The n-D discrete Fourier transform over `dim` (default: the last len(s) dims, or all).

    >>> import ember_tensor as torch
    >>> torch.fft.fftn(torch.ones(2, 2, 2)).abs().sum().item()
    8.0
    """
    return _fftn_c2c("fftn", input, s, dim, norm, True, out)


@op("fft_ifftn")
def ifftn(input, s=None, dim=None, norm=None, *, out=None):
    """The n-D inverse discrete Fourier transform over `dim`."""
    return _fftn_c2c("ifftn", input, s, dim, norm, False, out)


@op("fft_rfftn")
def rfftn(input, s=None, dim=None, norm=None, *, out=None):
    """The n-D Fourier transform of real `input`, onesided along the last of `dim`."""
    return _rfftn("rfftn", input, s, dim, norm, out)


@op("fft_irfftn")
def irfftn(input, s=None, dim=None, norm=None, *, out=None):
    """The inverse of `rfftn`: a real n-D signal (last size default 2 * (m - 1))."""
    return _irfftn("irfftn", input, s, dim, norm, out)


@op("fft_hfftn")
def hfftn(input, s=None, dim=None, norm=None, *, out=None):
    """The n-D Fourier transform of a Hermitian signal given by its onesided half: real."""
    return _hfftn("hfftn", input, s, dim, norm, out)


@op("fft_ihfftn")
def ihfftn(input, s=None, dim=None, norm=None, *, out=None):
    """The inverse of `hfftn`: the onesided half of a Hermitian signal from real `input`."""
    return _ihfftn("ihfftn", input, s, dim, norm, out)
