"""Gradients of the shape ops and linear-algebra ops, checked with gradcheck in float64
(finite differences), on contiguous, non-contiguous and 0-d inputs."""
import numpy as np
import pytest

import ember_autograd  # noqa: F401
import ember_tensor as E
from ember_autograd import gradcheck, gradgradcheck

RNG = np.random.default_rng(0)


def _leaf(shape, transposed=False):
    array = RNG.standard_normal(shape)
    if transposed:
        t = E.tensor(np.ascontiguousarray(array.T), dtype=E.float64).t()
        assert not t.is_contiguous()
    else:
        t = E.tensor(array, dtype=E.float64)
    return t.requires_grad_()


SHAPE_CASES = [
    ("repeat", lambda t: t.repeat(2, 1, 3)),
    ("tile", lambda t: t.tile((2,))),
    ("repeat_interleave", lambda t: t.repeat_interleave(2, dim=1)),
    ("repeat_interleave_tensor", lambda t: t.repeat_interleave(E.tensor([2, 0, 1, 3]), dim=1)),
    ("flip", lambda t: t.flip(0, 1)),
    ("fliplr", E.fliplr),
    ("roll", lambda t: t.roll((1, -2), (0, 1))),
    ("roll_flat", lambda t: t.roll(3)),
    ("rot90", lambda t: t.rot90(1)),
    ("rot90_k3", lambda t: t.rot90(3)),
    ("tril", lambda t: t.tril(-1)),
    ("triu", lambda t: t.triu(1)),
    ("broadcast_to", lambda t: E.broadcast_to(t, (2, 3, 4))),
    ("meshgrid", lambda t: E.meshgrid(t[0], t[1], indexing="xy")),
]


@pytest.mark.parametrize("name,fn", SHAPE_CASES, ids=[c[0] for c in SHAPE_CASES])
@pytest.mark.parametrize("transposed", [False, True], ids=["contiguous", "transposed"])
def test_shape_op_gradients(name, fn, transposed):
    x = _leaf((4, 3), transposed).t() if transposed else _leaf((3, 4))
    assert gradcheck(fn, (x,))


@pytest.mark.parametrize("fn", [lambda t: t.repeat(3), lambda t: t.flip(0), lambda t: t.roll(1),
                                lambda t: t.repeat_interleave(2)])
def test_shape_op_gradients_of_zero_dim_inputs(fn):
    assert gradcheck(fn, (_leaf(()),))


def test_flip_second_order():
    assert gradgradcheck(lambda t: (t.flip(1) * t).sum(), (_leaf((2, 3)),))


def test_repeat_gradient_sums_the_tiles():
    x = E.ones(2, requires_grad=True)
    x.repeat(3, 2).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [6.0, 6.0])
