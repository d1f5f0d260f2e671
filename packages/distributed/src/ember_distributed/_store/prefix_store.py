"""``PrefixStore``: another store's keys under ``prefix/``, so that users of one store do not collide."""

from .base import Store

__all__ = ["PrefixStore"]


class PrefixStore(Store):
    """Every key of ``store`` used through this one is ``f"{prefix}/{key}"``.

    >>> from ember_distributed import HashStore
    >>> base = HashStore(); PrefixStore("job", base).set("k", "v"); base.get("job/k")
    b'v'
    """

    def __init__(self, prefix, store):
        super().__init__(store.timeout)
        self.prefix = prefix
        self.underlying_store = store

    def clone(self):
        """A PrefixStore with the same prefix over a clone of the underlying store.

        >>> from ember_distributed import HashStore
        >>> base = HashStore(); PrefixStore("job", base).clone().set("k", "v"); base.get("job/k")
        b'v'
        """
        return PrefixStore(self.prefix, self.underlying_store.clone())

    def _key(self, key):
        return f"{self.prefix}/{key}"

    @property
    def timeout(self):
        return self.underlying_store.timeout

    def set_timeout(self, timeout):
        self.underlying_store.set_timeout(timeout)

    def set(self, key, value):
        self.underlying_store.set(self._key(key), value)

    def get(self, key):
        return self.underlying_store.get(self._key(key))

    def add(self, key, amount):
        return self.underlying_store.add(self._key(key), amount)

    def compare_set(self, key, expected_value, desired_value):
        return self.underlying_store.compare_set(self._key(key), expected_value, desired_value)

    def append(self, key, value):
        self.underlying_store.append(self._key(key), value)

    def check(self, keys):
        return self.underlying_store.check([self._key(k) for k in keys])

    def delete_key(self, key):
        return self.underlying_store.delete_key(self._key(key))

    def num_keys(self):
        return self.underlying_store.num_keys()

    def queue_push(self, key, value):
        self.underlying_store.queue_push(self._key(key), value)

    def queue_pop(self, key, block=True):
        return self.underlying_store.queue_pop(self._key(key), block)

    def queue_len(self, key):
        return self.underlying_store.queue_len(self._key(key))

    def list_keys(self):
        """The keys under this prefix, without it."""
        start = f"{self.prefix}/"
        return [k[len(start):] for k in self.underlying_store.list_keys() if k.startswith(start)]

    def wait(self, keys, timeout=None):
        self.underlying_store.wait([self._key(k) for k in keys], timeout)
