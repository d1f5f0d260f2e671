"""``FileStore``: a store in one file that processes sharing a filesystem open together.

The file is a log of records (key, value; a deleted key has no value), appended under an
exclusive ``flock``; each instance replays the records it has not read yet. ``wait`` and
``get`` poll the file with a growing sleep (up to 10 ms), so a waiter costs little CPU.
As PyTorch's, the last of ``world_size`` instances to be closed removes the file.
"""

import fcntl
import os
import struct
import time

from .._errors import DistStoreError
from .base import DEFAULT_STORE_TIMEOUT, Store, as_bytes

__all__ = ["FileStore"]

_SIZE = struct.Struct("!i")
_USERS_KEY = "cleanup/"  # PyTorch's name for it, and like PyTorch num_keys counts it


class FileStore(Store):
    """A store backed by the file ``file_name``, as ``torch.distributed.FileStore``.

    Args:
        file_name: the file (created if missing); every process must name the same one.
        world_size: how many instances use it; the last one closed deletes the file
            (-1: never deleted).

    >>> import tempfile, os
    >>> store = FileStore(os.path.join(tempfile.mkdtemp(), "store"))
    >>> store.add("n", 5)
    5
    """

    def __init__(self, file_name, world_size=-1):
        super().__init__(DEFAULT_STORE_TIMEOUT)
        self.path = os.fspath(file_name)
        self.world_size = world_size
        self._values = {}
        self._offset = 0
        self._closed = False
        self._users_added = self.add(_USERS_KEY, 1)

    def clone(self):
        """A new instance on the same file: it counts as one more user, so the file lives
        until it is closed too, and its timeout is the default, as PyTorch's clone.

        >>> import tempfile, os
        >>> store = FileStore(os.path.join(tempfile.mkdtemp(), "store"))
        >>> store.clone().set("k", "v"); store.get("k")
        b'v'
        """
        return FileStore(self.path, self.world_size)

    def _locked(self, update=None):
        """Replay new records under the lock; ``update(values)`` may return records to append."""
        with open(self.path, "a+b") as f:
            fcntl.flock(f, fcntl.LOCK_EX)
            try:
                f.seek(self._offset)
                data = f.read()
                self._replay(data)
                records = update(self._values) if update is not None else None
                if records:
                    encoded = b"".join(_encode(key, value) for key, value in records)
                    f.seek(0, os.SEEK_END)
                    f.write(encoded)
                    f.flush()
                    self._replay(encoded)
            finally:
                fcntl.flock(f, fcntl.LOCK_UN)

    def _replay(self, data):
        position = 0
        while position < len(data):
            (key_size,) = _SIZE.unpack_from(data, position)
            key = data[position + 4:position + 4 + key_size].decode()
            position += 4 + key_size
            (value_size,) = _SIZE.unpack_from(data, position)
            position += 4
            if value_size < 0:
                self._values.pop(key, None)
            else:
                self._values[key] = data[position:position + value_size]
                position += value_size
        self._offset += len(data)

    def set(self, key, value):
        self._locked(lambda values: [(key, as_bytes(value))])

    def get(self, key):
        self.wait([key])
        return self._values[key]

    def add(self, key, amount):
        result = []

        def update(values):
            try:
                result.append(int(values.get(key, b"0")) + int(amount))
            except ValueError:
                raise ValueError(f"add: the value of key {key!r} is not an integer") from None
            return [(key, str(result[0]).encode())]

        self._locked(update)
        return result[0]

    def compare_set(self, key, expected_value, desired_value):
        expected, desired = as_bytes(expected_value), as_bytes(desired_value)
        result = []

        def update(values):
            current = values.get(key)
            if current is None and expected:
                result.append(expected)
                return None
            if current is None or current == expected:
                result.append(desired)
                return [(key, desired)]
            result.append(current)
            return None

        self._locked(update)
        return result[0]

    def append(self, key, value):
        self._locked(lambda values: [(key, values.get(key, b"") + as_bytes(value))])

    def check(self, keys):
        self._locked()
        return all(key in self._values for key in keys)

    def delete_key(self, key):
        """Remove ``key``; True, as PyTorch's FileStore answers, whether or not it was there."""
        self._locked(lambda values: [(key, None)] if key in values else None)
        return True

    def num_keys(self):
        self._locked()
        return sum(1 for key in self._values if not key.startswith("__ember/"))

    def list_keys(self):
        self._locked()
        return [key for key in self._values if not key.startswith("__ember/")]

    def wait(self, keys, timeout=None):
        seconds = self._seconds(timeout)
        deadline = time.monotonic() + seconds
        sleep = 1e-4
        while not self.check(keys):
            if time.monotonic() > deadline:
                missing = [k for k in keys if k not in self._values]
                raise DistStoreError(f"wait timeout after {round(seconds * 1000)}ms, keys: "
                                     f"{', '.join('/' + k for k in missing)}")
            time.sleep(sleep)
            sleep = min(sleep * 2, 0.01)

    def close(self):
        """Leave the store; the last of ``world_size`` users removes the file."""
        if self._closed:
            return
        self._closed = True
        left = self.add(_USERS_KEY, -1)
        if self.world_size > 0 and left <= 0 and self._users_added >= 1:
            try:
                os.unlink(self.path)
            except FileNotFoundError:
                pass

    def __del__(self):
        try:
            self.close()
        except Exception:  # the interpreter may be shutting down; the file may be gone
            pass


def _encode(key, value):
    key_bytes = key.encode()
    if value is None:
        return _SIZE.pack(len(key_bytes)) + key_bytes + _SIZE.pack(-1)
    return _SIZE.pack(len(key_bytes)) + key_bytes + _SIZE.pack(len(value)) + value
