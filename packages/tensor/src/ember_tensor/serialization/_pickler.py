"""The pickler of ``save``: Python's pickle, with tensors written the way PyTorch writes them.

A tensor becomes ``torch._utils._rebuild_tensor_v2(storage, offset, size, stride,
requires_grad, OrderedDict())`` and its storage a persistent id
``("storage", torch.FloatStorage, key, location, numel)`` whose bytes go into a record of
their own, once per storage however many tensors view it. Objects registered in _globals
(dtypes, ``Size``, devices, rebuild functions, ember_nn's Parameter, ...) are written under
PyTorch's names, so real PyTorch can read the file.

It subclasses the pure-Python pickler because only that one lets a subclass choose the
name a GLOBAL opcode writes (``save_global``); pickles of checkpoints are small (the
tensor bytes never pass through it), so its speed does not matter.
"""
import collections
import pickle
import types

import numpy as np

from .. import _backends
from .. import _dtype as D
from .._device import device as _device_cls
from .._size import Size
from .._tensor import Tensor
from . import _globals
from ._rebuild import StorageType, rebuild_tensor_v2, storage_type_for

__all__ = ["CheckpointPickler", "StorageRecord"]


class StorageRecord:
    """One storage to be written: its key, dtype, location and host bytes."""

    __slots__ = ("key", "dtype", "location", "blob")

    def __init__(self, key, dtype, location, blob):
        self.key, self.dtype, self.location, self.blob = key, dtype, location, blob

    @property
    def numel(self):
        return self.blob.nbytes // self.dtype.itemsize


class CheckpointPickler(pickle._Pickler):
    """Pickles an object for ``save``; ``records`` lists the storages it met, in order.

    Args:
        file: where the pickle's bytes go.
        protocol: the pickle protocol (PyTorch writes 2).
        legacy: write the pre-1.6 persistent ids (with a view-metadata field).
    """

    def __init__(self, file, protocol=2, legacy=False):
        super().__init__(file, protocol=protocol)
        self.legacy = legacy
        self.records = []
        self._by_storage = {}   # (id(Storage), dtype name) -> StorageRecord
        self._keep_alive = []   # the storages whose ids key _by_storage

    def reducer_override(self, obj):
        cls = type(obj)
        if cls is Tensor:
            return self._reduce_tensor(obj)
        if cls is Size:
            return Size, (tuple(int(n) for n in obj),)
        if cls is _device_cls:
            return _device_cls, (str(obj),)
        if cls is D.dtype or cls is StorageType:
            return obj.name  # a global: save_global writes torch.<name>
        return NotImplemented

    def save_global(self, obj, name=None):
        exported = _globals.export_name(obj)
        if exported is None:
            return super().save_global(obj, name)
        module, qualname = exported
        if self.proto >= 4:
            self.save(module)
            self.save(qualname)
            self.write(pickle.STACK_GLOBAL)
        else:
            self.write(pickle.GLOBAL + module.encode("utf-8") + b"\n" + qualname.encode("utf-8") + b"\n")
        self.memoize(obj)

    # The base class's table calls its own save_global for functions and classes: point
    # those entries at ours.
    dispatch = dict(pickle._Pickler.dispatch)
    dispatch[types.FunctionType] = save_global
    dispatch[type] = save_global

    def persistent_id(self, obj):
        if type(obj) is not StorageRecord:
            return None
        pid = ("storage", storage_type_for(obj.dtype), obj.key, obj.location, obj.numel)
        return pid + (None,) if self.legacy else pid

    def _reduce_tensor(self, t):
        record, offset, stride = self._storage_of(t)
        return rebuild_tensor_v2, (record, offset, tuple(t.shape), tuple(stride), bool(t.requires_grad),
                                   collections.OrderedDict())

    def _storage_of(self, t):
        """The record holding `t`'s bytes, with `t`'s offset and strides inside it."""
        buf = t._storage.buf
        stride = list(t.stride())
        whole_storage = (_is_c_contiguous(buf, t) and buf.dtype.itemsize == t._dtype.itemsize
                         and min(stride, default=0) >= 0)
        location = str(_backends.resolve(t._device))  # PyTorch's 'cpu', 'cuda:0', ...
        if whole_storage:
            # Every view of this storage points into one record, as PyTorch's files do.
            ident = (id(t._storage), t._dtype.name)
            record = self._by_storage.get(ident)
            if record is None:
                record = StorageRecord(str(len(self.records)), t._dtype, location, _host_bytes(buf, t._device))
                self._by_storage[ident] = record
                self._keep_alive.append(t._storage)
                self.records.append(record)
            return record, t.storage_offset(), stride
        # A storage that is not one flat buffer (negative strides, a reinterpreted view):
        # this tensor's values alone, contiguous.
        values = np.ascontiguousarray(t._host_numpy()).reshape(-1).view(np.uint8)
        record = StorageRecord(str(len(self.records)), t._dtype, location, values)
        self.records.append(record)
        return record, 0, _contiguous_strides(tuple(t.shape))


def _is_c_contiguous(buf, t):
    return _backends.get(t._device).storage.is_contiguous(buf)


def _host_bytes(buf, device):
    host = _backends.get(device).storage.to_numpy(buf)  # the array itself on the CPU
    host = np.ascontiguousarray(host).reshape(-1)
    if host.dtype.byteorder == ">":  # checkpoints are little-endian
        host = host.byteswap()
    return host.view(np.uint8)


def _contiguous_strides(shape):
    strides, acc = [], 1
    for n in reversed(shape):
        strides.append(acc)
        acc *= max(n, 1)
    return list(reversed(strides))
