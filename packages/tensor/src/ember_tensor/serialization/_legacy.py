"""PyTorch's legacy checkpoint format (before 1.6; ``_use_new_zipfile_serialization=False``).

One stream of pickles followed by raw storages::

    pickle(MAGIC_NUMBER) pickle(1001) pickle(sys_info)
    pickle(obj)                  storages as ("storage", type, key, location, numel, view_metadata)
    pickle(sorted storage keys)
    for each key: int64 element count, then the storage's bytes (little-endian)

Reading scans the object pickle without running it (pickletools) to find where the
storages start, reads and checks them all, then unpickles the object with them at hand.
"""
import io
import pickle
import pickletools
import struct

import numpy as np

from ._pickler import CheckpointPickler
from ._rebuild import SerializationError

__all__ = ["MAGIC_NUMBER", "PROTOCOL_VERSION", "is_legacy", "write_legacy_checkpoint", "read_legacy_checkpoint"]

MAGIC_NUMBER = 0x1950A86A20F9469CFC6C
PROTOCOL_VERSION = 1001
_SYS_INFO = {"protocol_version": PROTOCOL_VERSION, "little_endian": True,
             "type_sizes": {"short": 2, "int": 4, "long": 4}}


def is_legacy(data):
    """Whether `data` starts with the legacy format's pickled magic number."""
    # Compared as bytes: unpickling a file's first bytes just to look at them could run code.
    head = bytes(data[:32])
    return any(head.startswith(pickle.dumps(MAGIC_NUMBER, protocol=p)) for p in range(6))


def write_legacy_checkpoint(obj, f, protocol=2):
    """Write `obj` in the legacy format to the binary file object `f`."""
    for header in (MAGIC_NUMBER, PROTOCOL_VERSION, _SYS_INFO):
        pickle.dump(header, f, protocol=protocol)
    pickler = CheckpointPickler(f, protocol=protocol, legacy=True)
    pickler.dump(obj)
    keys = sorted(record.key for record in pickler.records)
    pickle.dump(keys, f, protocol=protocol)
    by_key = {record.key: record for record in pickler.records}
    for key in keys:
        record = by_key[key]
        f.write(struct.pack("<q", record.numel))
        f.write(memoryview(record.blob))


def _end_of_pickle(data, start):
    """Offset just past the pickle starting at `start`, found without running it."""
    stream = io.BytesIO(memoryview(data)[start:])
    try:
        for opcode, _, pos in pickletools.genops(stream):
            if opcode.name == "STOP":
                return start + pos + 1
    except (ValueError, EOFError, struct.error, UnicodeDecodeError) as exc:
        raise SerializationError(f"ember.load: the legacy checkpoint's pickle is malformed ({exc})") from None
    raise SerializationError("ember.load: the legacy checkpoint's pickle has no end")


def read_legacy_checkpoint(data, unpickle_plain, unpickle_object, storage_types, place):
    """Load a legacy checkpoint from bytes-like `data`.

    Args:
        unpickle_plain: ``(data, start) -> (value, end)`` for the header pickles (no storages).
        unpickle_object: ``(data, start, persistent_load) -> value`` for the object pickle.
        storage_types: callable mapping a storage type object, or its dotted name, to an
            ember dtype (or raising).
        place: ``(raw bytes, dtype, location) -> storage`` (map_location applied).
    Returns:
        the loaded object.
    """
    position = 0
    for expected in ("magic", "protocol", "sys_info"):
        value, position = unpickle_plain(data, position)
        if expected == "magic" and value != MAGIC_NUMBER:
            raise SerializationError("Invalid magic number; corrupt file?")
        if expected == "protocol" and value != PROTOCOL_VERSION:
            raise SerializationError(f"Invalid protocol version: {value}")
        if expected == "sys_info" and (type(value) is not dict or value.get("little_endian") is not True):
            raise SerializationError("ember.load: only little-endian legacy checkpoints are supported")
    object_start = position
    position = _end_of_pickle(data, object_start)
    keys, position = unpickle_plain(data, position)
    if type(keys) is not list or not all(type(k) is str for k in keys) or len(set(keys)) != len(keys):
        raise SerializationError("ember.load: the legacy checkpoint's storage key list is malformed")
    itemsizes = {key: storage_types(type_name).itemsize for key, type_name in _storage_ids(data, object_start).items()}
    blobs = _storage_layout(data, keys, position, itemsizes)
    placed = {}

    def persistent_load(pid):
        if len(pid) != 6:
            raise SerializationError("ember.load: a legacy storage id does not have 6 fields")
        _, storage_type, key, location, numel, view_metadata = pid
        dtype = storage_types(storage_type)
        if key in placed:
            if placed[key].dtype is not dtype:
                raise SerializationError(f"ember.load: storage {key!r} is named with two dtypes")
            return placed[key]
        if key not in blobs:
            raise SerializationError(f"ember.load: storage {key!r} is not in the checkpoint")
        start, count, size = blobs[key]
        if type(numel) is not int or numel != count or size != dtype.itemsize:
            raise SerializationError(f"ember.load: storage {key!r} declares {numel!r} {dtype.name} elements, which "
                                     "does not match its record")
        nbytes = count * dtype.itemsize
        if view_metadata is not None:
            raise SerializationError("ember.load: storage views of pre-1.0 checkpoints are not supported")
        raw = np.frombuffer(data, dtype=np.uint8, count=nbytes, offset=start)
        placed[key] = place(raw, dtype, location)
        return placed[key]

    return unpickle_object(data, object_start, persistent_load)


def _storage_ids(data, start):
    """``{key: "module.StorageType"}`` of every storage id in the pickle at `start`, found by
    simulating its stack without running anything (pickletools gives each opcode's stack
    effect; only strings, ints, globals, tuples and the memo are tracked)."""
    mark, opaque = object(), object()
    stack, memo, found = [], {}, {}

    def pop_to_mark():
        while stack:
            item = stack.pop()
            if item is mark:
                return
        raise SerializationError("ember.load: the legacy checkpoint's pickle is malformed (no MARK)")

    stream = io.BytesIO(memoryview(data)[start:])
    try:
        for opcode, arg, _ in pickletools.genops(stream):
            name = opcode.name
            if name == "STOP":
                return found
            if name == "MARK":
                stack.append(mark)
            elif name in ("BINPUT", "LONG_BINPUT", "PUT"):
                memo[arg] = stack[-1] if stack else opaque
            elif name == "MEMOIZE":
                memo[len(memo)] = stack[-1] if stack else opaque
            elif name in ("BINGET", "LONG_BINGET", "GET"):
                stack.append(memo.get(arg, opaque))
            elif name == "GLOBAL":
                stack.append(("global", arg.replace(" ", ".")))
            elif name == "NONE":
                stack.append(None)
            elif name == "TUPLE":
                items = []
                while stack and stack[-1] is not mark:
                    items.append(stack.pop())
                pop_to_mark()
                stack.append(tuple(reversed(items)))
            elif name in ("TUPLE1", "TUPLE2", "TUPLE3"):
                n = int(name[-1])
                items = stack[-n:]
                del stack[-n:]
                stack.append(tuple(items))
            elif name == "BINPERSID":
                pid = stack.pop() if stack else opaque
                if (type(pid) is tuple and len(pid) >= 3 and pid[0] == "storage" and type(pid[2]) is str
                        and type(pid[1]) is tuple):
                    found[pid[2]] = pid[1][1]
                stack.append(opaque)
            elif isinstance(arg, (str, bytes, int)) and not opcode.stack_before:
                stack.append(arg)
            else:
                for item in opcode.stack_before:
                    if item is pickletools.markobject:
                        pop_to_mark()
                    elif stack:
                        stack.pop()
                stack.extend(opaque for _ in opcode.stack_after)
    except (ValueError, EOFError, struct.error, UnicodeDecodeError, IndexError) as exc:
        raise SerializationError(f"ember.load: the legacy checkpoint's pickle is malformed ({exc})") from None
    raise SerializationError("ember.load: the legacy checkpoint's pickle has no end")


def _storage_layout(data, keys, position, itemsizes):
    """Where each storage's bytes are: ``{key: (start, numel, element size)}``. Records hold
    an element count; the element size comes from the storage type the pickle names."""
    layout = {}
    for key in keys:
        if key not in itemsizes:
            raise SerializationError(f"ember.load: storage {key!r} is listed but never used by the pickle")
        if position + 8 > len(data):
            raise SerializationError("ember.load: the legacy checkpoint is truncated (a storage header is missing)")
        (numel,) = struct.unpack("<q", bytes(data[position:position + 8]))
        size = itemsizes[key]
        if numel < 0 or position + 8 + numel * size > len(data):
            raise SerializationError(f"ember.load: storage {key!r} declares {numel} elements, more than the file "
                                     "holds")
        layout[key] = (position + 8, numel, size)
        position += 8 + numel * size
    if position != len(data):
        raise SerializationError(f"ember.load: {len(data) - position} unexpected bytes after the legacy "
                                 "checkpoint's storages")
    return layout
