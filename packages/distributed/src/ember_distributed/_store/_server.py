"""The TCPStore's server: a KeyTable served to clients, one thread per connection.

It runs inside the master's process (rank 0), as PyTorch's does. Besides the key-value
commands it offers a dead man's switch (``WATCH key value``): the connection is held
open, and if it closes without ``BYE`` — its process died — the server sets ``key`` to
``value`` (first loss wins). ember's health watch is built on it (`.._health`).
"""

import socket
import threading

from .._errors import DistStoreError, QueueEmptyError
from ._wire import ConnectionLost, receive_message, send_message
from .base import KeyTable

__all__ = ["StoreServer"]


class StoreServer:
    """Serve a KeyTable on ``(host, port)``; port 0 takes a free port (see ``port``)."""

    def __init__(self, host, port):
        self.table = KeyTable()
        family = socket.AF_INET6 if ":" in (host or "") else socket.AF_INET
        self._listener = socket.create_server(("" if host in (None, "") else host, port), family=family,
                                              backlog=128, reuse_port=False)
        self.port = self._listener.getsockname()[1]
        self._closed = False
        threading.Thread(target=self._accept_loop, name="ember-store-server", daemon=True).start()

    def close(self):
        """Stop listening (served connections end with the process)."""
        self._closed = True
        self._listener.close()

    def _accept_loop(self):
        while not self._closed:
            try:
                connection, _ = self._listener.accept()
            except OSError:
                return
            connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            threading.Thread(target=self._serve, args=(connection,), name="ember-store-client",
                             daemon=True).start()

    def _serve(self, connection):
        with connection:
            while True:
                try:
                    request = receive_message(connection)
                except (ConnectionLost, OSError):
                    return
                command, arguments = request[0].decode(), request[1:]
                if command == "WATCH":
                    self._watch(connection, arguments[0].decode(), arguments[1])
                    return
                try:
                    reply = [b"OK"] + self._answer(command, arguments)
                except QueueEmptyError as error:
                    reply = [b"EMPTY", str(error)]
                except DistStoreError as error:
                    reply = [b"TIMEOUT", str(error)]
                except (ValueError, KeyError) as error:
                    reply = [b"ERROR", str(error)]
                try:
                    send_message(connection, reply)
                except OSError:
                    return

    def _answer(self, command, arguments):
        table = self.table
        if command == "SET":
            table.set(arguments[0].decode(), arguments[1])
            return []
        if command == "GET":
            return [table.get(arguments[0].decode(), float(arguments[1]))]
        if command == "ADD":
            return [str(table.add(arguments[0].decode(), int(arguments[1])))]
        if command == "CAS":
            return [table.compare_set(arguments[0].decode(), arguments[1], arguments[2])]
        if command == "APPEND":
            table.append(arguments[0].decode(), arguments[1])
            return []
        if command == "CHECK":
            return [b"1" if table.check([k.decode() for k in arguments]) else b"0"]
        if command == "DELETE":
            return [b"1" if table.delete_key(arguments[0].decode()) else b"0"]
        if command == "NUM_KEYS":
            return [str(table.num_keys(hidden_prefix=arguments[0].decode()))]
        if command == "QPUSH":
            table.queue_push(arguments[0].decode(), arguments[1])
            return []
        if command == "QPOP":
            return [table.queue_pop(arguments[0].decode(), arguments[1] == b"1", float(arguments[2]))]
        if command == "QLEN":
            return [str(table.queue_len(arguments[0].decode()))]
        if command == "LIST":
            return [k.encode() for k in table.list_keys(hidden_prefix=arguments[0].decode())]
        if command == "WAIT":
            table.wait([k.decode() for k in arguments[1:]], float(arguments[0]))
            return []
        raise ValueError(f"unknown store command {command!r}")

    def _watch(self, connection, key, value):
        # Block on the connection: a clean BYE ends the watch; anything else is a loss.
        try:
            said = receive_message(connection)
            if said == [b"BYE"]:
                send_message(connection, [b"OK"])
                return
        except (ConnectionLost, OSError):
            pass
        self.table.compare_set(key, b"", value)
