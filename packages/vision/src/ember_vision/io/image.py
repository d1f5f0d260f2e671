"""Image files as tensors: read/write bytes, decode to uint8 (C, H, W), encode PNG/JPEG.

torchvision decodes with libpng/libjpeg; here Pillow does (PNG is lossless, so pixels
are equal; JPEG decoders may differ by a level or two on some pixels)."""
import io as _bytes_io
from enum import Enum

import numpy as np
from PIL import Image, ImageOps

import ember_tensor as torch

__all__ = ["ImageReadMode", "read_file", "write_file", "decode_image", "decode_png", "decode_jpeg", "decode_gif",
           "decode_webp", "read_image", "encode_png", "write_png", "encode_jpeg", "write_jpeg"]


class ImageReadMode(Enum):
    """How to decode: keep the file's channels, or convert to grey / grey+alpha / RGB / RGBA."""

    UNCHANGED = 0
    GRAY = 1
    GRAY_ALPHA = 2
    RGB = 3
    RGB_ALPHA = 4
    RGBA = RGB_ALPHA


_MODES = {ImageReadMode.GRAY: "L", ImageReadMode.GRAY_ALPHA: "LA", ImageReadMode.RGB: "RGB",
          ImageReadMode.RGB_ALPHA: "RGBA"}


def read_file(path):
    """The bytes of a file as a 1-d uint8 tensor."""
    with open(path, "rb") as f:
        return torch.from_numpy(np.frombuffer(f.read(), dtype=np.uint8).copy())


def write_file(filename, data):
    """Write a 1-d uint8 tensor's bytes to ``filename``."""
    with open(filename, "wb") as f:
        f.write(data.detach().cpu().numpy().astype(np.uint8).tobytes())


def _as_bytes(input):
    if isinstance(input, str):
        return read_file(input).numpy().tobytes()
    if input.dtype != torch.uint8 or input.dim() != 1:
        raise RuntimeError("Expected a 1-d uint8 tensor of encoded bytes")
    return input.numpy().tobytes()


def decode_image(input, mode=ImageReadMode.UNCHANGED, apply_exif_orientation=False):
    """Decode PNG, JPEG, GIF, BMP, WEBP, ... bytes (or a path) to a uint8 tensor (C, H, W).

    Args:
        input: a 1-d uint8 tensor of the file's bytes, or a path.
        mode: an ``ImageReadMode`` (or its name).
        apply_exif_orientation: rotate/flip as the EXIF orientation tag says.
    """
    if isinstance(mode, str):
        mode = ImageReadMode[mode.upper()]
    image = Image.open(_bytes_io.BytesIO(_as_bytes(input)))
    if apply_exif_orientation:
        image = ImageOps.exif_transpose(image)
    if mode != ImageReadMode.UNCHANGED:
        image = image.convert(_MODES[mode])
    elif image.mode == "P":
        image = image.convert("RGBA" if "transparency" in image.info else "RGB")
    elif image.mode not in ("L", "LA", "RGB", "RGBA", "I;16"):
        image = image.convert("RGB")
    array = np.asarray(image)
    if array.ndim == 2:
        array = array[:, :, None]
    return torch.from_numpy(np.array(array.transpose(2, 0, 1), order="C"))  # a writable copy


def decode_png(input, mode=ImageReadMode.UNCHANGED, apply_exif_orientation=False):
    """``decode_image`` for PNG bytes."""
    return decode_image(input, mode, apply_exif_orientation)


def decode_jpeg(input, mode=ImageReadMode.UNCHANGED, device="cpu", apply_exif_orientation=False):
    """``decode_image`` for JPEG bytes (a list of inputs gives a list of images)."""
    if isinstance(input, (list, tuple)):
        return [decode_image(i, mode, apply_exif_orientation).to(device) for i in input]
    return decode_image(input, mode, apply_exif_orientation).to(device)


def decode_gif(input):
    """Decode GIF bytes to uint8 RGB: (3, H, W) for one frame, (N, 3, H, W) for an animation."""
    image = Image.open(_bytes_io.BytesIO(_as_bytes(input)))
    frames = []
    for index in range(getattr(image, "n_frames", 1)):
        image.seek(index)
        frames.append(np.asarray(image.convert("RGB")).transpose(2, 0, 1))
    array = frames[0] if len(frames) == 1 else np.stack(frames)
    return torch.from_numpy(np.ascontiguousarray(array))


def decode_webp(input, mode=ImageReadMode.UNCHANGED):
    """``decode_image`` for WEBP bytes."""
    return decode_image(input, mode)


def read_image(path, mode=ImageReadMode.UNCHANGED, apply_exif_orientation=False):
    """Read and decode an image file to a uint8 tensor (C, H, W)."""
    return decode_image(read_file(path), mode, apply_exif_orientation)


def _to_pil(input):
    if input.dtype != torch.uint8:
        raise RuntimeError(f"Input tensor dtype should be uint8, got {input.dtype}")
    if input.dim() != 3 or input.shape[0] not in (1, 3):
        raise RuntimeError(f"The number of channels should be 1 or 3, got: {input.shape[0] if input.dim() else 0}")
    array = input.detach().cpu().numpy().transpose(1, 2, 0)
    return Image.fromarray(array[:, :, 0] if array.shape[2] == 1 else np.ascontiguousarray(array))


def _encode(image, **options):
    buffer = _bytes_io.BytesIO()
    image.save(buffer, **options)
    return torch.from_numpy(np.frombuffer(buffer.getvalue(), dtype=np.uint8).copy())


def encode_png(input, compression_level=6):
    """Encode a uint8 (1 or 3, H, W) tensor as PNG bytes (a 1-d uint8 tensor)."""
    if not 0 <= compression_level <= 9:
        raise RuntimeError("Compression level should be between 0 and 9")
    return _encode(_to_pil(input), format="PNG", compress_level=compression_level)


def write_png(input, filename, compression_level=6):
    """Encode as PNG and write to ``filename``."""
    write_file(filename, encode_png(input, compression_level))


def encode_jpeg(input, quality=75):
    """Encode a uint8 (1 or 3, H, W) tensor as JPEG bytes (a list of images gives a list)."""
    if isinstance(input, (list, tuple)):
        return [encode_jpeg(i, quality) for i in input]
    if not 1 <= quality <= 100:
        raise ValueError("Image quality should be a positive number between 1 and 100")
    return _encode(_to_pil(input), format="JPEG", quality=quality)


def write_jpeg(input, filename, quality=75):
    """Encode as JPEG and write to ``filename``."""
    write_file(filename, encode_jpeg(input, quality))
