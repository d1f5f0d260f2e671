"""torch.cuda's memory statistics and controls, over ember's caching allocator (`_backends.cuda.allocator`).

Re-exported by `ember_tensor.cuda`, whose device helpers these use. The counters answer
0 (or {}) without a GPU; `mem_get_info` and `memory_summary` need one.
"""
from .._backends.cuda import runtime
from ._index import device_index

__all__ = ["memory_allocated", "max_memory_allocated", "memory_reserved", "max_memory_reserved",
           "memory_cached", "max_memory_cached", "reset_peak_memory_stats", "reset_max_memory_allocated",
           "reset_max_memory_cached", "memory_stats", "memory_summary", "mem_get_info", "empty_cache"]


def _pool(device):
    from .._backends.cuda import allocator as _cuda_alloc
    return _cuda_alloc.pool(device_index(device, optional=True))


def memory_allocated(device=None):
    """Bytes held now by tensors on a device (0 when CUDA is unavailable)."""
    return _pool(device).allocated if runtime.is_available() else 0


def max_memory_allocated(device=None):
    """Peak of `memory_allocated` since start-up or `reset_peak_memory_stats`."""
    return _pool(device).peak_allocated if runtime.is_available() else 0


def memory_reserved(device=None):
    """Bytes the caching allocator holds on a device: allocated plus cached free blocks."""
    return _pool(device).reserved if runtime.is_available() else 0


def max_memory_reserved(device=None):
    """Peak of `memory_reserved` since start-up or `reset_peak_memory_stats`."""
    return _pool(device).peak_reserved if runtime.is_available() else 0


def memory_cached(device=None):
    """Deprecated name of `memory_reserved`."""
    return memory_reserved(device)


def max_memory_cached(device=None):
    """Deprecated name of `max_memory_reserved`."""
    return max_memory_reserved(device)


def reset_peak_memory_stats(device=None):
    """Restart the peaks (`max_memory_allocated`, `max_memory_reserved`) from current usage."""
    if runtime.is_available():
        _pool(device).reset_peaks()


def reset_max_memory_allocated(device=None):
    """Restart `max_memory_allocated` (PyTorch: an alias of `reset_peak_memory_stats`)."""
    reset_peak_memory_stats(device)


reset_max_memory_cached = reset_max_memory_allocated


def memory_stats(device=None):
    """A dict of the allocator's counters, under PyTorch's key names."""
    return _pool(device).stats() if runtime.is_available() else {}


def memory_summary(device=None, abbreviated=False):
    """A human-readable table of the allocator's counters for a device."""
    from .._backends.cuda import allocator as _cuda_alloc
    runtime.lazy_init()
    return _cuda_alloc.summary(device_index(device, optional=True))


def mem_get_info(device=None):
    """(free, total) bytes of a device's memory, as the driver reports them."""
    index = runtime.check_index(device_index(device, optional=True))
    if runtime.simulating():
        from .._backends.cuda import allocator as _cuda_alloc
        total = _cuda_alloc.SIM_CAPACITY
        return total - _cuda_alloc.pool(index).reserved, total
    with runtime.device_context(index):
        info = runtime.lazy_init().current_context().get_memory_info()
    return info.free, info.total


def empty_cache():
    """Give the cached free blocks of every device back to the driver.

    Memory held by live tensors is not freed. Numba frees device memory lazily, so its
    pending deallocations are flushed too.
    """
    if not runtime.is_initialized():
        return
    from .._backends.cuda import allocator as _cuda_alloc
    for index in list(_cuda_alloc._pools):
        _cuda_alloc.pool(index).release_cached()
    if not runtime.simulating():
        context = runtime.lazy_init().current_context()
        manager = getattr(context, "memory_manager", None)
        if hasattr(manager, "empty_cache"):  # ember's allocator: its blocks come from `_raw`
            manager.empty_cache()
        context.deallocations.clear()
