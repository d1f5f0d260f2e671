"""Numba's on-disk cache for hand-written kernels that inline a function of another file.

Numba keys a ``cache=True`` kernel on its own file (the source's hash) and its own
bytecode: a kernel that calls an njit function of another file links that function's
compiled code into its own, and when only the other file changes, a later process loads
the old machine code. Generated kernel modules avoid this by their cache directory, named
by a hash of every file they import (`codegen.cache_dir`); the hand-written kernel files
that share a function (softmax and the recurrent gates inline `exp32.exp32`) use
`key_by_sources`: it gives each of their kernels a cache whose index keys also carry a
hash of those files, so a changed source can only miss the cache, never serve a stale
kernel (the old entries stay in the index, unreachable, as after any edit).
"""
import hashlib

from numba.core.caching import FunctionCache
from numba.core.dispatcher import Dispatcher

__all__ = ["key_by_sources"]


class _SourcesKeyedCache(FunctionCache):
    """Numba's per-function cache with a digest of other files in every index key."""

    def __init__(self, py_func, sources_digest):
        self._sources_digest = sources_digest
        super().__init__(py_func)

    def _index_key(self, sig, codegen):
        return super()._index_key(sig, codegen) + (self._sources_digest,)


def key_by_sources(objects, sources):
    """Key the disk cache of every ``cache=True`` Numba kernel among `objects` by the
    contents of the files `sources` too.

    Call it at the end of a kernel file, with the file's namespace: every njit
    dispatcher in it whose cache is on gets the keyed cache (one that inlines nothing
    from `sources` recompiles once after they change, which is harmless).

    Args:
        objects: candidates, e.g. ``globals().values()``; anything that is not a cached
            Numba CPU dispatcher is skipped.
        sources: paths of the files whose compiled code those kernels link.

    Example (the softmax kernels' file ends with such a call):
        >>> from ember_tensor._backends.cpu.kernels import softmax
        >>> type(softmax._rows_softmax._cache).__name__
        '_SourcesKeyedCache'
    """
    digest = hashlib.sha256()
    for path in sources:
        with open(path, "rb") as fh:
            digest.update(hashlib.sha256(fh.read()).digest())
    digest = digest.hexdigest()
    for obj in list(objects):
        if isinstance(obj, Dispatcher) and isinstance(obj._cache, FunctionCache):
            obj._cache = _SourcesKeyedCache(obj.py_func, digest)
