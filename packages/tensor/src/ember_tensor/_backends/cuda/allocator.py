"""ember's caching allocator for CUDA memory, and the statistics torch.cuda reports.

Like PyTorch's: requests are rounded up to a multiple of 512 bytes; a freed block goes
back to a per-device cache (keyed by its rounded size and the stream it was allocated
on) instead of to the driver, so freeing never synchronises and the next request of that
size on that stream is served at once (stream order makes the reuse safe);
`empty_cache()` hands the cached blocks back. Counted per device:

  allocated   bytes of blocks held by live arrays   (memory_allocated)
  reserved    allocated + cached blocks              (memory_reserved, old name memory_cached)
  peaks of both since start or reset_peak_memory_stats, and counts of allocations

Two front ends share the `Pool` below:

* On a GPU, `CachingMemoryManager` is a Numba External Memory Management (EMM) plugin,
  installed by `ember_tensor.cuda` before Numba creates a context (opt out with
  EMBER_CUDA_ALLOCATOR=numba). Every device allocation Numba makes, ember's or a
  user's `cuda.device_array`, comes from the pool; Numba's own lifetime tracking of
  `MemoryPointer`s tells the pool when a block is free (views keep their base alive).
* Under Numba's simulator (which has no EMM hook) `sim_alloc` does the same with host
  buffers: an array's memory is leased from the pool through an object whose lifetime
  NumPy ties to every view of it, and the block returns to the cache when the last view
  dies.

A request that the device cannot satisfy, even after emptying the cache, raises
`OutOfMemoryError` with PyTorch's wording: how much was asked, what is allocated and
reserved, the capacity and what is free.
"""
import threading
import weakref

import numpy as np

__all__ = ["OutOfMemoryError", "Pool", "pool", "round_size", "sim_alloc", "CachingMemoryManager",
           "summary"]

_ROUND = 512


class OutOfMemoryError(RuntimeError):
    """CUDA out of memory (torch.cuda.OutOfMemoryError)."""


def round_size(nbytes):
    """The block size served for a request of `nbytes` (a multiple of 512, at least 512)."""
    return max(_ROUND, (nbytes + _ROUND - 1) // _ROUND * _ROUND)


def _fmt(nbytes):
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if nbytes >= size:
            return f"{nbytes / size:.2f} {unit}"
    return f"{nbytes} bytes"


class Pool:
    """Cached blocks and statistics of one device. Blocks are opaque to the pool."""

    def __init__(self, index):
        self.index = index
        self.lock = threading.Lock()
        # (rounded size, stream key) -> [block, ...]: a block is reused only by allocations
        # on the stream it was allocated on, whose order makes reuse safe without syncing.
        self.free = {}
        self.allocated = self.reserved = 0
        self.peak_allocated = self.peak_reserved = 0
        self.num_alloc = self.num_free = self.num_cache_hits = 0

    def take(self, size, new_block, capacity_info, stream=0):
        """A block of rounded `size`: a cached one, else new_block(size) (retried empty)."""
        with self.lock:
            blocks = self.free.get((size, stream))
            block = blocks.pop() if blocks else None
            if block is not None:
                self.num_cache_hits += 1
            self.num_alloc += 1
            self.allocated += size
            self.peak_allocated = max(self.peak_allocated, self.allocated)
        if block is not None:
            return block
        try:
            block = new_block(size)
        except MemoryError:
            self.release_cached()
            try:
                block = new_block(size)
            except MemoryError:
                with self.lock:
                    self.allocated -= size
                    self.num_alloc -= 1
                raise self.out_of_memory(size, capacity_info()) from None
        with self.lock:
            self.reserved += size
            self.peak_reserved = max(self.peak_reserved, self.reserved)
        return block

    def give_back(self, block, size, stream=0):
        """Return a block to the cache of `stream` (called when its last user is gone)."""
        with self.lock:
            self.free.setdefault((size, stream), []).append(block)
            self.allocated -= size
            self.num_free += 1

    def release_cached(self):
        """Drop every cached block (the device memory goes back to the driver)."""
        with self.lock:
            dropped = sum(key[0] * len(blocks) for key, blocks in self.free.items())
            self.free.clear()
            self.reserved -= dropped

    def reset_peaks(self):
        with self.lock:
            self.peak_allocated, self.peak_reserved = self.allocated, self.reserved

    def out_of_memory(self, size, info):
        total, free = info
        unallocated = self.reserved - self.allocated
        return OutOfMemoryError(
            f"CUDA out of memory. Tried to allocate {_fmt(size)}. GPU {self.index} has a total "
            f"capacity of {_fmt(total)} of which {_fmt(free)} is free. Of the allocated memory "
            f"{_fmt(self.allocated)} is allocated by PyTorch, and {_fmt(unallocated)} is reserved "
            "by PyTorch but unallocated. If reserved but unallocated memory is large try setting "
            "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See "
            "documentation for Memory Management  "
            "(https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)")

    def stats(self):
        """PyTorch's memory_stats() keys for the counters kept here."""
        return {
            "allocated_bytes.all.current": self.allocated,
            "allocated_bytes.all.peak": self.peak_allocated,
            "reserved_bytes.all.current": self.reserved,
            "reserved_bytes.all.peak": self.peak_reserved,
            "allocation.all.allocated": self.num_alloc,
            "allocation.all.freed": self.num_free,
            "num_alloc_retries": 0,
            "num_ooms": 0,
            "cache_hits": self.num_cache_hits,
        }


_pools = {}
_pools_lock = threading.Lock()


def pool(index):
    """The pool of device `index`."""
    p = _pools.get(index)
    if p is None:
        with _pools_lock:
            p = _pools.setdefault(index, Pool(index))
    return p


def summary(index):
    """A short text report of device `index`'s allocator (torch.cuda.memory_summary)."""
    p = pool(index)
    cached = sum(len(b) for b in p.free.values())
    rows = [
        ("Allocated memory", _fmt(p.allocated), _fmt(p.peak_allocated)),
        ("Reserved memory", _fmt(p.reserved), _fmt(p.peak_reserved)),
        ("Cached free blocks", str(cached), ""),
        ("Allocations / frees", f"{p.num_alloc} / {p.num_free}", ""),
        ("Cache hits", str(p.num_cache_hits), ""),
    ]
    line = "|" + "=" * 75 + "|"
    out = [line, f"|{'ember CUDA memory summary, device ID ' + str(index):^75}|", line,
           f"| {'Metric':<30}| {'Cur Usage':<20}| {'Peak Usage':<20}|", line]
    out += [f"| {a:<30}| {b:<20}| {c:<20}|" for a, b, c in rows]
    out.append(line)
    return "\n".join(out) + "\n"


def stream_key():
    """Which stream's cache an allocation made now belongs to (0: the default stream)."""
    from . import runtime
    stream = runtime.current_numba_stream()
    return id(stream) if stream else 0


# --- the simulator front end ------------------------------------------------------------

# The simulator has no device memory limit; tests may set one to exercise the OOM path.
SIM_CAPACITY = 1 << 34


class _Lease:
    """Owner of one allocation's memory: NumPy makes it the base of every view."""

    __slots__ = ("__array_interface__", "_block", "__weakref__")

    def __init__(self, block, nbytes):
        self._block = block
        self.__array_interface__ = {
            "shape": (nbytes,), "typestr": "|u1", "version": 3,
            "data": (block.__array_interface__["data"][0], False)}


def _sim_new_block(size):
    p = pool(0)
    if p.reserved + size > SIM_CAPACITY:
        raise MemoryError
    return np.empty(size, np.uint8)


def sim_alloc(shape, dtype):
    """A NumPy array for the simulator's device memory, served by the current device's pool."""
    dtype = np.dtype(dtype)
    count = 1
    for n in shape:
        count *= n
    nbytes = count * dtype.itemsize
    if nbytes == 0:
        return np.empty(shape, dtype)
    size = round_size(nbytes)
    from . import runtime
    p = pool(runtime.current_index())  # EMBER_CUDASIM_DEVICES may simulate several
    stream = stream_key()
    block = p.take(size, _sim_new_block, lambda: (SIM_CAPACITY, SIM_CAPACITY - p.reserved), stream)
    lease = _Lease(block, nbytes)
    weakref.finalize(lease, p.give_back, block, size, stream)
    return np.asarray(lease).view(dtype).reshape(shape)


# --- the GPU front end: a Numba EMM plugin ---------------------------------------------------

def _make_manager_class():
    from numba import cuda
    from numba.cuda.cudadrv.driver import CudaAPIError, NumbaCUDAMemoryManager

    class CachingMemoryManager(cuda.HostOnlyCUDAMemoryManager):
        """Numba EMM plugin serving device memory from ember's per-device `Pool`."""

        def initialize(self):
            super().initialize()
            self._raw = NumbaCUDAMemoryManager(context=self.context)
            self._raw.initialize()
            self._pool = pool(self.context.device.id)

        def _new_block(self, size):
            try:
                return self._raw.memalloc(size)
            except CudaAPIError as error:  # CUDA_ERROR_OUT_OF_MEMORY, after Numba's own retry
                if getattr(error, "code", None) in (2, "CUDA_ERROR_OUT_OF_MEMORY") or \
                        "OUT_OF_MEMORY" in str(error):
                    raise MemoryError from error
                raise

        def memalloc(self, size):
            rounded = round_size(size)
            stream = stream_key()
            block = self._pool.take(rounded, self._new_block, self._info, stream)
            # A proxy of the context, as Numba's own manager uses: no reference cycle.
            return cuda.MemoryPointer(weakref.proxy(self.context), block.device_pointer, size,
                                      finalizer=_returner(self._pool, block, rounded, stream))

        def _info(self):
            info = self.get_memory_info()
            return info.total, info.free

        def get_memory_info(self):
            return self._raw.get_memory_info()

        def get_ipc_handle(self, memory):
            return self._raw.get_ipc_handle(memory)

        def reset(self):
            super().reset()
            self._pool.release_cached()
            self._raw.reset()

        def empty_cache(self):
            """Hand the cached blocks back, and have Numba free them now."""
            self._pool.release_cached()
            self._raw.deallocations.clear()

        @property
        def interface_version(self):
            return 1

    return CachingMemoryManager


def _returner(p, block, size, stream):
    # A closure over the block only: the finalizer must not reference the MemoryPointer.
    return lambda: p.give_back(block, size, stream)


_manager_class = None


def __getattr__(name):
    # CachingMemoryManager is built on first use: it subclasses numba.cuda classes, and
    # importing numba.cuda is what ember avoids until CUDA is needed.
    global _manager_class
    if name == "CachingMemoryManager":
        if _manager_class is None:
            _manager_class = _make_manager_class()
        return _manager_class
    raise AttributeError(name)
