"""Derivatives of the FFTs, in PyTorch's convention (conjugate Wirtinger, see `complex`).

The public transforms of ``torch.fft`` are compositions of three primitives (padding,
slicing and ``conj`` around them), so only these have rules. A DFT scaled by a real
factor has as adjoint the opposite-direction DFT scaled by the same factor, so each
backward is the transform the other way with the same normalization code:

* `_fft_c2c`: the c2c transform in the other direction;
* `_fft_r2c`: the inverse c2c transform of the gradient (zero-padded back to the full
  spectrum when onesided), real part;
* `_fft_c2r`: the forward r2c transform of the gradient, with the frequencies whose
  conjugate twins the onesided input stands for (1 .. n - n//2 - 1) counted twice.
"""
import ember_tensor as E

from ._registry import composite, derivative


def _wrapped(dims, ndim):
    return [d + ndim if d < 0 else d for d in dims]


@derivative("_fft_c2c", save=lambda input, dim, normalization, forward: (dim, normalization, forward),
            name="FftC2CBackward0")
def fft_c2c(ctx, grad, dim, normalization, forward):
    return E._fft_c2c(grad, dim, normalization, not forward)


@derivative("_fft_r2c", save=lambda input, dim, normalization, onesided: (input.shape, dim, normalization, onesided),
            name="FftR2CBackward0")
def fft_r2c(ctx, grad, shape, dim, normalization, onesided):
    dims = _wrapped(dim, len(shape))
    last = dims[-1]
    missing = shape[last] - grad.shape[last]
    if onesided and missing > 0:
        # The dropped frequencies got no gradient: zeros, then the full inverse transform.
        zeros_shape = list(grad.shape)
        zeros_shape[last] = missing
        grad = E.cat([grad, E.zeros(zeros_shape, dtype=grad.dtype, device=grad.device)], last)
    return E._fft_c2c(grad, dims, normalization, False).real


@derivative("_fft_c2r", save=lambda input, dim, normalization, last_dim_size: (dim, normalization),
            name="FftC2RBackward0")
def fft_c2r(ctx, grad, dim, normalization):
    dims = _wrapped(dim, grad.dim())
    last = dims[-1]
    result = E._fft_r2c(grad, dims, normalization, True)
    doubled = grad.shape[last] - result.shape[last]
    if doubled > 0:
        scale = [1.0] * result.shape[last]
        scale[1:1 + doubled] = [2.0] * doubled
        shape = [1] * result.dim()
        shape[last] = len(scale)
        result = result * E.tensor(scale, dtype=grad.dtype, device=grad.device).reshape(shape)
    return result


composite("fft_fft", "fft_ifft", "fft_rfft", "fft_irfft", "fft_hfft", "fft_ihfft",
          "fft_fft2", "fft_ifft2", "fft_rfft2", "fft_irfft2", "fft_hfft2", "fft_ihfft2",
          "fft_fftn", "fft_ifftn", "fft_rfftn", "fft_irfftn", "fft_hfftn", "fft_ihfftn")
# stft frames, windows and transforms through the ops above (an op of its own for autocast).
composite("stft")
