"""Reductions of named cases: every reduction (and dtype=, correction, p, the integer,
bool and half types) of one 3-d tensor R laid out contiguous, permuted or sliced, 0-d
tensors, NaN and ties, empty inputs.

Each takes the device as a parameter (`device_checks.same_on`): on the CPU the float32
result equals the float64 one rounded to float32, on CUDA it is the CPU's, computed on
the device. The op database's REDUCTION_DB (test_reductions.py) checks each against
NumPy; the long rows only CUDA splits across blocks are test_cuda_reduction_blocks.py's.
"""
import numpy as np
import pytest

import ember_tensor as et
from cuda_guard import DEVICES
from device_checks import same_on


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


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name,fn,layout", REDUCTION_CASES,
                         ids=[f"{n}-{layout}" for n, _, layout in REDUCTION_CASES])
def test_reductions_in_each_layout(name, fn, layout, device):
    """Each reduction of R, however R is laid out, gives the float64 result rounded to
    its dtype (on CUDA: the CPU's)."""
    same_on(device, fn, REDUCTION_LAYOUTS[layout](et.tensor(R, dtype=et.float32)))


@pytest.mark.parametrize("name,fn", [
    ("sum_0d", lambda x: x.sum()),
    ("max_0d", lambda x: x.max()),
    ("argmax_0d", lambda x: x.argmax(0)),
    ("var_0d", lambda x: x.var(correction=0)),
    ("median_0d", lambda x: x.median()),
], ids=lambda v: v if isinstance(v, str) else "")
@pytest.mark.parametrize("device", DEVICES)
def test_reductions_of_0d_tensors(name, fn, device):
    """A 0-d tensor reduces to itself (index 0, variance 0) on every device."""
    same_on(device, fn, et.tensor(2.5))


@pytest.mark.parametrize("device", DEVICES)
def test_reductions_with_nan_and_ties(device):
    """NaN propagates and wins, and ties pick the first index, on every device."""
    x = et.tensor([[1.0, float("nan"), 3.0, float("nan")], [2.0, 5.0, 5.0, -1.0]])
    for fn in (lambda t: tuple(t.max(1)), lambda t: t.argmin(1), lambda t: tuple(t.median(1)),
               lambda t: t.amax(1), lambda t: t.sum(1), lambda t: t.argmax()):
        same_on(device, fn, x)


@pytest.mark.parametrize("device", DEVICES)
def test_empty_reductions(device):
    """Reducing an empty dim gives the identity (mean: NaN); reducing across it, an empty result."""
    x = et.zeros(0, 3)
    for fn in (lambda t: t.sum(0), lambda t: t.prod(0), lambda t: t.mean(0), lambda t: t.sum(1),
               lambda t: t.amax(1), lambda t: t.all(0)):
        same_on(device, fn, x)
