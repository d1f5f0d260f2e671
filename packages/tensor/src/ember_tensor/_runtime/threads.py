"""``torch.get_num_threads`` and friends: the intra-op thread budget (one number for
ember's parallel kernels and the BLAS, held by the CPU backend) and the inter-op count.

ember runs no inter-op pool (ops run one after another on the calling thread), so the
inter-op count is only kept, with PyTorch's rule that it can be set once.
"""
import os

from .._backends.cpu import threads as _cpu_threads

__all__ = ["get_num_threads", "set_num_threads", "get_num_interop_threads", "set_num_interop_threads"]

_interop = {"threads": None, "set": False}


def _positive_int(value, fn):
    if isinstance(value, bool) or not isinstance(value, int):
        raise RuntimeError(f"{fn} expects an int, but got {type(value).__name__}")
    if value <= 0:
        raise RuntimeError(f"{fn} expects a positive integer")
    return value


def get_num_threads():
    """The number of threads ember's CPU kernels and the BLAS may use."""
    return _cpu_threads.budget()


def set_num_threads(int):  # noqa: A002 - PyTorch's parameter name
    """Let ember's parallel CPU kernels and the BLAS use `int` threads. With 1 every kernel
    runs serially (what a DataLoader worker sets). Numba cannot go beyond the threads it
    started with (NUMBA_NUM_THREADS): a larger number is kept and reported, and Numba runs
    at its maximum."""
    _cpu_threads.set_budget(_positive_int(int, "set_num_threads"))


def get_num_interop_threads():
    """The inter-op thread count: what `set_num_interop_threads` was given, else the
    number of CPUs (ember runs ops on the calling thread and keeps no such pool)."""
    return _interop["threads"] or os.cpu_count() or 1


def set_num_interop_threads(int):  # noqa: A002 - PyTorch's parameter name
    """Set the inter-op thread count, once, as PyTorch allows; ember keeps the number
    (see `get_num_interop_threads`)."""
    value = _positive_int(int, "set_num_interop_threads")
    if _interop["set"]:
        raise RuntimeError("Error: cannot set number of interop threads after parallel work has started "
                           "or set_num_interop_threads called")
    _interop.update(threads=value, set=True)
