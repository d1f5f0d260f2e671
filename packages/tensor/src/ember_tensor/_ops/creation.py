"""Tensor creation: tensor(), from_numpy, zeros/ones/full/empty, ranges, eye, *_like,
new_*, and the legacy constructors (Tensor(2, 3), FloatTensor, LongTensor([...]))."""
import math
import warnings

import numpy as np

from .. import _backends
from .. import _dtype as D
from .._device import CPU, get_default_device, to_device
from .._dispatch import op
from .._size import Size
from .._tensor import Tensor, _contiguous_buffer, set_requires_grad


def parse_shape(args, fn="empty"):
    """Accept shapes as varargs ints, one tuple/list/Size, or nothing: ``zeros(2, 3)``."""
    if len(args) == 1 and isinstance(args[0], (tuple, list, Size)):
        args = tuple(args[0])
    shape = []
    for n in args:
        if isinstance(n, Tensor):
            n = n.__index__()
        if not isinstance(n, (int, np.integer)) or isinstance(n, bool):
            raise TypeError(
                f"{fn}(): argument 'size' must be tuple of ints, but found element of type "
                f"{type(n).__name__} at pos {len(shape)}")
        if n < 0:
            raise RuntimeError(
                f"Trying to create tensor with negative dimension {n}: {list(args)}")
        shape.append(int(n))
    return tuple(shape)


def _finish(data, dtype, device, requires_grad):
    t = Tensor._wrap(data, dtype, device)
    if requires_grad:
        set_requires_grad(t, True)
    return t


def from_host(arr, dtype, device=CPU, requires_grad=False):
    """A new tensor holding a copy of host NumPy array `arr` converted to `dtype`."""
    device = to_device(device)
    host = _backends.get(CPU).storage.astype(np.asarray(arr), dtype.np)  # a copy, as complex32 needs too
    arr = _backends.get(device).storage.adopt(host)
    return _finish(arr, dtype, device, requires_grad)


def _infer_dtype(data):
    """The dtype torch.tensor(data) picks: bool, int64, the default float or the default
    complex (complex64 unless the default float is float64)."""
    if isinstance(data, Tensor):
        return data._dtype
    if isinstance(data, np.ndarray):
        return D.from_numpy_dtype(data.dtype)
    if isinstance(data, np.generic):
        return D.from_numpy_dtype(data.dtype)
    kinds = set()
    _collect_kinds(data, kinds)
    if "c" in kinds:
        return D.default_complex_dtype()
    if "f" in kinds:
        return D.get_default_dtype()
    if "i" in kinds:
        return D.int64
    if "b" in kinds:
        return D.bool
    return D.get_default_dtype()  # empty lists are float


def _collect_kinds(data, kinds):
    if isinstance(data, bool) or isinstance(data, np.bool_):
        kinds.add("b")
    elif isinstance(data, (int, np.integer)):
        kinds.add("i")
    elif isinstance(data, (float, np.floating)):
        kinds.add("f")
    elif isinstance(data, (complex, np.complexfloating)):
        kinds.add("c")
    elif isinstance(data, Tensor):
        kinds.add({D._BOOL: "b", D._INT: "i", D._FLOAT: "f", D._COMPLEX: "c"}[data._dtype.category])
    elif isinstance(data, np.ndarray):
        kinds.add({"b": "b", "i": "i", "u": "i", "f": "f", "c": "c"}.get(data.dtype.kind, "f"))
    elif isinstance(data, (list, tuple)):
        for x in data:
            _collect_kinds(x, kinds)
    else:
        raise TypeError(f"Could not infer dtype of {type(data).__name__}")


def _to_host_array(data, dtype):
    if isinstance(data, Tensor):
        return data._host_numpy()
    if isinstance(data, (list, tuple)):
        _check_rectangular(data)
        if any(isinstance(x, Tensor) for x in _flat_items(data)):
            data = _replace_tensors(data)
    # Integers are read exactly first (then wrapped by the cast); complex32 goes through
    # complex64, which NumPy can parse.
    np_dtype = None if dtype.category == D._INT else np.complex64 if dtype is D.complex32 else dtype.np
    try:
        return np.array(data, dtype=np_dtype)
    except OverflowError:
        raise RuntimeError("Overflow when unpacking long") from None


def _flat_items(data):
    for x in data:
        if isinstance(x, (list, tuple)):
            yield from _flat_items(x)
        else:
            yield x


def _replace_tensors(data):
    if isinstance(data, Tensor):
        return data._host_numpy()
    if isinstance(data, (list, tuple)):
        return [_replace_tensors(x) for x in data]
    return data


def _check_rectangular(data, dim=0):
    # PyTorch's message for ragged nested lists.
    if not data or not isinstance(data[0], (list, tuple)):
        for x in data:
            if isinstance(x, (list, tuple)):
                raise ValueError(f"expected sequence of length {len(data)} at dim {dim} (got {len(x)})")
        return
    n = len(data[0])
    for x in data:
        if not isinstance(x, (list, tuple)):
            raise TypeError(f"not a sequence")
        if len(x) != n:
            raise ValueError(f"expected sequence of length {n} at dim {dim + 1} (got {len(x)})")
    for x in data:
        _check_rectangular(x, dim + 1)


def tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """A new tensor holding a copy of `data` (nested lists, numbers, NumPy arrays).

    >>> tensor([1, 2.3]).dtype
    torch.float32
    """
    if isinstance(data, Tensor):
        warnings.warn(
            "To copy construct from a tensor, it is recommended to use sourceTensor.detach().clone() "
            "or sourceTensor.detach().clone().requires_grad_(True), rather than "
            "torch.tensor(sourceTensor).", UserWarning, stacklevel=2)
    dtype = _infer_dtype(data) if dtype is None else D.to_dtype(dtype)
    if device is None and isinstance(data, Tensor) and get_default_device() == CPU:
        device = data._device  # a tensor's copy stays on its device, unless a default device was set
    arr = _to_host_array(data, dtype)
    return from_host(arr, dtype, to_device(device), requires_grad)


def as_tensor(data, dtype=None, device=None):
    """Like `tensor` but shares memory with `data` when dtype and device allow."""
    if isinstance(data, Tensor):
        return data.to(dtype=dtype, device=device) if (dtype or device) else data
    if isinstance(data, np.ndarray) and to_device(device) == CPU:
        t = from_numpy(data)
        return t if dtype is None else t.to(D.to_dtype(dtype))
    return tensor(data, dtype=dtype, device=device)


asarray = as_tensor


def from_numpy(ndarray):
    """A CPU tensor sharing memory with NumPy array `ndarray` (writes show on both sides)."""
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    dtype = D.from_numpy_dtype(ndarray.dtype)
    if any(s < 0 for s in ndarray.strides):
        raise ValueError(
            "At least one stride in the given numpy array is negative, and tensors with negative "
            "strides are not currently supported. (You can probably work around this by making a "
            "copy of your array  with array.copy().) ")
    if not ndarray.flags.writeable:
        warnings.warn(
            "The given NumPy array is not writable, and PyTorch does not support non-writable "
            "tensors. This means writing to this tensor will result in undefined behavior.",
            UserWarning, stacklevel=2)
    if ndarray.dtype.byteorder == ">":
        raise TypeError("given numpy array has byte order different from the native byte order. "
                        "Conversion between byte orders is currently not supported.")
    t = Tensor._wrap(ndarray, dtype, CPU)
    t._storage.buf = _contiguous_buffer(ndarray) if ndarray.size else ndarray.reshape(-1)
    return t


def frombuffer(buffer, *, dtype, count=-1, offset=0, requires_grad=False):
    """A 1-d CPU tensor over the bytes of `buffer` (any object with the buffer protocol),
    skipping `offset` bytes and reading `count` elements of `dtype` (-1: all that remain).
    The tensor shares the buffer's memory, as PyTorch's does.

    >>> import ember_tensor as torch
    >>> torch.frombuffer(bytearray(b"\\x01\\x00\\x02\\x00"), dtype=torch.int16).tolist()
    [1, 2]
    """
    dtype = D.to_dtype(dtype)
    view = memoryview(buffer)
    length = view.nbytes
    size = dtype.itemsize
    if length <= 0 and count != 0:
        raise ValueError(f"both buffer length ({length}) and count ({count}) must not be 0")
    if offset < 0 or offset > length - 1:
        raise ValueError(f"offset ({offset} bytes) must be non-negative and no greater than buffer length "
                         f"({length} bytes) minus 1")
    if count < 0:
        if (length - offset) % size:
            raise ValueError(f"buffer length ({length - offset} bytes) after offset ({offset} bytes) must be a "
                             f"multiple of element size ({size})")
        count = (length - offset) // size
    elif offset + count * size > length:
        raise ValueError(f"requested buffer length ({count} * {size} bytes) after offset ({offset} bytes) must "
                         f"not be greater than actual buffer length ({length} bytes)")
    if view.readonly:
        warnings.warn("The given buffer is not writable, and PyTorch does not support non-writable tensors. This "
                      "means you can write to the underlying (supposedly non-writable) buffer using the tensor. You "
                      "may want to copy the buffer to protect its data or make it writable before converting it to "
                      "a tensor. This type of warning will be suppressed for the rest of this program.",
                      UserWarning, stacklevel=2)
    # Read-only bytes give a read-only array: a write raises NumPy's error where PyTorch's
    # behaviour is undefined.
    array = np.frombuffer(view.cast("B"), dtype=dtype.np, count=count, offset=offset)
    t = Tensor._wrap(array, dtype, CPU)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _filled(shape, value, dtype, device, requires_grad):
    device = to_device(device)
    backend = _backends.get(device)
    data = backend.storage.empty(shape, dtype.np)
    if value is not None:
        backend.storage.fill_(data, value)
    return _finish(data, dtype, device, requires_grad)


def _dtype_or_default(dtype):
    return D.get_default_dtype() if dtype is None else D.to_dtype(dtype)


def empty(*size, out=None, dtype=None, layout=None, device=None, requires_grad=False,
          pin_memory=False, memory_format=None):
    """An uninitialised tensor of shape `size`."""
    return _filled(parse_shape(size, "empty"), None, _dtype_or_default(dtype), device, requires_grad)


def zeros(*size, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """A tensor of zeros: ``zeros(2, 3)`` or ``zeros((2, 3))``."""
    result = _filled(parse_shape(size, "zeros"), 0, _dtype_or_default(dtype), device, requires_grad)
    return _into(out, result)


def ones(*size, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """A tensor of ones."""
    result = _filled(parse_shape(size, "ones"), 1, _dtype_or_default(dtype), device, requires_grad)
    return _into(out, result)


def _into(out, result):
    if out is None:
        return result
    from .elementwise import copy_to_out
    return copy_to_out(result, out)


def _fill_dtype(fill_value):
    if isinstance(fill_value, Tensor):
        return fill_value._dtype
    return D.scalar_dtype(fill_value) if not isinstance(fill_value, float) else D.get_default_dtype()


def full(size, fill_value, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """A tensor of shape `size` filled with `fill_value` (its dtype inferred from the value)."""
    dtype = _fill_dtype(fill_value) if dtype is None else D.to_dtype(dtype)
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    return _into(out, _filled(parse_shape((size,), "full"), fill_value, dtype, device, requires_grad))


def empty_strided(size, stride, *, dtype=None, device=None, requires_grad=False):
    """An uninitialised tensor with explicit strides."""
    size, stride = tuple(size), tuple(stride)
    span = 1 + sum((n - 1) * s for n, s in zip(size, stride)) if all(size) else 0
    base = empty(span, dtype=dtype, device=device)
    return base.as_strided(size, stride).detach().requires_grad_(requires_grad) if requires_grad else base.as_strided(size, stride)


def _like_kwargs(input, dtype, device):
    return (input._dtype if dtype is None else D.to_dtype(dtype),
            input._device if device is None else to_device(device))


def empty_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None):
    """An uninitialised tensor shaped like `input`."""
    dtype, device = _like_kwargs(input, dtype, device)
    return _filled(tuple(input._data.shape), None, dtype, device, requires_grad)


def zeros_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None):
    """Zeros shaped like `input`."""
    dtype, device = _like_kwargs(input, dtype, device)
    return _filled(tuple(input._data.shape), 0, dtype, device, requires_grad)


def ones_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None):
    """Ones shaped like `input`."""
    dtype, device = _like_kwargs(input, dtype, device)
    return _filled(tuple(input._data.shape), 1, dtype, device, requires_grad)


def full_like(input, fill_value, *, dtype=None, layout=None, device=None, requires_grad=False,
              memory_format=None):
    """`fill_value` everywhere, shaped like `input`."""
    dtype, device = _like_kwargs(input, dtype, device)
    return _filled(tuple(input._data.shape), fill_value, dtype, device, requires_grad)


def _range_dtype(values, dtype):
    if dtype is not None:
        return D.to_dtype(dtype)
    if any(isinstance(v, float) or (isinstance(v, Tensor) and v.is_floating_point()) for v in values):
        return D.get_default_dtype()
    return D.int64


def arange(start=0, end=None, step=1, *, out=None, dtype=None, layout=None, device=None,
           requires_grad=False):
    """Values from `start` to `end` (exclusive) spaced by `step`: ``arange(5)``."""
    if end is None:
        start, end = 0, start
    start, end, step = (v.item() if isinstance(v, Tensor) else v for v in (start, end, step))
    dtype = _range_dtype((start, end, step), dtype)
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (end - start) / step < 0:
        raise RuntimeError("upper bound and larger bound inconsistent with step sign")
    n = max(0, math.ceil((end - start) / step))
    values = start + np.arange(n, dtype=np.float64 if dtype.category == D._FLOAT else np.int64) * step
    return _into(out, from_host(values, dtype, device, requires_grad))


def range(start=0, end=None, step=1, *, dtype=None, device=None, requires_grad=False):  # noqa: A001
    """Deprecated inclusive range (end included), as torch.range."""
    if end is None:
        start, end = 0, start
    warnings.warn("torch.range is deprecated and will be removed in a future release because its "
                  "behavior is inconsistent with Python's range builtin. Instead, use torch.arange, "
                  "which produces values in [start, end).", UserWarning, stacklevel=2)
    n = int(math.floor((end - start) / step)) + 1
    values = start + np.arange(n, dtype=np.float64) * step
    return from_host(values, _dtype_or_default(dtype), device, requires_grad)


def linspace(start, end, steps, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """`steps` evenly spaced values from `start` to `end` inclusive."""
    start, end = (v.item() if isinstance(v, Tensor) else v for v in (start, end))
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    dtype = _dtype_or_default(dtype)
    values = _symmetric_linspace(start, end, steps)
    if dtype.category == D._INT:
        values = np.trunc(values)
    return _into(out, from_host(values, dtype, device, requires_grad))


def _symmetric_linspace(start, end, steps):
    # PyTorch fills the first half from `start` and the second half from `end`, so both
    # endpoints are exact.
    if steps == 1:
        return np.array([start], dtype=np.float64)
    step = (end - start) / (steps - 1)
    i = np.arange(steps, dtype=np.float64)
    half = steps // 2
    return np.where(i < half, start + step * i, end - step * (steps - 1 - i))


def logspace(start, end, steps, base=10.0, *, out=None, dtype=None, layout=None, device=None,
             requires_grad=False):
    """`steps` values from base**start to base**end, evenly spaced in the exponent."""
    dtype = _dtype_or_default(dtype)
    values = np.power(base, _symmetric_linspace(start, end, steps))
    return _into(out, from_host(values, dtype, device, requires_grad))


def eye(n, m=None, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """An n x m matrix with ones on the diagonal."""
    if n < 0:
        raise RuntimeError(f"n must be greater or equal to 0, got {n}")
    m = n if m is None else m
    return _into(out, from_host(np.eye(n, m), _dtype_or_default(dtype), device, requires_grad))


def scalar_tensor(s, *, dtype=None, device=None, requires_grad=False):
    """A 0-d tensor holding `s` (default float dtype)."""
    return from_host(np.array(s), _dtype_or_default(dtype), device, requires_grad)


# --- Tensor.new_* -----------------------------------------------------------------------


def _new_kwargs(self, dtype, device):
    return (self._dtype if dtype is None else D.to_dtype(dtype),
            self._device if device is None else to_device(device))


def new_tensor(self, data, *, dtype=None, device=None, requires_grad=False):
    """A new tensor from `data` with this tensor's dtype and device by default."""
    dtype, device = _new_kwargs(self, dtype, device)
    return tensor(data.detach() if isinstance(data, Tensor) else data, dtype=dtype,
                  device=device, requires_grad=requires_grad)


def new_empty(self, *size, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False):
    """Uninitialised, with this tensor's dtype and device by default."""
    dtype, device = _new_kwargs(self, dtype, device)
    return _filled(parse_shape(size), None, dtype, device, requires_grad)


def new_zeros(self, *size, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False):
    """Zeros, with this tensor's dtype and device by default."""
    dtype, device = _new_kwargs(self, dtype, device)
    return _filled(parse_shape(size), 0, dtype, device, requires_grad)


def new_ones(self, *size, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False):
    """Ones, with this tensor's dtype and device by default."""
    dtype, device = _new_kwargs(self, dtype, device)
    return _filled(parse_shape(size), 1, dtype, device, requires_grad)


def new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False, layout=None,
             pin_memory=False):
    """`fill_value` everywhere, with this tensor's dtype and device by default."""
    dtype, device = _new_kwargs(self, dtype, device)
    return _filled(parse_shape((size,)), fill_value, dtype, device, requires_grad)


# --- legacy constructors ------------------------------------------------------------------


def legacy_new(cls, dtype, args, kwargs, device=CPU):
    """``Tensor(2, 3)``, ``FloatTensor([1, 2])``, ``LongTensor(torch.Size([2]))``, ``Tensor()``."""
    device = to_device(kwargs.pop("device", device))
    if kwargs:
        raise TypeError(f"new() received an invalid combination of arguments - got unexpected "
                        f"keyword arguments {sorted(kwargs)}")
    if not args:
        t = _filled((0,), None, dtype, device, False)
    elif len(args) == 1 and isinstance(args[0], Tensor):
        src = args[0]
        if src._dtype is not dtype:
            raise TypeError(f"expected {dtype} (got {src._dtype})")
        return src
    elif len(args) == 1 and isinstance(args[0], (list, tuple, np.ndarray)) and not isinstance(args[0], Size):
        t = from_host(_to_host_array(args[0], dtype), dtype, device)
    else:
        t = _filled(parse_shape(args, "new"), None, dtype, device, False)
    if cls is not Tensor and issubclass(cls, Tensor) and cls is not type(t) and \
            cls.__new__ is Tensor.__new__:
        t.__class__ = cls
    return t


class _LegacyTensorType(type):
    """Metaclass of FloatTensor & co: ``isinstance(x, DoubleTensor)`` checks the dtype."""

    def __instancecheck__(cls, obj):
        return (isinstance(obj, Tensor) and obj._dtype is cls.dtype
                and obj._device.type == cls.device_type)

    def __call__(cls, *args, **kwargs):
        return legacy_new(Tensor, cls.dtype, args, dict(kwargs, device=kwargs.get("device", cls.device_type)))

    def __repr__(cls):
        return f"<class '{cls.__module__}.{cls.__name__}'>"


# The dtypes with a legacy constructor (torch.FloatTensor ...): PyTorch has none for the
# complex and float8 dtypes.
LEGACY_DTYPES = (D.float16, D.bfloat16, D.float32, D.float64, D.int8, D.int16, D.int32, D.int64, D.uint8, D.bool)


def _legacy_types(device_type, module):
    types = {}
    for d in LEGACY_DTYPES:
        name = d._tensor_type
        types[name] = _LegacyTensorType(name, (), {"dtype": d, "device_type": device_type,
                                                  "__module__": module,
                                                  "__doc__": f"Legacy constructor for {d} tensors."})
    return types


LEGACY_TYPES = _legacy_types("cpu", "torch")


def _rebuild_tensor(array, dtype_name, device, requires_grad):
    t = from_host(array, D._dtype_by_name(dtype_name), device)
    t._requires_grad = requires_grad
    return t
