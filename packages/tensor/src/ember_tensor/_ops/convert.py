"""Copies and conversions: clone, contiguous, copy_, fill_, to(), type(), detach."""
import builtins
import warnings

from .. import _backends
from .. import _dtype as D
from .._device import CPU, device as _device_cls, to_device
from .._dispatch import op
from .._tensor import Storage, Tensor
from . import _iter
from .views import make_view


@op()
def clone(self, *, memory_format=None):
    """A copy with its own storage (contiguous)."""
    backend = _backends.get(self._device)
    data = backend.storage.empty(tuple(self._data.shape), self._data.dtype)
    backend.storage.copy_(data, self._data)
    return Tensor._wrap(data, self._dtype, self._device)


@op()
def contiguous(self, memory_format=None):
    """self if already contiguous, else a contiguous copy."""
    if _backends.get(self._device).storage.is_contiguous(self._data):
        return self
    return clone(self)


@op("copy_", inplace=True)
def copy_(self, src, non_blocking=False):
    """Copy `src` into self, broadcasting it and converting dtype and device."""
    if not isinstance(src, Tensor):
        raise TypeError(f"copy_(): argument 'other' (position 1) must be Tensor, not {type(src).__name__}")
    shape = tuple(self._data.shape)
    if tuple(src._data.shape) != shape:
        _iter.broadcast_shapes(shape, tuple(src._data.shape))
        if _iter.broadcast_shapes(shape, tuple(src._data.shape)) != shape:
            raise RuntimeError(
                f"output with shape {list(shape)} doesn't match the broadcast shape "
                f"{list(_iter.broadcast_shapes(shape, tuple(src._data.shape)))}")
    _warn_if_discarding_imag(src._dtype, self._dtype)
    backend = _backends.get(self._device)
    data = src._data
    if src._device != self._device:
        # Cross-device copies go through host memory.
        data = backend.storage.adopt(src._host_numpy(), non_blocking)
    if tuple(data.shape) != shape:
        data = backend.storage.broadcast_to(data, shape)
    backend.storage.copy_(self._data, data)
    self._bump_version()
    return self


@op("fill_", inplace=True)
def fill_(self, value):
    """Set every element to `value` (a number or a 0-d tensor)."""
    if isinstance(value, Tensor):
        if value._data.ndim:
            raise RuntimeError(
                f"fill_ only supports 0-dimension value tensor but got tensor with "
                f"{value._data.ndim} dimensions.")
        value = value.item()
    _backends.get(self._device).storage.fill_(self._data, _iter.scalar_of(value, self._dtype)
                                      if self._dtype.category == D._INT else value)
    self._bump_version()
    return self


@op("zero_", inplace=True)
def zero_(self):
    """Set every element to zero."""
    return fill_(self, 0)


def _warn_if_discarding_imag(src, dst):
    if src.category == D._COMPLEX and dst.category != D._COMPLEX:
        warnings.warn("Casting complex values to real discards the imaginary part", UserWarning, stacklevel=4)


def _convert(self, dtype, device, copy=False, non_blocking=False):
    if dtype is self._dtype and device == self._device and not copy:
        return self
    _warn_if_discarding_imag(self._dtype, dtype)
    storage = _backends.get(device).storage
    if device == self._device:
        data = storage.empty(tuple(self._data.shape), dtype.np)
        storage.copy_(data, self._data)
    else:  # across devices through host memory (a CPU target adopts a fresh host copy)
        host = self._host_numpy()
        if host.dtype != dtype.np:
            host = _backends.get(CPU).storage.astype(host, dtype.np)
        data = storage.adopt(host, non_blocking)
    return Tensor._wrap(data, dtype, device)


@op()
def to(self, *args, dtype=None, device=None, non_blocking=False, copy=False, memory_format=None):
    """Convert dtype and/or device: ``x.to('cuda')``, ``x.to(float64)``, ``x.to(other)``.

    Returns self when nothing changes (and `copy` is False).
    """
    for a in args:
        if isinstance(a, D.dtype):
            dtype = a
        elif isinstance(a, (str, _device_cls, builtins.int)):  # int, float, bool are casters below
            device = a
        elif isinstance(a, Tensor):
            dtype, device = a._dtype, a._device
        elif a is not None:
            raise TypeError(f"to() received an invalid combination of arguments - got ({type(a).__name__})")
    dtype = self._dtype if dtype is None else D.to_dtype(dtype)
    device = self._device if device is None else _backends.resolve(to_device(device))
    return _convert(self, dtype, device, copy, non_blocking)


def _caster(dtype):
    def cast(self, memory_format=None):
        return to(self, dtype)
    cast.__name__ = dtype.name
    cast.__doc__ = f"self converted to {dtype} (self if it already is)."
    return cast


float = _caster(D.float32)  # noqa: A001
double = _caster(D.float64)
half = _caster(D.float16)
bfloat16 = _caster(D.bfloat16)
cfloat = _caster(D.complex64)
cdouble = _caster(D.complex128)
chalf = _caster(D.complex32)
int = _caster(D.int32)  # noqa: A001
long = _caster(D.int64)
short = _caster(D.int16)
char = _caster(D.int8)
byte = _caster(D.uint8)
bool = _caster(D.bool)  # noqa: A001


def cpu(self, memory_format=None):
    """A copy on the CPU (self if already there)."""
    return to(self, device="cpu")


def cuda(self, device=None, non_blocking=False, memory_format=None):
    """A copy on a CUDA device (the current one by default)."""
    if device is None:
        device = "cuda"
    elif isinstance(device, builtins.int):
        device = f"cuda:{device}"
    return to(self, device=device, non_blocking=non_blocking)


_TYPE_NAMES = {}


# PyTorch's legacy type names: torch.FloatTensor on the CPU, torch.cuda.FloatTensor on CUDA.
_TYPE_PREFIX = {"cpu": "torch.", "cuda": "torch.cuda."}


def type(self, dtype=None, non_blocking=False):  # noqa: A001
    """Without arguments: the type string ('torch.FloatTensor'); with one: convert."""
    if dtype is None:
        return _TYPE_PREFIX[self._device.type] + self._dtype._tensor_type
    if isinstance(dtype, str):
        name = dtype.rsplit(".", 1)[-1]
        for d in D.ALL_DTYPES:
            if d._tensor_type == name:
                dev = "cuda" if ".cuda." in dtype else "cpu"
                return to(self, d, device=dev if dev != self._device.type else self._device)
        raise ValueError(f"invalid type: '{dtype}'")
    if hasattr(dtype, "dtype") and hasattr(dtype, "device_type"):
        return to(self, dtype.dtype, device=dtype.device_type)
    return to(self, D.to_dtype(dtype))


def type_as(self, other):
    """self converted to `other`'s dtype."""
    return to(self, other._dtype)


@op(view=True)
def detach(self):
    """A tensor sharing storage with self but cut out of the autograd graph."""
    return make_view(self, self._data.shape, self.stride(), self.storage_offset())


@op("detach_", inplace=True)
def detach_(self):
    """Cut self out of the autograd graph in place."""
    self._grad_fn = None
    self._requires_grad = False
    return self


def _get_data(self):
    # Same memory, but its own version counter: in-place changes through .data are not
    # seen by autograd's saved-tensor checks (the 0.4 migration guide's .data example).
    storage = Storage(self._storage.buf)  # a plain one even for a StorageAlias's view
    t = Tensor._wrap(self._data, self._dtype, self._device, storage, self._offset)
    return t


def _set_data(self, new):
    if not isinstance(new, Tensor):
        raise TypeError(f"Expected Tensor, got {type(new).__name__}")
    self._data = new._data
    self._storage = new._storage
    self._offset = new._offset
    self._dtype = new._dtype
    self._device = new._device


data = property(_get_data, _set_data, doc="The tensor's values, detached from autograd (shares storage).")
