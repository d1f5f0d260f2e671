"""The Tensor: a view (shape, strides, offset) on a storage, with a dtype and a device.

On the CPU `_data` is a NumPy view of the storage buffer, so NumPy tracks shape,
strides and offset for us; on CUDA it is a Numba device array view. Views share the
storage and its version counter, which in-place ops bump (autograd checks it).
Ops are attached as methods by the `_ops` modules; this file holds only what every
tensor is, not what can be computed with it.
"""
import numpy as np

from . import _autograd_slot, _backends
from . import _dtype as D
from ._device import CPU, device as _device_cls
from ._size import Size

__all__ = ["Tensor"]


class Storage:
    """The memory behind one or more tensors: a flat buffer and its version counter.

    ``Tensor.untyped_storage()`` returns it; it answers the questions libraries ask of
    PyTorch's UntypedStorage to find tensors sharing memory (``data_ptr``, ``nbytes``,
    ``size``, ``device``), as safetensors.torch does.
    """

    __slots__ = ("buf", "version", "__weakref__")

    def __init__(self, buf):
        self.buf = buf
        self.version = 0

    @property
    def device(self):
        """The device the memory is on."""
        return CPU if isinstance(self.buf, np.ndarray) else _device_cls("cuda")

    def data_ptr(self):
        """Address of the storage's first byte."""
        return _backends.get(self.device).storage.data_ptr(self.buf)

    def nbytes(self):
        """Size of the memory in bytes."""
        return int(self.buf.size) * int(self.buf.itemsize)

    def size(self):
        """Size in bytes, as an untyped storage counts."""
        return self.nbytes()


class StorageAlias(Storage):
    """Another storage's memory read with another element type (a complex tensor's
    ``.real``/``.imag``/``view_as_real``, and ``view_as_complex``): its own buffer object
    over the same memory, and the base storage's version counter, so that writes through
    either side are seen by autograd's checks on both."""

    __slots__ = ("base",)

    def __init__(self, base, buf):
        self.base = base.base if isinstance(base, StorageAlias) else base
        self.buf = buf

    @property
    def version(self):
        return self.base.version

    @version.setter
    def version(self, value):
        self.base.version = value


_new = object.__new__


def _contiguous_buffer(arr):
    """A 1-d view spanning the memory of an ndarray with non-negative strides."""
    if arr.flags.c_contiguous or arr.flags.f_contiguous:
        return arr.reshape(-1, order="A")
    span = 1 + sum((n - 1) * s // arr.itemsize for n, s in zip(arr.shape, arr.strides) if n)
    return np.lib.stride_tricks.as_strided(arr, (span,), (arr.itemsize,))


class Tensor:
    """A multi-dimensional array with PyTorch's API.

    ``Tensor(5, 7, 3)`` is the legacy constructor (uninitialised float tensor of that
    shape); ``Tensor([1, 2])`` copies data; prefer ``ember_tensor.tensor(data)``.
    """

    __slots__ = ("_data", "_storage", "_offset", "_dtype", "_device", "_requires_grad", "_grad",
                 "_grad_fn", "_autograd_meta", "_output_nr", "_view_base", "__dict__",
                 "__weakref__")

    def __new__(cls, *args, **kwargs):
        from ._ops.creation import legacy_new  # creation imports Tensor: import late
        return legacy_new(cls, D.get_default_dtype(), args, kwargs)

    def __init__(self, *args, **kwargs):
        pass

    # -- construction helpers used by every op --------------------------------------

    @classmethod
    def _wrap(cls, data, dtype, device=CPU, storage=None, offset=0):
        """A tensor over backend array `data` (a fresh storage unless `storage` given).

        `offset` is the element offset of `data`'s first element in the storage buffer.
        """
        t = _new(cls)
        t._data = data
        if storage is None:
            # Storage(data), without the Python-level __init__ call: this runs for every
            # op's result.
            storage = _new(Storage)
            storage.buf = data
            storage.version = 0
        t._storage = storage
        t._offset = offset
        t._dtype = dtype
        t._device = device
        t._requires_grad = False
        t._grad = None
        t._grad_fn = None
        t._autograd_meta = None
        t._output_nr = 0
        t._view_base = None
        return t

    def _view_of(self, data, offset):
        """A tensor over `data`, a view of this tensor's storage starting at `offset`."""
        t = Tensor._wrap(data, self._dtype, self._device, self._storage, offset)
        t._view_base = self if self._view_base is None else self._view_base
        return t

    def _bump_version(self):
        self._storage.version += 1

    # -- metadata ----------------------------------------------------------------------

    @property
    def shape(self):
        return Size(self._data.shape)

    def size(self, dim=None):
        """The shape, or the size of dimension `dim`."""
        if dim is None:
            return Size(self._data.shape)
        return self._data.shape[self._wrap_dim(dim)]

    def stride(self, dim=None):
        """Strides in elements, or the stride of dimension `dim`."""
        itemsize = self._dtype.itemsize
        strides = tuple(s // itemsize for s in self._data.strides)
        return strides if dim is None else strides[self._wrap_dim(dim)]

    def storage_offset(self):
        """Offset of the first element from the start of the storage, in elements."""
        return self._offset

    def dim(self):
        """Number of dimensions."""
        return self._data.ndim

    ndimension = dim

    @property
    def ndim(self):
        return self._data.ndim

    def numel(self):
        """Number of elements."""
        return self._data.size

    nelement = numel

    def element_size(self):
        """Bytes per element."""
        return self._dtype.itemsize

    @property
    def itemsize(self):
        return self._dtype.itemsize

    @property
    def nbytes(self):
        return self._data.size * self._dtype.itemsize

    @property
    def dtype(self):
        return self._dtype

    @property
    def device(self):
        return self._device

    @property
    def is_cuda(self):
        return self._device.type == "cuda"

    @property
    def is_cpu(self):
        return self._device.type == "cpu"

    @property
    def is_sparse(self):
        return False

    @property
    def is_quantized(self):
        return False

    @property
    def is_meta(self):
        return False

    def is_floating_point(self):
        """Whether the dtype is a floating type."""
        return self._dtype.category == D._FLOAT

    def is_complex(self):
        """Whether the dtype is a complex type (complex32, complex64, complex128)."""
        return self._dtype.category == D._COMPLEX

    def is_signed(self):
        """Whether the dtype is signed."""
        return self._dtype.is_signed

    def get_device(self):
        """The CUDA device index, or -1 on the CPU."""
        return -1 if self._device.type == "cpu" else (self._device.index or 0)

    def is_contiguous(self, memory_format=None):
        """Whether elements are laid out densely in row-major order."""
        return _backends.get(self._device).storage.is_contiguous(self._data)

    def data_ptr(self):
        """Address of the first element."""
        return _backends.get(self._device).storage.data_ptr(self._data)

    def is_set_to(self, other):
        """Whether both tensors view the same memory with the same shape and strides."""
        return (self._storage is other._storage and self.data_ptr() == other.data_ptr()
                and self.shape == other.shape and self.stride() == other.stride())

    def untyped_storage(self):
        """The Storage object shared by this tensor's views."""
        return self._storage

    @property
    def _version(self):
        return self._storage.version

    def _wrap_dim(self, dim):
        return wrap_dim(dim, self._data.ndim)

    # -- autograd extension point ------------------------------------------------------

    @property
    def requires_grad(self):
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value):
        set_requires_grad(self, value)

    def requires_grad_(self, requires_grad=True):
        """Set `requires_grad` in place and return self."""
        set_requires_grad(self, requires_grad)
        return self

    @property
    def grad(self):
        if self._grad_fn is not None and self._grad is None and not self.retains_grad:
            import warnings
            warnings.warn(
                "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad "
                "attribute won't be populated during autograd.backward(). If you indeed want the .grad "
                "field to be populated for a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. If "
                "you access the non-leaf Tensor by mistake, make sure you access the leaf Tensor instead. "
                "See github.com/pytorch/pytorch/pull/30531 for more information.", UserWarning, stacklevel=2)
        return self._grad

    @grad.setter
    def grad(self, value):
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(f"assigned grad expected to be a Tensor or None but got grad of type {type(value).__name__}")
            if value.shape != self.shape:
                raise RuntimeError("assigned grad has data of a different size")
            if value._dtype is not self._dtype:
                raise RuntimeError("assigned grad has data of a different type")
            if value._device != self._device:
                raise RuntimeError("assigned grad has data located on a different device")
        self._grad = value

    @property
    def grad_fn(self):
        return self._grad_fn

    @property
    def is_leaf(self):
        return self._grad_fn is None

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        """Compute gradients of this tensor w.r.t. graph leaves (needs ember-autograd)."""
        return _autograd_slot.hooks.backward(self, gradient, retain_graph, create_graph, inputs)

    def register_hook(self, hook):
        """Register a hook called with this tensor's gradient (needs ember-autograd)."""
        return _autograd_slot.hooks.register_hook(self, hook)

    def retain_grad(self):
        """Keep .grad on a non-leaf tensor (needs ember-autograd)."""
        return _autograd_slot.hooks.retain_grad(self)

    def register_post_accumulate_grad_hook(self, hook):
        """Call ``hook(tensor)`` after a gradient is accumulated into this leaf's .grad (needs ember-autograd)."""
        return _autograd_slot.hooks.register_post_accumulate_grad_hook(self, hook)

    @property
    def retains_grad(self):
        meta = self._autograd_meta
        return bool(meta is not None and getattr(meta, "retains_grad", False))

    # -- conversion to Python and NumPy ----------------------------------------------

    def numpy(self, *, force=False):
        """The data as a NumPy array, sharing memory on the CPU."""
        if self._requires_grad and not force:
            raise RuntimeError(
                "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.")
        if self._device.type != "cpu":
            if not force:
                raise TypeError(
                    f"can't convert {self._device} device type tensor to numpy. "
                    "Use Tensor.cpu() to copy the tensor to host memory first.")
            return _backends.get(self._device).storage.to_numpy(self._data)
        if self._dtype is D.complex32:  # stored as a structured pair: NumPy has no such type
            raise TypeError("Got unsupported ScalarType ComplexHalf")
        return self._data

    def _host_numpy(self):
        """The values as a NumPy array on the host (a copy for CUDA tensors)."""
        if self._device.type == "cpu":
            return self._data
        return _backends.get(self._device).storage.to_numpy(self._data)

    def __array__(self, dtype=None, copy=None):
        arr = self._host_numpy()
        return arr if dtype is None else arr.astype(dtype, copy=False)

    @property
    def __array_interface__(self):
        if self._device.type != "cpu":
            raise AttributeError("__array_interface__ is only available for CPU tensors")
        return self._data.__array_interface__

    @property
    def __cuda_array_interface__(self):
        """A CUDA tensor's memory for other CUDA libraries (Numba, CuPy ...), no copy."""
        if self._device.type != "cuda":
            raise AttributeError(
                f"Can't get __cuda_array_interface__ on non-CUDA tensor type: {self.type()} "
                "If CUDA data is required use tensor.cuda() to copy tensor to device memory.")
        if self._requires_grad:
            raise RuntimeError(
                "Can't get __cuda_array_interface__ on Variable that requires grad. If gradients "
                "aren't required, use var.detach() to get Variable that doesn't require grad.")
        return _backends.get(self._device).storage.cuda_array_interface(self._data)

    def item(self):
        """The value of a one-element tensor as a Python number."""
        if self._data.size != 1:
            raise RuntimeError(
                f"a Tensor with {self._data.size} elements cannot be converted to Scalar")
        return _python_scalar(self._host_numpy().reshape(-1)[0], self._dtype)

    def tolist(self):
        """The data as (nested) Python lists of numbers."""
        return _host_values(self).tolist()

    def _one_element(self, kind):
        if self._data.size != 1:
            if kind == "bool":
                raise RuntimeError(
                    f"Boolean value of Tensor with more than one value is ambiguous")
            raise RuntimeError(f"only one element tensors can be converted to Python scalars")
        return self.item()

    def __bool__(self):
        return bool(self._one_element("bool"))

    def __int__(self):
        return int(_real_value(self._one_element("int")))

    def __float__(self):
        return float(_real_value(self._one_element("float")))

    def __index__(self):
        if self._dtype.category != D._INT or self._data.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    def __complex__(self):
        return complex(self._one_element("complex"))

    def __len__(self):
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def __iter__(self):
        if self._data.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(self._data.shape[0]))

    def __hash__(self):
        return id(self)

    def __repr__(self, *, tensor_contents=None):
        from ._printing import format_tensor
        values = _host_values(self)
        grad_fn = self._grad_fn
        return format_tensor(
            values, self._dtype.name, default_dtype_name=D.get_default_dtype().name,
            device=None if self._device.type == "cpu" else str(self._device),
            requires_grad=self._requires_grad,
            grad_fn_name=None if grad_fn is None else type(grad_fn).__name__)

    __str__ = __repr__

    def __format__(self, spec):
        if self._data.ndim == 0:
            return self.item().__format__(spec)
        return object.__format__(self, spec)

    def __reduce_ex__(self, protocol):
        from ._ops.creation import _rebuild_tensor
        return (_rebuild_tensor, (np.array(self._host_numpy()), self._dtype.name, str(self._device),
                                  self._requires_grad))

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        new = self.clone() if not self._requires_grad else self.detach().clone().requires_grad_(True)
        new.__dict__.update(__import__("copy").deepcopy(self.__dict__, memo))
        memo[id(self)] = new
        return new


def wrap_dim(dim, ndim):
    """Turn a possibly negative `dim` into an index in [0, ndim), with PyTorch's error."""
    n = ndim if ndim > 0 else 1
    if not -n <= dim < n:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})")
    return dim + n if dim < 0 else dim


def set_requires_grad(t, value):
    """Set the requires_grad flag, with PyTorch's rules for non-leaves and dtypes."""
    value = bool(value)
    if t._grad_fn is not None and not value:
        raise RuntimeError(
            "you can only change requires_grad flags of leaf variables. If you want to use a "
            "computed variable in a subgraph that doesn't require differentiation use "
            "var_no_grad = var.detach().")
    if value and t._dtype.category < D._FLOAT:
        raise RuntimeError("only Tensors of floating point dtype can require gradients")
    t._requires_grad = value


def _python_scalar(value, dtype):
    if dtype.category == D._FLOAT:
        return float(value)
    if dtype.category == D._COMPLEX:
        if dtype is D.complex32:
            return complex(float(value["real"]), float(value["imag"]))
        return complex(value)
    if dtype.category == D._INT:
        return int(value)
    return bool(value)


def _host_values(t):
    """`t`'s values on the host in a type NumPy computes with (float16, bfloat16 and float8
    as float32, complex32 as complex64), for printing and `tolist`."""
    arr = t._host_numpy()
    if t._dtype is D.complex32:
        return _backends.get(CPU).storage.astype(arr, np.complex64)
    if t._dtype in _HOST_AS_FLOAT32:
        return arr.astype(np.float32)
    return arr


_HOST_AS_FLOAT32 = frozenset((D.float16, D.bfloat16) + D.FLOAT8_DTYPES)


def _real_value(value):
    # float()/int() of a complex tensor: PyTorch's error unless the imaginary part is 0.
    if isinstance(value, complex):
        if value.imag != 0:
            raise RuntimeError("value cannot be converted to type double without overflow")
        return value.real
    return value


def is_tensor(obj):
    """Whether `obj` is an ember tensor."""
    return isinstance(obj, Tensor)


def _device_of(obj):
    return obj._device if isinstance(obj, Tensor) else _device_cls(obj)
