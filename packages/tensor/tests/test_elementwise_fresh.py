"""The fresh-output fast paths of elementwise ops (a new result, same dtype, no out=): every
rank and layout they take or hand on to the general path, and both sides of the size from
which a loop is split over threads, against NumPy."""
import numpy as np
import pytest

import ember_tensor as et

RNG = np.random.default_rng(0)
# Around the CPU backend's parallel threshold (2**17 elements).
SHAPES = [(), (1,), (8,), (3, 4), (2, 3, 4), (0,), (1 << 17,), ((1 << 17) + 3,), (520, 260)]
LAYOUTS = ["contiguous", "transposed", "strided"]


def _laid_out(array, layout):
    """A tensor of `array`'s values in `layout`: its own memory, a transposed view, or every
    other element of a larger tensor."""
    if layout == "contiguous" or array.ndim == 0:
        return et.from_numpy(array.copy())
    if layout == "transposed":
        return et.from_numpy(np.ascontiguousarray(array.T)).permute(*reversed(range(array.ndim)))
    wide = np.zeros(array.shape[:-1] + (2 * array.shape[-1],), array.dtype)
    wide[..., ::2] = array
    return et.from_numpy(wide)[..., ::2]


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("dtype", [np.float32, np.int64])
def test_fresh_results_match_numpy(shape, layout, dtype):
    a = np.asarray(RNG.standard_normal(shape) * 10).astype(dtype)
    b = np.asarray(RNG.standard_normal(shape) * 10).astype(dtype)
    x, y = _laid_out(a, layout), _laid_out(b, layout)
    cases = [
        (x + y, a + b), (x * y, a * b), (x - y, a - b),          # tensor with tensor
        (x * 3, a * dtype(3)), (3 - x, dtype(3) - a),            # with a Python number, both sides
        (x.neg(), -a), (x.abs(), np.abs(a)),                     # unary
    ]
    for got, expected in cases:
        assert tuple(got.shape) == shape and got.dtype == x.dtype
        np.testing.assert_array_equal(got.numpy(), expected)
    if dtype == np.float32:
        np.testing.assert_allclose(x.exp().numpy(), np.exp(a), rtol=1e-6)


def test_fresh_results_are_new_tensors():
    a, b = et.ones(4), et.ones(4)
    c = a + b
    c.add_(1)
    assert a.tolist() == [1.0] * 4 and b.tolist() == [1.0] * 4 and c.tolist() == [3.0] * 4
    assert c.untyped_storage().data_ptr() not in (a.untyped_storage().data_ptr(), b.untyped_storage().data_ptr())
