"""Copying a batch into pinned (page-locked) host memory, as PyTorch's DataLoader does.

With ``DataLoader(..., pin_memory=True)`` and a CUDA device available, every batch the
loader yields has its tensors in pinned memory, so that ``batch.cuda(non_blocking=True)``
can overlap the copy with GPU work. The walk over the batch follows PyTorch's
``pin_memory`` utility, including its quirk that a plain tuple comes back as a list.
"""
import collections.abc
import copy

import ember_tensor as et

__all__ = ["pin_memory", "pinning_available"]


def pinning_available():
    """Whether pinned memory can be had here (a CUDA device, real or simulated)."""
    return et.cuda.is_available()


def pin_memory(data):
    """`data` with every tensor in it copied to pinned memory (objects with a
    ``pin_memory()`` method are asked to pin themselves)."""
    if isinstance(data, et.Tensor):
        return data.pin_memory()
    if isinstance(data, (str, bytes)):
        return data
    if isinstance(data, collections.abc.Mapping):
        try:
            if isinstance(data, collections.abc.MutableMapping):
                # A shallow copy keeps the mapping's type and any attributes it carries.
                clone = copy.copy(data)
                clone.update({k: pin_memory(v) for k, v in data.items()})
                return clone
            return type(data)({k: pin_memory(v) for k, v in data.items()})
        except TypeError:  # a mapping type that cannot be built this way
            return {k: pin_memory(v) for k, v in data.items()}
    if isinstance(data, tuple) and hasattr(data, "_fields"):  # a namedtuple
        return type(data)(*(pin_memory(sample) for sample in data))
    if isinstance(data, tuple):
        return [pin_memory(sample) for sample in data]  # PyTorch's backwards-compatible list
    if isinstance(data, collections.abc.Sequence):
        try:
            if isinstance(data, collections.abc.MutableSequence):
                clone = copy.copy(data)
                for i, item in enumerate(data):
                    clone[i] = pin_memory(item)
                return clone
            return type(data)([pin_memory(sample) for sample in data])
        except TypeError:
            return [pin_memory(sample) for sample in data]
    if hasattr(data, "pin_memory"):
        return data.pin_memory()
    return data
