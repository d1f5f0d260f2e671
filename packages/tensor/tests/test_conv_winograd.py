"""The CPU's Winograd F(2x2, 3x3) convolution (3x3, unit stride and dilation, no groups,
enough channels): forward and both gradients through the ops against PyTorch, and the
kernels themselves against the im2col path in float64 on shapes that exercise partial
edge tiles (odd sizes), padding 0, 1, 2 and a crop, batch 1 and one input channel."""
import numpy as np
import pytest

import ember_tensor as et
from ember_tensor._backends.cpu import conv as cpu_conv
from ember_tensor._backends.cpu import winograd
from ember_tensor._ops import nn as N

torch = pytest.importorskip("torch")

rng = np.random.default_rng(11)

CASES = [
    # x shape, out channels, padding, bias
    ((2, 32, 8, 8), 32, (1, 1), True),      # whole tiles
    ((1, 32, 9, 11), 40, (1, 1), False),    # odd sizes: partial edge tiles, batch 1
    ((3, 33, 12, 11), 32, (0, 0), True),    # valid: odd output width
    ((2, 32, 11, 8), 35, (2, 1), False),    # padding past the kernel's reach
    ((2, 40, 12, 12), 32, (1, 0), True),    # mixed padding
    ((24, 32, 9, 11), 32, (1, 1), True),    # two blocks of samples: split over 2 threads
]

TOLERANCE = {np.float32: dict(rtol=1e-4, atol=1e-4), np.float64: dict(rtol=1e-10, atol=1e-10)}


def _output(xs, padding):
    return tuple(s + 2 * p - 2 for s, p in zip(xs[2:], padding))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("xs, o, padding, with_bias", CASES)
def test_winograd_convolution_matches_torch(xs, o, padding, with_bias, dtype, budget):
    c = xs[1]
    # The case exercises the Winograd path, forward and input gradient.
    assert winograd.usable(dtype, (3, 3), (1, 1), (1, 1), 1, c, o, _output(xs, padding))
    assert winograd.usable(dtype, (3, 3), (1, 1), (1, 1), 1, o, c, xs[2:])
    x, w = rng.standard_normal(xs).astype(dtype), rng.standard_normal((o, c, 3, 3)).astype(dtype)
    b = rng.standard_normal(o).astype(dtype) if with_bias else None
    tx, tw = torch.tensor(x, requires_grad=True), torch.tensor(w, requires_grad=True)
    ty = torch.nn.functional.conv2d(tx, tw, None if b is None else torch.tensor(b), padding=padding)
    g = rng.standard_normal(tuple(ty.shape)).astype(dtype)
    ty.backward(torch.tensor(g))

    y = N.convolution(et.tensor(x), et.tensor(w), None if b is None else et.tensor(b), 1, padding, 1,
                      False, 0, 1)
    np.testing.assert_allclose(y.numpy(), ty.detach().numpy(), **TOLERANCE[dtype])
    gx = N.convolution_backward_input(et.tensor(g), et.tensor(w), xs, 1, padding, 1, 1)
    np.testing.assert_allclose(gx.numpy(), tx.grad.numpy(), **TOLERANCE[dtype])
    gw = N.convolution_backward_weight(et.tensor(g), et.tensor(x), (o, c, 3, 3), 1, padding, 1, 1)
    np.testing.assert_allclose(gw.numpy(), tw.grad.numpy(), **TOLERANCE[dtype])


@pytest.mark.parametrize("xs, o, padding", [
    ((1, 1, 4, 4), 1, (0, 0)),     # one channel, one tile
    ((2, 3, 5, 7), 4, (1, 1)),     # odd: a half tile at the right and bottom
    ((3, 5, 9, 6), 2, (1, 0)),
    ((2, 4, 8, 8), 3, (2, 2)),
    ((1, 2, 7, 9), 3, (0, 1)),
    ((2, 3, 10, 11), 5, (-1, 1)),  # a crop (the input gradient of padding 3)
    ((1, 2, 3, 3), 2, (0, 0)),     # a 1x1 output: one partial tile
])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_winograd_kernels_match_the_im2col_path(xs, o, padding, dtype):
    # Below the channel count at which the ops take it, the Winograd path is still exact:
    # compared with the im2col path's float64 result.
    x, w = rng.standard_normal(xs).astype(dtype), rng.standard_normal((o, xs[1], 3, 3)).astype(dtype)
    b = rng.standard_normal(o).astype(dtype)
    out = _output(xs, padding)
    y = winograd.forward(x, w, padding, out, b)
    assert y.dtype == dtype and y.shape == (xs[0], o) + out
    ref = cpu_conv.forward(x.astype(np.float64), w.astype(np.float64), (1, 1), padding, (1, 1), 1,
                           b.astype(np.float64))
    tol = dict(rtol=1e-5, atol=1e-5) if dtype == np.float32 else dict(rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(y, ref, **tol)
    g = rng.standard_normal(y.shape).astype(dtype)
    gw = winograd.backward_weight(g, x, padding)
    assert gw.dtype == dtype and gw.shape == w.shape
    ref = cpu_conv.backward_weight(g.astype(np.float64), x.astype(np.float64), w.shape, (1, 1), padding, (1, 1), 1)
    np.testing.assert_allclose(gw, ref, **tol)


# Non-contiguous input, an empty batch and the thread split: test_conv_blocked.py (its "winograd" cases).


@pytest.mark.parametrize("args, expected", [
    ((np.float32, (3, 3), (1, 1), (1, 1), 1, 64, 64, (16, 16)), True),
    ((np.float64, (3, 3), (1, 1), (1, 1), 1, 32, 32, (8, 8)), True),
    ((np.float32, (3, 3), (1, 1), (1, 1), 1, 16, 64, (16, 16)), False),   # too few input channels
    ((np.float32, (3, 3), (1, 1), (1, 1), 1, 64, 64, (7, 7)), False),     # too few output positions
    ((np.float32, (3, 3), (2, 2), (1, 1), 1, 64, 64, (16, 16)), False),   # strided
    ((np.float32, (3, 3), (1, 1), (2, 2), 1, 64, 64, (16, 16)), False),   # dilated
    ((np.float32, (3, 3), (1, 1), (1, 1), 2, 64, 64, (16, 16)), False),   # grouped
    ((np.float32, (5, 5), (1, 1), (1, 1), 1, 64, 64, (16, 16)), False),   # not 3x3
    ((np.float32, (3,), (1,), (1,), 1, 64, 64, (256,)), False),           # 1-d
    ((np.complex64, (3, 3), (1, 1), (1, 1), 1, 64, 64, (16, 16)), False),
])
def test_winograd_is_used_where_it_was_measured_to_win(args, expected):
    assert winograd.usable(*args) is expected


@pytest.mark.parametrize("padding", [0, 1, 3])
def test_winograd_transposed_convolution_matches_torch(padding):
    # A stride-1 transposed convolution is the input gradient's computation: padding 0
    # widens the output, 3 crops it (the Winograd input transform's negative padding).
    x, w = rng.standard_normal((2, 32, 14, 13)), rng.standard_normal((32, 40, 3, 3))
    b = rng.standard_normal(40)
    ref = torch.nn.functional.conv_transpose2d(torch.tensor(x), torch.tensor(w), torch.tensor(b), 1, padding)
    assert winograd.usable(np.float64, (3, 3), (1, 1), (1, 1), 1, 32, 40, tuple(ref.shape[2:]))
    y = N.convolution(et.tensor(x), et.tensor(w), et.tensor(b), 1, padding, 1, True, 0, 1)
    np.testing.assert_allclose(y.numpy(), ref.numpy(), rtol=1e-10, atol=1e-10)


_BT = np.array([[1, 0, -1, 0], [0, 1, 1, 0], [0, -1, 1, 0], [0, 1, 0, -1]], np.float64)
_AT = np.array([[1, 1, 1, 0], [0, 1, -1, -1]], np.float64)


def _tiles_layout(n, c, th, tw):
    """(tiles per channel of the block, coordinate stride) of a transform buffer in the
    kernels' layout, tile (i, j) of sample b, channel ch, coordinate xi at xi*stride +
    ch*count + (b*th + i)*tw + j: one element of slack after each coordinate's run,
    which must come back untouched."""
    count = n * th * tw
    stride = c * count + 1
    return count, stride


@pytest.mark.parametrize("xs, padding", [
    ((1, 1, 4, 4), (0, 0)),
    ((2, 3, 5, 7), (1, 1)),     # odd: half tiles at the right and bottom
    ((3, 2, 16, 16), (1, 1)),   # the benchmark rows' plane
    ((2, 2, 9, 6), (2, 1)),
    ((1, 2, 10, 11), (-1, 1)),  # a crop
])
def test_winograd_transforms_match_their_matrices(xs, padding):
    # The three Numba transforms (one vectorised loop per tile coordinate) against the
    # matrices they apply, tile by tile, in float64: V = B^T d B, Y = A^T M A + bias and
    # the adjoint A g A^T (channels last); slack past each coordinate's run of V stays
    # as it was.
    kernels = winograd.cpu_winograd
    n, c, h, w = xs
    ph, pw = padding
    oh, ow = h + 2 * ph - 2, w + 2 * pw - 2
    th, tw = -(-oh // 2), -(-ow // 2)
    count, stride = _tiles_layout(n, c, th, tw)
    x = rng.standard_normal(xs)
    padded = np.zeros((n, c, 2 * th + 2, 2 * tw + 2))
    src = np.pad(x, ((0, 0), (0, 0), (max(ph, 0),) * 2, (max(pw, 0),) * 2))[
        :, :, max(-ph, 0):, max(-pw, 0):][:, :, :2 * th + 2, :2 * tw + 2]
    padded[:, :, :src.shape[2], :src.shape[3]] = src
    v = np.full(16 * stride, 7.0)
    kernels.input_transform(np.ascontiguousarray(x), ph, pw, th, tw, v, stride, 0, n * c)
    m = rng.standard_normal(16 * stride)
    bias = rng.standard_normal(c)
    y = np.full((n, c, oh, ow), 3.0)
    kernels.output_transform(m, stride, bias, th, tw, y, 0, n * c)
    gy = rng.standard_normal((n, c, oh, ow))
    gpad = np.zeros((n, c, 2 * th, 2 * tw))
    gpad[:, :, :oh, :ow] = gy
    adj = np.full((16, count, c), 5.0)  # channels last
    kernels.output_adjoint(np.ascontiguousarray(gy.transpose(0, 2, 3, 1)), th, tw, adj)
    yref = np.empty((n, c, 2 * th, 2 * tw))
    for b in range(n):
        for ch in range(c):
            for i in range(th):
                for j in range(tw):
                    at = ch * count + (b * th + i) * tw + j + stride * np.arange(16)
                    tile = padded[b, ch, 2 * i:2 * i + 4, 2 * j:2 * j + 4]
                    np.testing.assert_allclose(v[at], (_BT @ tile @ _BT.T).ravel(), rtol=1e-13, atol=1e-13)
                    yref[b, ch, 2 * i:2 * i + 2, 2 * j:2 * j + 2] = _AT @ m[at].reshape(4, 4) @ _AT.T + bias[ch]
                    g = gpad[b, ch, 2 * i:2 * i + 2, 2 * j:2 * j + 2]
                    np.testing.assert_allclose(adj[:, (b * th + i) * tw + j, ch], (_AT.T @ g @ _AT).ravel(),
                                               rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(y, yref[:, :, :oh, :ow], rtol=1e-13, atol=1e-13)
    slack = np.arange(1, 17) * stride - 1
    assert (v[slack] == 7.0).all()


@pytest.mark.parametrize("value", [-0.0, 0.0, np.inf, -np.inf])
@pytest.mark.parametrize("where", range(4))
def test_winograd_output_adjoint_keeps_signed_zeros_and_infinities(value, where):
    # The lone terms of A's rows (g0 and -g1) are computed as x + (-0) and -0 - y, exact
    # for every x and y: a 2x2 gradient tile of zeros of either sign and an infinity
    # comes out bit for bit as the direct formula gives it (NaN's sign aside).
    gy = np.array([0.0, -0.0, 0.0, -0.0])
    gy[where] = value
    adj = np.full((16, 1, 1), 5.0)
    winograd.cpu_winograd.output_adjoint(gy.reshape(1, 2, 2, 1), 1, 1, adj)
    adj = adj.ravel()
    (g00, g01), (g10, g11) = gy[:2], gy[2:]

    def rows(top, bottom):
        return [top, top + bottom, top - bottom, -bottom]
    ref = [v for r0, r1 in zip(rows(g00, g10), rows(g01, g11)) for v in rows(r0, r1)]
    np.testing.assert_array_equal(adj, ref)
    assert (np.signbit(adj) == np.signbit(ref)).all()
