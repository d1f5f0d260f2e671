"""Shared machinery for elementwise ops: broadcasting, dtype plans, out= handling.

This is the device-independent half of PyTorch's TensorIterator; the device half
(merging dims, choosing contiguous/scalar/strided loops) lives in each backend.
"""
import numpy as np

from .. import _backends
from .. import _dtype as D
from .._device import CPU
from .._tensor import Tensor

# Dtypes that kernels compute in a wider type (`compute_dtype`).
LOW_PRECISION = _LOW_PRECISION = frozenset((D.float16, D.bfloat16, D.complex32) + D.FLOAT8_DTYPES)


def broadcast_shapes(*shapes):
    """The shape that `shapes` broadcast to, with PyTorch's error when they don't.

    Like TensorIterator, shapes are folded in left to right and each pair is compared
    from the last dimension backward, so the error names the last mismatching dimension.
    """
    if len(shapes) == 2 and shapes[0] == shapes[1]:
        return tuple(shapes[0])
    result = ()
    for shape in shapes:
        result = _broadcast_pair(result, tuple(shape))
    return result


def broadcast_shapes_public(*shapes):
    """``torch.broadcast_shapes``: the common shape of `shapes` (ints or sequences of ints).

    >>> broadcast_shapes_public((2,), (3, 1), (1, 1, 1))
    torch.Size([1, 3, 2])
    """
    from .._size import Size
    shapes = tuple((x,) if isinstance(x, int) else x for x in shapes if x is not None)
    if not shapes:
        return Size(())
    for shape in shapes:
        if not isinstance(shape, (tuple, list)):
            raise RuntimeError(
                f"Input shapes should be of type ints, a tuple of ints, or a list of ints, got {shape}")
    common = [1] * max(len(shape) for shape in shapes)
    # PyTorch's own (Python) algorithm, and so its message, which differs from TensorIterator's.
    for index, shape in enumerate(shapes):
        for i in range(-1, -1 - len(shape), -1):
            if shape[i] == common[i]:
                continue
            if common[i] == 1:
                if shape[i] < 0:
                    raise ValueError("Attempting to broadcast a dimension with negative length!")
                common[i] = shape[i]
            if shape[i] != 1 and common[i] != shape[i]:
                raise RuntimeError(
                    f"Attempting to broadcast a dimension of length {shape[i]} at {i}! Mismatching argument "
                    f"at index {index} had {shape}; but expected shape should be broadcastable to {common}")
    return Size(common)


def _broadcast_pair(a, b):
    if a == b:
        return a
    ndim = max(len(a), len(b))
    out = [1] * ndim
    for i in range(ndim - 1, -1, -1):
        offset = ndim - 1 - i
        size_a = a[len(a) - 1 - offset] if offset < len(a) else 1
        size_b = b[len(b) - 1 - offset] if offset < len(b) else 1
        if size_a != size_b and size_a != 1 and size_b != 1:
            raise RuntimeError(f"The size of tensor a ({size_a}) must match the size of tensor b ({size_b}) "
                               f"at non-singleton dimension {i}")
        out[i] = size_b if size_a == 1 else size_a
    return tuple(out)


def compute_dtype(d):
    """Kernels compute float16/bfloat16/float8 in float32 and complex32 in complex64
    (NumPy/Numba have no fast half math, and no complex32 at all)."""
    if d in _LOW_PRECISION:
        return D.complex64 if d is D.complex32 else D.float32
    return d


def common_device(operands):
    """The device of the tensor operands; PyTorch's error when they differ.

    A CPU 0-d tensor may meet a CUDA tensor, as in PyTorch (it acts like a scalar).
    """
    device = None
    for x in operands:
        if isinstance(x, Tensor):
            d = x._device
            if device is d or device is None or device == d:
                device = d
            elif d == CPU and x._data.ndim == 0:
                continue
            elif device == CPU and device is not d and _all_cpu_scalars(operands, device):
                device = d
            else:
                raise RuntimeError(
                    "Expected all tensors to be on the same device, but found at least two "
                    f"devices, {device} and {d}!")
    return CPU if device is None else device


def _all_cpu_scalars(operands, device):
    return all(x._data.ndim == 0 for x in operands if isinstance(x, Tensor) and x._device == device)


def operand_array(x, dtype, device, shape):
    """`x` (tensor or Python scalar) as a backend array/scalar of `dtype` ready for a kernel.

    Tensors are cast (a copy) when their dtype differs and get stride-0 dims where they
    broadcast; Python scalars become NumPy scalars of `dtype`.
    """
    if not isinstance(x, Tensor):
        return scalar_of(x, dtype)
    arr = x._data
    if x._device != device:  # a CPU 0-d tensor used with a CUDA tensor
        return scalar_of(x.item(), dtype)
    backend = _backends.get(device)
    if arr.dtype != dtype.np:
        arr = backend.storage.astype(arr, dtype.np)
    if arr.shape != shape and arr.ndim:
        arr = backend.storage.broadcast_to(arr, shape)
    return arr


def scalar_of(value, dtype):
    """Python number -> NumPy scalar of `dtype`, wrapping integers like a C cast would."""
    if isinstance(value, Tensor):
        value = value.item()
    if dtype.category == D._INT:
        if isinstance(value, float):
            value = int(value)
        return np.array(value, dtype=np.int64 if value < 2 ** 63 else np.uint64).astype(dtype.np)[()]
    return dtype.np.type(value)


def check_inplace_shape(target, shape):
    """In-place ops may not change their target's shape (PyTorch's error)."""
    if tuple(target._data.shape) != shape:
        raise RuntimeError(
            f"output with shape {list(target._data.shape)} doesn't match the broadcast shape "
            f"{list(shape)}")


def check_out_cast(result_dtype, out_dtype):
    """`out=` (and in-place) may not downgrade the result's kind (float into an int tensor)."""
    if not D.can_cast(result_dtype, out_dtype):
        raise RuntimeError(
            f"result type {_scalar_type_name(result_dtype)} can't be cast to the desired output "
            f"type {_scalar_type_name(out_dtype)}")


def _scalar_type_name(d):
    return D.scalar_type_name(d)


def type_name(d):
    """PyTorch's scalar type name used in error messages ('Float', 'Long', ...)."""
    return _scalar_type_name(d)


def run_kernel(kind, name, arrays, shape, kernel_dtype, result_dtype, device, out=None,
               out_kernel_dtype=None):
    """Run elementwise kernel `name` and return the result tensor (or fill `out`).

    `arrays` are operands already prepared by `operand_array`; the kernel writes
    `out_kernel_dtype` (default `kernel_dtype`) and the result is `result_dtype`.
    """
    backend = _backends.get(device)
    out_kernel_dtype = out_kernel_dtype or kernel_dtype
    run = getattr(backend.elementwise, kind)
    direct = (out is not None and out._data.dtype == out_kernel_dtype.np
              and tuple(out._data.shape) == shape)
    if direct:
        run(name, *arrays, out._data)
        out._bump_version()
        return out
    tmp = backend.storage.empty(shape, out_kernel_dtype.np)
    run(name, *arrays, tmp)
    if out is None:
        if result_dtype is not out_kernel_dtype:
            tmp = backend.storage.astype(tmp, result_dtype.np)
        return Tensor._wrap(tmp, result_dtype, device)
    backend.storage.copy_(out._data, tmp)
    out._bump_version()
    return out


def resize_out(out, shape):
    """Make `out` hold `shape` (PyTorch resizes an `out=` tensor of the wrong shape)."""
    if tuple(out._data.shape) != shape:
        if out._data.size != 0:
            import warnings
            warnings.warn(
                f"An output with one or more elements was resized since it had shape "
                f"{list(out._data.shape)}, which does not match the required output shape "
                f"{list(shape)}. This behavior is deprecated, and in a future PyTorch release "
                "outputs will not be resized unless they have zero elements. You can explicitly "
                "reuse an out tensor t by resizing it, inplace, to zero elements with t.resize_(0).",
                UserWarning,
                stacklevel=4)
        backend = _backends.get(out._device)
        data = backend.storage.empty(shape, out._data.dtype)
        out._data = data
        out._storage.buf = data
        out._offset = 0
    return out
