"""Random number generators: `Generator`, the default generators, and seeding.

A generator's engine depends on its device, as in PyTorch:

* CPU (`_backends.cpu.random.Engine`): NumPy's PCG64 bit generator driven through ``numpy.random.Generator`` (fast,
  vectorised, float32 directly). Reproducible for a seed, but not PyTorch's numbers
  (PyTorch uses mt19937), only PyTorch's distributions.
* CUDA (`_backends.cuda.random.Engine`): counter-based Philox4x32-10 whose whole state is (seed, offset), like PyTorch's
  CUDA generator: device kernels (`_backends.cuda.kernels.random`) compute each element from
  (seed, offset, element index), and every op advances the offset by what it used, so
  the numbers are made on the GPU, reproducible for a seed and independent across calls.

So a seed gives different numbers on the CPU and on CUDA (PyTorch does not promise equal
ones either). There is one default generator for the CPU (`default_generator`) and one
per GPU (`cuda_default_generator(i)`, made on first use): `manual_seed` seeds all of
them; `ember_tensor.cuda.manual_seed` only the current GPU's. Unseeded, every default
generator starts from OS entropy, so runs differ unless seeded.

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

from . import _backends
from . import _dtype as D
from ._device import CPU, device as _device, to_device

__all__ = ["Generator", "default_generator", "manual_seed", "seed", "initial_seed",
           "get_rng_state", "set_rng_state", "cuda_default_generator", "cuda_manual_seed_all"]

# The seed PyTorch gives every new torch.Generator().
DEFAULT_SEED = 67280421310721
_UINT64_MASK = (1 << 64) - 1
_INT64_MIN = -(1 << 63)

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

    Pass it as ``generator=`` to any random op to draw from it instead of from the
    default generator of the op's device. A new generator starts from PyTorch's default
    seed (67280421310721), so two fresh generators give the same numbers.

    Args:
        device: the device whose tensors it fills: 'cpu' (NumPy PCG64 on the host) or
            'cuda' (Philox on the GPU, state = seed and offset). Equal seeds give
            different numbers on the two.

    >>> g = Generator().manual_seed(42)
    >>> g.initial_seed()
    42
    >>> g.device
    device(type='cpu')
    """

    def __init__(self, device="cpu"):
        self._device = _backends.resolve(to_device(device))  # 'cuda' is the current GPU, as in PyTorch
        self._lock = threading.Lock()
        # The engine is the device's: its backend's random family says which and keeps its state.
        self._engine = _backends.get(self._device).random.Engine(DEFAULT_SEED)
        _live_generators.add(self)

    @property
    def device(self):
        """The device this generator fills tensors for."""
        return self._device

    def manual_seed(self, seed):
        """Restart the stream from `seed` (an int in [-2**63, 2**64)); returns self."""
        seed = _check_seed(seed)
        with self._lock:
            self._engine.reseed(seed)
        return self

    def seed(self):
        """Seed from the operating system's entropy; returns the new seed."""
        new_seed = _nondeterministic_seed()
        with self._lock:
            self._engine.reseed(new_seed)
        return new_seed

    def initial_seed(self):
        """The seed the current stream started from."""
        return self._engine.initial_seed

    def get_state(self):
        """The generator's state as a uint8 CPU tensor, for `set_state`.

        CPU: seed and PCG64 state (45 bytes); CUDA: seed and Philox offset (16 bytes).
        """
        with self._lock:
            raw = self._engine.state_bytes()
        from ._tensor import Tensor  # the tensor module imports ops that import this one
        return Tensor._wrap(np.frombuffer(raw, np.uint8).copy(), D.uint8, CPU)

    def set_state(self, new_state):
        """Restore a state returned by `get_state`; returns self."""
        raw = _state_bytes(new_state)
        with self._lock:
            self._engine.load(raw)
        return self

    def _draw(self, method, *args, **kwargs):
        """Call NumPy Generator `method` (``'random'``, ``'integers'`` ...) under the lock.

        On a CUDA generator this draws on the host from a stream of its own (see the CUDA
        backend's `random.Engine.host_stream`); random ops of CUDA tensors use device kernels.
        """
        with self._lock:
            return getattr(self._engine.host_stream(), method)(*args, **kwargs)

    def _sample(self, sampler, *args):
        """`sampler(stream, *args)` with the generator locked: how a backend draws from it.

        `stream` is the CPU engine's NumPy Generator, or the CUDA engine's
        `reserve(words) -> (seed, offset)` of Philox counters: plain objects, so that a
        backend's samplers (`_backends.<device>.random`) need no Generator of their own.
        """
        with self._lock:
            return sampler(self._engine.backend_stream(), *args)

    def _philox_reserve(self, increment):
        """(seed, offset) for a device kernel using `increment` words per element group."""
        with self._lock:
            return self._engine.reserve(increment)

    def __reduce__(self):
        state = self.get_state().numpy().tobytes()
        return (_rebuild_generator, (str(self._device), state))


def _state_bytes(new_state):
    from ._tensor import Tensor
    if not isinstance(new_state, Tensor):
        raise TypeError(f"expected a torch.ByteTensor, but got {type(new_state).__name__}")
    if new_state.dtype is not D.uint8:
        raise TypeError("RNG state must be a torch.ByteTensor")
    return np.ascontiguousarray(new_state._host_numpy()).reshape(-1).tobytes()


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
    global _cuda_defaults_lock
    for g in _held_at_fork:
        g._lock = threading.Lock()
    _held_at_fork.clear()
    # Another thread may have held it while making a GPU's generator: none runs in the child.
    _cuda_defaults_lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(before=_acquire_all_locks, after_in_parent=_release_all_locks,
                        after_in_child=_fresh_locks_in_child)


# -- the default generators and the module-level functions ------------------------------

default_generator = Generator()
# PyTorch seeds its default generator from the OS at start-up: runs differ unless seeded.
default_generator.seed()

_cuda_defaults = {}  # GPU index -> its default generator, made on first use
_cuda_defaults_lock = threading.Lock()
# The seed of the last manual_seed/seed for every GPU, given to GPUs' generators made later
# (PyTorch queues manual_seed_all until CUDA is initialised; this is the same promise).
_cuda_seed_all = None


def cuda_default_generator(index):
    """The default generator of GPU `index` (``torch.cuda.default_generators[index]``)."""
    g = _cuda_defaults.get(index)
    if g is None:
        with _cuda_defaults_lock:
            g = _cuda_defaults.get(index)
            if g is None:
                g = Generator(_device("cuda", index))
                g.manual_seed(_nondeterministic_seed() if _cuda_seed_all is None else _cuda_seed_all)
                _cuda_defaults[index] = g
    return g


def cuda_manual_seed_all(seed):
    """Seed the default generator of every GPU, including those not used yet."""
    global _cuda_seed_all
    seed = _check_seed(seed)
    with _cuda_defaults_lock:
        _cuda_seed_all = seed
        generators = list(_cuda_defaults.values())
    for g in generators:
        g.manual_seed(seed)


def manual_seed(seed):
    """Seed the default generators of the CPU and of every GPU with ``int(seed)``; returns
    the CPU's.

    CPU and CUDA tensors then get reproducible numbers, but not equal ones (the engines
    differ, see the module docstring).

    >>> import ember_tensor as torch
    >>> _ = torch.manual_seed(0); a = torch.rand(2)
    >>> _ = torch.manual_seed(0); b = torch.rand(2)
    >>> a.tolist() == b.tolist()
    True
    """
    generator = default_generator.manual_seed(int(seed))
    cuda_manual_seed_all(int(seed))
    return generator


def seed():
    """Seed the CPU's and every GPU's default generator from OS entropy; returns the seed.

    >>> seed() == initial_seed()
    True
    """
    new_seed = default_generator.seed()
    cuda_manual_seed_all(new_seed)
    return new_seed


def initial_seed():
    """The seed the CPU's default generator's stream started from.

    >>> manual_seed(7).initial_seed() == initial_seed() == 7
    True
    """
    return default_generator.initial_seed()


def get_rng_state():
    """The CPU's default generator's state as a uint8 tensor (pass it to `set_rng_state`).

    >>> import ember_tensor as torch
    >>> state = torch.get_rng_state()
    >>> a = torch.rand(3)
    >>> torch.set_rng_state(state)
    >>> torch.rand(3).tolist() == a.tolist()
    True
    """
    return default_generator.get_state()


def set_rng_state(new_state):
    """Restore the CPU's default generator to a state from `get_rng_state`."""
    default_generator.set_state(new_state)


def resolve(generator, device, fn):
    """The generator an op on `device` draws from: `generator`, or the device's default.

    An explicit generator must be made for the op's device type, as in PyTorch.
    """
    if generator is None:
        if device.type == "cuda":
            return cuda_default_generator(_device_index(device))
        return default_generator
    if not isinstance(generator, Generator):
        raise TypeError(f"{fn}(): argument 'generator' must be torch.Generator, not "
                        f"{type(generator).__name__}")
    if generator._device.type != device.type:
        raise RuntimeError(f"Expected a '{device.type}' device type for generator but found "
                           f"'{generator._device.type}'")
    return generator


def _device_index(device):
    if device.index is not None:
        return device.index
    from . import cuda
    return cuda.current_device()
