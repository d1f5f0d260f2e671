"""The 2-d max pooling kernel (`kernels/pooling.py`: inner columns vectorised, edge
columns bounds-tested) and the backward's scatter, against PyTorch's values, indices and
gradients over a table of window geometries (and one of 2x2 windows, which have a kernel
of their own), on inputs full of ties and with several NaNs in one window (PyTorch's rule: a larger value or any NaN replaces the best so far)."""
import itertools

import numpy as np
import pytest

import ember_tensor as et
from ember_tensor._ops import nn as N

torch = pytest.importorskip("torch")

SIZES = [(7, 9), (12, 12), (5, 4)]
KERNELS = [(3, 3), (2, 3), (1, 1), (3, 2)]
STRIDES = [(1, 1), (2, 2), (2, 1), (3, 3)]
PADDINGS = [(0, 0), (1, 1), (0, 1)]
DILATIONS = [(1, 1), (2, 1), (1, 2)]


def _cases():
    for size, kernel, stride, padding, dilation, ceil_mode in itertools.product(
            SIZES, KERNELS, STRIDES, PADDINGS, DILATIONS, (False, True)):
        if all(2 * p <= k for p, k in zip(padding, kernel)):
            yield size, kernel, stride, padding, dilation, ceil_mode


def _input(size, dtype):
    rng = np.random.default_rng(sum(size))
    x = rng.integers(-3, 4, (2, 3) + size).astype(dtype)  # small integers: many ties
    x[0, 0, 1, 1] = x[1, 2, 2, 0] = x[1, 2, 3, 1] = x[1, 2, 2, 1] = np.nan  # NaNs sharing windows
    return x


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_values_indices_and_gradient_match_pytorch(dtype):
    checked = 0
    for size, kernel, stride, padding, dilation, ceil_mode in _cases():
        x = _input(size, dtype)
        xt = torch.from_numpy(x).requires_grad_()
        try:
            vt, it = torch.nn.functional.max_pool2d(xt, kernel, stride, padding, dilation, ceil_mode=ceil_mode,
                                                    return_indices=True)
        except RuntimeError:  # an output size PyTorch refuses; the geometry tests cover those
            continue
        values, indices = N.max_pool_with_indices(et.tensor(x), kernel, stride, padding, dilation, ceil_mode)
        where = (size, kernel, stride, padding, dilation, ceil_mode)
        np.testing.assert_array_equal(values.numpy(), vt.detach().numpy(), err_msg=str(where))
        np.testing.assert_array_equal(indices.numpy(), it.numpy(), err_msg=str(where))
        g = np.random.default_rng(1).standard_normal(vt.shape).astype(dtype)
        vt.backward(torch.from_numpy(g))
        grad = N.max_pool_backward(et.tensor(g), indices, x.shape)
        np.testing.assert_allclose(grad.numpy(), xt.grad.numpy(), rtol=1e-6, atol=1e-6, err_msg=str(where))
        checked += 1
    assert checked > 500


# The 2x2 window whose every window lies inside the input takes its own kernel
# (`_max_pool_2x2_planes`); ceil mode's windows past the edge and any padding do not.
TWO_BY_TWO = [  # (size, stride, dilation, ceil_mode)
    ((24, 24), (2, 2), (1, 1), False), ((8, 8), (2, 2), (1, 1), False), ((7, 9), (2, 2), (1, 1), False),
    ((7, 9), (2, 2), (1, 1), True), ((5, 6), (1, 1), (1, 1), False), ((6, 7), (2, 1), (1, 2), False),
    ((9, 8), (3, 2), (2, 3), False), ((9, 8), (3, 2), (2, 1), True), ((4, 2), (2, 2), (1, 1), False),
    ((4, 5), (1, 3), (2, 1), False),
]


@pytest.mark.parametrize("size, stride, dilation, ceil_mode", TWO_BY_TWO)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_two_by_two_windows_match_pytorch_and_the_general_kernel(size, stride, dilation, ceil_mode, dtype):
    from ember_tensor._backends.cpu.kernels import pooling as kernels

    x = _input(size, dtype)
    vt, it = torch.nn.functional.max_pool2d(torch.from_numpy(x), (2, 2), stride, 0, dilation, ceil_mode=ceil_mode,
                                            return_indices=True)
    values, indices = N.max_pool_with_indices(et.tensor(x), (2, 2), stride, (0, 0), dilation, ceil_mode)
    np.testing.assert_array_equal(values.numpy(), vt.numpy())
    np.testing.assert_array_equal(indices.numpy(), it.numpy())
    # The general kernel on the same windows: the same bits.
    v2, i2 = np.empty(vt.shape, dtype), np.empty(vt.shape, np.int64)
    kernels._max_pool_planes(x, 2, 2, stride[0], stride[1], 0, 0, dilation[0], dilation[1], v2, i2, 0, 6)
    np.testing.assert_array_equal(values.numpy(), v2)
    np.testing.assert_array_equal(indices.numpy(), i2)


def test_parallel_kernel_matches_pytorch_on_a_resnet_stem():
    # 32x64x56x56-sized work takes the prange twin when the budget allows threads.
    x = np.random.default_rng(2).standard_normal((4, 16, 40, 40)).astype(np.float32)
    vt, it = torch.nn.functional.max_pool2d(torch.from_numpy(x), 3, 2, 1, return_indices=True)
    values, indices = N.max_pool_with_indices(et.tensor(x), (3, 3), (2, 2), (1, 1))
    np.testing.assert_array_equal(values.numpy(), vt.numpy())
    np.testing.assert_array_equal(indices.numpy(), it.numpy())


def test_backward_refuses_an_index_outside_the_plane():
    with pytest.raises(IndexError, match="outside the planes"):
        N.max_pool_backward(et.ones(1, 1, 2), et.tensor([[[0, 9]]]), (1, 1, 2, 2))


NAN = float("nan")
# Windows holding several NaNs and ties, every max pooling form: (ember call, torch call).
SEVERAL_NANS = [
    (lambda x: N.max_pool_with_indices(x, (5,), (5,)), lambda x: torch.nn.functional.max_pool1d(
        x, 5, return_indices=True), (1, 2, 10)),
    (lambda x: N.max_pool_with_indices(x, (2, 2, 2), (2, 2, 2)), lambda x: torch.nn.functional.max_pool3d(
        x, 2, return_indices=True), (1, 2, 2, 4, 4)),
    (lambda x: N.adaptive_max_pool(x, (1,)), lambda x: torch.nn.functional.adaptive_max_pool1d(
        x, 1, return_indices=True), (1, 2, 10)),
    (lambda x: N.adaptive_max_pool(x, (2, 1)), lambda x: torch.nn.functional.adaptive_max_pool2d(
        x, (2, 1), return_indices=True), (1, 2, 4, 5)),
    (lambda x: N.adaptive_max_pool(x, (1, 1, 1)), lambda x: torch.nn.functional.adaptive_max_pool3d(
        x, 1, return_indices=True), (1, 2, 2, 2, 4)),
]


@pytest.mark.parametrize("device", ["cpu", "cuda"])
@pytest.mark.parametrize("ember_call, torch_call, shape", SEVERAL_NANS)
def test_every_max_pooling_takes_the_last_nan_of_a_window(device, ember_call, torch_call, shape):
    if device == "cuda" and not et.cuda.is_available():
        pytest.skip("no CUDA and no simulator")
    x = np.random.default_rng(3).integers(0, 3, shape).astype(np.float32)
    flat = x.reshape(-1)
    flat[[1, 3, 7, 12, 13]] = NAN  # two or more NaNs in a window, beside ties
    values, indices = ember_call(et.tensor(x).to(device))
    vt, it = torch_call(torch.from_numpy(x))
    np.testing.assert_array_equal(values.cpu().numpy(), vt.numpy())
    np.testing.assert_array_equal(indices.cpu().numpy(), it.numpy())
