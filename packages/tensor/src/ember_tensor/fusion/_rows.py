"""Helpers shared by the row prologues (`FusedSoftmax`, `FusedLayerNorm`)."""

__all__ = ["numel"]


def numel(shape):
    """The number of elements of `shape`."""
    count = 1
    for n in shape:
        count *= n
    return count
