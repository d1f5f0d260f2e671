"""Conversions between PIL images, arrays and tensors; dtype conversion, normalisation, erasing."""
import sys

import numpy as np
from PIL import Image

import ember_tensor as torch

from . import _pil, _tensor_common as F_t
from ._modes import is_tensor

__all__ = ["get_dimensions", "get_image_size", "get_image_num_channels", "to_tensor", "pil_to_tensor", "to_pil_image",
           "convert_image_dtype", "normalize", "erase"]


def get_dimensions(img):
    """``[channels, height, width]`` of a PIL image or tensor.

    >>> import ember_tensor as torch
    >>> get_dimensions(torch.zeros(3, 4, 5))
    [3, 4, 5]
    """
    return F_t.get_dimensions(img) if is_tensor(img) else _pil.get_dimensions(img)


def get_image_size(img):
    """``[width, height]``."""
    _, h, w = get_dimensions(img)
    return [w, h]


def get_image_num_channels(img):
    """The number of channels."""
    return get_dimensions(img)[0]


_MODE_TO_NPTYPE = {"I": np.int32, "I;16" if sys.byteorder == "little" else "I;16B": np.int16, "F": np.float32}


def to_tensor(pic):
    """A PIL image or ndarray (H, W, C) as a float tensor (C, H, W) in [0, 1] (uint8 is divided
    by 255; other dtypes keep their values).

    >>> import numpy as np
    >>> to_tensor(np.full((2, 2, 3), 255, np.uint8)).shape
    torch.Size([3, 2, 2])
    """
    if not (_pil.is_pil_image(pic) or isinstance(pic, np.ndarray)):
        raise TypeError(f"pic should be PIL Image or ndarray. Got {type(pic)}")
    if isinstance(pic, np.ndarray):
        if pic.ndim not in (2, 3):
            raise ValueError(f"pic should be 2/3 dimensional. Got {pic.ndim} dimensions.")
        if pic.ndim == 2:
            pic = pic[:, :, None]
        img = torch.from_numpy(np.ascontiguousarray(pic.transpose((2, 0, 1))))
        return img.to(torch.get_default_dtype()).div(255) if img.dtype == torch.uint8 else img
    array = np.array(pic, _MODE_TO_NPTYPE.get(pic.mode, np.uint8), copy=True)
    if pic.mode == "1":
        array = 255 * array
    array = array.reshape(pic.size[1], pic.size[0], len(pic.getbands()))
    img = torch.from_numpy(np.ascontiguousarray(array.transpose((2, 0, 1))))
    return img.to(torch.get_default_dtype()).div(255) if img.dtype == torch.uint8 else img


def pil_to_tensor(pic):
    """A PIL image as a tensor (C, H, W) of its own dtype (uint8 for RGB/L), not rescaled."""
    if not _pil.is_pil_image(pic):
        raise TypeError(f"pic should be PIL Image. Got {type(pic)}")
    array = np.array(pic, copy=True)
    array = array.reshape(pic.size[1], pic.size[0], len(pic.getbands()))
    return torch.from_numpy(np.ascontiguousarray(array.transpose((2, 0, 1))))


def _image_from_array(array, mode):
    # Pillow 11.3 deprecated fromarray's mode argument; frombuffer still reads the raw bytes
    # in the requested mode, which is what torchvision relies on.
    inferred = Image.fromarray(array)
    if inferred.mode == mode:
        return inferred
    array = np.ascontiguousarray(array)
    return Image.frombuffer(mode, (array.shape[1], array.shape[0]), array.tobytes(), "raw", mode, 0, 1)


def to_pil_image(pic, mode=None):
    """A tensor (C, H, W) or ndarray (H, W, C) as a PIL image; float tensors are scaled by 255."""
    if is_tensor(pic):
        if pic.ndim == 3:
            pic = pic.permute((1, 2, 0))
        pic = pic.detach().cpu().numpy()
    elif not isinstance(pic, np.ndarray):
        raise TypeError(f"pic should be Tensor or ndarray. Got {type(pic)}.")
    if pic.ndim == 2:
        pic = np.expand_dims(pic, 2)
    if pic.ndim != 3:
        raise ValueError(f"pic should be 2/3 dimensional. Got {pic.ndim} dimensions.")
    if pic.shape[-1] > 4:
        raise ValueError(f"pic should not have > 4 channels. Got {pic.shape[-1]} channels.")
    npimg = pic
    if np.issubdtype(npimg.dtype, np.floating) and mode != "F":
        npimg = (npimg * 255).astype(np.uint8)
    if npimg.shape[2] == 1:
        npimg = npimg[:, :, 0]
        expected_mode = {np.dtype(np.uint8): "L", np.dtype(np.int16): "I;16", np.dtype(np.int32): "I",
                         np.dtype(np.float32): "F"}.get(npimg.dtype)
        if mode is not None and mode != expected_mode:
            raise ValueError(f"Incorrect mode ({mode}) supplied for input type {npimg.dtype}. Should be {expected_mode}")
        mode = expected_mode
    elif npimg.shape[2] == 2:
        if mode is not None and mode != "LA":
            raise ValueError("Only modes ['LA'] are supported for 2D inputs")
        if mode is None and npimg.dtype == np.uint8:
            mode = "LA"
    elif npimg.shape[2] == 4:
        if mode is not None and mode not in ("RGBA", "CMYK", "RGBX"):
            raise ValueError("Only modes ['RGBA', 'CMYK', 'RGBX'] are supported for 4D inputs")
        if mode is None and npimg.dtype == np.uint8:
            mode = "RGBA"
    else:
        if mode is not None and mode not in ("RGB", "YCbCr", "HSV"):
            raise ValueError("Only modes ['RGB', 'YCbCr', 'HSV'] are supported for 3D inputs")
        if mode is None and npimg.dtype == np.uint8:
            mode = "RGB"
    if mode is None:
        raise TypeError(f"Input type {npimg.dtype} is not supported")
    return _image_from_array(npimg, mode)


def convert_image_dtype(image, dtype=torch.float):
    """Convert a tensor image to ``dtype``, rescaling its values (uint8 255 <-> float 1.0)."""
    if not is_tensor(image):
        raise TypeError("Input img should be Tensor Image")
    return F_t.convert_image_dtype(image, dtype)


def normalize(tensor, mean, std, inplace=False):
    """``(tensor - mean) / std`` per channel, on a float tensor (..., C, H, W).

    >>> import ember_tensor as torch
    >>> normalize(torch.ones(3, 1, 1), [0.5] * 3, [0.5] * 3).flatten().tolist()
    [1.0, 1.0, 1.0]
    """
    if not is_tensor(tensor):
        raise TypeError(f"img should be Tensor Image. Got {type(tensor)}")
    if not tensor.is_floating_point():
        raise TypeError(f"Input tensor should be a float tensor. Got {tensor.dtype}.")
    if tensor.ndim < 3:
        raise ValueError(f"Expected tensor to be a tensor image of size (..., C, H, W). Got tensor.size() = "
                         f"{tuple(tensor.shape)}")
    mean = torch.as_tensor(mean, dtype=tensor.dtype, device=tensor.device)
    std = torch.as_tensor(std, dtype=tensor.dtype, device=tensor.device)
    if bool((std == 0).any()):
        raise ValueError(f"std evaluated to zero after conversion to {tensor.dtype}, leading to division by zero.")
    if mean.ndim == 1:
        mean = mean.view(-1, 1, 1)
    if std.ndim == 1:
        std = std.view(-1, 1, 1)
    if inplace:
        return tensor.sub_(mean).div_(std)
    return (tensor - mean) / std


def erase(img, i, j, h, w, v, inplace=False):
    """Overwrite the box at (i, j) of (h, w) of a tensor image with ``v``."""
    if not is_tensor(img):
        raise TypeError(f"img should be Tensor Image. Got {type(img)}")
    return F_t.erase(img, i, j, h, w, v, inplace=inplace)
