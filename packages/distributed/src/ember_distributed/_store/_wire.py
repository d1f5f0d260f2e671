"""The TCPStore's messages: a list of byte strings, each sent with its length.

A message is a 4-byte count then, per item, a 4-byte length and the bytes. Nothing is
unpickled: a store port reached by a stranger yields bytes, never code.
"""

import struct

__all__ = ["send_message", "receive_message", "ConnectionLost"]

_COUNT = struct.Struct("!I")


class ConnectionLost(OSError):
    """The peer closed the connection (or died) before a whole message arrived."""


def send_message(connection, items):
    """Send a list of byte strings (str items are UTF-8 encoded)."""
    parts = [_COUNT.pack(len(items))]
    for item in items:
        data = item.encode() if isinstance(item, str) else bytes(item)
        parts += [_COUNT.pack(len(data)), data]
    connection.sendall(b"".join(parts))


def receive_message(connection):
    """Receive one message sent by ``send_message``."""
    (count,) = _COUNT.unpack(_read(connection, 4))
    items = []
    for _ in range(count):
        (size,) = _COUNT.unpack(_read(connection, 4))
        items.append(_read(connection, size))
    return items


def _read(connection, size):
    data = bytearray()
    while len(data) < size:
        chunk = connection.recv(size - len(data))
        if not chunk:
            raise ConnectionLost("the store's connection was closed")
        data += chunk
    return bytes(data)
