"""The three transforms every FFT is built from, as in PyTorch (ATen's `_fft_c2c`,
`_fft_r2c`, `_fft_c2r`): each transforms over a list of dims with a normalization code
(0: none, 1: 1/sqrt(n), 2: 1/n, whichever the direction), in the device's `fft` backend
family. The public transforms (`transforms.py`) are compositions of these with padding,
slicing and `conj`, so ember-autograd needs rules for these three only.

>>> import ember_tensor as torch
>>> torch._fft_c2c(torch.tensor([1 + 0j, 0j]), [0], 0, True)
tensor([1.+0.j, 1.+0.j])
"""
from ... import _backends
from ... import _dtype as D
from ..._dispatch import op
from ..._tensor import Tensor

__all__ = ["_fft_c2c", "_fft_r2c", "_fft_c2r", "NORM_NONE", "NORM_BY_ROOT_N", "NORM_BY_N"]

NORM_NONE, NORM_BY_ROOT_N, NORM_BY_N = 0, 1, 2


def _result(arr, dtype, device):
    storage = _backends.get(device).storage
    if arr.dtype != dtype.np:
        arr = storage.astype(arr, dtype.np)
    return Tensor._wrap(storage.contiguous(arr), dtype, device)


def _dims(dim, ndim):
    return tuple(d + ndim if d < 0 else d for d in dim)


@op("_fft_c2c")
def _fft_c2c(input, dim, normalization, forward):
    """Complex-to-complex DFT of complex `input` over `dim` (forward: exp(-2 pi i jk/n))."""
    if input._dtype.category != D._COMPLEX:
        raise RuntimeError(f"_fft_c2c expects a complex input tensor, but got {D.scalar_type_name(input._dtype)}")
    arr = _backends.get(input._device).fft.c2c(input._data, _dims(dim, input.dim()), int(normalization), bool(forward))
    return _result(arr, input._dtype, input._device)


@op("_fft_r2c")
def _fft_r2c(input, dim, normalization, onesided):
    """Forward DFT of real `input` over `dim`; `onesided` keeps the last dim's n//2 + 1
    non-redundant frequencies."""
    if input._dtype not in (D.float32, D.float64):
        raise RuntimeError(f"_fft_r2c expects a real floating point input tensor, but got "
                           f"{D.scalar_type_name(input._dtype)}")
    arr = _backends.get(input._device).fft.r2c(input._data, _dims(dim, input.dim()), int(normalization),
                                               bool(onesided))
    return _result(arr, input._dtype.to_complex(), input._device)


@op("_fft_c2r")
def _fft_c2r(input, dim, normalization, last_dim_size):
    """Inverse DFT of the onesided Hermitian `input` over `dim` to a real tensor with
    `last_dim_size` points along the last of `dim`."""
    if input._dtype.category != D._COMPLEX:
        raise RuntimeError(f"_fft_c2r expects a complex input tensor, but got {D.scalar_type_name(input._dtype)}")
    arr = _backends.get(input._device).fft.c2r(input._data, _dims(dim, input.dim()), int(normalization),
                                               int(last_dim_size))
    return _result(arr, input._dtype.to_real(), input._device)
