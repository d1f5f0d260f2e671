"""``torch.types``: the type aliases PyTorch's annotations use, for programs that import
them (``from torch.types import Device, Number``)."""
import os
from typing import IO, Any, Sequence, Union

from ._device import device as _device_cls
from ._dtype import dtype as _dtype_cls
from ._layout import layout as _layout_cls
from ._size import Size
from ._tensor import Tensor

__all__ = ["Number", "Device", "FileLike", "Storage", "Size", "Tensor", "IntLikeType", "FloatLikeType",
           "BoolLikeType"]

_int, _float, _bool, _complex, _str, _bytes = int, float, bool, complex, str, bytes
_dtype, _device, _layout = _dtype_cls, _device_cls, _layout_cls
_size = Union[Size, list[int], tuple[int, ...]]
_TensorOrTensors = Union[Tensor, Sequence[Tensor]]
_TensorOrOptionalTensors = Union[Tensor, Sequence[Union[Tensor, None]]]

Number = Union[int, float, bool]
_Number = (int, float, bool)
Device = Union[_device_cls, str, int, None]
FileLike = Union[str, os.PathLike, IO[bytes]]
IntLikeType = int
FloatLikeType = float
BoolLikeType = bool
Storage = Any  # ember tensors hold NumPy or device arrays, not a Storage class
