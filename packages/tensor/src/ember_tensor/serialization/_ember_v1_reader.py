"""Reader of ember's own checkpoint format (``EMBRCKPT``, what ``save`` wrote before it
wrote PyTorch's zip format), so that existing files keep loading.

It validates the container (magic, lengths, end marker, sha256 of the header and of
every storage) and then rebuilds the object tree from JSON, checking every node; nothing
in the file is ever executed. The layout is in the package README ("ember's own format").
"""
import base64
import collections
import hashlib
import json
import os
import struct

import numpy as np

from .. import _backends
from .. import _dtype as D
from .._device import device as _device_cls
from .._size import Size
from .._tensor import Storage, Tensor
from ._map_location import checked_device
from ._ember_v1_format import ALIGN, END_MAGIC, FORMAT_VERSION, MAGIC, MAX_DEPTH, TRAILER, SerializationError

__all__ = ["is_ember_v1", "load_ember_v1"]


def is_ember_v1(data):
    """Whether `data` starts with the magic of ember's own format."""
    return bytes(data[:len(MAGIC)]) == MAGIC


def _corrupt(what):
    return SerializationError(f"ember.load: {what}. The file is corrupt or was not written by ember.save.")


def _check_container(data):
    """Validate magic, lengths, trailer and header checksum; return the parsed header."""
    if not data.startswith(MAGIC):
        if data[:1] == b"\x80" or data[:2] in (b"(d", b"}q", b"]q", b"cp", b"c_"):
            kind = "a Python pickle"
        elif data[:4] == b"PK\x03\x04":
            kind = "a zip archive (PyTorch's pickle-based format)"
        else:
            kind = "not an ember checkpoint"
        raise SerializationError(
            f"ember.load: the file is {kind}, not an ember checkpoint (it does not start with {MAGIC!r}). "
            "ember never unpickles files, because unpickling can run arbitrary code.")
    if len(data) < len(MAGIC) + 8 + 32 + TRAILER:
        raise _corrupt("the file is truncated (shorter than an empty checkpoint)")
    if data[-TRAILER:-8] != END_MAGIC:
        raise _corrupt("the file is truncated (its end marker is missing)")
    (total,) = struct.unpack("<Q", data[-8:])
    if total != len(data):
        raise _corrupt(f"the file is truncated or extended: it records {total} bytes but has {len(data)}")
    (header_len,) = struct.unpack("<Q", data[len(MAGIC):len(MAGIC) + 8])
    start = len(MAGIC) + 8
    if start + header_len + 32 > len(data) - TRAILER:
        raise _corrupt("the header length points past the end of the file")
    header_bytes = data[start:start + header_len]
    if hashlib.sha256(header_bytes).digest() != data[start + header_len:start + header_len + 32]:
        raise _corrupt("the header checksum does not match")
    try:
        header = json.loads(header_bytes.decode("utf-8"))
    except (ValueError, RecursionError) as exc:
        raise _corrupt(f"the header is not valid JSON ({type(exc).__name__})") from None
    if not isinstance(header, dict) or header.get("format") != "ember-checkpoint":
        raise _corrupt("the header does not describe an ember checkpoint")
    if header.get("version") != FORMAT_VERSION:
        raise SerializationError(f"ember.load: checkpoint format version {header.get('version')!r} is not "
                                 f"supported (this ember reads version {FORMAT_VERSION})")
    header_end = start + header_len + 32
    data_start = header_end + (-header_end % ALIGN)
    if data_start > len(data) - TRAILER or any(data[header_end:data_start]):
        raise _corrupt("the padding after the header is damaged")
    return header, data_start


def _target_device(saved, map_location):
    if map_location is None:
        name = saved
    elif isinstance(map_location, dict):
        name = map_location.get(saved, saved)
    elif isinstance(map_location, (str, _device_cls)):
        name = map_location
    elif callable(map_location):
        raise SerializationError("ember.load: a callable map_location is not supported; pass a device, "
                                 "a string or a dict")
    else:
        raise SerializationError(f"ember.load: unsupported map_location {map_location!r}")
    return checked_device(_device_cls(str(name) if isinstance(name, _device_cls) else name))


class _Reader:
    """Rebuilds the object tree from JSON nodes; every value is checked before use."""

    def __init__(self, data, data_start, header, map_location):
        self.data = data
        self.data_start = data_start
        self.storage_info = header.get("storages")
        if not isinstance(self.storage_info, list):
            raise _corrupt("the storage table is missing")
        self.map_location = map_location
        self._check_layout()
        self.arrays = {}      # storage index -> host array (checksum verified)
        self.storages = {}    # (storage index, device) -> (Storage, backend buffer)
        self.tensors = {}

    def _check_layout(self):
        """Storages must tile the data area in order, with only zero padding between them,
        so that every byte of the file is covered by a check."""
        position = self.data_start
        for info in self.storage_info:
            if not isinstance(info, dict):
                raise _corrupt("a storage entry is malformed")
            offset, nbytes = info.get("offset"), info.get("nbytes")
            if not (isinstance(offset, int) and isinstance(nbytes, int) and offset >= 0 and nbytes >= 0):
                raise _corrupt("a storage entry has an invalid byte range")
            start = self.data_start + offset
            if start < position or start - position >= ALIGN:
                raise _corrupt("the storages are not laid out in order")
            if any(self.data[position:start]):
                raise _corrupt("the padding between storages is not zero")
            position = start + nbytes
        if position != len(self.data) - TRAILER:
            raise _corrupt("the storages do not end where the end marker begins")

    def storage_array(self, sid, dtype):
        if not isinstance(sid, int) or not 0 <= sid < len(self.storage_info):
            raise _corrupt(f"a tensor names storage {sid!r}, which does not exist")
        info = self.storage_info[sid]
        if not isinstance(info, dict):
            raise _corrupt("a storage entry is malformed")
        offset, nbytes = info.get("offset"), info.get("nbytes")
        if not (isinstance(offset, int) and isinstance(nbytes, int) and offset >= 0 and nbytes >= 0):
            raise _corrupt("a storage entry has an invalid byte range")
        start = self.data_start + offset
        if start + nbytes > len(self.data) - TRAILER:
            raise _corrupt("a storage reaches past the end of the data")
        if sid not in self.arrays:
            if hashlib.sha256(memoryview(self.data)[start:start + nbytes]).hexdigest() != info.get("sha256"):
                raise _corrupt(f"the checksum of storage {sid} does not match")
            if nbytes % dtype.itemsize:
                raise _corrupt(f"storage {sid} is not a whole number of {dtype.name} elements")
            # A writable view into the file's buffer: no copy of the tensor data.
            self.arrays[sid] = np.frombuffer(self.data, dtype=np.uint8, count=nbytes, offset=start)
        raw = self.arrays[sid]
        if dtype is D.bool and raw.size and raw.max() > 1:
            raise _corrupt(f"storage {sid} holds bool values other than 0 and 1")
        return raw.view(dtype.np)

    def decode(self, node, depth=0):
        if depth > MAX_DEPTH:
            raise _corrupt("the object tree is nested too deeply")
        if node is None or isinstance(node, (bool, int, float, str)):
            return node
        if isinstance(node, list):
            return [self.decode(v, depth + 1) for v in node]
        if not isinstance(node, dict):
            raise _corrupt(f"unexpected JSON value of type {type(node).__name__}")
        tag = node.get("$")
        if tag in ("dict", "odict"):
            items = node.get("items")
            if not isinstance(items, list) or not all(isinstance(p, list) and len(p) == 2 for p in items):
                raise _corrupt("a dict node is malformed")
            pairs = [(self.decode(k, depth + 1), self.decode(v, depth + 1)) for k, v in items]
            try:
                return collections.OrderedDict(pairs) if tag == "odict" else dict(pairs)
            except TypeError:
                raise _corrupt("a dict key is not hashable") from None
        if tag == "tuple":
            return tuple(self.decode(v, depth + 1) for v in _field(node, "items", list))
        if tag == "float":
            value = _field(node, "value", str)
            if value not in ("nan", "inf", "-inf"):
                raise _corrupt(f"invalid float {value!r}")
            return float(value)
        if tag in ("bytes", "bytearray"):
            try:
                raw = base64.b64decode(_field(node, "b64", str), validate=True)
            except ValueError:
                raise _corrupt("invalid base64 bytes") from None
            return raw if tag == "bytes" else bytearray(raw)
        if tag == "dtype":
            return _dtype_named(_field(node, "name", str))
        if tag == "device":
            try:
                return _device_cls(_field(node, "name", str))
            except (RuntimeError, ValueError):
                raise _corrupt("invalid device") from None
        if tag == "size":
            dims = _field(node, "dims", list)
            if not all(isinstance(n, int) and not isinstance(n, bool) for n in dims):
                raise _corrupt("invalid Size")
            return Size(dims)
        if tag == "tensor":
            return self.tensor(node)
        if tag == "ref":
            ref = node.get("id")
            if ref not in self.tensors:
                raise _corrupt("a tensor reference points to no earlier tensor")
            return self.tensors[ref]
        raise _corrupt(f"unknown object tag {tag!r}")

    def tensor(self, node):
        dtype = _dtype_named(_field(node, "dtype", str))
        shape, stride = _field(node, "shape", list), _field(node, "stride", list)
        offset = _field(node, "offset", int)
        ints = shape + stride + [offset]
        valid = all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in ints)
        if not valid or len(shape) != len(stride):
            raise _corrupt("a tensor has an invalid shape, stride or offset")
        sid = node.get("storage")
        flat = self.storage_array(sid, dtype)
        if all(shape) and offset + sum((n - 1) * s for n, s in zip(shape, stride)) >= flat.size:
            raise _corrupt("a tensor reaches outside of its storage")
        device = _target_device(_field(node, "device", str), self.map_location)
        key = (sid, str(device), dtype.itemsize)
        if key not in self.storages:
            buf = _backends.get(device).storage.adopt(flat)  # host memory kept as is on the CPU
            self.storages[key] = (Storage(buf), buf)
        storage, buf = self.storages[key]
        if buf.dtype != dtype.np:
            buf = buf.view(dtype.np)
        data = _backends.get(device).storage.as_strided(buf, tuple(shape), tuple(stride), offset)
        t = Tensor._wrap(data, dtype, device, storage, offset)
        if node.get("requires_grad") is True and dtype.category == D._FLOAT:
            t.requires_grad_(True)
        node_id = node.get("id")
        if isinstance(node_id, int):
            self.tensors[node_id] = t
        return t


def _field(node, name, kind):
    value = node.get(name)
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise _corrupt(f"a {node.get('$')} node has no valid {name!r}")
    return value


def _dtype_named(name):
    dtype = getattr(D, name, None)
    if not isinstance(dtype, D.dtype):
        raise _corrupt(f"unknown dtype {name!r}")
    return dtype


def load_ember_v1(data, map_location=None):
    """Load an ember-format checkpoint from the bytearray `data` (storages view it, no copy).

    A truncated or corrupted file raises `SerializationError` (a RuntimeError).
    """
    header, data_start = _check_container(data)
    if header.get("byteorder") != "little":
        raise _corrupt("unsupported byte order")
    return _Reader(data, data_start, header, map_location).decode(header.get("root"))
