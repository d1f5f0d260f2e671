"""Channel dropout on every rank PyTorch accepts: which elements share one draw, the
deprecation warnings, and the errors (found running pytorch/examples mnist_rnn, which
applies Dropout2d to a (batch, features) tensor)."""
import warnings

import numpy as np
import pytest

import ember_nn.functional as F
import ember_tensor as et

torch = pytest.importorskip("torch")
TF = torch.nn.functional

# dims 0 and 1 are large so that no axis of independent draws comes out constant by chance
SHAPES = [(40, 30), (20, 40, 5), (20, 30, 2, 3), (20, 30, 2, 2, 2), (30, 20, 2, 2), (30, 20, 2, 2, 2, 2), (7,)]


def draw_groups(y):
    """Labels of the elements of a dropout output that were zeroed or kept together: the
    axes along which the output of ones is constant."""
    return tuple(ax for ax in range(y.ndim) if np.all(y == y.take([0], axis=ax)))


def run(module, fn, shape, **kwargs):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            y = fn(module.ones(shape, dtype=module.float64), 0.5, **kwargs)
        except RuntimeError as error:
            return ("error", str(error)), [str(w.message) for w in caught]
    return ("ok", tuple(y.shape), draw_groups(y.numpy())), [str(w.message) for w in caught]


@pytest.mark.parametrize("name", ["dropout1d", "dropout2d", "dropout3d"])
@pytest.mark.parametrize("shape", SHAPES)
def test_channel_dropout_matches_pytorch_on_every_rank(name, shape):
    got = run(et, getattr(F, name), shape)
    want = run(torch, getattr(TF, name), shape)
    assert got == want


@pytest.mark.parametrize("name", ["dropout1d", "dropout2d", "dropout3d"])
def test_channel_dropout_in_place_on_an_unbatched_input(name):
    shape = {"dropout1d": (50, 3), "dropout2d": (50, 3, 3, 3), "dropout3d": (50, 2, 2, 2)}[name]
    x = et.ones(shape)
    y = getattr(F, name)(x, 0.5, inplace=True)
    assert y is x and tuple(x.shape) == shape
    assert draw_groups(x.numpy()) == draw_groups(getattr(TF, name)(torch.ones(shape), 0.5).numpy())


def test_dropout2d_on_a_matrix_trains_an_lstm_head():
    # mnist_rnn: LSTM -> last step -> BatchNorm1d -> Dropout2d -> Linear, backward through it.
    x = et.randn(8, 16, requires_grad=True)
    with pytest.warns(UserWarning, match="Received a 2-D input to dropout2d"):
        y = F.dropout2d(x, 0.5)
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), y.detach().numpy() / x.detach().numpy())
