"""Device objects: ``device('cpu')``, ``device('cuda')``, ``device('cuda:1')``."""

__all__ = ["device"]

# PyTorch's device types, in its error message's order. Device objects of all of them can
# be made and compared (programs write ``tensor.device != torch.device("meta")`` or pick
# ``"mps"`` after checking it is available); tensors live only on the CPU and CUDA, and a
# factory or ``.to()`` given another type raises (see `_backends.get`).
_DEVICE_TYPES = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip", "ve", "fpga", "maia",
                 "xla", "lazy", "vulkan", "mps", "meta", "hpu", "mtia", "privateuseone")


class device:
    """Where a tensor lives, like ``torch.device``.

    >>> device('cuda:1')
    device(type='cuda', index=1)
    """

    __slots__ = ("type", "index")

    def __init__(self, type, index=None):  # noqa: A002 - PyTorch's signature
        if isinstance(type, device):
            self.type, self.index = type.type, type.index
            return
        if not isinstance(type, str):
            if isinstance(type, int):
                # torch.device(0) means cuda:0
                type, index = "cuda", type
            else:
                raise TypeError(f"device() received an invalid combination of arguments: {type!r}")
        if ":" in type:
            if index is not None:
                raise RuntimeError(f"type (string) must not include an index because index was passed explicitly: {type}")
            type, _, idx = type.partition(":")
            if not idx.isdigit():
                raise RuntimeError(f"Invalid device string: '{type}:{idx}'")
            index = int(idx)
        if type not in _DEVICE_TYPES:
            raise RuntimeError(f"Expected one of {', '.join(_DEVICE_TYPES)} device type at start of device "
                               f"string: {type}")
        if index is not None and index < 0:
            raise RuntimeError(f"Device index must not be negative")
        self.type = type
        self.index = index

    def __eq__(self, other):
        if isinstance(other, str):
            other = device(other)
        return isinstance(other, device) and self.type == other.type and self.index == other.index

    def __hash__(self):
        return hash((self.type, self.index))

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __repr__(self):
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __reduce__(self):
        return (device, (self.type, self.index))

    def __enter__(self):
        """``with torch.device('cuda'):`` makes this the default device of the factories
        inside the block (``set_default_device``), as in PyTorch."""
        _ENTERED.append(_default[0])
        set_default_device(self)
        return self

    def __exit__(self, *exc):
        _default[0] = _ENTERED.pop()


CPU = device("cpu")

# The device factory functions use when they are given none: one slot, so that reading
# it costs a list index on every factory call. `with device(...)` stacks the ones it replaced.
_default = [CPU]
_ENTERED = []


def set_default_device(device):
    """Make `device` the one tensors are created on when a factory (tensor, zeros, rand,
    arange, ...) is given none; ``None`` restores the CPU. Like ``torch.set_default_device``,
    it applies to every thread, and ``'cuda'`` means the GPU current when it is set."""
    _default[0] = CPU if device is None else to_device(device)


def get_default_device():
    """The device factories use when given none (``torch.get_default_device``)."""
    return _default[0]


def to_device(obj):
    """Accept a device, a string like 'cuda:0', or an int (a CUDA index); None is the default
    device (`set_default_device`), the CPU unless one was set."""
    if obj.__class__ is device:
        if obj.index is not None or obj.type == "cpu":
            return obj
    elif obj is None:
        return _default[0]
    else:
        obj = device(obj)
    if obj.type == "cuda" and obj.index is None:
        # Tensors live on a numbered GPU: plain 'cuda' means the current one, as in PyTorch.
        # (Left as is without a GPU: the backend then raises ember's "no CUDA" error.)
        from . import cuda
        if cuda.is_available():
            obj = device("cuda", cuda.current_device())
    return obj
