"""Memory attribution for ``profile_memory=True``, in PyTorch's shape.

PyTorch's profiler sees every allocation and free of its allocators and charges each to
the innermost op (or ``record_function`` range) running on that thread: that op's "self"
memory; its total adds its children's. Frees are negative, and those that happen outside
any op become ``[memory]`` events. ember sees memory as tensor storages: a storage that an
op returns and that is none of its inputs' (nor overlaps one of them) was allocated by the
op, and is charged to it when the op returns (to the innermost op that returned it, so a
``matmul`` built from ``mm`` shows the bytes as ``mm``'s self memory, as in PyTorch). Such
a storage is then watched, and its free is charged to whatever runs when it dies.

What is not seen: scratch arrays a kernel allocates and drops inside one op (PyTorch
counts them, with a net of zero), frees of tensors allocated before the profile began,
and CUDA memory is counted in the tensors' bytes, not the caching allocator's rounded
blocks.
"""
import weakref

from ember_tensor import Tensor, strided

__all__ = ["MemoryWatch"]


def _tensors(value, found):
    """The strided tensors in `value` (sparse tensors hold theirs as indices and values,
    which the ops that built them returned and were charged for)."""
    if isinstance(value, Tensor):
        if value.layout is strided:
            found.append(value)
    elif isinstance(value, (list, tuple)):
        for item in value:
            _tensors(item, found)
    elif isinstance(value, dict):
        for item in value.values():
            _tensors(item, found)
    return found


def _base(storage):
    return getattr(storage, "base", storage)  # a StorageAlias's memory is its base's


def _span(storage):
    start = storage.data_ptr()
    return start, start + storage.nbytes()


class MemoryWatch:
    """Storages allocated by profiled ops, each watched until it is freed.

    `on_free(nbytes, is_device)` is called (on the thread that drops the storage) when a
    charged storage dies.
    """

    def __init__(self, on_free):
        self._on_free = on_free
        self._watched = {}  # id(storage) -> weak reference whose callback reports the free

    def charge_outputs(self, args, kwargs, out):
        """The (cpu_bytes, device_bytes) of storages in `out` that the op allocated."""
        outputs = _tensors(out, [])
        if not outputs:
            return 0, 0
        inputs = {id(_base(t.untyped_storage())): _base(t.untyped_storage())
                  for t in _tensors(kwargs, _tensors(args, []))}
        spans = None
        cpu = device = 0
        for t in outputs:
            storage = _base(t.untyped_storage())
            key = id(storage)
            if key in inputs or key in self._watched:
                continue
            nbytes = storage.nbytes()
            if nbytes and inputs:
                if spans is None:
                    spans = [_span(s) for s in inputs.values() if s.nbytes()]
                start, end = _span(storage)
                if any(start < e and s < end for s, e in spans):
                    continue  # a fresh Storage object over an input's memory: a view
            is_device = t.device.type != "cpu"
            self._watch(storage, key, nbytes, is_device)
            if is_device:
                device += nbytes
            else:
                cpu += nbytes
        return cpu, device

    def _watch(self, storage, key, nbytes, is_device):
        def freed(_ref):
            if self._watched.pop(key, None) is not None:
                self._on_free(nbytes, is_device)

        self._watched[key] = weakref.ref(storage, freed)

    def close(self):
        """Stop reporting frees (the profile is over): dropped references never call back."""
        self._watched.clear()
