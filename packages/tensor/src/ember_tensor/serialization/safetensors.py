"""``.safetensors`` files (https://github.com/huggingface/safetensors), read and written by
the published spec, with the names of ``safetensors.torch``: ``save_file``, ``load_file``,
``save``, ``load``.

Layout: an 8-byte little-endian header length N; N bytes of UTF-8 JSON
``{"name": {"dtype": "F32", "shape": [2, 3], "data_offsets": [begin, end]}, ...,
"__metadata__": {"str": "str"}}`` padded with spaces to a multiple of 8; then the data
buffer, the tensors' bytes back to back (little-endian, C order), in any order but
covering it exactly. The format holds no code, so loading needs no allow-list; the reader
checks every rule above and refuses a file that breaks one.

Tensors that share memory are refused at save time, as ``safetensors.torch.save_file``
does (the format has no views; saving them twice would load them unshared). Save clones,
or drop the duplicates first.

>>> import ember_tensor as torch
>>> from ember_tensor.serialization import safetensors
>>> blob = safetensors.save({"w": torch.ones(2, dtype=torch.bfloat16)})
>>> safetensors.load(blob)["w"]
tensor([1., 1.], dtype=torch.bfloat16)
"""
import json
import os
import struct

import numpy as np

from .. import _dtype as D
from .._tensor import Tensor
from ._atomic import atomic_write
from ._rebuild import SerializationError, rebuild_tensor_v2
from ._map_location import place_storage

__all__ = ["save", "save_file", "load", "load_file", "DTYPE_NAMES"]

DTYPE_NAMES = {D.bool: "BOOL", D.uint8: "U8", D.int8: "I8", D.int16: "I16", D.int32: "I32", D.int64: "I64",
               D.float16: "F16", D.bfloat16: "BF16", D.float32: "F32", D.float64: "F64",
               D.complex64: "C64", D.float8_e4m3fn: "F8_E4M3", D.float8_e5m2: "F8_E5M2",
               D.float8_e4m3fnuz: "F8_E4M3FNUZ", D.float8_e5m2fnuz: "F8_E5M2FNUZ"}
_BY_NAME = {name: dtype for dtype, name in DTYPE_NAMES.items()}
_MAX_HEADER = 100_000_000  # the reference implementation's limit


def _layout(tensors, metadata):
    if not isinstance(tensors, dict):
        raise ValueError(f"Expected a dict of [str, torch.Tensor] but received {type(tensors)}")
    for name, t in tensors.items():
        if not isinstance(name, str) or not isinstance(t, Tensor):
            raise ValueError(f"Key `{name}` is invalid, expected str to str (key) and torch.Tensor (value)")
        if t.layout is not None and str(t.layout) != "torch.strided":
            raise ValueError(f"You are trying to save a sparse tensor: `{name}` which this library does not support.")
    _refuse_shared(tensors)
    header, blobs, offset = {}, [], 0
    if metadata is not None:
        if not all(isinstance(k, str) and isinstance(v, str) for k, v in metadata.items()):
            raise ValueError("metadata must be a dict of str to str")
        header["__metadata__"] = dict(metadata)
    # Largest alignment first, then by name, as the reference writer orders them.
    for name, t in sorted(tensors.items(), key=lambda kv: (-kv[1]._dtype.itemsize, kv[0])):
        if t._dtype not in DTYPE_NAMES:
            raise ValueError(f"safetensors: dtype {t._dtype} is not supported")
        host = np.ascontiguousarray(t.detach()._host_numpy()).reshape(-1).view(np.uint8)
        header[name] = {"dtype": DTYPE_NAMES[t._dtype], "shape": list(t.shape),
                        "data_offsets": [offset, offset + host.nbytes]}
        blobs.append(host)
        offset += host.nbytes
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    text += b" " * (-len(text) % 8)
    return [struct.pack("<Q", len(text)), text] + blobs


def _refuse_shared(tensors):
    by_storage = {}
    for name, t in tensors.items():
        by_storage.setdefault(id(t._storage), []).append(name)
    shared = [names for names in by_storage.values() if len(names) > 1]
    if shared:
        raise RuntimeError(
            f"Some tensors share memory, this will lead to duplicate memory on disk and potential differences "
            f"when loading them again: {shared}.\nA potential way to correctly save your model is to use "
            "`save_model`.\nMore information at https://huggingface.co/docs/safetensors/torch_shared_tensors")


def save(tensors, metadata=None):
    """The ``.safetensors`` bytes of a dict of tensors (``safetensors.torch.save``).

    Args:
        tensors: ``{name: tensor}``; tensors may not share memory.
        metadata: optional ``{str: str}`` stored in the header.
    """
    return b"".join(bytes(part) for part in _layout(tensors, metadata))


def save_file(tensors, filename, metadata=None):
    """Write a dict of tensors to `filename` in the ``.safetensors`` format, atomically
    (``safetensors.torch.save_file``)."""
    parts = _layout(tensors, metadata)

    def write(fh):
        for part in parts:
            fh.write(memoryview(part))

    atomic_write(os.fspath(filename), write)


def _corrupt(what):
    return SerializationError(f"safetensors: {what}")


def _parse(data, device):
    total = len(data)
    if total < 8:
        raise _corrupt("HeaderTooSmall: the file is shorter than its 8-byte header length")
    (n,) = struct.unpack("<Q", bytes(data[:8]))
    if n > _MAX_HEADER:
        raise _corrupt(f"HeaderTooLarge: the header declares {n} bytes")
    if 8 + n > total:
        raise _corrupt("InvalidHeaderLength: the header runs past the end of the file")
    try:
        header = json.loads(bytes(data[8:8 + n]).decode("utf-8"), object_pairs_hook=_no_duplicates)
    except (ValueError, RecursionError) as exc:
        raise _corrupt(f"InvalidHeaderDeserialization ({exc})") from None
    if not isinstance(header, dict):
        raise _corrupt("InvalidHeaderDeserialization: the header is not an object")
    header.pop("__metadata__", None)
    buffer_len = total - 8 - n
    spans, out = [], {}
    for name, info in header.items():
        if not isinstance(info, dict) or set(info) != {"dtype", "shape", "data_offsets"}:
            raise _corrupt(f"InvalidHeaderDeserialization: entry {name!r} is malformed")
        dtype = _BY_NAME.get(info["dtype"])
        if dtype is None:
            raise _corrupt(f"dtype {info['dtype']!r} of {name!r} is not supported by ember")
        shape, offsets = info["shape"], info["data_offsets"]
        if (not isinstance(shape, list) or not all(type(d) is int and d >= 0 for d in shape)
                or not isinstance(offsets, list) or len(offsets) != 2
                or not all(type(o) is int and o >= 0 for o in offsets) or offsets[0] > offsets[1]):
            raise _corrupt(f"InvalidTensorView: {name!r} has an invalid shape or data_offsets")
        numel = 1
        for d in shape:
            numel *= d
        if numel * dtype.itemsize != offsets[1] - offsets[0]:
            raise _corrupt(f"TensorInvalidInfo: {name!r} of shape {shape} and dtype {info['dtype']} does not "
                           f"take {offsets[1] - offsets[0]} bytes")
        spans.append((offsets[0], offsets[1], name, dtype, shape))
    # The data buffer must be covered exactly once: no gaps, no overlaps, nothing after.
    position = 0
    for begin, end, name, _, _ in sorted(spans):
        if begin != position:
            raise _corrupt(f"InvalidOffset: {name!r} does not start where the previous tensor ends")
        position = end
    if position != buffer_len:
        raise _corrupt(f"MetadataIncompleteBuffer: the tensors cover {position} bytes of a {buffer_len}-byte buffer")
    for begin, end, name, dtype, shape in spans:
        raw = np.frombuffer(data, dtype=np.uint8, count=end - begin, offset=8 + n + begin)
        storage = place_storage(raw, dtype, "cpu", device)
        stride, acc = [], 1
        for d in reversed(shape):
            stride.append(acc)
            acc *= max(d, 1)
        out[name] = rebuild_tensor_v2(storage, 0, tuple(shape), tuple(reversed(stride)))
    return out


def _no_duplicates(pairs):
    keys = [k for k, _ in pairs]
    if len(set(keys)) != len(keys):
        raise ValueError("duplicate key in the header")
    return dict(pairs)


def load(data, device="cpu"):
    """The dict of tensors in ``.safetensors`` bytes (``safetensors.torch.load``)."""
    return _parse(bytearray(data), device)


def load_file(filename, device="cpu"):
    """The dict of tensors in the ``.safetensors`` file `filename` (``safetensors.torch.load_file``).

    Args:
        device: where the tensors go (``"cpu"``, ``"cuda:0"``, a device).
    """
    with open(os.fspath(filename), "rb") as fh:
        data = bytearray(os.fstat(fh.fileno()).st_size)
        if fh.readinto(data) != len(data):
            raise _corrupt("the file changed size while it was read")
    return _parse(data, device)


