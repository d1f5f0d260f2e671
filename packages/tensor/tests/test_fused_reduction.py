"""ember_tensor.fusion.FusedReduction: an elementwise program reduced in one loop, against
NumPy and the unfused ops (bit for bit), over every layout the CPU executor maps (contiguous, strided,
broadcast along kept or reduced dims, negative strides, packed, 0-d, threaded)."""
import numpy as np
import pytest

import ember_tensor as et
from ember_tensor.fusion import FusedElementwise, FusedReduction

# x0 * x1 + 0.5, then reduced
PROGRAM = FusedElementwise([("mul", (("in", 0), ("in", 1))), ("add", (("step", 0), 0.5))], 2)
NUMPY = {"sum": np.sum, "mean": np.mean, "amax": np.max, "amin": np.min}


def _layouts():
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((6, 7)), rng.standard_normal((6, 7))
    yield "contiguous", et.tensor(a), et.tensor(b)
    yield "transposed", et.tensor(a.T.copy()).t(), et.tensor(b)
    yield "row_broadcast", et.tensor(a), et.tensor(b[0])
    yield "column_broadcast", et.tensor(a), et.tensor(b[:, :1])
    yield "negative_strides", et.tensor(a).flip(1), et.tensor(b)
    yield "sliced", et.tensor(rng.standard_normal((12, 14)))[::2, 1::2], et.tensor(b)
    yield "zero_dim", et.tensor(2.0), et.tensor(3.0)


@pytest.mark.parametrize("kind", sorted(NUMPY))
@pytest.mark.parametrize("dim", [None, -1, 0])
@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("dtype", [et.float32, et.float64])
def test_layouts_against_numpy_and_the_unfused_ops(kind, dim, keepdim, dtype):
    for name, x, y in _layouts():
        x, y = x.to(dtype), y.to(dtype)
        got = FusedReduction(PROGRAM, kind, dim, keepdim)(x, y)
        values = x * y + 0.5
        eager = getattr(values, kind)() if dim is None else getattr(values, kind)(dim, keepdim=keepdim)
        if dim is None and keepdim:
            eager = eager.reshape((1,) * values.dim())
        expected = NUMPY[kind](values.numpy().astype(np.float64), axis=dim if values.dim() else None,
                               keepdims=keepdim)
        assert got.shape == eager.shape and got.dtype == dtype, name
        assert np.allclose(got.numpy(), expected, rtol=1e-5), name
        assert et.equal(got, eager), name   # eager's blocks, eager's fold: its bits


def test_large_rows_and_a_large_full_reduction_split_over_threads():
    rng = np.random.default_rng(1)
    x, y = et.tensor(rng.standard_normal((3, 200_000)), dtype=et.float32), et.tensor(1.5)
    for dim in (None, -1, 0):
        reduction = FusedReduction(PROGRAM, "sum", dim)
        expected = (x * y + 0.5).sum() if dim is None else (x * y + 0.5).sum(dim)
        assert et.equal(reduction(x, y), expected)


def test_declines_what_it_cannot_run():
    reduction = FusedReduction(PROGRAM, "sum", dim=-1)
    assert reduction.compute_dtype([et.zeros(0, 3), et.zeros(0, 3)]) is None       # empty
    assert reduction.compute_dtype([et.zeros(3), et.zeros(3, dtype=et.float64)]) is None
    assert reduction.compute_dtype([et.zeros(3, dtype=et.int64)] * 2) is None
    assert FusedReduction(PROGRAM, "sum", dim=2).compute_dtype([et.zeros(3, 4)] * 2) is None
    assert reduction.compute_dtype([et.zeros(3, 4)] * 2) is et.float32
    with pytest.raises(ValueError, match="not a fusible reduction"):
        FusedReduction(PROGRAM, "prod")
