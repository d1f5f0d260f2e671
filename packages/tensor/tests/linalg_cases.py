"""What the linear-algebra tests share: `laid_out(array, transposed)`, an ember tensor of a
NumPy array whose memory may be laid out transposed, and `assert_close(result, expected)`,
the float64 comparison against NumPy that their tables make."""
import numpy as np

import ember_tensor as E

__all__ = ["laid_out", "assert_close"]


def laid_out(array, transposed=False):
    """An ember float64 tensor of `array`, optionally laid out transposed in memory."""
    if transposed and array.ndim >= 2:
        t = E.tensor(np.ascontiguousarray(np.swapaxes(array, -1, -2))).mT
        assert not t.is_contiguous() or 0 in array.shape[-2:] or 1 in array.shape[-2:]
        return t
    return E.tensor(array)


def assert_close(result, expected, atol=1e-9):
    """`result` (a tensor or number) has `expected`'s shape and values (rtol 1e-7, `atol`)."""
    result = np.asarray(result.numpy() if hasattr(result, "numpy") else result)
    assert result.shape == np.shape(expected), (result.shape, np.shape(expected))
    np.testing.assert_allclose(result, expected, rtol=1e-7, atol=atol)
