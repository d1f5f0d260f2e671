"""default_collate / default_convert: turn a list of samples into one batch.

Tensors are stacked with NumPy into one fresh array (no Numba kernel runs in a forked
worker, where a threaded runtime inherited from the parent is not safe to start).
"""
import collections.abc
import re

import numpy as np

import ember_tensor

__all__ = ["default_collate", "default_convert", "collate_tensors"]

_STRING_OR_OBJECT = re.compile(r"[SaUO]")
_COLLATE_ERROR = ("default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; "
                  "found {}")
_CONVERT_ERROR = "default_convert: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}"


def _is_namedtuple(obj):
    return isinstance(obj, tuple) and hasattr(obj, "_fields")


def collate_tensors(batch):
    """Stack equally shaped CPU tensors along a new first dimension."""
    first = batch[0]
    if any(t.shape != first.shape for t in batch):
        raise RuntimeError(f"stack expects each tensor to be equal size, but got {list(first.shape)} at entry 0 "
                           f"and {list(next(t for t in batch if t.shape != first.shape).shape)} at entry "
                           f"{next(i for i, t in enumerate(batch) if t.shape != first.shape)}")
    if first.device.type != "cpu":
        return ember_tensor.stack(batch, 0)
    out = np.empty((len(batch),) + tuple(first.shape), dtype=first.numpy(force=True).dtype)
    for i, t in enumerate(batch):
        out[i] = t.numpy(force=True)
    return ember_tensor.from_numpy(out)


def default_collate(batch):
    """Collate a list of samples into a batch, recursively (PyTorch's rules).

    Tensors and NumPy arrays are stacked; Python floats become float64 tensors, ints
    int64; strings stay lists; dicts, namedtuples and sequences are collated per field
    (tuples come back as lists, as in PyTorch).

    >>> default_collate([(1, 2.0, "a"), (3, 4.0, "b")])
    [tensor([1, 3]), tensor([2., 4.], dtype=torch.float64), ('a', 'b')]
    """
    elem = batch[0]
    if isinstance(elem, ember_tensor.Tensor):
        return collate_tensors(batch)
    elem_type = type(elem)
    if elem_type.__module__ == "numpy" and elem_type.__name__ not in ("str_", "string_"):
        if elem_type.__name__ in ("ndarray", "memmap"):
            if _STRING_OR_OBJECT.search(elem.dtype.str) is not None:
                raise TypeError(_COLLATE_ERROR.format(elem.dtype))
            return collate_tensors([ember_tensor.as_tensor(b) for b in batch])
        if elem.shape == ():  # NumPy scalars
            return ember_tensor.as_tensor(np.array(batch))
    if isinstance(elem, float):
        return ember_tensor.tensor(batch, dtype=ember_tensor.float64)
    if isinstance(elem, bool):
        return ember_tensor.tensor(batch)
    if isinstance(elem, int):
        return ember_tensor.tensor(batch, dtype=ember_tensor.int64)
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, collections.abc.Mapping):
        collated = {key: default_collate([d[key] for d in batch]) for key in elem}
        try:
            return elem_type(collated)
        except TypeError:  # a Mapping type that cannot be built from a dict
            return collated
    if _is_namedtuple(elem):
        return elem_type(*(default_collate(samples) for samples in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        it = iter(batch)
        elem_size = len(next(it))
        if not all(len(e) == elem_size for e in it):
            raise RuntimeError("each element in list of batch should be of equal size")
        transposed = list(zip(*batch))
        if isinstance(elem, tuple):
            return [default_collate(samples) for samples in transposed]
        try:
            return elem_type([default_collate(samples) for samples in transposed])
        except TypeError:
            return [default_collate(samples) for samples in transposed]
    raise TypeError(_COLLATE_ERROR.format(elem_type))


def default_convert(data):
    """Convert NumPy arrays and scalars in ``data`` to tensors, recursively, without batching.

    >>> import numpy as np
    >>> default_convert({"x": np.array([1.5, 2.5])})
    {'x': tensor([1.5000, 2.5000], dtype=torch.float64)}
    """
    elem_type = type(data)
    if isinstance(data, ember_tensor.Tensor):
        return data
    if elem_type.__module__ == "numpy" and elem_type.__name__ not in ("str_", "string_"):
        if elem_type.__name__ == "ndarray" and _STRING_OR_OBJECT.search(data.dtype.str) is not None:
            return data
        return ember_tensor.as_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        converted = {key: default_convert(data[key]) for key in data}
        try:
            return elem_type(converted)
        except TypeError:
            return converted
    if _is_namedtuple(data):
        return elem_type(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        try:
            return elem_type([default_convert(d) for d in data])
        except TypeError:
            return [default_convert(d) for d in data]
    return data
