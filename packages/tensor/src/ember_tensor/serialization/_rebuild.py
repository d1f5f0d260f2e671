"""The objects a PyTorch checkpoint's pickle names, as ember objects: storage types,
tensor rebuild functions, dtypes, ``Size``, devices. Registered under PyTorch's paths
(``torch._utils._rebuild_tensor_v2``, ``torch.FloatStorage``, ``torch.float32``, ...).

Every rebuild function checks its arguments before touching memory: a tensor must lie
inside its storage, sizes and strides must be non-negative ints. A checkpoint is data
from outside, and a wrong offset must be an error, never a read past the end.
"""
import collections
import _codecs

import numpy as np

from .. import _backends
from .. import _dtype as D
from .._device import CPU as _CPU, device as _device_cls
from .._layout import sparse_coo, strided
from .._ops.creation import LEGACY_TYPES
from .._size import Size
from .._tensor import Storage, Tensor
from ._globals import register_global

__all__ = ["StorageType", "LoadedStorage", "STORAGE_TYPES", "storage_type_for", "rebuild_tensor_v2",
           "SerializationError"]


class SerializationError(RuntimeError):
    """A checkpoint could not be written or read (unsupported object, corrupt or truncated file)."""


class StorageType:
    """PyTorch's legacy typed-storage classes (``torch.FloatStorage``): in a checkpoint they
    only say which dtype a storage's bytes hold."""

    def __init__(self, name, dtype):
        self.name = name
        self.dtype = dtype

    def __repr__(self):
        return f"torch.{self.name}"


# PyTorch's storage class names for ember's dtypes.
STORAGE_TYPES = {d: StorageType(name, d) for d, name in [
    (D.float16, "HalfStorage"), (D.bfloat16, "BFloat16Storage"), (D.float32, "FloatStorage"),
    (D.float64, "DoubleStorage"), (D.int8, "CharStorage"), (D.int16, "ShortStorage"),
    (D.int32, "IntStorage"), (D.int64, "LongStorage"), (D.uint8, "ByteStorage"), (D.bool, "BoolStorage"),
    (D.complex64, "ComplexFloatStorage"), (D.complex128, "ComplexDoubleStorage")]}

# PyTorch dtypes and storages that ember has no dtype for: named, so the error can say so.
_UNSUPPORTED_DTYPES = ["uint16", "uint32", "uint64", "qint8", "quint8",
                       "qint32", "quint4x2", "quint2x4", "bits8", "bits16"]
_UNSUPPORTED_STORAGES = ["QInt8Storage", "QUInt8Storage",
                         "QInt32Storage", "QUInt4x2Storage", "QUInt2x4Storage"]


def storage_type_for(dtype):
    """The StorageType written for tensors of ember dtype `dtype`."""
    return STORAGE_TYPES[dtype]


def _unsupported_storage(name):
    def refuse(*args, **kwargs):
        raise SerializationError(f"ember.load: the checkpoint holds a torch.{name}, a dtype ember does not "
                                 "support (ember has float16, bfloat16, float32, float64, complex64, complex128, "
                                 "int8, int16, int32, int64, uint8 and bool)")
    refuse.__name__ = refuse.__qualname__ = name
    return refuse


class LoadedStorage:
    """A storage read from a checkpoint: its bytes on the host and the device it goes to.

    This is what ``map_location`` callables receive, like PyTorch's storages:
    ``lambda storage, location: storage`` keeps it on the CPU, ``storage.cuda(0)`` moves it.
    """

    def __init__(self, raw, dtype, device):
        self.raw = raw          # 1-d uint8 NumPy array (a view of the file's buffer or mapping)
        self.dtype = dtype
        self.device = device
        self._typed = None
        self._on_device = None

    def nbytes(self):
        """Size of the storage in bytes."""
        return int(self.raw.nbytes)

    def size(self):
        """Number of elements of the storage's dtype."""
        return self.nbytes() // self.dtype.itemsize

    def cpu(self):
        """This storage, kept on the CPU."""
        return self if self.device == _CPU else LoadedStorage(self.raw, self.dtype, _CPU)

    def cuda(self, device=None, non_blocking=False):
        """This storage, placed on a CUDA device."""
        index = device.index if isinstance(device, _device_cls) else device
        return LoadedStorage(self.raw, self.dtype, _device_cls("cuda", 0 if index is None else index))

    def to(self, device=None, non_blocking=False):
        """This storage, placed on `device`."""
        return LoadedStorage(self.raw, self.dtype, _device_cls(str(device)))

    def typed(self):
        """The host values as a 1-d array of the storage's dtype (bool bytes checked)."""
        if self._typed is None:
            itemsize = self.dtype.itemsize
            if self.raw.nbytes % itemsize:
                raise SerializationError(f"ember.load: a storage of {self.raw.nbytes} bytes is not a whole number "
                                         f"of {self.dtype.name} elements")
            if self.dtype is D.bool and self.raw.size and self.raw.max() > 1:
                # Any byte but 0 and 1 would load as a bool that is neither: refuse, never guess.
                raise SerializationError("ember.load: a bool storage holds bytes other than 0 and 1")
            self._typed = self.raw.view(self.dtype.np)
        return self._typed

    def backend_buffer(self):
        """The storage on its device, made once and shared by every tensor viewing it."""
        if self._on_device is None:
            # The host values themselves on the CPU, a device copy elsewhere.
            buf = _backends.get(self.device).storage.adopt(self.typed())
            self._on_device = (Storage(buf), buf)
        return self._on_device


def _check_ints(what, values):
    if not isinstance(values, (tuple, list, Size)):
        raise SerializationError(f"ember.load: a tensor's {what} is a {type(values).__name__}, not a tuple")
    for v in values:
        if type(v) is not int or v < 0:
            raise SerializationError(f"ember.load: a tensor's {what} holds {v!r}, not a non-negative int")
    return tuple(values)


def _make_tensor(storage, storage_offset, size, stride, dtype=None):
    if not isinstance(storage, LoadedStorage):
        raise SerializationError(f"ember.load: a tensor's storage is a {type(storage).__name__}, not a storage "
                                 "from the checkpoint")
    size = _check_ints("size", size)
    stride = _check_ints("stride", stride) if stride is not None else None
    if type(storage_offset) is not int or storage_offset < 0:
        raise SerializationError(f"ember.load: invalid storage offset {storage_offset!r}")
    if stride is None:  # _rebuild_tensor of old files: contiguous
        stride, acc = [], 1
        for n in reversed(size):
            stride.append(acc)
            acc *= max(n, 1)
        stride = tuple(reversed(stride))
    if len(size) != len(stride):
        raise SerializationError(f"ember.load: a tensor has {len(size)} sizes but {len(stride)} strides")
    numel = 1
    for n in size:
        numel *= n
    if numel >= 2 ** 63:
        raise SerializationError(f"ember.load: a tensor of size {list(size)} has too many elements")
    flat = storage.typed()
    # PyTorch's check and words (setStorage), so a wrong size or offset never reads past the end.
    needed = 0 if numel == 0 else storage_offset + 1 + sum((n - 1) * s for n, s in zip(size, stride))
    if needed > flat.size:
        raise SerializationError(
            f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset {storage_offset}, and itemsize "
            f"{storage.dtype.itemsize} requiring a storage size of {needed * storage.dtype.itemsize} are out of "
            f"bounds for storage of size {flat.size * storage.dtype.itemsize}")
    store, buf = storage.backend_buffer()
    device = storage.device
    data = _backends.get(device).storage.as_strided(buf, size, stride, storage_offset if numel else 0)
    return Tensor._wrap(data, storage.dtype, device, store, storage_offset)


def rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad=False, backward_hooks=None,
                      metadata=None):
    """``torch._utils._rebuild_tensor_v2``: a tensor viewing `storage` (hooks are not restored,
    as in PyTorch's weights_only load)."""
    t = _make_tensor(storage, storage_offset, size, stride)
    if requires_grad is True:
        if t._dtype.category != D._FLOAT:
            raise SerializationError("ember.load: only tensors of floating point dtype can require gradients")
        t.requires_grad_(True)
    elif requires_grad is not False:
        raise SerializationError(f"ember.load: requires_grad must be a bool, got {requires_grad!r}")
    return t


def rebuild_tensor(storage, storage_offset, size, stride):
    """``torch._utils._rebuild_tensor`` of older files."""
    return _make_tensor(storage, storage_offset, size, stride)


def rebuild_tensor_v3(storage, storage_offset, size, stride, requires_grad, backward_hooks, dtype, metadata=None):
    """``torch._utils._rebuild_tensor_v3``: v2 with an explicit dtype, which must match the storage's."""
    if dtype is not storage.dtype if isinstance(storage, LoadedStorage) else True:
        raise SerializationError(f"ember.load: a tensor of dtype {dtype} views a storage of another dtype")
    return rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, backward_hooks, metadata)


def rebuild_from_type_v2(func, new_type, args, state):
    """``torch._tensor._rebuild_from_type_v2``: ember rebuilds plain tensors only."""
    if func not in (rebuild_tensor_v2, rebuild_tensor, rebuild_tensor_v3):
        raise SerializationError(f"ember.load: _rebuild_from_type_v2 with {func!r} is not supported")
    if new_type is not Tensor or state:
        raise SerializationError("ember.load: tensor subclasses and tensors with Python attributes are not supported "
                                 "with weights_only=True")
    return func(*args)


def get_layout(name):
    """``torch.serialization._get_layout``: a layout by its printed name."""
    layouts = {"torch.strided": strided, "torch.sparse_coo": sparse_coo}
    if name not in layouts:
        raise SerializationError(f"ember.load: unsupported layout {name!r}")
    return layouts[name]


_TEXT_CODECS = {"latin1", "latin-1", "latin_1", "iso-8859-1", "utf-8", "utf8", "ascii"}


def encode_text(obj, encoding="utf-8", errors="strict"):
    """``_codecs.encode`` as protocol 2 pickles bytes with it (``encode(str, "latin1")``),
    limited to text codecs: ``_codecs.encode`` reaches every registered codec, and a
    checkpoint has no business running zlib or bz2 at load time."""
    if type(obj) is not str or encoding not in _TEXT_CODECS or errors != "strict":
        raise SerializationError(f"ember.load: _codecs.encode is allowed only to turn text into bytes with a text "
                                 f"codec, not with {encoding!r}")
    return _codecs.encode(obj, encoding)


def _refuse_sparse(*args, **kwargs):
    # PyTorch itself crashed on a file with out-of-range sparse indices: refuse rather than guess.
    raise SerializationError("ember.load: sparse tensors in checkpoints are not supported yet; save them with "
                             ".to_dense() or their indices and values")


def _register():
    for name, fn in [("_rebuild_tensor_v2", rebuild_tensor_v2), ("_rebuild_tensor", rebuild_tensor),
                     ("_rebuild_tensor_v3", rebuild_tensor_v3), ("_rebuild_sparse_tensor", _refuse_sparse)]:
        register_global(f"torch._utils.{name}", fn, safe=True)
    register_global("torch._tensor._rebuild_from_type_v2", rebuild_from_type_v2, safe=True)
    register_global("torch.serialization._get_layout", get_layout, safe=True)
    for storage_type in STORAGE_TYPES.values():
        register_global(f"torch.{storage_type.name}", storage_type, safe=True)
    for name in _UNSUPPORTED_STORAGES:
        register_global(f"torch.{name}", _unsupported_storage(name), safe=True)
    for d in D.ALL_DTYPES:
        register_global(f"torch.{d.name}", d, safe=True)
    for name in _UNSUPPORTED_DTYPES:
        register_global(f"torch.{name}", _unsupported_storage(name), safe=True)
    # Legacy tensor types (``torch.FloatTensor``): tar-era records name them; PyTorch's
    # weights_only unpickler allows them too (constructors of plain tensors).
    for name, tensor_type in LEGACY_TYPES.items():
        register_global(f"torch.{name}", tensor_type, safe=True)
    register_global("torch.Size", Size, safe=True)
    register_global("torch.device", _device_cls, safe=True)
    register_global("torch.Tensor", Tensor, safe=True)
    # Python's own types that PyTorch allows: they run no code from the file.
    register_global("collections.OrderedDict", collections.OrderedDict, safe=True)
    register_global("collections.Counter", collections.Counter, safe=True)
    register_global("_codecs.encode", encode_text, safe=True)  # protocol 2's bytes
    register_global("builtins.bytearray", bytearray, safe=True)
    register_global("builtins.set", set, safe=True)
    register_global("builtins.complex", complex, safe=True)


_register()
