"""torchvision.io (images): read_file, decode_image (PNG, JPEG, GIF, WEBP, ...), read_image, encode/write PNG and JPEG."""
from .image import (ImageReadMode, decode_gif, decode_image, decode_jpeg, decode_png, decode_webp, encode_jpeg,
                    encode_png, read_file, read_image, write_file, write_jpeg, write_png)

__all__ = ["ImageReadMode", "read_file", "write_file", "decode_image", "decode_png", "decode_jpeg", "decode_gif",
           "decode_webp", "read_image", "encode_png", "write_png", "encode_jpeg", "write_jpeg"]
