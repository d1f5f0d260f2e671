"""`device_only()`: a context in which reading a CUDA tensor's values back to the host fails.

Ops that claim to run on the GPU are called inside it, so a test fails if the op quietly
copies its operands to the host, computes there and uploads the result (the round trip
that is correct but slow). Reading a single count that sizes the output (nonzero,
masked_select: PyTorch synchronises there too) goes through `allow_scalar_reads`.
"""
import contextlib

__all__ = ["device_only"]


@contextlib.contextmanager
def device_only(allow_scalar_reads=False):
    """Fail any device-to-host copy made inside the block (of more than one element when
    `allow_scalar_reads`)."""
    from ember_tensor import _cuda  # here, not at import: collecting tests needs no GPU

    original = _cuda.to_numpy

    def guarded(data):
        if allow_scalar_reads and data.size <= 1:
            return original(data)
        raise AssertionError(f"device-to-host copy of a {tuple(data.shape)} {data.dtype} array inside "
                             "device_only(): the op computed on the host")

    _cuda.to_numpy = guarded
    try:
        yield
    finally:
        _cuda.to_numpy = original
