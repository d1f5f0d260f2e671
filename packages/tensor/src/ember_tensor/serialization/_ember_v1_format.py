"""Constants of ember's own checkpoint format (``EMBRCKPT``), read by _ember_v1_reader and
written by the test suite's fixture writer (tests/serialization_fixtures/ember_v1_writer.py)."""

from ._rebuild import SerializationError

__all__ = ["MAGIC", "END_MAGIC", "FORMAT_VERSION", "ALIGN", "MAX_DEPTH", "TRAILER", "SerializationError"]

MAGIC = b"EMBRCKPT"
END_MAGIC = b"EMBR-END"
FORMAT_VERSION = 1
ALIGN = 64  # storages start on 64-byte boundaries
MAX_DEPTH = 200  # deeper object trees are refused instead of exhausting the Python stack
TRAILER = len(END_MAGIC) + 8

