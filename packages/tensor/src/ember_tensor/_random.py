"""Random number generators: `Generator`, the default generator, and seeding.

The engine behind every generator is NumPy's PCG64 bit generator driven through
``numpy.random.Generator``: fast, vectorised, and able to produce float32 directly.
The streams are reproducible for a seed (same seed, same numbers, on any machine with
the same NumPy), but they are not PyTorch's: PyTorch uses Philox/mt19937, so
``manual_seed(0); rand(3)`` gives other values in ember than in PyTorch.

One engine serves every device: CUDA tensors are drawn on the host from the same
stream and copied to the GPU, so a seed gives the very same tensor on the CPU and on
CUDA, and `manual_seed` seeds "CUDA's generator" simply by seeding the one default.

Fork safety: a generator is only used under its own lock, and the locks are taken
around `os.fork()` and made afresh in the child, so a fork that happens while another
thread draws numbers never leaves the child deadlocked. Like PyTorch, a forked child
inherits its parent's generator state and so draws the same numbers; processes that
need different streams (DataLoader workers) must seed themselves.
"""
import os
import threading
import weakref

import numpy as np

from . import _dtype as D
from ._device import CPU, to_device

__all__ = ["Generator", "default_generator", "manual_seed", "seed", "initial_seed",
           "get_rng_state", "set_rng_state"]

# The seed PyTorch gives every new torch.Generator().
DEFAULT_SEED = 67280421310721
_UINT64_MASK = (1 << 64) - 1
_INT64_MIN = -(1 << 63)

# get_state() layout, little-endian: initial seed (8 bytes), PCG64 state (16), PCG64
# increment (16), has_uint32 (1), the buffered uint32 (4).
_STATE_SIZE = 45

_live_generators = weakref.WeakSet()


def _check_seed(seed):
    """PyTorch's seed rules: an int in [-2**63, 2**64), negatives wrapped to uint64."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise RuntimeError(f"manual_seed expected a long, but got {type(seed).__name__}")
    seed = int(seed)
    if not _INT64_MIN <= seed <= _UINT64_MASK:
        raise ValueError("Overflow when unpacking long long")
    return seed & _UINT64_MASK


def _nondeterministic_seed():
    return int.from_bytes(os.urandom(8), "little")


class Generator:
    """A source of random numbers with its own state, like ``torch.Generator``.

    Pass it as ``generator=`` to any random op to draw from it instead of from
    `default_generator`. A new generator starts from PyTorch's default seed
    (67280421310721), so two fresh generators give the same numbers.

    Args:
        device: the device whose tensors it fills ('cpu' or 'cuda'). Both draw on the
            host from the same kind of stream, so equal seeds give equal values.

    >>> g = Generator().manual_seed(42)
    >>> g.initial_seed()
    42
    >>> g.device
    device(type='cpu')
    """

    def __init__(self, device="cpu"):
        self._device = to_device(device)
        self._lock = threading.Lock()
        self._reseed(DEFAULT_SEED)
        _live_generators.add(self)

    def _reseed(self, seed):
        self._initial_seed = seed
        self._numpy = np.random.Generator(np.random.PCG64(seed))

    @property
    def device(self):
        """The device this generator fills tensors for."""
        return self._device

    def manual_seed(self, seed):
        """Restart the stream from `seed` (an int in [-2**63, 2**64)); returns self."""
        seed = _check_seed(seed)
        with self._lock:
            self._reseed(seed)
        return self

    def seed(self):
        """Seed from the operating system's entropy; returns the new seed."""
        new_seed = _nondeterministic_seed()
        with self._lock:
            self._reseed(new_seed)
        return new_seed

    def initial_seed(self):
        """The seed the current stream started from."""
        return self._initial_seed

    def get_state(self):
        """The generator's state as a uint8 tensor, for `set_state`."""
        with self._lock:
            state = self._numpy.bit_generator.state
        raw = b"".join((
            self._initial_seed.to_bytes(8, "little"),
            state["state"]["state"].to_bytes(16, "little"),
            state["state"]["inc"].to_bytes(16, "little"),
            int(state["has_uint32"]).to_bytes(1, "little"),
            int(state["uinteger"]).to_bytes(4, "little"),
        ))
        from ._tensor import Tensor  # the tensor module imports ops that import this one
        return Tensor._wrap(np.frombuffer(raw, np.uint8).copy(), D.uint8, CPU)

    def set_state(self, new_state):
        """Restore a state returned by `get_state`; returns self."""
        raw = _state_bytes(new_state)
        bit_state = {
            "bit_generator": "PCG64",
            "state": {"state": int.from_bytes(raw[8:24], "little"),
                      "inc": int.from_bytes(raw[24:40], "little")},
            "has_uint32": raw[40],
            "uinteger": int.from_bytes(raw[41:45], "little"),
        }
        with self._lock:
            self._initial_seed = int.from_bytes(raw[:8], "little")
            self._numpy.bit_generator.state = bit_state
        return self

    def _draw(self, method, *args, **kwargs):
        """Call NumPy Generator `method` (``'random'``, ``'integers'`` ...) under the lock."""
        with self._lock:
            return getattr(self._numpy, method)(*args, **kwargs)

    def __reduce__(self):
        state = self.get_state().numpy().tobytes()
        return (_rebuild_generator, (str(self._device), state))


def _state_bytes(new_state):
    from ._tensor import Tensor
    if not isinstance(new_state, Tensor):
        raise TypeError(f"expected a torch.ByteTensor, but got {type(new_state).__name__}")
    if new_state.dtype is not D.uint8:
        raise TypeError("RNG state must be a torch.ByteTensor")
    raw = np.ascontiguousarray(new_state._host_numpy()).reshape(-1).tobytes()
    if len(raw) != _STATE_SIZE:
        raise RuntimeError(
            f"Expected a PCG64 generator state of size {_STATE_SIZE} but found the input RNG "
            f"state size to be {len(raw)}")
    return raw


def _rebuild_generator(device, state):
    from ._tensor import Tensor
    g = Generator(device)
    return g.set_state(Tensor._wrap(np.frombuffer(state, np.uint8).copy(), D.uint8, CPU))


# -- fork safety -------------------------------------------------------------------

_held_at_fork = []


def _acquire_all_locks():
    # No thread can be inside NumPy's generator (holding its internal lock) at fork
    # time, because every draw happens under one of these locks.
    for g in list(_live_generators):
        g._lock.acquire()
        _held_at_fork.append(g)


def _release_all_locks():
    while _held_at_fork:
        _held_at_fork.pop()._lock.release()


def _fresh_locks_in_child():
    for g in _held_at_fork:
        g._lock = threading.Lock()
    _held_at_fork.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(before=_acquire_all_locks, after_in_parent=_release_all_locks,
                        after_in_child=_fresh_locks_in_child)


# -- the default generator and the module-level functions ------------------------------

default_generator = Generator()
# PyTorch seeds its default generator from the OS at start-up: runs differ unless seeded.
default_generator.seed()


def manual_seed(seed):
    """Seed the default generator for every device with ``int(seed)``; returns it.

    ember has one default generator for the CPU and CUDA, so this also fixes what
    CUDA tensors get (and they get the same values as CPU tensors would).

    >>> import ember_tensor as torch
    >>> _ = torch.manual_seed(0); a = torch.rand(2)
    >>> _ = torch.manual_seed(0); b = torch.rand(2)
    >>> a.tolist() == b.tolist()
    True
    """
    return default_generator.manual_seed(int(seed))


def seed():
    """Seed the default generator from OS entropy; returns the seed.

    >>> seed() == initial_seed()
    True
    """
    return default_generator.seed()


def initial_seed():
    """The seed the default generator's stream started from.

    >>> manual_seed(7).initial_seed() == initial_seed() == 7
    True
    """
    return default_generator.initial_seed()


def get_rng_state():
    """The default generator's state as a uint8 tensor (pass it to `set_rng_state`).

    >>> import ember_tensor as torch
    >>> state = torch.get_rng_state()
    >>> a = torch.rand(3)
    >>> torch.set_rng_state(state)
    >>> torch.rand(3).tolist() == a.tolist()
    True
    """
    return default_generator.get_state()


def set_rng_state(new_state):
    """Restore the default generator to a state from `get_rng_state`."""
    default_generator.set_state(new_state)


def resolve(generator, device, fn):
    """The generator an op on `device` draws from: `generator`, or the default one.

    An explicit generator must be made for the op's device type, as in PyTorch; the
    default generator serves every device.
    """
    if generator is None:
        return default_generator
    if not isinstance(generator, Generator):
        raise TypeError(f"{fn}(): argument 'generator' must be torch.Generator, not "
                        f"{type(generator).__name__}")
    if generator is not default_generator and generator._device.type != device.type:
        raise RuntimeError(f"Expected a '{device.type}' device type for generator but found "
                           f"'{generator._device.type}'")
    return generator
