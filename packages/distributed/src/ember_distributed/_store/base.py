"""``Store``, the base of every store, and ``KeyTable``, the dictionary behind two of them.

A KeyTable holds the keys of a ``HashStore`` and of a ``TCPStore``'s server: every
operation takes one lock, and ``wait``/``get`` sleep on a condition that every write
notifies, so a waiter costs no CPU and wakes the moment its key arrives.
"""

import datetime
import threading
import time

from collections import deque

from .._errors import DistStoreError, QueueEmptyError

__all__ = ["Store", "KeyTable", "as_bytes", "DEFAULT_STORE_TIMEOUT"]

DEFAULT_STORE_TIMEOUT = datetime.timedelta(seconds=300)


def as_bytes(value):
    """A store value as bytes (PyTorch's stores take str or bytes)."""
    return value.encode() if isinstance(value, str) else bytes(value)


class Store:
    """The store interface, as ``torch.distributed.Store``: subclass it to write a store.

    Subclasses implement ``set``, ``get``, ``add``, ``compare_set``, ``check``,
    ``delete_key``, ``num_keys`` and ``wait``; the timeout lives here.
    """

    def __init__(self, timeout=DEFAULT_STORE_TIMEOUT):
        self._timeout = timeout

    @property
    def timeout(self):
        """The default timeout of ``get`` and ``wait`` (a timedelta)."""
        return self._timeout

    def set_timeout(self, timeout):
        """Set the default timeout of ``get`` and ``wait``."""
        if not isinstance(timeout, datetime.timedelta):
            raise TypeError(f"set_timeout(): expected a datetime.timedelta, got {type(timeout).__name__}")
        self._timeout = timeout

    def _seconds(self, timeout=None):
        return (self._timeout if timeout is None else timeout).total_seconds()

    def clone(self):
        """A new store object on the same underlying store, for another thread to use.

        PyTorch's contract: clone once per thread rather than share one object. A store
        written in Python implements it; the base, as PyTorch's, has none.
        """
        raise NotImplementedError(f"{type(self).__name__} does not implement clone()")

    def set(self, key, value):
        """Store ``value`` under ``key``, replacing any old value."""
        raise NotImplementedError

    def get(self, key):
        """The value of ``key``, waiting up to the timeout for it to be set."""
        raise NotImplementedError

    def add(self, key, amount):
        """Add ``amount`` to the integer counter ``key`` (created at 0) and return the new value."""
        raise NotImplementedError

    def compare_set(self, key, expected_value, desired_value):
        """Set ``key`` to ``desired_value`` if it holds ``expected_value`` (or is missing and
        ``expected_value`` is empty); return the value it holds afterwards (for a missing key
        that was not set, ``expected_value``), as PyTorch."""
        raise NotImplementedError

    def check(self, keys):
        """True if every key is set (never waits)."""
        raise NotImplementedError

    def delete_key(self, key):
        """Remove ``key``; True if it was there."""
        raise NotImplementedError

    def num_keys(self):
        """The number of keys set."""
        raise NotImplementedError

    def wait(self, keys, timeout=None):
        """Wait until every key is set, up to ``timeout`` (default: the store's)."""
        raise NotImplementedError

    def append(self, key, value):
        """Append ``value`` to ``key``'s value (created empty)."""
        self.set(key, (self.get(key) if self.check([key]) else b"") + as_bytes(value))

    def queue_push(self, key, value):
        """Append ``value`` to the queue ``key`` (a queue is not a key: get/set do not see it)."""
        raise NotImplementedError("queue support is not implemented.")

    def queue_pop(self, key, block=True):
        """The oldest value of the queue ``key`` (bytes), waiting up to the store's timeout
        for one; ``block=False`` raises QueueEmptyError at once when it is empty."""
        raise NotImplementedError("queue support is not implemented.")

    def queue_len(self, key):
        """The number of values in the queue ``key`` (0 if there is none)."""
        raise NotImplementedError("queue support is not implemented.")

    def list_keys(self):
        """Every key set in the store (not the queues), as strings."""
        raise NotImplementedError

    def multi_get(self, keys):
        """The values of several keys, waiting for each."""
        return [self.get(key) for key in keys]

    def multi_set(self, keys, values):
        """Set several keys."""
        for key, value in zip(keys, values):
            self.set(key, value)


def _timeout_error(seconds, keys):
    return DistStoreError(f"wait timeout after {round(seconds * 1000)}ms, keys: {', '.join('/' + k for k in keys)}")


class KeyTable:
    """A dictionary of keys with a condition variable: the data of HashStore and TCPStore's server."""

    def __init__(self):
        self._values = {}
        self._queues = {}
        self._changed = threading.Condition()

    def set(self, key, value):
        with self._changed:
            self._values[key] = value
            self._changed.notify_all()

    def get(self, key, seconds):
        with self._changed:
            self._wait_locked([key], seconds)
            return self._values[key]

    def add(self, key, amount):
        with self._changed:
            old = self._values.get(key, b"0")
            try:
                value = int(old) + int(amount)
            except ValueError:
                raise ValueError(f"add: the value of key {key!r} is not an integer") from None
            self._values[key] = str(value).encode()
            self._changed.notify_all()
            return value

    def compare_set(self, key, expected, desired):
        with self._changed:
            current = self._values.get(key)
            if current is None and expected:
                return expected
            if current is None or current == expected:
                self._values[key] = desired
                self._changed.notify_all()
                return desired
            return current

    def append(self, key, value):
        with self._changed:
            self._values[key] = self._values.get(key, b"") + value
            self._changed.notify_all()

    def check(self, keys):
        with self._changed:
            return all(key in self._values for key in keys)

    def delete_key(self, key):
        with self._changed:
            return self._values.pop(key, None) is not None

    def num_keys(self, hidden_prefix=None):
        with self._changed:
            if hidden_prefix is None:
                return len(self._values)
            return sum(1 for key in self._values if not key.startswith(hidden_prefix))

    def queue_push(self, key, value):
        with self._changed:
            self._queues.setdefault(key, deque()).append(value)
            self._changed.notify_all()

    def queue_pop(self, key, block, seconds):
        with self._changed:
            if not self._queues.get(key):
                if not block:
                    raise QueueEmptyError("queue is empty")
                deadline = time.monotonic() + seconds
                while not self._queues.get(key):
                    left = deadline - time.monotonic()
                    if left <= 0:
                        raise _timeout_error(seconds, [key])
                    self._changed.wait(left)
            return self._queues[key].popleft()

    def queue_len(self, key):
        with self._changed:
            return len(self._queues.get(key, ()))

    def list_keys(self, hidden_prefix=None):
        with self._changed:
            return [k for k in self._values if hidden_prefix is None or not k.startswith(hidden_prefix)]

    def wait(self, keys, seconds):
        with self._changed:
            self._wait_locked(keys, seconds)

    def _wait_locked(self, keys, seconds):
        deadline = time.monotonic() + seconds
        while not all(key in self._values for key in keys):
            left = deadline - time.monotonic()
            if left <= 0:
                raise _timeout_error(seconds, [k for k in keys if k not in self._values])
            self._changed.wait(left)
