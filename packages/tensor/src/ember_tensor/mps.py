"""``torch.mps``: Apple's Metal GPUs, which ember has no backend for.

As PyTorch on a machine without MPS: ``is_available()`` is False, ``device_count()`` 0,
``manual_seed`` a quiet no-op, and calls that need the device raise PyTorch's RuntimeError.
(Programs mostly ask ``torch.backends.mps.is_available()``, which ember answers too.)

>>> from ember_tensor import mps
>>> mps.is_available(), mps.device_count()
(False, 0)
"""

__all__ = ["is_available", "device_count", "manual_seed", "seed", "synchronize", "empty_cache",
           "get_rng_state", "set_rng_state", "current_allocated_memory", "driver_allocated_memory",
           "recommended_max_memory", "set_per_process_memory_fraction"]


def _unavailable(what):
    return RuntimeError(f"Cannot execute {what}() without MPS backend.")


def is_available():
    """False: ember has no MPS backend."""
    return False


def device_count():
    """0: no MPS device."""
    return 0


def manual_seed(seed):
    """A no-op without an MPS device, as in PyTorch."""


def seed():
    """Raise: there is no MPS generator."""
    raise _unavailable("getDefaultGenerator")


def get_rng_state(device="mps"):
    """Raise: there is no MPS generator."""
    raise _unavailable("getDefaultGenerator")


def set_rng_state(new_state, device="mps"):
    """Raise: there is no MPS generator."""
    raise _unavailable("getDefaultGenerator")


def synchronize():
    """Raise: there is no MPS device."""
    raise _unavailable("deviceSynchronize")


def empty_cache():
    """Raise: there is no MPS device."""
    raise _unavailable("emptyCache")


def current_allocated_memory():
    """Raise: there is no MPS device."""
    raise _unavailable("getCurrentAllocatedMemory")


def driver_allocated_memory():
    """Raise: there is no MPS device."""
    raise _unavailable("getDriverAllocatedMemory")


def recommended_max_memory():
    """Raise: there is no MPS device."""
    raise _unavailable("getRecommendedMaxMemory")


def set_per_process_memory_fraction(fraction):
    """Raise: there is no MPS device."""
    raise _unavailable("setMemoryFraction")
