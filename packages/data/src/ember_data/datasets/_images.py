"""Reading image files without third-party libraries: NumPy ``.npy`` and Netpbm (PGM/PPM,
binary P5/P6 and ASCII P2/P3). Other formats go through Pillow when it is installed."""
import os

import numpy as np

__all__ = ["IMG_EXTENSIONS", "NATIVE_EXTENSIONS", "read_image", "pil_available"]

NATIVE_EXTENSIONS = (".npy", ".pgm", ".ppm", ".pnm")
PIL_EXTENSIONS = (".jpg", ".jpeg", ".png", ".bmp", ".tif", ".tiff", ".webp", ".gif")


def pil_available():
    """Whether Pillow can be imported (it is optional)."""
    try:
        import PIL.Image  # noqa: F401
    except ImportError:
        return False
    return True


IMG_EXTENSIONS = NATIVE_EXTENSIONS + (PIL_EXTENSIONS if pil_available() else ())


def _netpbm_tokens(data, count, start):
    """``count`` whitespace-separated header tokens from ``start``, skipping ``#`` comments."""
    tokens, i = [], start
    while len(tokens) < count:
        while data[i:i + 1].isspace():
            i += 1
        if data[i:i + 1] == b"#":
            while data[i:i + 1] not in (b"\n", b""):
                i += 1
            continue
        j = i
        while j < len(data) and not data[j:j + 1].isspace():
            j += 1
        tokens.append(data[i:j])
        i = j
    return tokens, i + 1  # a single whitespace byte ends the header


def read_netpbm(path):
    """A PGM (H, W) or PPM (H, W, 3) file as a uint8 (or >8-bit: uint16) array."""
    with open(path, "rb") as f:
        data = f.read()
    magic = data[:2]
    if magic not in (b"P2", b"P3", b"P5", b"P6"):
        raise ValueError(f"{path}: not a PGM/PPM file (magic {magic!r})")
    (width, height, maxval), end = _netpbm_tokens(data, 3, 2)
    width, height, maxval = int(width), int(height), int(maxval)
    channels = 3 if magic in (b"P3", b"P6") else 1
    dtype = np.dtype(">u2") if maxval > 255 else np.dtype(np.uint8)
    count = width * height * channels
    if magic in (b"P5", b"P6"):
        pixels = np.frombuffer(data, dtype=dtype, count=count, offset=end).astype(dtype.newbyteorder("="))
    else:
        pixels = np.array(data[end:].split()[:count], dtype=np.int64).astype(dtype.newbyteorder("="))
    shape = (height, width, 3) if channels == 3 else (height, width)
    return pixels.reshape(shape)


def read_image(path):
    """The image at ``path`` as a NumPy array (H, W) or (H, W, C), or a PIL image for
    formats only Pillow reads (the torchvision convention, so its transforms apply)."""
    ext = os.path.splitext(path)[1].lower()
    if ext == ".npy":
        return np.load(path)
    if ext in (".pgm", ".ppm", ".pnm"):
        return read_netpbm(path)
    if not pil_available():
        raise RuntimeError(f"reading {ext} images needs Pillow (pip install pillow); "
                           f"without it ember reads {', '.join(NATIVE_EXTENSIONS)}")
    from PIL import Image

    with open(path, "rb") as f:
        return Image.open(f).convert("RGB")
