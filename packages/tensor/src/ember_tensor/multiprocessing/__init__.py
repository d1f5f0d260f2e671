"""``torch.multiprocessing``: Python's multiprocessing, with tensors sent through shared
memory instead of being copied.

Every name of :mod:`multiprocessing` is here (Process, Queue, Pool, get_context,
set_start_method, ...), plus `spawn`/`start_processes` and the sharing-strategy
functions. Importing this module registers a reducer for tensors with multiprocessing's
pickler: a CPU tensor put on a Queue, or passed to a Process started by spawn or
forkserver, moves to shared memory (`Tensor.share_memory_`) and the receiving process
maps the same pages; a forked child inherits them. So a model whose parameters were
shared (`Module.share_memory()`) is trained by several processes at once (Hogwild).

>>> import ember_tensor.multiprocessing as mp
>>> mp.get_sharing_strategy() in mp.get_all_sharing_strategies()
True
"""
import multiprocessing
import sys
from multiprocessing import *  # noqa: F401,F403 - the whole multiprocessing API, as torch.multiprocessing has it

from .reductions import init_reductions
from .spawn import ProcessContext, ProcessExitedException, ProcessRaisedException, spawn, start_processes

__all__ = ["set_sharing_strategy", "get_sharing_strategy", "get_all_sharing_strategies", "spawn",
           "start_processes", "ProcessContext", "ProcessRaisedException", "ProcessExitedException",
           *multiprocessing.__all__]

# Both strategies are served by one mechanism (an anonymous file whose descriptor is
# passed), which leaves nothing behind; the names are PyTorch's, for programs that set one.
if sys.platform in ("darwin", "win32"):
    _ALL_STRATEGIES = {"file_system"}
else:
    _ALL_STRATEGIES = {"file_descriptor", "file_system"}
_strategy = next(iter(sorted(_ALL_STRATEGIES)))


def set_sharing_strategy(new_strategy):
    """Choose how CPU tensors are shared: one of `get_all_sharing_strategies()`."""
    global _strategy
    if new_strategy not in _ALL_STRATEGIES:
        raise AssertionError(f"invalid sharing strategy {new_strategy!r}")
    _strategy = new_strategy


def get_sharing_strategy():
    """The current sharing strategy ("file_descriptor" on Linux, as in PyTorch)."""
    return _strategy


def get_all_sharing_strategies():
    """The sharing strategies this platform supports."""
    return set(_ALL_STRATEGIES)


init_reductions()
