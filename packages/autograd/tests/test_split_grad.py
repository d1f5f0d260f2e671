"""split/chunk record one node for all their pieces (PyTorch's SplitBackward0), whose
gradient is one cat of the pieces' gradients; compared against PyTorch."""
import numpy as np
import pytest

import ember_autograd  # noqa: F401  (gradients on ember_tensor's tensors)
import ember_tensor as et
from ember_autograd import grad

torch = pytest.importorskip("torch")

X = np.random.default_rng(0).standard_normal((4, 6))


def _both(fn):
    out = []
    for lib in (et, torch):
        x = lib.tensor(X, requires_grad=True)
        pieces, loss = fn(lib, x)
        loss.backward()
        out.append((x.grad.numpy() if lib is torch else np.asarray(x.grad.tolist()), pieces[0].grad_fn.name()))
    return out


@pytest.mark.parametrize("fn", [
    lambda L, x: (lambda p: (p, (p[0] * 2 + p[2] * 3).sum()))(x.chunk(3, dim=-1)),
    lambda L, x: (lambda p: (p, (p[1] ** 2).sum()))(x.split([1, 3], dim=0)),
    lambda L, x: (lambda p: (p, p[-1].exp().sum()))(x.split(4, dim=1)),   # a shorter last piece
    lambda L, x: (lambda p: (p, p[0].sum()))(x.split(6, dim=1)),          # one piece
])
def test_gradient_and_node_name_match_torch(fn):
    (ours, our_name), (theirs, their_name) = _both(fn)
    np.testing.assert_array_equal(ours, theirs)
    assert our_name == their_name


def test_pieces_as_roots_of_one_backward():
    # Two roots that are outputs of one node: the engine counts the node's edges once.
    x = et.tensor(X, requires_grad=True)
    a, b = x.split(2)
    (g,) = grad([a, b], [x], [et.ones(2, 6, dtype=et.float64), et.full((2, 6), 2.0, dtype=et.float64)])
    np.testing.assert_array_equal(np.asarray(g.tolist()), np.concatenate([np.ones((2, 6)), np.full((2, 6), 2.0)]))


def test_inplace_on_a_piece_raises_as_torch():
    messages = []
    for lib in (et, torch):
        pieces = (lib.tensor(X, requires_grad=True) * 1).split(2)
        with pytest.raises(RuntimeError) as info:
            pieces[0].add_(1)
        messages.append(str(info.value))
    assert messages[0] == messages[1]
