"""``torch.random``: the CPU's default generator (seeding, state) and `fork_rng`, which
runs a block on forked random streams and puts every generator it forked back after it.

    >>> import ember_tensor as torch
    >>> _ = torch.manual_seed(0)
    >>> with torch.random.fork_rng():
    ...     inside = torch.rand(2)
    >>> bool((torch.rand(2) == inside).all())   # the stream went on from where it was
    True
"""
import contextlib
import warnings

from . import accelerator, cuda, mps, xpu
from ._random import (
    Generator, default_generator, get_rng_state, initial_seed, manual_seed, seed, set_rng_state,
)

__all__ = ["Generator", "default_generator", "fork_rng", "get_rng_state", "initial_seed", "manual_seed", "seed",
           "set_rng_state"]

_fork_rng_warned_already = False


@contextlib.contextmanager
def fork_rng(devices=None, enabled=True, _caller="fork_rng", _devices_kw="devices", device_type=None):
    """Fork the random streams: on leaving the block, the CPU's generator and those of
    `devices` (indices of `device_type`'s devices, by default the accelerator's, all of
    them) are back in the state they had on entering it. ``enabled=False`` forks nothing.
    """
    current = accelerator.current_accelerator()
    # The CPU's stream is always forked; the device type defaults to the accelerator's.
    device_type = device_type or (current.type if current is not None else "cuda")
    device_module = {"cuda": cuda, "xpu": xpu, "mps": mps}.get(device_type)
    if device_module is None:
        raise RuntimeError(f"torch has no module of `{device_type}`, you should register a module by "
                           "`torch._register_device_module`.")
    if not enabled:
        yield
        return
    if devices is None:
        count = device_module.device_count()
        if count > 1:
            _warn_every_device(device_type.upper(), count, _caller, _devices_kw)
        devices = list(range(count))
    else:
        devices = list(devices)  # a generator would be used up by the first pass
    cpu_state = get_rng_state()
    device_states = [device_module.get_rng_state(index) for index in devices]
    try:
        yield
    finally:
        set_rng_state(cpu_state)
        for index, state in zip(devices, device_states):
            device_module.set_rng_state(state, index)


def _warn_every_device(kind, count, caller, devices_kw):
    global _fork_rng_warned_already
    if _fork_rng_warned_already:
        return
    warnings.warn(
        f"{kind} reports that you have {count} available devices, and you have used {caller} without "
        f"explicitly specifying which devices are being used. For safety, we initialize *every* {kind} device "
        f"by default, which can be quite slow if you have a lot of {kind}s. If you know that you are only making "
        f"use of a few {kind} devices, set the environment variable {kind}_VISIBLE_DEVICES or the "
        f"'{devices_kw}' keyword argument of {caller} with the set of devices you are actually using. For "
        "example, if you are using CPU only, set device.upper()_VISIBLE_DEVICES= or devices=[]; if you are "
        f"using device 0 only, set {kind}_VISIBLE_DEVICES=0 or devices=[0].  To initialize all devices and "
        f"suppress this warning, set the '{devices_kw}' keyword argument to "
        f"`range(torch.{kind.lower()}.device_count())`.", stacklevel=3)
    _fork_rng_warned_already = True
