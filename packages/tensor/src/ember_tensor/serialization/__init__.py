"""``save`` / ``load`` with PyTorch's contract, and ``torch.serialization``'s allow-list API.

``save`` pickles any picklable object into PyTorch's zip archive (or, with
``_use_new_zipfile_serialization=False``, the legacy format), so real PyTorch reads
ember's files and ember reads PyTorch's. ``load`` defaults to ``weights_only=True``: a
restricted unpickler that builds tensors, containers and allow-listed objects and cannot
run code from the file; ``weights_only=False`` is the user's statement that the file is
trusted, and runs Python's own unpickler. ``load`` also reads ember's former format
(``EMBRCKPT``). The layout of the folder:

- _globals: PyTorch's names for ember's objects, the allow-list, ``add_safe_globals``;
- _rebuild: storage types and tensor rebuild functions, checked against their storage;
- _pickler, _zip_writer, _legacy: writing; _zip_reader, _unpickler, _legacy: reading;
- _map_location, _atomic: where storages go, and atomic writes to paths;
- safetensors: the ``.safetensors`` format.
"""
import io
import mmap as _mmap
import os
import pickle

from . import safetensors
from ._atomic import atomic_write
from ._ember_v1_reader import is_ember_v1, load_ember_v1
from ._globals import (add_safe_globals, allowed_global, clear_safe_globals, get_safe_globals,
                       register_global, register_module_alias, safe_globals)
from ._legacy import is_legacy, read_legacy_checkpoint, write_legacy_checkpoint
from ._map_location import place_storage
from ._rebuild import SerializationError, StorageType, rebuild_tensor
from ._tar_legacy import is_tar, read_tar_checkpoint
from ._unpickler import UNSAFE_MESSAGE, FullUnpickler, WeightsUnpickler, globals_in_pickle
from ._zip_reader import ZipCheckpoint, is_zip
from ._zip_writer import write_zip_checkpoint

__all__ = ["save", "load", "add_safe_globals", "safe_globals", "get_safe_globals", "clear_safe_globals",
           "get_unsafe_globals_in_checkpoint", "register_global", "register_module_alias", "SerializationError",
           "DEFAULT_PROTOCOL", "safetensors"]

DEFAULT_PROTOCOL = 2  # PyTorch's: files stay readable by every PyTorch and Python 3


def save(obj, f, pickle_module=pickle, pickle_protocol=DEFAULT_PROTOCOL, _use_new_zipfile_serialization=True,
         _disable_byteorder_record=False):
    """Save `obj` to `f` in PyTorch's format (``torch.save``).

    Any picklable object can be saved: tensors (views of one storage share one record),
    state_dicts, optimizer states, whole modules, NumPy arrays.

    Args:
        obj: what to save.
        f: a path (written atomically: readers see the old file or the whole new one) or a
            binary file object.
        pickle_module: only Python's ``pickle`` is supported.
        pickle_protocol: the pickle protocol; PyTorch's default 2 keeps files readable by it.
        _use_new_zipfile_serialization: False writes the legacy (pre-1.6) format.

    >>> import io, ember_tensor as torch
    >>> buffer = io.BytesIO()
    >>> torch.save({"w": torch.ones(2)}, buffer)
    >>> _ = buffer.seek(0)
    >>> torch.load(buffer)["w"]
    tensor([1., 1.])
    """
    if pickle_module is not pickle:
        raise ValueError("ember.save supports only Python's pickle module as pickle_module")
    if not 2 <= pickle_protocol <= pickle.HIGHEST_PROTOCOL:
        raise ValueError(f"ember.save: pickle_protocol must be between 2 and {pickle.HIGHEST_PROTOCOL}, "
                         f"got {pickle_protocol}")

    def write(fileobj):
        if _use_new_zipfile_serialization:
            write_zip_checkpoint(obj, fileobj, protocol=pickle_protocol)
        else:
            write_legacy_checkpoint(obj, fileobj, protocol=pickle_protocol)

    if isinstance(f, (str, os.PathLike)):
        atomic_write(os.fspath(f), write)
        return
    write(f)
    if hasattr(f, "flush"):
        f.flush()


def _read_bytes(f, mmap):
    """The checkpoint's bytes: a writable bytearray, or a private copy-on-write mapping."""
    if isinstance(f, (str, os.PathLike)):
        with open(os.fspath(f), "rb") as fh:
            if mmap:
                size = os.fstat(fh.fileno()).st_size
                if size == 0:
                    raise SerializationError("ember.load: the file is empty")
                # ACCESS_COPY: tensors may be written to without ever changing the file.
                return _mmap.mmap(fh.fileno(), 0, access=_mmap.ACCESS_COPY)
            data = bytearray(os.fstat(fh.fileno()).st_size)
            if fh.readinto(data) != len(data):
                raise SerializationError("ember.load: the file changed size while it was read")
            return data
    if mmap:
        name = getattr(f, "name", None)
        if isinstance(name, str) and os.path.isfile(name):
            return _read_bytes(name, mmap)
        raise ValueError("f must be a file path or a file object with a name in order to use the mmap argument")
    if isinstance(f, io.TextIOBase):
        raise SerializationError("ember.load expects a path or a binary file object (opened with 'rb')")
    data = f.read()
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise SerializationError("ember.load expects a path or a binary file object (opened with 'rb')")
    return bytearray(data)


def _storage_dtype(storage_type):
    if type(storage_type) is str:  # a dotted name, from a pickle read without running it
        module, _, name = storage_type.rpartition(".")
        storage_type = allowed_global(module, name)
    if isinstance(storage_type, StorageType):
        return storage_type.dtype
    if callable(storage_type) and getattr(storage_type, "__name__", "").endswith("Storage"):
        storage_type()  # ember's stand-in for a PyTorch storage type it has no dtype for: raises
    raise SerializationError(f"ember.load: a storage is described by {storage_type!r}, not a storage type")


class _ZipStorages:
    """``persistent_load`` for a zip checkpoint: each storage record read and placed once."""

    def __init__(self, archive, map_location):
        self.archive = archive
        self.map_location = map_location
        self.loaded = {}
        self.big_endian = archive.text("byteorder", "little") == "big"

    def __call__(self, pid):
        if len(pid) != 5:
            raise SerializationError(f"ember.load: a storage id has {len(pid)} fields, expected 5")
        _, storage_type, key, location, numel = pid
        dtype = _storage_dtype(storage_type)
        if type(key) is not str or type(numel) is not int:
            raise SerializationError("ember.load: a storage id is malformed")
        if key in self.loaded:
            storage = self.loaded[key]
            if storage.dtype is not dtype:
                raise SerializationError(f"ember.load: storage {key} is named with two dtypes")
            return storage
        raw = self.archive.record(f"data/{key}")
        if raw.nbytes != numel * dtype.itemsize:
            raise SerializationError(f"ember.load: storage {key} declares {numel} {dtype.name} elements "
                                     f"({numel * dtype.itemsize} bytes) but its record holds {raw.nbytes} bytes")
        if self.big_endian and dtype.itemsize > 1:
            raw = raw.view(dtype.np.newbyteorder(">")).astype(dtype.np).view("u1")
        storage = place_storage(raw, dtype, location, self.map_location)
        self.loaded[key] = storage
        return storage


def _unpickle(data, persistent_load, weights_only, pickle_module, pickle_load_args, start=0):
    """Unpickle one pickle of `data` from `start`; returns (object, end offset)."""
    if weights_only:
        unpickler = WeightsUnpickler(memoryview(data)[start:], persistent_load)
        return unpickler.load(), start + unpickler.reader.pos
    stream = io.BytesIO(memoryview(data)[start:])
    if pickle_module is None or pickle_module is pickle:
        obj = FullUnpickler(stream, persistent_load, **pickle_load_args).load()
    else:
        unpickler = pickle_module.Unpickler(stream, **pickle_load_args)
        unpickler.persistent_load = persistent_load
        obj = unpickler.load()
    return obj, start + stream.tell()


def load(f, map_location=None, pickle_module=None, *, weights_only=True, mmap=None, **pickle_load_args):
    """Load an object saved by ``save`` or by PyTorch's ``torch.save`` (``torch.load``).

    By default (``weights_only=True``) only tensors, primitive types, dicts, lists, tuples,
    sets, ``OrderedDict``, dtypes, devices, ``Size``, Parameters and the globals allowed
    through ``add_safe_globals`` can be loaded, and nothing in the file can run code; any
    other global raises ``pickle.UnpicklingError`` naming it and saying how to allow it.
    ``weights_only=False`` unpickles in full, which runs whatever code the file holds:
    use it only for files you trust.

    Args:
        f: a path, or a binary file object (``open(..., "rb")``, ``io.BytesIO``).
        map_location: a device or string, a dict ``{"cuda:1": "cuda:0"}``, or a callable
            ``fn(storage, location)`` returning a storage.
        pickle_module: for ``weights_only=False`` only; the unpickler's module.
        weights_only: see above. None means True, as in PyTorch.
        mmap: map a zip checkpoint's file instead of reading it (a private, copy-on-write
            mapping: writes to the tensors never reach the file).

    Reads PyTorch's zip format, the legacy (pre-1.6) format, the tar-era (pre-0.4) format
    (with ``weights_only=False`` only, as PyTorch) and ember's former format;
    a truncated or altered file raises an error, never different values.
    """
    if weights_only is None:
        weights_only = True
    if weights_only and pickle_module is not None:
        raise RuntimeError("Can not safely load weights when explicit pickle_module is specified")
    data = _read_bytes(f, mmap)
    if is_ember_v1(data):
        if mmap:
            data = bytearray(data)
        return load_ember_v1(data, map_location)
    if is_zip(data):
        archive = ZipCheckpoint(data)
        storages = _ZipStorages(archive, map_location)
        pickled = archive.record("data.pkl")
        return _unpickle(pickled, storages, weights_only, pickle_module, pickle_load_args)[0]
    if mmap:
        raise RuntimeError("mmap can only be used with files saved with `torch.save(_use_new_zipfile_serialization"
                           "=True), please torch.save your checkpoint with this option in order to use mmap.")
    # The two pre-1.6 formats: records read with the restricted unpickler whatever
    # `weights_only` says (they hold no code), the object with the one it chose.
    def record(buffer, start):
        return _unpickle(buffer, _no_storages, True, None, {}, start)

    def obj_pickle(buffer, start, persistent_load):
        return _unpickle(buffer, persistent_load, weights_only, pickle_module, pickle_load_args, start)[0]

    def place(raw, dtype, location):
        return place_storage(raw, dtype, location, map_location)

    if is_legacy(data):
        return read_legacy_checkpoint(data, record, obj_pickle, _storage_dtype, place)
    if is_tar(data):
        if weights_only:  # PyTorch refuses the tar format under weights_only, and so does ember
            raise RuntimeError("Cannot use ``weights_only=True`` with files saved in the legacy .tar format. "
                               + UNSAFE_MESSAGE)
        return read_tar_checkpoint(data, record, obj_pickle, _storage_dtype, place, rebuild_tensor)
    if not data:
        raise SerializationError("ember.load: the file is empty (Ran out of input)")
    # PyTorch's words: the file is neither a zip nor a legacy checkpoint. ember never
    # unpickles such bytes, even with weights_only=False.
    raise pickle.UnpicklingError(f"invalid load key, {bytes(data[:1])!r}.")


def _no_storages(pid):
    raise SerializationError("ember.load: a storage id where none may be")


def get_unsafe_globals_in_checkpoint(f):
    """The globals of a ``save`` checkpoint that ``weights_only=True`` would refuse, found by
    reading its pickle without running it (``torch.serialization.get_unsafe_globals_in_checkpoint``).

    Args:
        f: a path or binary file object of a zip checkpoint.
    Returns:
        a list of ``"module.name"`` strings.
    """
    data = _read_bytes(f, False)
    if not is_zip(data):
        raise ValueError("Expected input to be a checkpoint returned by torch.save")
    pickled = ZipCheckpoint(data).record("data.pkl")
    return [name for name in globals_in_pickle(bytes(pickled))
            if allowed_global(*name.rsplit(".", 1)) is None]
