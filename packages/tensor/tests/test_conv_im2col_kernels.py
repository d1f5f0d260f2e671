"""The blocked convolution's im2col and col2im kernels (`_backends/cpu/kernels/conv.py`)
on a table of geometries, against a NumPy reference: the copy bit for bit, the sum over
windows on small integers (exact in float32, whatever the order). The table holds the
no-padding, unit-column-stride cases that take the kernels without bounds
(`_im2col_planes_inside`, `_col2im_planes_inside`) beside padded and strided ones that
take the general kernels, in both column layouts: per sample (B, R, L) and one matrix
(R, B*L)."""
import itertools

import numpy as np
import pytest

from ember_tensor._backends.cpu.kernels import conv as kernels
from ember_tensor._backends.plan import output_size

CASES = [  # (B, C, H, W), kernel, stride, padding, dilation
    ((3, 10, 12, 12), (5, 5), (1, 1), (0, 0), (1, 1)),   # the MNIST net's second layer: runs of 8
    ((2, 1, 28, 28), (5, 5), (1, 1), (0, 0), (1, 1)),    # its first layer: runs of 24
    ((2, 3, 9, 11), (3, 2), (2, 1), (0, 0), (1, 1)),     # row stride only
    ((2, 3, 11, 10), (3, 3), (1, 1), (0, 0), (2, 3)),    # dilation
    ((2, 2, 10, 13), (2, 3), (3, 1), (0, 0), (2, 2)),    # row stride and dilation, rows left over
    ((2, 4, 1, 40), (1, 5), (1, 1), (0, 0), (1, 1)),     # a 1-d problem as 2-d
    ((2, 3, 9, 9), (3, 3), (1, 2), (0, 0), (1, 1)),      # column stride: the general kernel
    ((2, 3, 8, 9), (3, 3), (1, 1), (1, 1), (1, 1)),      # padding: the general kernels
    ((2, 3, 8, 9), (3, 3), (1, 1), (0, 1), (1, 1)),      # padding in one dimension only
]


def _out(shape, kernel, stride, padding, dilation):
    return tuple(output_size(s, k, st, p, d) for s, k, st, p, d in
                 zip(shape[2:], kernel, stride, padding, dilation))


def _reference_columns(x, kernel, stride, padding, dilation, out):
    """(B, C*kh*kw, oh*ow) columns, element by element from a zero-padded copy (float64)."""
    b, c = x.shape[:2]
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (padding[0],) * 2, (padding[1],) * 2))
    cols = np.empty((b, c, kernel[0], kernel[1], out[0], out[1]))
    for ki, kj in itertools.product(range(kernel[0]), range(kernel[1])):
        rows = slice(ki * dilation[0], ki * dilation[0] + stride[0] * (out[0] - 1) + 1, stride[0])
        columns = slice(kj * dilation[1], kj * dilation[1] + stride[1] * (out[1] - 1) + 1, stride[1])
        cols[:, :, ki, kj] = xp[:, :, rows, columns]
    return cols.reshape(b, c * kernel[0] * kernel[1], out[0] * out[1])


def _reference_sum(cols, shape, kernel, stride, padding, dilation, out):
    """The adjoint of `_reference_columns`: windows summed into a padded plane, cropped."""
    b, c, h, w = shape
    xp = np.zeros((b, c, h + 2 * padding[0], w + 2 * padding[1]))
    cols = cols.astype(np.float64).reshape(b, c, kernel[0], kernel[1], out[0], out[1])
    for ki, kj in itertools.product(range(kernel[0]), range(kernel[1])):
        rows = slice(ki * dilation[0], ki * dilation[0] + stride[0] * (out[0] - 1) + 1, stride[0])
        columns = slice(kj * dilation[1], kj * dilation[1] + stride[1] * (out[1] - 1) + 1, stride[1])
        xp[:, :, rows, columns] += cols[:, :, ki, kj]
    return xp[:, :, padding[0]:padding[0] + h, padding[1]:padding[1] + w]


@pytest.mark.parametrize("layout", ["per_sample", "one_matrix"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape, kernel, stride, padding, dilation", CASES)
def test_im2col_and_col2im_match_the_reference(shape, kernel, stride, padding, dilation, dtype, layout):
    rng = np.random.default_rng(sum(shape))
    out = _out(shape, kernel, stride, padding, dilation)
    b, rows, length = shape[0], shape[1] * kernel[0] * kernel[1], out[0] * out[1]
    x = rng.integers(-8, 9, shape).astype(dtype)
    expected = _reference_columns(x, kernel, stride, padding, dilation, out)

    cols = np.full((b, rows, length) if layout == "per_sample" else (rows, b * length), np.nan, dtype)
    kernels.im2col_block(x, kernel, stride, padding, dilation, out, cols)
    per_sample = cols if layout == "per_sample" else cols.reshape(rows, b, length).transpose(1, 0, 2)
    np.testing.assert_array_equal(per_sample, expected)

    g = rng.integers(-8, 9, (b, rows, length)).astype(dtype)
    given = g if layout == "per_sample" else np.ascontiguousarray(g.transpose(1, 0, 2)).reshape(rows, b * length)
    summed = np.full(shape, np.nan, dtype)  # every element overwritten, those no window covers with 0
    kernels.col2im_block(given, kernel, stride, padding, dilation, out, summed)
    np.testing.assert_array_equal(summed, _reference_sum(g, shape, kernel, stride, padding, dilation, out))


@pytest.mark.parametrize("shape, kernel, stride, padding, dilation", CASES)
def test_the_inside_kernels_take_exactly_the_cases_without_bounds(shape, kernel, stride, padding, dilation,
                                                                   monkeypatch):
    calls = []
    for name in ("_im2col_planes_inside", "_col2im_planes_inside"):
        original = getattr(kernels, name)
        monkeypatch.setattr(kernels, name, lambda *a, _f=original, _n=name: (calls.append(_n), _f(*a))[1])
    out = _out(shape, kernel, stride, padding, dilation)
    rows, length = shape[1] * kernel[0] * kernel[1], out[0] * out[1]
    cols = kernels.im2col_block(np.zeros(shape), kernel, stride, padding, dilation, out,
                                np.empty((shape[0], rows, length)))
    kernels.col2im_block(cols, kernel, stride, padding, dilation, out, np.empty(shape))
    inside = padding == (0, 0) and stride[1] == 1
    assert calls == (["_im2col_planes_inside", "_col2im_planes_inside"] if inside else [])
