"""``torch.cpu``: the CPU's device module, as PyTorch has one beside ``torch.cuda``.

``ember.cpu.amp`` is ember-amp's deprecated CPU spellings (``torch.cpu.amp.autocast``,
``torch.cpu.amp.GradScaler``).
"""
import ember_amp.cpu_amp as amp

__all__ = ["amp", "is_available", "device_count", "current_device", "synchronize"]


def is_available():
    """Always True: ember always runs on the CPU."""
    return True


def device_count():
    """1: the CPU is one device."""
    return 1


def current_device():
    """'cpu'."""
    return "cpu"


def synchronize(device=None):
    """A no-op: CPU work is synchronous."""
