"""PyTorch's distributed error types: ``DistError`` and the three kinds users catch.

All are RuntimeErrors, as in PyTorch, so ``except RuntimeError`` keeps working.
"""

__all__ = ["DistError", "DistBackendError", "DistStoreError", "DistNetworkError", "QueueEmptyError"]


class DistError(RuntimeError):
    """The base of every error raised by the distributed package."""


class DistBackendError(DistError):
    """A collective or the process group failed: a peer died, never joined, or timed out."""


class DistStoreError(DistError):
    """A store operation failed, typically a ``get``/``wait`` that timed out."""


class QueueEmptyError(DistStoreError):
    """``Store.queue_pop(key, block=False)`` found the queue empty."""


class DistNetworkError(DistError):
    """A connection could not be made or was lost (a store's server is unreachable)."""
