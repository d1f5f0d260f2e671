"""Reductions on CUDA tensors compared with the CPU: every reduction on a contiguous input and
a few on each other layout, 0-d tensors, NaN and ties, empty inputs, long rows split across
blocks and merged, and the long median rows that take the host path.

Runs on Numba's CUDA simulator (shapes stay tiny); the comparison is test_cuda_ops.py's.
"""
import numpy as np
import pytest

import ember_tensor as et

pytestmark = pytest.mark.skipif(not et.cuda.is_available(), reason="no CUDA and no simulator")
from test_cuda_ops import _check


R = np.array([[[1.5, -2.0, 3.0, 0.0], [4.0, 5.0, -6.5, 7.0], [8.0, 0.25, 9.0, -1.0]],
              [[2.0, 2.0, -3.0, 1.0], [0.0, 1.0, 1.0, 5.0], [-4.0, 6.0, 0.5, 3.0]]])


REDUCTIONS = [
    ("sum", lambda x: x.sum()),
    ("sum_dim", lambda x: x.sum(1)),
    ("sum_dims_keepdim", lambda x: x.sum((0, 2), keepdim=True)),
    ("sum_neg_dim", lambda x: x.sum(-1)),
    ("mean", lambda x: x.mean((1, 2))),
    ("prod", lambda x: x.prod(2)),
    ("amax", lambda x: x.amax((0, 1))),
    ("amin", lambda x: x.amin()),
    ("max_dim", lambda x: tuple(x.max(1))),
    ("min_dim_keepdim", lambda x: tuple(x.min(2, keepdim=True))),
    ("argmax", lambda x: x.argmax()),
    ("argmin_dim", lambda x: x.argmin(0)),
    ("var", lambda x: x.var(1)),
    ("std_correction", lambda x: x.std((0, 2), correction=0)),
    ("var_mean", lambda x: et.var_mean(x, 2)),
    ("norm", lambda x: x.norm()),
    ("norm_1_dim", lambda x: x.norm(1, dim=1)),
    ("logsumexp", lambda x: x.logsumexp(2)),
    ("all", lambda x: x.all(1)),
    ("any", lambda x: (x > 8).any()),
    ("count_nonzero", lambda x: x.count_nonzero(2)),
    ("median", lambda x: x.median()),
    ("median_dim", lambda x: tuple(x.median(1))),
    ("sum_int", lambda x: x.long().sum(2)),
    ("amax_int", lambda x: x.int().amax(1)),
    ("sum_bool", lambda x: (x > 0).sum()),
    ("sum_half", lambda x: x.half().sum(1)),
    ("mean_bf16", lambda x: x.bfloat16().mean()),
    ("sum_float64", lambda x: x.double().sum(0)),
]


# How the input is laid out: its values stay R, its memory layout changes.
REDUCTION_LAYOUTS = {
    "contiguous": lambda t: t,
    "permuted": lambda t: t.permute(2, 0, 1).contiguous().permute(1, 2, 0),
    "sliced": lambda t: et.cat([t, t], 2)[:, :, ::2],
}


# Every reduction on a contiguous input; a representative few on the other layouts too
# (the simulator is slow, and the layout handling is shared by all reductions).
_LAYOUT_SUBSET = ("sum_dims_keepdim", "max_dim", "var", "median_dim", "amax", "argmax", "mean")


REDUCTION_CASES = [(name, fn, "contiguous") for name, fn in REDUCTIONS] + [
    (name, fn, layout) for name, fn in REDUCTIONS if name in _LAYOUT_SUBSET
    for layout in REDUCTION_LAYOUTS if layout != "contiguous"]


@pytest.mark.parametrize("name,fn,layout", REDUCTION_CASES,
                         ids=[f"{n}-{layout}" for n, _, layout in REDUCTION_CASES])
def test_reductions_match_cpu(name, fn, layout):
    x = REDUCTION_LAYOUTS[layout](et.tensor(R, dtype=et.float32))
    _check(fn, x)


@pytest.mark.parametrize("name,fn", [
    ("sum_0d", lambda x: x.sum()),
    ("max_0d", lambda x: x.max()),
    ("argmax_0d", lambda x: x.argmax(0)),
    ("var_0d", lambda x: x.var(correction=0)),
    ("median_0d", lambda x: x.median()),
], ids=lambda v: v if isinstance(v, str) else "")
def test_reductions_of_0d_tensors(name, fn):
    _check(fn, et.tensor(2.5))


def test_reductions_with_nan_and_ties():
    x = et.tensor([[1.0, float("nan"), 3.0, float("nan")], [2.0, 5.0, 5.0, -1.0]])
    for fn in (lambda t: tuple(t.max(1)), lambda t: t.argmin(1), lambda t: tuple(t.median(1)),
               lambda t: t.amax(1), lambda t: t.sum(1), lambda t: t.argmax()):
        _check(fn, x)


def test_empty_reductions():
    x = et.zeros(0, 3)
    for fn in (lambda t: t.sum(0), lambda t: t.prod(0), lambda t: t.mean(0), lambda t: t.sum(1),
               lambda t: t.amax(1), lambda t: t.all(0)):
        _check(fn, x)


def test_long_rows_are_split_across_blocks_and_merged():
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
    from ember_tensor._backends.cuda import reduction as _cuda_reduce
    n = _cuda_reduce.MEDIAN_ON_DEVICE_MAX + 5
    x = et.tensor(np.random.default_rng(0).permutation(2 * n).reshape(2, n).astype(np.float32))
    x[1, 3] = float("nan")
    for fn in (lambda t: t.median(), lambda t: tuple(t.median(1)), lambda t: tuple(t.t().median(0))):
        _check(fn, x)
