"""Key-value stores: ``Store``, ``HashStore``, ``PrefixStore``, ``TCPStore``, ``FileStore``.

PyTorch's c10d stores, used to meet before MPI starts (`_startup`), to watch peers
(`_health`) and by programs of their own. Keys are strings, values bytes (a str is
encoded as UTF-8), ``add`` keeps its counter as decimal text, as PyTorch does.
"""

from .base import Store
from .hash_store import HashStore
from .prefix_store import PrefixStore
from .tcp_store import TCPStore
from .file_store import FileStore

__all__ = ["Store", "HashStore", "PrefixStore", "TCPStore", "FileStore"]
