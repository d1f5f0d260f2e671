"""What only CUDA's reductions do: split few long rows across blocks and merge the
partial results (two passes), and take long median rows to the host path. Compared with
the CPU on Numba's CUDA simulator, where the split threshold is small enough for tiny
shapes. The reductions themselves are test_reduction_cases.py's and the op database's.
"""
import numpy as np
import pytest

import ember_tensor as et
from cuda_guard import matches_the_cpu

pytestmark = pytest.mark.skipif(not et.cuda.is_available(), reason="no CUDA and no simulator")


def _check(fn, x):
    matches_the_cpu(fn, [x], getattr(fn, "__name__", "reduction"), tol=1e-6)


def test_long_rows_are_split_across_blocks_and_merged():
    """Rows split across blocks and merged give the CPU's sums, norms, variances and arg-extrema."""
    # Few long rows take the two-pass path (rows of at least 2 * SPLIT_MIN elements: 16
    # under the simulator, so the shapes stay small there).
    from ember_tensor._backends.cuda import reduction as _cuda_reduce
    n = 2 * _cuda_reduce.SPLIT_MIN + 4
    x = et.tensor(np.arange(3.0 * n).reshape(3, n) - 17)
    assert _cuda_reduce._chunks(1, 3 * n) > 1 and _cuda_reduce._chunks(3, n) > 1
    for fn in (lambda t: t.sum(), lambda t: t.mean(), lambda t: t.amin(), lambda t: t.sum(1),
               lambda t: t.t().mean(0), lambda t: t.norm(), lambda t: t.long().prod(1),
               lambda t: t.count_nonzero(), lambda t: (t > -17).all(), lambda t: t.abs().norm(1),
               lambda t: t.var(), lambda t: tuple(et.var_mean(t, 1, correction=0)),
               lambda t: t.t().std(0), lambda t: t.argmax(), lambda t: tuple(t.min(1)),
               lambda t: t.abs().argmin()):
        _check(fn, x)
    # ties and NaN across chunks: the first occurrence still wins
    ties = et.tensor([1.0, 9.0] * (n + 1))
    _check(lambda t: (t.argmax(), t.argmin()), ties)
    ties[25] = float("nan")
    ties[31] = float("nan")
    _check(lambda t: (t.argmax(), t.argmin(), t.max()), ties)


def test_long_median_rows_take_the_host_path():
    """Median rows past the device's sort size give the CPU's median (NaN included)."""
    from ember_tensor._backends.cuda import reduction as _cuda_reduce
    n = _cuda_reduce.MEDIAN_ON_DEVICE_MAX + 5
    x = et.tensor(np.random.default_rng(0).permutation(2 * n).reshape(2, n).astype(np.float32))
    x[1, 3] = float("nan")
    for fn in (lambda t: t.median(), lambda t: tuple(t.median(1)), lambda t: tuple(t.t().median(0))):
        _check(fn, x)
