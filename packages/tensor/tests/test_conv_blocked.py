"""The CPU's blocked 1-d/2-d convolution (padding-aware im2col per block of samples, one
GEMM per block into NCHW, bias folded into the GEMM, the unit-stride input gradient as a
convolution with the flipped kernel) against PyTorch: values and both gradients, float32
and float64, at a thread budget of 1 (one run of blocks) and 2 (blocks split over
threads), on shapes with enough output positions per sample to take the blocked path."""
import numpy as np
import pytest

import ember_tensor as et
from ember_tensor._backends.cpu import conv as cpu_conv
from ember_tensor._ops import nn as N

torch = pytest.importorskip("torch")

rng = np.random.default_rng(7)

CASES = [
    # x shape, w shape, stride, padding, dilation, groups, bias
    ((3, 3, 12, 12), (8, 3, 3, 3), (1, 1), (1, 1), (1, 1), 1, True),      # 3 -> 8, "same"
    ((2, 8, 10, 11), (6, 8, 3, 3), (1, 1), (0, 0), (1, 1), 1, False),     # valid, C >= O
    ((2, 8, 12, 10), (8, 4, 3, 3), (1, 1), (2, 2), (2, 2), 2, True),      # groups, dilation
    ((2, 6, 17, 16), (6, 1, 3, 3), (2, 2), (1, 1), (1, 1), 6, True),      # depthwise, strided
    ((2, 4, 9, 16), (4, 4, 1, 5), (1, 2), (0, 2), (1, 1), 1, True),       # 1x5, mixed strides
    ((2, 8, 9, 9), (8, 8, 3, 3), (1, 1), (3, 3), (1, 1), 1, False),       # padding > d*(k-1)
    ((2, 8, 80), (8, 8, 5), (1,), (2,), (1,), 1, True),                   # 1-d
    ((2, 4, 140), (6, 2, 3), (2,), (3,), (2,), 2, False),                  # 1-d grouped, strided
    # 128 output positions and more: the weight gradient's per-sample products (fewer:
    # one product per block, `_backward_weight_short`, the cases above but two)
    ((2, 8, 16, 16), (8, 4, 3, 3), (1, 1), (1, 1), (1, 1), 2, True),      # groups, 256 positions
    ((2, 4, 300), (6, 2, 3), (2,), (3,), (2,), 2, False),                  # 1-d grouped, strided, 152
]


def _blocked(xs, ws, stride, padding, dilation):
    return cpu_conv._blocked_plan(xs, ws[2:], stride, padding, dilation) is not None


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("xs, ws, stride, padding, dilation, groups, with_bias", CASES)
def test_blocked_convolution_matches_torch(xs, ws, stride, padding, dilation, groups, with_bias, dtype, budget):
    assert _blocked(xs, ws, stride, padding, dilation)  # the case exercises the blocked path
    x, w = rng.standard_normal(xs).astype(dtype), rng.standard_normal(ws).astype(dtype)
    b = rng.standard_normal(ws[0]).astype(dtype) if with_bias else None
    tx, tw = torch.tensor(x, requires_grad=True), torch.tensor(w, requires_grad=True)
    tb = torch.tensor(b) if with_bias else None
    conv = torch.nn.functional.conv2d if len(xs) == 4 else torch.nn.functional.conv1d
    ty = conv(tx, tw, tb, stride, padding, dilation, groups)
    g = rng.standard_normal(tuple(ty.shape)).astype(dtype)
    ty.backward(torch.tensor(g))
    tol = dict(rtol=1e-4, atol=1e-4) if dtype == np.float32 else dict(rtol=1e-10, atol=1e-10)

    y = N.convolution(et.tensor(x), et.tensor(w), None if b is None else et.tensor(b), stride, padding, dilation,
                      False, 0, groups)
    assert y.dtype == (et.float32 if dtype == np.float32 else et.float64)
    np.testing.assert_allclose(y.numpy(), ty.detach().numpy(), **tol)
    gx = N.convolution_backward_input(et.tensor(g), et.tensor(w), xs, stride, padding, dilation, groups)
    np.testing.assert_allclose(gx.numpy(), tx.grad.numpy(), **tol)
    gw = N.convolution_backward_weight(et.tensor(g), et.tensor(x), ws, stride, padding, dilation, groups)
    np.testing.assert_allclose(gw.numpy(), tw.grad.numpy(), **tol)


@pytest.mark.parametrize("xs, ws, stride, padding, dilation, groups, with_bias", CASES)
def test_weight_gradient_short_and_per_sample_products_agree(xs, ws, stride, padding, dilation, groups, with_bias,
                                                             budget, monkeypatch):
    # Both forms of the blocked weight gradient, forced on every case (shapes, strides,
    # padding, dilation, groups, 1-d), in float64: one product per block over its samples
    # (short rows) and the per-sample products.
    x = rng.standard_normal(xs)
    plan = cpu_conv._blocked_plan(xs, ws[2:], stride, padding, dilation)
    g = rng.standard_normal((xs[0], ws[0]) + plan[-1][-(len(xs) - 2):])
    results = []
    for short in (10 ** 9, 0):
        monkeypatch.setattr(cpu_conv, "_SHORT_LENGTH", short)
        results.append(cpu_conv.backward_weight(g, x, ws, stride, padding, dilation, groups))
    assert results[0].shape == results[1].shape == ws
    np.testing.assert_allclose(results[0], results[1], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_blocked_transposed_convolution_matches_torch(dtype, budget):
    # Unit stride with dilation 2 allows output_padding 1: an output larger than the
    # forward convolution's input, reached by the flipped-kernel path's own bounds.
    x, w = rng.standard_normal((2, 8, 9, 9)).astype(dtype), rng.standard_normal((8, 8, 3, 3)).astype(dtype)
    b = rng.standard_normal(8).astype(dtype)
    ref = torch.nn.functional.conv_transpose2d(torch.tensor(x), torch.tensor(w), torch.tensor(b), 1, 1, 1, 1, 2)
    y = N.convolution(et.tensor(x), et.tensor(w), et.tensor(b), 1, 1, 2, True, 1, 1)
    tol = dict(rtol=1e-4, atol=1e-4) if dtype == np.float32 else dict(rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(y.numpy(), ref.numpy(), **tol)


# (channels, out channels, height, width): the blocked im2col path, and Winograd's
# (3x3, unit stride, >= 32 channels each side; odd sizes: partial edge tiles).
LAYOUT_PATHS = {"blocked": (3, 5, 12, 12), "winograd": (32, 32, 9, 11)}


@pytest.mark.parametrize("path", sorted(LAYOUT_PATHS))
def test_blocked_convolution_non_contiguous_and_empty_batch(budget, path):
    c, o, h, wd = LAYOUT_PATHS[path]
    x = rng.standard_normal((h, wd, c, 2))
    w = rng.standard_normal((o, c, 3, 3))
    xt = et.tensor(x).permute(3, 2, 0, 1)  # (2, c, h, wd), not contiguous
    assert not xt.is_contiguous()
    ref = torch.nn.functional.conv2d(torch.tensor(x).permute(3, 2, 0, 1), torch.tensor(w), padding=1)
    np.testing.assert_allclose(N.convolution(xt, et.tensor(w), None, 1, 1).numpy(), ref.numpy(), atol=1e-10)
    empty = N.convolution(et.zeros(0, c, h, wd, dtype=et.float64), et.tensor(w), None, 1, 1)
    assert tuple(empty.shape) == (0, o, h, wd)
    gw = N.convolution_backward_weight(et.zeros(0, o, h, wd, dtype=et.float64), et.zeros(0, c, h, wd,
                                       dtype=et.float64), (o, c, 3, 3), 1, 1)
    assert tuple(gw.shape) == (o, c, 3, 3) and not gw.numpy().any()


@pytest.mark.parametrize("shape", [(8, 16, 16, 16), (48, 32, 10, 10)], ids=["blocked", "winograd"])
def test_thread_budget_gives_the_same_forward_bits(shape):
    # Each sample's (block's) GEMMs are the same calls whichever thread runs them (48
    # samples of 32 channels: 5 Winograd blocks of 1 MiB, split over 2 threads).
    n, c, h, wd = shape
    x, w = rng.standard_normal(shape).astype(np.float32), rng.standard_normal((c, c, 3, 3)).astype(np.float32)
    before = et.get_num_threads()
    try:
        results = []
        for threads in (1, 2):
            et.set_num_threads(threads)
            results.append(N.convolution(et.tensor(x), et.tensor(w), None, 1, 1).numpy())
    finally:
        et.set_num_threads(before)
    np.testing.assert_array_equal(results[0], results[1])
