"""``TCPStore``: a store served by one process (the master) to clients over TCP."""

import socket
import threading
import time

from .._errors import DistNetworkError, DistStoreError, QueueEmptyError
from ._server import StoreServer
from ._wire import ConnectionLost, receive_message, send_message
from .base import DEFAULT_STORE_TIMEOUT, Store, as_bytes

__all__ = ["TCPStore", "HIDDEN_PREFIX"]

# ember's own keys (worker counting, health): not counted by num_keys.
HIDDEN_PREFIX = "__ember/"
_WORKERS_KEY = "init/"  # PyTorch's name for it, and like PyTorch num_keys counts it
_ALL_JOINED_KEY = HIDDEN_PREFIX + "all_workers_joined"


class TCPStore(Store):
    """A TCP key-value store, as ``torch.distributed.TCPStore``.

    The master (``is_master=True``, usually rank 0) runs the server in a thread of its
    own process, listening on every interface at ``port`` (0 picks a free one: read it
    back from ``store.port``); every instance, the master's included, is a client.

    Args:
        host_name: the master's address, for clients to connect to.
        port: the master's port.
        world_size: the number of clients; with ``wait_for_workers`` the master's
            constructor waits until that many have connected.
        is_master: run the server here.
        timeout: for connecting and the default of ``get``/``wait`` (timedelta, 300 s).

    >>> import datetime
    >>> master = TCPStore("127.0.0.1", 0, 1, True, timeout=datetime.timedelta(seconds=5))
    >>> client = TCPStore("127.0.0.1", master.port, is_master=False)
    >>> client.set("x", "1"); master.get("x")
    b'1'
    """

    def __init__(self, host_name, port, world_size=None, is_master=False, timeout=DEFAULT_STORE_TIMEOUT,
                 wait_for_workers=True, multi_tenant=False, master_listen_fd=None, use_libuv=True):
        super().__init__(timeout)
        self.host = host_name
        self.world_size = world_size
        self._server = StoreServer("", port) if is_master else None
        self.port = self._server.port if is_master else int(port)
        # A connection per thread: a thread blocked in wait() must not hold up the others.
        self._connections = threading.local()
        self._connections.connection = self._connect()
        if world_size is not None:
            if self.add(_WORKERS_KEY, 1) >= world_size:
                self.set(_ALL_JOINED_KEY, "1")
            if is_master and wait_for_workers:
                self._wait_for_workers(world_size)

    def clone(self):
        """A new client of the same server, with this one's timeout (never a master: the
        server stays with the instance that started it, and a clone is not counted as
        one of ``world_size``'s workers, as PyTorch's).

        >>> import datetime
        >>> master = TCPStore("127.0.0.1", 0, 1, True, timeout=datetime.timedelta(seconds=5))
        >>> master.clone().set("x", "1"); master.get("x")
        b'1'
        """
        twin = TCPStore(self.host, self.port, is_master=False, timeout=self.timeout)
        twin.world_size = self.world_size
        return twin

    @property
    def libuvBackend(self):  # noqa: N802 -- PyTorch's name
        return False

    def _connect(self):
        seconds = self._seconds()
        deadline = time.monotonic() + seconds
        while True:
            try:
                connection = socket.create_connection((self.host, self.port),
                                                      timeout=max(0.05, deadline - time.monotonic()))
                connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                connection.settimeout(None)
                return connection
            except OSError:
                # The master may not be listening yet: retry until the timeout, as PyTorch.
                if time.monotonic() >= deadline:
                    raise DistNetworkError(f"The client socket has timed out after {round(seconds * 1000)}ms "
                                           f"while trying to connect to ({self.host}, {self.port}).") from None
                time.sleep(0.05)

    def _wait_for_workers(self, world_size):
        try:
            self.wait([_ALL_JOINED_KEY])
        except DistStoreError:
            joined = self._request("GET", _WORKERS_KEY, "0")[0].decode()
            raise DistStoreError(f"Timed out after {round(self._seconds())} seconds waiting for clients. "
                                 f"{joined}/{world_size} clients joined.") from None

    def _request(self, *items, wait_seconds=0.0):
        connection = getattr(self._connections, "connection", None)
        if connection is None:
            connection = self._connections.connection = self._connect()
        # A request that waits on the server may take its whole timeout; past that (and a
        # margin), the server or its process is gone.
        connection.settimeout(wait_seconds + max(self._seconds(), 1.0))
        try:
            send_message(connection, items)
            reply = receive_message(connection)
        except (ConnectionLost, OSError) as error:
            raise DistNetworkError(f"the TCPStore at {self.host}:{self.port} was lost: {error} "
                                   f"(its process, usually rank 0, may have died)") from None
        status, values = reply[0], reply[1:]
        if status == b"EMPTY":
            raise QueueEmptyError(values[0].decode())
        if status == b"TIMEOUT":
            raise DistStoreError(values[0].decode())
        if status == b"ERROR":
            raise ValueError(values[0].decode())
        return values

    def set(self, key, value):
        self._request("SET", key, as_bytes(value))

    def get(self, key):
        seconds = self._seconds()
        return self._request("GET", key, str(seconds), wait_seconds=seconds)[0]

    def add(self, key, amount):
        return int(self._request("ADD", key, str(int(amount)))[0])

    def compare_set(self, key, expected_value, desired_value):
        return self._request("CAS", key, as_bytes(expected_value), as_bytes(desired_value))[0]

    def append(self, key, value):
        self._request("APPEND", key, as_bytes(value))

    def check(self, keys):
        return self._request("CHECK", *keys)[0] == b"1"

    def delete_key(self, key):
        return self._request("DELETE", key)[0] == b"1"

    def num_keys(self):
        return int(self._request("NUM_KEYS", HIDDEN_PREFIX)[0])

    def queue_push(self, key, value):
        self._request("QPUSH", key, as_bytes(value))

    def queue_pop(self, key, block=True):
        seconds = self._seconds()
        return self._request("QPOP", key, b"1" if block else b"0", str(seconds), wait_seconds=seconds)[0]

    def queue_len(self, key):
        return int(self._request("QLEN", key)[0])

    def list_keys(self):
        return [k.decode() for k in self._request("LIST", HIDDEN_PREFIX)]

    def wait(self, keys, timeout=None):
        seconds = self._seconds(timeout)
        self._request("WAIT", str(seconds), *keys, wait_seconds=seconds)

    def watch(self, key, value):
        """ember's dead man's switch: a connection that sets ``key`` to ``value`` on the
        server if this process dies before calling ``release`` on what this returns."""
        return _Watch(self.host, self.port, key, value)

    def _close_server(self):
        if self._server is not None:
            self._server.close()


class _Watch:
    """An open connection the server watches (see StoreServer._watch)."""

    def __init__(self, host, port, key, value):
        self._connection = socket.create_connection((host, port), timeout=10)
        send_message(self._connection, ["WATCH", key, as_bytes(value)])

    def release(self):
        """Say goodbye: the loss of this connection is no longer a failure."""
        try:
            send_message(self._connection, ["BYE"])
            receive_message(self._connection)
        except OSError:
            pass
        self._connection.close()
