"""What every public FFT checks and plans before its transform, with PyTorch's errors:
the normalization code of a `norm` string, dtype promotion, dims and signal sizes
(`n`, `s`), and the zero padding or trimming of the input to those sizes.
"""
from ... import _dtype as D
from ..._tensor import wrap_dim
from ..elementwise import copy_to_out
from ..nn.sampling import constant_pad_nd
from .primitives import NORM_BY_N, NORM_BY_ROOT_N, NORM_NONE

__all__ = ["norm_code", "promote", "fft_dim", "shape_and_dims", "c2r_shape_and_dims", "resize", "check_points",
           "check_out", "to_out"]


def norm_code(norm, forward):
    """PyTorch's normalization code for `norm` in the transform's direction: "backward"
    (the default) scales the inverse by 1/n, "forward" the forward one, "ortho" both by
    1/sqrt(n)."""
    if norm is None or norm == "backward":
        return NORM_NONE if forward else NORM_BY_N
    if norm == "forward":
        return NORM_BY_N if forward else NORM_NONE
    if norm == "ortho":
        return NORM_BY_ROOT_N
    raise RuntimeError(f'Invalid normalization mode: "{norm}"')


def promote(input, require_complex=False):
    """`input` in the dtype its transform computes in: integers and bools in the default
    float dtype; float32/float64 (or their complex types, with `require_complex`).
    float16 and bfloat16 are refused, as PyTorch does on the CPU."""
    dtype = input._dtype
    if dtype.category == D._COMPLEX:
        if dtype == D.complex32:
            raise RuntimeError("Unsupported dtype ComplexHalf")
        return input
    if dtype.category != D._FLOAT:
        dtype = D.get_default_dtype()
    if dtype not in (D.float32, D.float64):
        raise RuntimeError(f"Unsupported dtype {D.scalar_type_name(dtype)}")
    if require_complex:
        dtype = dtype.to_complex()
    return input if dtype == input._dtype else input.to(dtype)


def fft_dim(dim, ndim):
    """`dim` wrapped into [0, ndim); a 0-d tensor has no dim to transform."""
    if ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    return wrap_dim(dim, ndim)


def check_points(n):
    if n < 1:
        raise RuntimeError(f"Invalid number of data points ({n}) specified")


def shape_and_dims(input, s, dim):
    """The (signal sizes, dims) of an n-dimensional transform: `s` and `dim` as given,
    dims defaulting to the last len(s) (or all) dims and sizes to the input's, -1 in `s`
    meaning the input's size."""
    ndim = input.dim()
    dims = None
    if dim is not None:
        dims = [fft_dim(d, ndim) for d in ([dim] if isinstance(dim, int) else dim)]
        if len(set(dims)) != len(dims):
            raise RuntimeError("FFT dims must be unique")
    if s is not None:
        s = [s] if isinstance(s, int) else list(s)
        if dims is not None and len(dims) != len(s):
            raise RuntimeError("When given, dim and shape arguments must have the same length")
        if len(s) > ndim:
            raise RuntimeError(f"Got shape with {len(s)} values but input tensor only has {ndim} dimensions.")
        if dims is None:
            dims = list(range(ndim - len(s), ndim))
        sizes = [input.shape[d] if n == -1 else int(n) for n, d in zip(s, dims)]
    else:
        if dims is None:
            dims = list(range(ndim))
        sizes = [input.shape[d] for d in dims]
    for n in sizes:
        check_points(n)
    return sizes, dims


def c2r_shape_and_dims(name, input, s, dim):
    """`shape_and_dims` for a complex-to-real transform: the sizes the onesided input is
    resized to (the last one n//2 + 1) and n, the real output's size along the last dim
    (default 2 * (m - 1) for an input of m points)."""
    sizes, dims = shape_and_dims(input, s, dim)
    if not sizes:
        raise RuntimeError(f"{name} must transform at least one axis")
    if s is None or (not isinstance(s, int) and list(s)[-1] == -1):
        last_size = 2 * (input.shape[dims[-1]] - 1)
    else:
        last_size = sizes[-1]
    check_points(last_size)
    sizes[-1] = last_size // 2 + 1
    return sizes, dims, last_size


def resize(x, dims, sizes):
    """`x` trimmed or zero-padded at the end of each of `dims` to `sizes`."""
    pad = [0] * (2 * x.dim())
    for d, n in zip(dims, sizes):
        size = x.shape[d]
        if n < size:
            x = x.narrow(d, 0, n)
        elif n > size:
            pad[2 * (x.dim() - 1 - d) + 1] = n - size  # constant_pad_nd lists the last dim first
    return constant_pad_nd(x, tuple(pad)) if any(pad) else x


def check_out(name, out, want_complex):
    """PyTorch's check of an `out=` tensor's kind, before any work."""
    if out is None:
        return
    if want_complex and not out.is_complex():
        raise RuntimeError(f"{name} expects a complex output tensor, but got {D.scalar_type_name(out.dtype)}")
    if not want_complex and not out.is_floating_point():
        raise RuntimeError(f"{name} expects a floating point output tensor, but got "
                           f"{D.scalar_type_name(out.dtype)}")


def to_out(result, out):
    return copy_to_out(result, out)
