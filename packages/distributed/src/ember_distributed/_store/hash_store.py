"""``HashStore``: a store in this process's memory, shared by its threads."""

from .base import KeyTable, Store, as_bytes

__all__ = ["HashStore"]


class HashStore(Store):
    """An in-memory store, as ``torch.distributed.HashStore`` (threads of one process).

    >>> store = HashStore()
    >>> store.set("a", "1"); store.add("n", 2)
    2
    >>> store.get("a")
    b'1'
    """

    def __init__(self):
        super().__init__()
        self._table = KeyTable()

    def clone(self):
        """This same store: its data lives in this process and its every call takes a
        lock, so threads may share it (PyTorch's HashStore.clone returns itself too)."""
        return self

    def set(self, key, value):
        self._table.set(key, as_bytes(value))

    def get(self, key):
        return self._table.get(key, self._seconds())

    def add(self, key, amount):
        return self._table.add(key, amount)

    def compare_set(self, key, expected_value, desired_value):
        return self._table.compare_set(key, as_bytes(expected_value), as_bytes(desired_value))

    def append(self, key, value):
        self._table.append(key, as_bytes(value))

    def check(self, keys):
        return self._table.check(list(keys))

    def delete_key(self, key):
        return self._table.delete_key(key)

    def num_keys(self):
        return self._table.num_keys()

    def queue_push(self, key, value):
        self._table.queue_push(key, as_bytes(value))

    def queue_pop(self, key, block=True):
        return self._table.queue_pop(key, block, self._seconds())

    def queue_len(self, key):
        return self._table.queue_len(key)

    def list_keys(self):
        return self._table.list_keys()

    def wait(self, keys, timeout=None):
        self._table.wait(list(keys), self._seconds(timeout))
