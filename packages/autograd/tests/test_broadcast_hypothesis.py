"""Hypothesis: gradients of broadcast binary ops are summed back to each input's shape,
and equal the NumPy formula summed over the broadcast dims."""
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import ember_autograd  # noqa: F401
import ember_tensor as E


@st.composite
def broadcastable_pair(draw):
    """Two shapes (rank <= 3, sizes <= 3) that broadcast together, some dims of size 1 or missing."""
    ndim = draw(st.integers(0, 3))
    full = [draw(st.integers(1, 3)) for _ in range(ndim)]
    shapes = []
    for _ in range(2):
        drop = draw(st.integers(0, ndim))
        shape = [1 if draw(st.booleans()) else n for n in full[drop:]]
        shapes.append(tuple(shape))
    return shapes


def sum_to(grad, shape):
    lead = grad.ndim - len(shape)
    grad = grad.sum(axis=tuple(range(lead))) if lead else grad
    axes = tuple(i for i, n in enumerate(shape) if n == 1 and grad.shape[i] != 1)
    return grad.sum(axis=axes, keepdims=True) if axes else grad


OPS = {
    "add": (lambda a, b: a + b, lambda a, b: (np.ones_like(a + b), np.ones_like(a + b))),
    "sub": (lambda a, b: a - b, lambda a, b: (np.ones_like(a + b), -np.ones_like(a + b))),
    "mul": (lambda a, b: a * b, lambda a, b: (b + 0 * a, a + 0 * b)),
    "div": (lambda a, b: a / b, lambda a, b: (1 / b + 0 * a, -a / b ** 2)),
}


@settings(max_examples=60, deadline=None)
@given(shapes=broadcastable_pair(), op=st.sampled_from(sorted(OPS)), seed=st.integers(0, 2 ** 16))
def test_broadcast_gradients_sum_back(shapes, op, seed):
    rng = np.random.default_rng(seed)
    a_np = rng.uniform(0.5, 2.0, shapes[0])
    b_np = rng.uniform(0.5, 2.0, shapes[1])
    fn, grads = OPS[op]
    a = E.tensor(a_np, dtype=E.float64, requires_grad=True)
    b = E.tensor(b_np, dtype=E.float64, requires_grad=True)
    fn(a, b).sum().backward()
    expected_a, expected_b = grads(a_np, b_np)
    assert tuple(a.grad.shape) == shapes[0] and tuple(b.grad.shape) == shapes[1]
    np.testing.assert_allclose(a.grad.numpy(), sum_to(np.broadcast_to(expected_a, np.broadcast_shapes(*shapes)),
                                                      shapes[0]), rtol=1e-12)
    np.testing.assert_allclose(b.grad.numpy(), sum_to(np.broadcast_to(expected_b, np.broadcast_shapes(*shapes)),
                                                      shapes[1]), rtol=1e-12)
