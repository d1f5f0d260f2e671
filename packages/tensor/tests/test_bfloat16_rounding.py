"""float32 -> bfloat16 on the CPU (`_backends/cpu/kernels/half.py`, taken by `to`, `copy_`
and the ops' casts for large contiguous arrays): bit for bit ml_dtypes' rounding (nearest,
ties to even, overflow to inf, NaN to the canonical quiet NaN with its sign), on random bit
patterns and the edge values, above and below the loop's size threshold and on strided views."""
import ml_dtypes
import numpy as np
import pytest

import ember_tensor as et

EDGES = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 1e-45, -1e-45, 1.1754942e-38, 3.4e38,
                  3.3961776e38, -3.3961776e38, 1.0 + 2**-8, 1.0 + 3 * 2**-8, 1.0 + 2**-8 + 2**-20, 65504.0],
                 np.float32)


def _values(n, seed=0):
    bits = np.random.default_rng(seed).integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
    return np.concatenate([bits.view(np.float32), EDGES])


def _reference(x):
    with np.errstate(invalid="ignore", over="ignore"):
        return x.astype(ml_dtypes.bfloat16).view(np.uint16)


@pytest.mark.parametrize("n", [100, 50_000], ids=["small", "large"])  # the loop starts at 16384
@pytest.mark.parametrize("how", ["to", "bfloat16", "copy_"])
def test_rounding_is_ml_dtypes_bit_for_bit(n, how):
    x = _values(n)
    t = et.from_numpy(x.copy())
    if how == "to":
        out = t.to(et.bfloat16)
    elif how == "bfloat16":
        out = t.bfloat16()
    else:
        out = et.empty(t.shape, dtype=et.bfloat16)
        out.copy_(t)
    np.testing.assert_array_equal(out.numpy().view(np.uint16), _reference(x))


def test_strided_source_and_destination():
    x = _values(20_000).reshape(-1, 4)
    t = et.from_numpy(x.copy()).t()
    np.testing.assert_array_equal(t.bfloat16().numpy().view(np.uint16), _reference(x.T))
    out = et.empty(x.shape, dtype=et.bfloat16).t()
    out.copy_(t)
    np.testing.assert_array_equal(out.numpy().view(np.uint16), _reference(x.T))
