"""PyTorch's checkpoint archive, read and checked before anything is unpickled.

The zip is parsed by ``zipfile`` over the file's bytes (a bytearray, or a private
copy-on-write mapping for ``mmap=True``) without copying them. Before a record is used:

- names: one top folder, no ``..``, no absolute paths, no duplicates (a checkpoint is
  never extracted, but a name that climbs out of the archive marks a hostile file);
- the record's bytes lie inside the file, stored uncompressed where they are mapped, and
  their CRC-32 matches the directory, so a flipped byte is an error rather than a tensor
  with other values (PyTorch's reader skips this check);
- a storage's record holds exactly ``numel * itemsize`` bytes.
"""
import struct
import zipfile
import zlib

import numpy as np

from ._rebuild import SerializationError

__all__ = ["ZipCheckpoint", "is_zip"]

_LOCAL_HEADER = struct.Struct("<4s2B4HL2L2H")


def is_zip(data):
    """Whether `data` starts like a zip archive."""
    return bytes(data[:4]) == b"PK\x03\x04"


class _BufferFile:
    """A read-only, seekable file over a buffer, so zipfile parses it without a copy."""

    def __init__(self, data):
        self.view = memoryview(data).cast("B")
        self.pos = 0

    def read(self, n=-1):
        end = len(self.view) if n is None or n < 0 else min(len(self.view), self.pos + n)
        chunk = bytes(self.view[self.pos:end])
        self.pos = end
        return chunk

    def seek(self, offset, whence=0):
        self.pos = {0: 0, 1: self.pos, 2: len(self.view)}[whence] + offset
        if self.pos < 0:
            raise OSError("seek before the start of the file")
        return self.pos

    def tell(self):
        return self.pos

    def seekable(self):
        return True


def _corrupt(what):
    return SerializationError(f"PytorchStreamReader failed reading zip archive: {what}")


class ZipCheckpoint:
    """The records of one checkpoint archive in `data` (bytes-like; views stay valid while it lives)."""

    def __init__(self, data):
        self.data = data
        try:
            self.zip = zipfile.ZipFile(_BufferFile(data))
            infos = self.zip.infolist()
        except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, ValueError, struct.error, EOFError,
                IndexError, UnicodeDecodeError, NotImplementedError, KeyError) as exc:
            raise _corrupt(f"failed finding central directory ({exc})") from None
        self.prefix = self._check_names(infos)
        self.infos = {info.filename: info for info in infos}
        if self.prefix + "data.pkl" not in self.infos:
            if any(name.endswith("constants.pkl") or "/code/" in name for name in self.infos):
                raise SerializationError("ember.load: this is a TorchScript archive (torch.jit.save); ember cannot "
                                         "load TorchScript programs, only torch.save checkpoints")
            raise _corrupt("file not found: archive/data.pkl")
        self._checked = {}

    @staticmethod
    def _check_names(infos):
        if not infos:
            raise _corrupt("the archive is empty")
        names = [info.filename for info in infos]
        if len(set(names)) != len(names):
            raise _corrupt("the archive holds two records with one name")
        prefix = names[0].split("/", 1)[0] + "/"
        for name in names:
            parts = name.split("/")
            if (not name.startswith(prefix) or name.startswith(("/", "\\")) or "\\" in name or ":" in parts[0]
                    or any(p in ("..", ".") for p in parts) or "\0" in name):
                raise _corrupt(f"record name {name!r} is outside the archive's folder (path traversal)")
        return prefix

    def has(self, name):
        """Whether the archive has record ``<archive>/<name>``."""
        return self.prefix + name in self.infos

    def record(self, name):
        """The bytes of record ``<archive>/<name>`` as a 1-d uint8 array (a view when stored)."""
        full = self.prefix + name
        if full in self._checked:
            return self._checked[full]
        info = self.infos.get(full)
        if info is None:
            raise _corrupt(f"file not found: {full}")
        if info.compress_type == zipfile.ZIP_STORED:
            array = self._stored_view(info)
        else:
            array = self._inflated(info)
        self._checked[full] = array
        return array

    def _stored_view(self, info):
        total = len(self.data)
        start = info.header_offset
        if start < 0 or start + _LOCAL_HEADER.size > total:
            raise _corrupt(f"the local header of {info.filename} lies outside the file")
        fields = _LOCAL_HEADER.unpack(bytes(self.data[start:start + _LOCAL_HEADER.size]))
        if fields[0] != b"PK\x03\x04":
            raise _corrupt(f"bad local header signature for {info.filename}")
        name_len, extra_len = fields[10], fields[11]
        name_start = start + _LOCAL_HEADER.size
        if bytes(self.data[name_start:name_start + name_len]).decode("utf-8", "replace") != info.filename:
            raise _corrupt(f"the local header of {info.filename} names another record")
        data_start = name_start + name_len + extra_len
        if info.file_size != info.compress_size or data_start + info.file_size > total:
            raise _corrupt(f"record {info.filename} of {info.file_size} bytes runs past the end of the file")
        array = np.frombuffer(self.data, dtype=np.uint8, count=info.file_size, offset=data_start)
        if zlib.crc32(array) & 0xFFFFFFFF != info.CRC:
            raise _corrupt(f"invalid header or archive is corrupted: CRC-32 mismatch in {info.filename}")
        return array

    def _inflated(self, info):
        if info.file_size > 8 * len(self.data) + (1 << 20):
            raise _corrupt(f"record {info.filename} declares {info.file_size} bytes, far more than the file holds")
        try:
            raw = self.zip.read(info)  # zipfile checks the CRC
        except (zipfile.BadZipFile, zlib.error, EOFError, OSError, NotImplementedError, ValueError,
                RuntimeError) as exc:
            raise _corrupt(f"record {info.filename} cannot be read ({exc})") from None
        return np.frombuffer(bytearray(raw), dtype=np.uint8)

    def text(self, name, default=None):
        """A small text record (``version``, ``byteorder``), or `default` when absent."""
        if not self.has(name):
            return default
        try:
            return bytes(self.record(name)[:64]).decode("ascii").strip()
        except UnicodeDecodeError:
            raise _corrupt(f"record {name} is not text") from None
