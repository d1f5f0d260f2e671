"""``torch.xpu``: Intel GPUs, which ember has no backend for.

Programs probe it while choosing a device (pytorch/examples:
``use_xpu = torch.xpu.is_available()``), so the module answers as PyTorch's does in a build
without XPU: nothing is available, seeding and cache calls are quiet no-ops (PyTorch queues
them lazily), and anything that needs a device raises its "not compiled" AssertionError.

>>> from ember_tensor import xpu
>>> xpu.is_available(), xpu.device_count()
(False, 0)
"""

__all__ = ["is_available", "device_count", "is_initialized", "is_bf16_supported", "manual_seed",
           "manual_seed_all", "seed", "seed_all", "empty_cache", "current_device", "set_device",
           "synchronize", "get_device_name", "get_device_properties", "get_device_capability", "init",
           "get_rng_state", "get_rng_state_all", "set_rng_state", "set_rng_state_all", "initial_seed",
           "memory_allocated", "max_memory_allocated", "set_per_process_memory_fraction"]


def _unavailable():
    return AssertionError("Torch not compiled with XPU enabled")


def is_available():
    """False: ember has no XPU backend."""
    return False


def device_count():
    """0: no XPU device."""
    return 0


def is_initialized():
    """False: there is no XPU state to initialise."""
    return False


def is_bf16_supported(including_emulation=True):
    """False: no XPU device."""
    return False


def manual_seed(seed):
    """A no-op, as in PyTorch without XPU (seeding is deferred until a device exists)."""


def manual_seed_all(seed):
    """A no-op, as `manual_seed`."""


def seed():
    """A no-op, as `manual_seed`."""


def seed_all():
    """A no-op, as `manual_seed`."""


def empty_cache():
    """A no-op: no XPU memory is held."""


def init():
    """Raise: there is no XPU to initialise."""
    raise _unavailable()


def current_device():
    """Raise: there is no XPU device."""
    raise _unavailable()


def set_device(device):
    """Raise: there is no XPU device."""
    raise _unavailable()


def synchronize(device=None):
    """Raise: there is no XPU device."""
    raise _unavailable()


def get_device_name(device=None):
    """Raise: there is no XPU device."""
    raise _unavailable()


def get_device_properties(device=None):
    """Raise: there is no XPU device."""
    raise _unavailable()


def get_device_capability(device=None):
    """Raise: there is no XPU device."""
    raise _unavailable()


def get_rng_state(device="xpu"):
    """Raise: there is no XPU generator."""
    raise _unavailable()


def get_rng_state_all():
    """[]: one state per XPU device, and there are none."""
    return []


def set_rng_state(new_state, device="xpu"):
    """A no-op, as `manual_seed`."""


def set_rng_state_all(new_states):
    """A no-op, as `manual_seed`."""


def initial_seed():
    """Raise: there is no XPU generator."""
    raise _unavailable()


def memory_allocated(device=None):
    """0: no XPU memory is held."""
    return 0


def max_memory_allocated(device=None):
    """0: no XPU memory was ever held."""
    return 0


def set_per_process_memory_fraction(fraction, device=None):
    """Raise: there is no XPU device."""
    raise _unavailable()
