"""Which GPU a torch.cuda argument names: an int, 'cuda:1', a device, or None (the current one)."""
from .._backends.cuda.runtime import current_index
from .._device import device as _device_cls

__all__ = ["device_index"]


def device_index(dev, optional=False):
    """A device index from an int, 'cuda:1', a device, or None (the current device)."""
    if dev is None or (optional and dev == -1):
        return current_index()
    if isinstance(dev, str):
        dev = _device_cls(dev)
    if isinstance(dev, _device_cls):
        if dev.type != "cuda":
            raise ValueError(f"Expected a cuda device, but got: {dev}")
        return current_index() if dev.index is None else dev.index
    return int(dev)
