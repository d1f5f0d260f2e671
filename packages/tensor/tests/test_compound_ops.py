"""Elementwise ops composed the way user code composes them: where over a mask, lerp,
addcmul through a view, clamp by tensors, floor division, mixed-dtype promotion, in-place
chains (on a transposed view too), setitem, a chain of casts, contiguous copies of views
and clones of expanded tensors.

Each case takes the device as a parameter (`device_checks.same_on`): on the CPU the
float32 result equals the float64 one rounded to float32, on CUDA it is the CPU's,
computed on the device. Each op alone is the op database's (test_ops.py).
"""
import pytest

import ember_tensor as et
from cuda_guard import DEVICES
from device_checks import same_on

A = [[0.5, -1.5, 2.0], [3.25, -0.0, 7.0]]
B = [1.0, 2.0, -3.0]


def _setitem(t, index, value):
    t[index] = value
    return t


# name -> fn(a, b) of a 2x3 matrix a and a row b that broadcasts against it
COMPOUND = [
    ("where", lambda a, b: et.where(a > 0, a, b)),
    ("lerp", lambda a, b: et.lerp(a, b, 0.25)),
    ("addcmul", lambda a, b: et.addcmul(a, a.t().t(), b, value=0.5)),
    ("clamp_tensors", lambda a, b: et.clamp(a, b, b + 1)),
    ("div_floor", lambda a, b: et.div(a, b, rounding_mode="floor")),
    ("mixed_dtypes", lambda a, b: a.long() + b.half()),
    ("in_place", lambda a, b: a.clone().add_(b, alpha=2).mul_(3)),
    ("in_place_strided", lambda a, b: a.clone().t().sub_(1)),
    ("setitem", lambda a, b: _setitem(a.clone(), (slice(None), 1), 9.0)),
    ("setitem_tensor", lambda a, b: _setitem(a.clone(), 0, b)),
    ("cast_chain", lambda a, b: (a.int(), a.half(), a.bool(), a.double(), a.bfloat16())),
    ("contiguous", lambda a, b: a.t().contiguous()),
    ("expand_clone", lambda a, b: b.expand(4, 3).clone()),
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name,fn", COMPOUND, ids=[n for n, _ in COMPOUND])
def test_compound_ops(name, fn, device):
    """The composition gives the float64 result rounded to its dtypes (on CUDA: the CPU's)."""
    same_on(device, fn, et.tensor(A, dtype=et.float32), et.tensor(B, dtype=et.float32))
