"""Tensor images: dimensions, dtype ranges and conversion, and the cast-in/cast-out steps
the other tensor kernels share (integer images are processed in float32 and rounded back)."""
import ember_tensor as torch

__all__ = ["get_dimensions", "max_value", "convert_image_dtype", "cast_squeeze_in", "cast_squeeze_out", "erase"]


_INT_TYPES = (torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64)


def _assert_image_tensor(img):
    if not isinstance(img, torch.Tensor) or img.ndim < 2:
        raise TypeError("Tensor is not a torch image.")


def get_dimensions(img):
    """``[channels, height, width]``; a 2-d tensor has one channel."""
    _assert_image_tensor(img)
    channels = 1 if img.ndim == 2 else img.shape[-3]
    return [channels, img.shape[-2], img.shape[-1]]


def max_value(dtype):
    """The largest value of an image dtype: 255 for uint8, 1.0 for floating point."""
    if dtype == torch.uint8:
        return 255
    if dtype == torch.int8:
        return 127
    if dtype == torch.int16:
        return 32767
    if dtype == torch.int32:
        return 2147483647
    if dtype == torch.int64:
        return 9223372036854775807
    return 1.0


def convert_image_dtype(image, dtype=torch.float):
    """Convert, rescaling values: uint8 255 is float 1.0 (float->int maps 1.0 to 255 by ``* 255.999``)."""
    if image.dtype == dtype:
        return image
    if image.is_floating_point():
        if dtype.is_floating_point:
            return image.to(dtype)
        if (image.dtype == torch.float32 and dtype in (torch.int32, torch.int64)) or (
                image.dtype == torch.float64 and dtype == torch.int64):
            raise RuntimeError(f"The cast from {image.dtype} to {dtype} cannot be performed safely.")
        eps = 1e-3
        return (image * (float(max_value(dtype)) + 1.0 - eps)).to(dtype)
    input_max = float(max_value(image.dtype))
    if dtype.is_floating_point:
        return image.to(dtype) / input_max
    output_max = float(max_value(dtype))
    if input_max > output_max:
        factor = int((input_max + 1) // (output_max + 1))
        return torch.div(image, factor, rounding_mode="floor").to(dtype)
    factor = int((output_max + 1) // (input_max + 1))
    return image.to(dtype) * factor


def cast_squeeze_in(img, req_dtypes):
    need_squeeze = img.ndim < 4
    if need_squeeze:
        img = img.unsqueeze(dim=0)
    out_dtype = img.dtype
    need_cast = out_dtype not in req_dtypes
    if need_cast:
        img = img.to(req_dtypes[0])
    return img, need_cast, need_squeeze, out_dtype


def cast_squeeze_out(img, need_cast, need_squeeze, out_dtype):
    if need_squeeze:
        img = img.squeeze(dim=0)
    if need_cast:
        if out_dtype in _INT_TYPES:
            img = torch.round(img)  # round before the cast truncates
        img = img.to(out_dtype)
    return img


def erase(img, i, j, h, w, v, inplace=False):
    """Overwrite the box (i, j, h, w) with ``v``."""
    if not inplace:
        img = img.clone()
    img[..., i:i + h, j:j + w] = v
    return img
