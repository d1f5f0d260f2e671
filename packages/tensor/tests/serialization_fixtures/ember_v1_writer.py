"""The writer of ember's own checkpoint format (``EMBRCKPT``), which ``ember.save`` wrote
until it adopted PyTorch's zip format. ``load`` still reads these files; the tests use
this writer to make them (it was ember_tensor/serialization.py, kept here unchanged but
for its imports and the removal of ``load``).

A checkpoint is one file (layout in the package README, "Serialization format")::

    b"EMBRCKPT" | u64 header length | header (UTF-8 JSON) | sha256(header)
    | zero padding to a 64-byte boundary | storage blobs, each 64-byte aligned
    | b"EMBR-END" | u64 file length

The JSON header describes the saved object as a tree of tagged nodes (dicts, lists,
tuples, OrderedDicts, numbers, strings, bytes, dtypes, devices, Sizes, tensors) and
lists every storage once, with its byte range and sha256. Tensors are (storage,
offset, shape, stride, dtype), so views of one storage are saved once and share their
storage again after loading. Loading parses JSON and copies bytes; it never unpickles,
so a file made by an attacker can at worst be rejected. Saving to a path writes a
temporary file and renames it over the target, so a crash mid-save leaves the old file.
"""
import base64
import collections
import hashlib
import json
import math
import os
import struct
import sys
import tempfile

import numpy as np

from ember_tensor import _backends
from ember_tensor import _dtype as D
from ember_tensor._device import device as _device_cls
from ember_tensor._size import Size
from ember_tensor._tensor import Tensor
from ember_tensor.serialization._ember_v1_format import (ALIGN, END_MAGIC, FORMAT_VERSION, MAGIC, MAX_DEPTH,
                                                         TRAILER, SerializationError)

__all__ = ["save"]


class _Writer:
    """Turns an object tree into JSON nodes, collecting each storage once."""

    def __init__(self):
        self.storages = {}   # id(Storage) -> index
        self.blobs = []      # host arrays, one per storage
        self.blob_dtypes = []
        self.tensors = {}    # id(Tensor) -> node id, so one tensor saved twice loads as one
        self.keep_alive = []
        self.depth = 0

    def encode(self, obj):
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise SerializationError(f"ember.save: the object is nested more than {MAX_DEPTH} levels deep")
        try:
            return self._encode(obj)
        finally:
            self.depth -= 1

    def _encode(self, obj):
        cls = type(obj)
        if obj is None or cls is bool or cls is str:
            return obj
        if cls is int:
            return obj
        if cls is float:
            return obj if math.isfinite(obj) else {"$": "float", "value": repr(obj)}
        if isinstance(obj, Tensor):
            return self._tensor(obj)
        if isinstance(obj, D.dtype):
            return {"$": "dtype", "name": obj.name}
        if isinstance(obj, _device_cls):
            return {"$": "device", "name": str(obj)}
        if isinstance(obj, Size):
            return {"$": "size", "dims": [int(n) for n in obj]}
        if cls is bytes or cls is bytearray:
            return {"$": cls.__name__, "b64": base64.b64encode(bytes(obj)).decode("ascii")}
        if isinstance(obj, collections.OrderedDict):
            return {"$": "odict", "items": [[self.encode(k), self.encode(v)] for k, v in obj.items()]}
        if isinstance(obj, dict):
            return {"$": "dict", "items": [[self.encode(k), self.encode(v)] for k, v in obj.items()]}
        if isinstance(obj, list):
            return [self.encode(v) for v in obj]
        if isinstance(obj, tuple):
            return {"$": "tuple", "items": [self.encode(v) for v in obj]}
        if isinstance(obj, (np.integer, np.floating, np.bool_)):
            return self._encode(obj.item())
        raise SerializationError(
            f"ember.save cannot save an object of type {cls.__module__}.{cls.__qualname__}: a checkpoint holds "
            "tensors, numbers, strings, bytes, None, dtypes, devices, Sizes and dicts/lists/tuples of those "
            "(ember never pickles arbitrary objects; save their state_dict() instead)")

    def _tensor(self, t):
        key = id(t)
        if key in self.tensors:
            return {"$": "ref", "id": self.tensors[key]}
        self.tensors[key] = node_id = len(self.tensors)
        self.keep_alive.append(t)
        buf = t._storage.buf
        shape, stride, offset = list(t.shape), list(t.stride()), t.storage_offset()
        contiguous_buffer = (_is_c_contiguous(buf, t) and buf.dtype.itemsize == t._dtype.itemsize
                             and min(stride, default=0) >= 0)
        if contiguous_buffer:
            sid = self.storages.get(id(t._storage))
            if sid is None:
                sid = self.storages[id(t._storage)] = len(self.blobs)
                self.blobs.append(_host_bytes(buf, t._device))
                self.blob_dtypes.append(t._dtype.name)
        else:
            # A storage we cannot lay out as one flat buffer: save this tensor's values alone.
            sid = len(self.blobs)
            self.blobs.append(np.ascontiguousarray(t._host_numpy()).reshape(-1).view(np.uint8))
            self.blob_dtypes.append(t._dtype.name)
            stride = list(_contiguous_strides(shape))
            offset = 0
        return {"$": "tensor", "id": node_id, "storage": sid, "dtype": t._dtype.name, "shape": shape,
                "stride": stride, "offset": offset, "device": str(t._device),
                "requires_grad": bool(t.requires_grad)}


def _is_c_contiguous(buf, t):
    if t._device.type == "cpu":
        return buf.flags.c_contiguous
    return _backends.get(t._device).is_contiguous(buf)


def _host_bytes(buf, device):
    host = np.ascontiguousarray(buf if device.type == "cpu" else _backends.get(device).to_numpy(buf))
    return host.reshape(-1).view(np.uint8)


def _contiguous_strides(shape):
    strides, acc = [], 1
    for n in reversed(shape):
        strides.append(acc)
        acc *= max(n, 1)
    return tuple(reversed(strides))


def _serialize(obj):
    writer = _Writer()
    root = writer.encode(obj)
    storages, position = [], 0
    for blob, dtype_name in zip(writer.blobs, writer.blob_dtypes):
        position = -(-position // ALIGN) * ALIGN
        storages.append({"dtype": dtype_name, "offset": position, "nbytes": int(blob.nbytes),
                         "sha256": hashlib.sha256(blob).hexdigest()})
        position += blob.nbytes
    header = json.dumps({"format": "ember-checkpoint", "version": FORMAT_VERSION, "byteorder": "little",
                         "storages": storages, "root": root}, separators=(",", ":"),
                        allow_nan=False).encode("utf-8")
    parts = [MAGIC, struct.pack("<Q", len(header)), header, hashlib.sha256(header).digest()]
    data_start = sum(len(p) for p in parts)
    # Storages start 64-byte aligned in the file, so `load` can view them in place.
    parts.append(b"\0" * (-data_start % ALIGN))
    data_start += len(parts[-1])
    written = 0
    for blob, info in zip(writer.blobs, storages):
        parts.append(b"\0" * (info["offset"] - written))
        if sys.byteorder != "little":
            blob = blob.view(D.to_dtype(info["dtype"]).np).byteswap().view(np.uint8)
        parts.append(memoryview(blob))  # written without an extra copy
        written = info["offset"] + info["nbytes"]
    total = data_start + written + TRAILER
    parts.append(END_MAGIC + struct.pack("<Q", total))
    return parts


def save(obj, f, pickle_module=None, pickle_protocol=None, _use_new_zipfile_serialization=True):
    """Save `obj` (tensors and nested dicts/lists/tuples of tensors and plain values) to `f`.

    Args:
        obj: what to save; views of one storage are saved once and share it after `load`.
        f: a path (written atomically: temp file + rename) or a binary file object.

    """
    if pickle_module is not None:
        raise SerializationError("ember.save does not pickle: pickle_module is not supported")
    parts = _serialize(obj)
    if isinstance(f, (str, os.PathLike)):
        _atomic_write(os.fspath(f), parts)
        return
    for part in parts:
        f.write(part)
    if hasattr(f, "flush"):
        f.flush()


def _atomic_write(path, parts):
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise RuntimeError(f"Parent directory {directory} does not exist.")
    fd, tmp = tempfile.mkstemp(prefix=".ember-save-", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as fh:
            for part in parts:
                fh.write(part)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    try:  # make the rename itself durable
        dir_fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
    except OSError:
        pass
