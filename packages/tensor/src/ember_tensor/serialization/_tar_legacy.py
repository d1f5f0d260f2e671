"""PyTorch's tar-era checkpoint format (PyTorch before 0.4), read only.

A tar archive of three members that ``torch.load`` still reads:

- ``storages``: pickle(count), then per storage pickle((key, location, StorageType)),
  an int64 element count and the raw little-endian bytes; then pickle([(view key, root
  key, element offset, element count), ...]): storages that are slices of others;
- ``tensors``: pickle(count), then per tensor pickle((key, storage key, TensorType)), an
  int32 dimension count, 4 bytes of padding, that many int64 sizes, as many int64
  strides and an int64 storage offset;
- ``pickle``: the object, whose persistent ids are those keys (a tensor's or a storage's)
  or, for a module saved whole, a (class, source file, source) tuple.

Members are read from memory (nothing is extracted to disk, so member names cannot
escape a directory), every count and size is checked against the bytes there are, and
the pickles go through the caller's unpicklers: the restricted one under
``weights_only=True``.
"""
import io
import struct
import tarfile

import numpy as np

from ._rebuild import LoadedStorage, SerializationError

__all__ = ["is_tar", "read_tar_checkpoint"]


def is_tar(data):
    """Whether `data` is a POSIX tar archive (the "ustar" magic of its first header)."""
    return len(data) > 262 and bytes(data[257:262]) == b"ustar"


def _member(archive, name):
    try:
        member = archive.getmember(name)
    except KeyError:
        raise SerializationError(f"ember.load: the tar-era checkpoint has no '{name}' member") from None
    if not member.isfile():
        raise SerializationError(f"ember.load: the tar-era checkpoint's '{name}' is not a file")
    return archive.extractfile(member).read()


class _Reader:
    """Sequential reads of one member's bytes, each checked against what is left."""

    def __init__(self, data, name):
        self.data, self.name, self.position = data, name, 0

    def take(self, count):
        if count < 0 or self.position + count > len(self.data):
            raise SerializationError(f"ember.load: the tar-era checkpoint's '{self.name}' is truncated")
        start, self.position = self.position, self.position + count
        return self.data[start:self.position]

    def unpack(self, fmt):
        return struct.unpack(fmt, self.take(struct.calcsize(fmt)))


def read_tar_checkpoint(data, unpickle_plain, unpickle_object, storage_types, place, make_tensor):
    """Load a tar-era checkpoint from bytes-like `data`.

    Args:
        unpickle_plain: ``(data, start) -> (value, end)`` for the record pickles (no storages).
        unpickle_object: ``(data, start, persistent_load) -> value`` for the object pickle.
        storage_types: callable mapping a storage type object to an ember dtype (or raising).
        place: ``(raw bytes, dtype, location) -> storage`` (map_location applied).
        make_tensor: ``(storage, offset, size, stride) -> tensor``, checking the bounds.
    Returns:
        the loaded object.
    """
    try:
        with tarfile.open(fileobj=io.BytesIO(bytes(data)), mode="r:") as archive:
            members = {name: _member(archive, name) for name in ("storages", "tensors", "pickle")}
    except tarfile.TarError as error:
        raise SerializationError(f"ember.load: the tar-era checkpoint is not a readable tar archive ({error})") \
            from None
    objects = {}
    _read_storages(members["storages"], unpickle_plain, storage_types, place, objects)
    _read_tensors(members["tensors"], unpickle_plain, make_tensor, objects)

    def persistent_load(saved_id):
        if type(saved_id) is tuple:
            # A module saved whole names its class and source; the class is what it stands for.
            if not saved_id:
                raise SerializationError("ember.load: an empty persistent id in a tar-era checkpoint")
            return saved_id[0]
        try:
            return objects[int(saved_id)]
        except (KeyError, TypeError, ValueError):
            raise SerializationError(f"ember.load: the tar-era checkpoint refers to {saved_id!r}, which it does "
                                     "not hold") from None

    return unpickle_object(members["pickle"], 0, persistent_load)


def _plain(unpickle_plain, reader):
    value, end = unpickle_plain(reader.data, reader.position)
    reader.position = end
    return value


def _count(value, what):
    if type(value) is not int or value < 0:
        raise SerializationError(f"ember.load: the tar-era checkpoint's {what} count is {value!r}")
    return value


def _read_storages(data, unpickle_plain, storage_types, place, objects):
    reader = _Reader(data, "storages")
    for _ in range(_count(_plain(unpickle_plain, reader), "storage")):
        record = _plain(unpickle_plain, reader)
        if type(record) is not tuple or len(record) != 3:
            raise SerializationError("ember.load: a tar-era storage record is not (key, location, type)")
        key, location, storage_type = record
        dtype = storage_types(storage_type)
        (numel,) = reader.unpack("<q")
        if numel < 0:
            raise SerializationError(f"ember.load: a tar-era storage declares {numel} elements")
        raw = np.frombuffer(reader.take(numel * dtype.itemsize), dtype=np.uint8)
        objects[_key(key)] = place(raw, dtype, location)
    views = _plain(unpickle_plain, reader)
    if type(views) is not list:
        raise SerializationError("ember.load: the tar-era checkpoint's storage views are not a list")
    for view in views:
        if type(view) is not tuple or len(view) != 4:
            raise SerializationError("ember.load: a tar-era storage view is not (key, root, offset, count)")
        target, root, offset, numel = view
        base = objects.get(_key(root))
        if not isinstance(base, LoadedStorage):
            raise SerializationError(f"ember.load: a tar-era storage view refers to {root!r}, not a storage")
        size = base.dtype.itemsize
        if type(offset) is not int or type(numel) is not int or offset < 0 or numel < 0 \
                or (offset + numel) * size > base.raw.nbytes:
            raise SerializationError("ember.load: a tar-era storage view reaches past its storage")
        # The slice's values; it does not share memory with its root once loaded (tensors of
        # the root and of the slice are separate), which only in-place writes could tell.
        objects[_key(target)] = LoadedStorage(base.raw[offset * size:(offset + numel) * size], base.dtype, base.device)
    if reader.position != len(data):
        raise SerializationError("ember.load: unexpected bytes after the tar-era checkpoint's storages")


def _read_tensors(data, unpickle_plain, make_tensor, objects):
    reader = _Reader(data, "tensors")
    for _ in range(_count(_plain(unpickle_plain, reader), "tensor")):
        record = _plain(unpickle_plain, reader)
        if type(record) is not tuple or len(record) != 3:
            raise SerializationError("ember.load: a tar-era tensor record is not (key, storage, type)")
        key, storage_key, _tensor_type = record
        storage = objects.get(_key(storage_key))
        if not isinstance(storage, LoadedStorage):
            raise SerializationError(f"ember.load: a tar-era tensor refers to storage {storage_key!r}, which the "
                                     "checkpoint does not hold")
        (ndim,) = reader.unpack("<i")
        reader.take(4)  # the format wrote ndim as 8 bytes
        if ndim < 0 or ndim > 64:
            raise SerializationError(f"ember.load: a tar-era tensor declares {ndim} dimensions")
        size = reader.unpack(f"<{ndim}q")
        stride = reader.unpack(f"<{ndim}q")
        (offset,) = reader.unpack("<q")
        objects[_key(key)] = make_tensor(storage, offset, size, stride)
    if reader.position != len(data):
        raise SerializationError("ember.load: unexpected bytes after the tar-era checkpoint's tensors")


def _key(value):
    if type(value) is int:
        return value
    if type(value) is str and value.lstrip("-").isdigit():
        return int(value)
    raise SerializationError(f"ember.load: a tar-era checkpoint key is {value!r}, not an integer")
