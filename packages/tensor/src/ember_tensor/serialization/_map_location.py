"""``map_location``: where each storage read from a checkpoint goes.

PyTorch's forms: None (where it was saved), a device or string (everything there), a dict
from saved location to new location (``{"cuda:1": "cuda:0"}``), or a callable
``fn(storage, location)`` returning a storage (or None for the default).
"""
from .._device import device as _device_cls
from ._rebuild import LoadedStorage, SerializationError

__all__ = ["place_storage", "checked_device"]


def _device_named(name):
    if isinstance(name, _device_cls):
        return name
    if not isinstance(name, str):
        raise SerializationError(f"ember.load: unsupported map_location entry {name!r}")
    try:
        dev = _device_cls(name)
    except (RuntimeError, ValueError, TypeError):
        raise SerializationError(f"ember.load: unsupported storage location {name!r}") from None
    if dev.type not in ("cpu", "cuda"):
        raise SerializationError(f"ember.load: storage location {name!r} is not supported by ember; pass "
                                 "map_location='cpu' to load it on the CPU")
    return dev


# Device types whose runtime may be absent. Naming one in a checkpoint's locations or in
# map_location is user input to validate (PyTorch's error), not a choice of code: where
# the storage goes is then up to its backend's `storage.adopt`.
_NEEDS_RUNTIME = {"cuda"}


def checked_device(dev):
    """`dev` when its runtime is available, else PyTorch's error for a checkpoint mapped
    onto a CUDA device on a machine without one."""
    if dev.type in _NEEDS_RUNTIME:
        from .. import cuda  # cuda initialises a backend: only when a checkpoint asks for it
        if not cuda.is_available():
            raise RuntimeError(
                "Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is False. "
                "If you are running on a CPU-only machine, please use torch.load with "
                "map_location=torch.device('cpu') to map your storages to the CPU.")
    return dev


def place_storage(raw, dtype, location, map_location):
    """A LoadedStorage of `raw` bytes for a storage saved at `location`, placed by `map_location`."""
    if not isinstance(location, str):
        raise SerializationError(f"ember.load: a storage location is {type(location).__name__}, not a str")
    if map_location is None:
        return LoadedStorage(raw, dtype, checked_device(_device_named(location)))
    if isinstance(map_location, dict):
        return LoadedStorage(raw, dtype, checked_device(_device_named(map_location.get(location, location))))
    if isinstance(map_location, (str, _device_cls)):
        return LoadedStorage(raw, dtype, checked_device(_device_named(map_location)))
    if callable(map_location):
        # PyTorch hands the callable a CPU storage and the saved location string.
        result = map_location(LoadedStorage(raw, dtype, _device_cls("cpu")), location)
        if result is None:
            return LoadedStorage(raw, dtype, checked_device(_device_named(location)))
        if not isinstance(result, LoadedStorage):
            raise SerializationError(f"ember.load: map_location returned a {type(result).__name__}, not a storage")
        checked_device(result.device)
        return result
    raise SerializationError(f"ember.load: unsupported map_location {map_location!r} (expected a device, a string, "
                             "a dict or a callable)")
