"""``ember_tensor.fft``: PyTorch's ``torch.fft`` namespace (``ember.fft``).

Discrete Fourier transforms in 1, 2 and n dims (fft/ifft, rfft/irfft, hfft/ihfft and their
``2``/``n`` forms) with ``n``/``s``, ``dim``, ``norm`` and ``out=``, differentiable;
sample frequencies (`fftfreq`, `rfftfreq`) and shifts (`fftshift`, `ifftshift`). The
transforms run in the `fft` family of the tensor's backend: NumPy's pocketfft on the CPU;
on CUDA, for now, a round trip through the host (no cuFFT binding yet).

>>> import ember_tensor as torch
>>> x = torch.tensor([1., 2., 3., 4.])
>>> torch.fft.ifft(torch.fft.fft(x)).real
tensor([1., 2., 3., 4.])
"""
from .._ops.fft.frequencies import fftfreq, fftshift, ifftshift, rfftfreq
from .._ops.fft.transforms import (
    fft, fft2, fftn, hfft, hfft2, hfftn, ifft, ifft2, ifftn, ihfft, ihfft2, ihfftn, irfft, irfft2, irfftn, rfft,
    rfft2, rfftn,
)

__all__ = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fft2", "ifft2", "rfft2", "irfft2", "hfft2", "ihfft2",
           "fftn", "ifftn", "rfftn", "irfftn", "hfftn", "ihfftn", "fftfreq", "rfftfreq", "fftshift", "ifftshift"]
