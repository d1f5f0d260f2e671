"""grid_sample at non-finite grid points against PyTorch: NaN and infinite coordinates in
every padding mode, bilinear, nearest and bicubic, align_corners both ways, images and
volumes, float32 and float64; on CUDA (the simulator) the same values as on the CPU.

PyTorch's CPU kernels send a NaN coordinate to 0 under border and reflection padding for
images and to size - 1 for volumes; a volume's non-finite point reads nothing under zeros
padding. Only values are compared: PyTorch's backward at a NaN grid point writes out of
bounds (a segfault here), so the gradient is only required to exist.
"""
import itertools
import math
import os
import sys

import pytest

os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")
if "numba" in sys.modules:  # numba read its config at import: make it see the variable
    from numba.core import config as _numba_config
    _numba_config.reload_config()

import ember_autograd  # noqa: F401, E402 - backward()
import ember_nn.functional as F  # noqa: E402
import ember_tensor as E  # noqa: E402

torch = pytest.importorskip("torch")

nan, inf = math.nan, math.inf
IMAGE_POINTS = [(nan, nan), (nan, 0.0), (0.0, nan), (nan, 0.5), (0.3, nan), (nan, -1.0), (nan, 1.0), (nan, 5.0),
                (0.2, 0.3), (inf, 0.0), (-inf, 0.0), (inf, nan), (7.3, -5.1), (-3.2, 2.9)]
VOLUME_POINTS = [(nan, nan, nan), (nan, 0.0, 0.0), (0.0, nan, 0.0), (0.0, 0.0, nan), (0.2, 0.3, -0.4),
                 (inf, 0.0, -inf), (-inf, nan, 0.5), (2.5, -0.7, 9.0)]
PADDINGS = ["zeros", "border", "reflection"]


def _same(ours, theirs):
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        assert (math.isnan(a) and math.isnan(b)) or a == pytest.approx(b, rel=1e-5, abs=1e-5), (ours, theirs)


def _sample(lib, shape, points, dtype, mode, padding_mode, align_corners, device="cpu"):
    count = 1
    for s in shape:
        count *= s
    grid_shape = (1,) * (len(shape) - 2) + (len(points), len(points[0]))
    kwargs = {"device": device} if lib is E else {}
    x = lib.arange(1.0, count + 1, dtype=getattr(lib, dtype), **kwargs).reshape(shape)
    grid = lib.tensor(points, dtype=getattr(lib, dtype), **kwargs).reshape(grid_shape)
    functional = F if lib is E else torch.nn.functional
    return functional.grid_sample(x, grid, mode=mode, padding_mode=padding_mode, align_corners=align_corners)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("mode, padding_mode, align_corners",
                         list(itertools.product(["bilinear", "nearest", "bicubic"], PADDINGS, [False, True])))
def test_image_values_match_pytorch(mode, padding_mode, align_corners, dtype):
    args = ((1, 1, 3, 4), IMAGE_POINTS, dtype, mode, padding_mode, align_corners)
    _same(_sample(E, *args).flatten().tolist(), _sample(torch, *args).flatten().tolist())


@pytest.mark.parametrize("mode, padding_mode, align_corners",
                         list(itertools.product(["bilinear", "nearest"], PADDINGS, [False, True])))
def test_volume_values_match_pytorch(mode, padding_mode, align_corners):
    args = ((1, 1, 2, 3, 4), VOLUME_POINTS, "float32", mode, padding_mode, align_corners)
    _same(_sample(E, *args).flatten().tolist(), _sample(torch, *args).flatten().tolist())


@pytest.mark.skipif(not E.cuda.is_available(), reason="no CUDA and no simulator")
@pytest.mark.parametrize("mode, padding_mode", list(itertools.product(["bilinear", "nearest"], PADDINGS)))
def test_cuda_values_match_the_cpu(mode, padding_mode):
    for shape, points in (((1, 1, 3, 4), IMAGE_POINTS), ((1, 1, 2, 3, 4), VOLUME_POINTS)):
        args = (shape, points, "float32", mode, padding_mode, False)
        y = _sample(E, *args, device="cuda")
        assert y.device.type == "cuda"
        _same(y.flatten().tolist(), _sample(E, *args).flatten().tolist())


@pytest.mark.parametrize("padding_mode", ["border", "reflection"])
@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
def test_backward_through_nan_points_gives_finite_gradients(mode, padding_mode):
    x = E.arange(1.0, 13.0).reshape(1, 1, 3, 4).requires_grad_()
    grid = E.tensor(IMAGE_POINTS[:9]).reshape(1, 1, 9, 2).requires_grad_()
    F.grid_sample(x, grid, mode=mode, padding_mode=padding_mode, align_corners=False).sum().backward()
    assert all(math.isfinite(v) for v in x.grad.flatten().tolist())
    assert x.grad.sum().item() == pytest.approx(9.0)  # every point's weights sum to one
    grads = grid.grad.reshape(9, 2).tolist()
    assert all(math.isfinite(v) for row in grads for v in row)
    # A NaN coordinate is a constant: no gradient reaches it.
    assert all(g == 0.0 for (px, py), row in zip(IMAGE_POINTS, grads) for p, g in zip((px, py), row)
               if math.isnan(p))
