"""The 1-d contiguous arrays of the compute dtype that the fused optimizer kernels take.

`FlatOperands` hands a kernel views where an array already is one, and otherwise copies
(half types computed in float32, strided arrays) that `write_back` copies into the
arrays they stand for. Device-free: it works through the `storage` family it is given.
"""

__all__ = ["FlatOperands"]


class FlatOperands:
    """Views or written-back copies of arrays, as 1-d contiguous arrays of `compute_dtype`."""

    def __init__(self, storage, compute_dtype):
        self.storage = storage
        self.compute = compute_dtype
        self.copies = []

    def __call__(self, data, written=True):
        """`data` as a 1-d contiguous array of the compute dtype (copied back after the step
        by `write_back` when `written`)."""
        if data.dtype == self.compute and self.storage.is_contiguous(data):
            return self.storage.flat(data)
        work = self.storage.empty(tuple(data.shape), self.compute)
        self.storage.copy_(work, data)  # on the array's device, never through the host
        if written:
            self.copies.append((data, work))
        return self.storage.flat(work)

    def write_back(self):
        """Copy every written work copy into the array it stands for."""
        for data, work in self.copies:
            self.storage.copy_(data, work)
        self.copies.clear()
