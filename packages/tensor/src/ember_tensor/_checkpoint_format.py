"""Constants of ember's checkpoint format, shared by its writer and reader (see
`serialization`)."""

__all__ = ["MAGIC", "END_MAGIC", "FORMAT_VERSION", "ALIGN", "MAX_DEPTH", "TRAILER", "SerializationError"]

MAGIC = b"EMBRCKPT"
END_MAGIC = b"EMBR-END"
FORMAT_VERSION = 1
ALIGN = 64  # storages start on 64-byte boundaries
MAX_DEPTH = 200  # deeper object trees are refused instead of exhausting the Python stack
TRAILER = len(END_MAGIC) + 8


class SerializationError(RuntimeError):
    """A checkpoint could not be written or read (unsupported object, corrupt or truncated file)."""
