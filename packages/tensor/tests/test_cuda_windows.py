"""The sliding-window nn kernels on CUDA (convolution, pooling, unfold/fold, padding,
one_hot, max_unpool, embedding): each runs inside `device_only()` (no device-to-host copy)
and equals the CPU result, over the argument tables of the CPU tests plus non-contiguous,
half-precision, empty and 0-d inputs, and the CPU's errors.

Runs on Numba's CUDA simulator (one Python thread per CUDA thread): shapes stay tiny.
"""

import numpy as np
import pytest

import ember_tensor as et
from ember_tensor._ops import nn as N

from cuda_guard import device_only, run_on_simulated_devices

pytestmark = pytest.mark.skipif(not et.cuda.is_available(), reason="no CUDA and no simulator")

rng = np.random.default_rng(7)
TOL = {et.float64: 1e-10, et.float32: 1e-5, et.float16: 2e-2, et.bfloat16: 5e-2}


def _tensor(shape, dtype=et.float64, contiguous=True):
    """Random values of `shape`; a non-contiguous view (last and first dims swapped in
    memory) on request."""
    a = rng.standard_normal(shape)
    if contiguous or len(shape) < 2:
        return et.tensor(a, dtype=dtype)
    t = et.tensor(np.ascontiguousarray(np.swapaxes(a, 0, -1)), dtype=dtype).transpose(0, -1)
    assert not t.is_contiguous() or min(shape) <= 1
    return t


def _cuda(args):
    return [a.cuda() if isinstance(a, et.Tensor) else a for a in args]


def _host(t):
    return (t.float() if t.dtype in (et.float16, et.bfloat16) else t).cpu().numpy()


def _same(expected, got):
    """`got` (CUDA) has `expected`'s (CPU) device type, dtype, shape and values."""
    pairs = zip(expected, got) if isinstance(expected, tuple) else [(expected, got)]
    for e, g in pairs:
        assert g.device.type == "cuda" and g.dtype == e.dtype and g.shape == e.shape
        if e.dtype.is_floating_point:
            tol = TOL[e.dtype]
            np.testing.assert_allclose(_host(g), _host(e), rtol=tol, atol=tol, equal_nan=True)
        else:
            np.testing.assert_array_equal(_host(g), _host(e))


def _check(fn, *args, scalar_reads=False):
    """fn on CPU tensors and, inside device_only(), on their CUDA copies: same results."""
    expected = fn(*args)
    moved = _cuda(args)
    with device_only(allow_scalar_reads=scalar_reads):
        got = fn(*moved)
    _same(expected, got)
    return got


# -- convolution ------------------------------------------------------------------------------

CONV_CASES = [
    # x shape, w shape, stride, padding, dilation, groups
    ((2, 3, 6, 5), (4, 3, 3, 3), (1, 1), (1, 1), (1, 1), 1),
    ((2, 4, 7, 6), (6, 2, 3, 2), (2, 1), (1, 0), (1, 2), 2),
    ((2, 3, 9), (4, 3, 3), (2,), (1,), (1,), 1),
    ((1, 2, 4, 5, 4), (2, 2, 2, 3, 2), (1, 1, 1), (1, 0, 1), (1, 1, 1), 1),
    ((1, 4, 5), (4, 1, 2), (1,), (0,), (2,), 4),  # depthwise
    ((1, 2, 3, 4), (2, 2, 2, 1), (3, 2), (3, 2), (1, 1), 1),  # stride > kernel, padding > kernel
    ((0, 3, 5, 5), (2, 3, 3, 3), (1, 1), (0, 0), (1, 1), 1),
]


@pytest.mark.parametrize("contiguous", [True, False])
@pytest.mark.parametrize("xs, ws, stride, padding, dilation, groups", CONV_CASES)
def test_convolution_and_its_backward_kernels(xs, ws, stride, padding, dilation, groups, contiguous):
    x, w, b = _tensor(xs, contiguous=contiguous), _tensor(ws, contiguous=contiguous), _tensor(ws[:1])
    y = _check(lambda x, w, b: N.convolution(x, w, b, stride, padding, dilation, False, 0, groups), x, w, b)
    g = _tensor(tuple(y.shape), contiguous=contiguous)
    _check(lambda g, w: N.convolution_backward_input(g, w, xs, stride, padding, dilation, groups), g, w)
    _check(lambda g, x: N.convolution_backward_weight(g, x, ws, stride, padding, dilation, groups), g, x)


TRANSPOSED_CASES = [
    # x shape, w shape (C_in, C_out/G, *K), stride, padding, dilation, output_padding, groups
    ((1, 3, 3, 3), (3, 2, 3, 3), (2, 2), (1, 1), (1, 1), (1, 1), 1),
    ((2, 4, 4), (4, 3, 2), (3,), (0,), (2,), (1,), 2),
    ((1, 2, 2, 2, 2), (2, 1, 2, 2, 2), (1, 2, 1), (0, 1, 0), (1, 1, 1), (0, 1, 0), 1),
]


@pytest.mark.parametrize("xs, ws, stride, padding, dilation, output_padding, groups", TRANSPOSED_CASES)
def test_transposed_convolution(xs, ws, stride, padding, dilation, output_padding, groups):
    x, w, b = _tensor(xs), _tensor(ws, contiguous=False), _tensor((ws[1] * groups,))
    _check(lambda x, w, b: N.convolution(x, w, b, stride, padding, dilation, True, output_padding, groups), x, w, b)


@pytest.mark.parametrize("dtype", [et.float32, et.float16, et.bfloat16])
def test_convolution_dtypes(dtype):
    x, w, b = _tensor((2, 2, 5, 4), dtype), _tensor((3, 2, 3, 2), dtype), _tensor((3,), dtype)
    y = _check(lambda x, w, b: N.convolution(x, w, b, 1, 1, 1, False, 0, 1), x, w, b)
    g = _tensor(tuple(y.shape), dtype)
    _check(lambda g, w: N.convolution_backward_input(g, w, (2, 2, 5, 4), 1, 1, 1, 1), g, w)
    _check(lambda g, x: N.convolution_backward_weight(g, x, (3, 2, 3, 2), 1, 1, 1, 1), g, x)


CONV_ERRORS = [
    (lambda x, w: N.convolution(x, w[:, :1], None, 1, 0, 1, False, 0, 1), "to have 1 channels, but got 2"),
    (lambda x, w: N.convolution(x, w, None, 1, 0, 1, False, 0, 1), "Kernel size can't be greater"),
    (lambda x, w: N.convolution(x, w, None, 0, 0, 1, False, 0, 1), "non-positive stride is not supported"),
    (lambda x, w: N.convolution(x.to(et.int64), w.to(et.int64), None, 1, 2, 1, False, 0, 1),
     "\"convolution\" not implemented for 'Long'"),
    (lambda x, w: N.convolution(x, et.ones(2, 2, 1, 1, dtype=et.float64), None, 1, 0, 1, False, 0, 1),
     "Expected all tensors to be on the same"),
]


@pytest.mark.parametrize("call, message", CONV_ERRORS)
def test_convolution_errors(call, message):
    x, w = _tensor((1, 2, 3, 3)).cuda(), _tensor((2, 2, 5, 5)).cuda()
    with device_only(), pytest.raises(RuntimeError, match=message):
        call(x, w)


# -- pooling ----------------------------------------------------------------------------------

POOL_CASES = [
    # x shape, kernel, stride, padding, dilation, ceil_mode
    ((2, 3, 6, 6), (2, 2), (2, 2), (0, 0), (1, 1), False),
    ((2, 3, 7, 5), (3, 2), (2, 1), (1, 1), (1, 1), False),
    ((1, 2, 7, 6), (3, 3), (2, 2), (1, 1), (2, 1), True),
    ((2, 3, 9), (3,), (2,), (1,), (1,), True),
    ((1, 2, 4, 5, 4), (2, 3, 2), (2, 1, 2), (1, 1, 0), (1, 1, 1), True),
    ((0, 3, 4, 4), (2, 2), (2, 2), (0, 0), (1, 1), False),
]


@pytest.mark.parametrize("contiguous", [True, False])
@pytest.mark.parametrize("xs, kernel, stride, padding, dilation, ceil_mode", POOL_CASES)
def test_max_pool_and_its_backward(xs, kernel, stride, padding, dilation, ceil_mode, contiguous):
    x = _tensor(xs, contiguous=contiguous)
    values, indices = _check(lambda x: N.max_pool_with_indices(x, kernel, stride, padding, dilation, ceil_mode), x)
    g = _tensor(tuple(values.shape), contiguous=contiguous)
    idx = indices.cpu()
    _check(lambda g, i: N.max_pool_backward(g, i, xs), g, idx)
    _check(lambda x, i: N.take_along_planes(x, i), x, idx)


@pytest.mark.parametrize("contiguous", [True, False])
@pytest.mark.parametrize("count_include_pad, divisor_override", [(True, None), (False, None), (True, 5)])
@pytest.mark.parametrize("xs, kernel, stride, padding, dilation, ceil_mode",
                         [case for case in POOL_CASES if case[4] == (1,) * len(case[1])])
def test_avg_pool_and_its_backward(xs, kernel, stride, padding, dilation, ceil_mode, count_include_pad,
                                   divisor_override, contiguous):
    x = _tensor(xs, contiguous=contiguous)
    y = _check(lambda x: N.avg_pool(x, kernel, stride, padding, ceil_mode, count_include_pad, divisor_override), x)
    g = _tensor(tuple(y.shape), contiguous=contiguous)
    _check(lambda g: N.avg_pool_backward(g, xs, kernel, stride, padding, ceil_mode, count_include_pad,
                                         divisor_override), g)


@pytest.mark.parametrize("dtype", [et.float32, et.float16, et.bfloat16, et.int32])
def test_window_ops_over_dtypes_with_nan_and_inf(dtype):
    x = _tensor((1, 2, 5, 4), et.float32)
    if dtype.is_floating_point:
        x[0, 0, 1, 1] = float("nan")
        x[0, 1, 2, 2] = float("inf")
    x = x.to(dtype) if dtype.is_floating_point else (x * 10).to(dtype)
    _check(lambda x: N.max_pool_with_indices(x, (2, 2), (1, 2), (1, 0)), x)
    _check(lambda x: N.adaptive_max_pool(x, (3, 2)), x)
    if dtype.is_floating_point:
        _check(lambda x: N.avg_pool(x, (3, 2), (2, 1), (1, 1), True, False), x)
        cols = _check(lambda x: N.im2col(x, (2, 2), 1, 1, 1), x)
        _check(lambda c: N.col2im(c, (5, 4), (2, 2), 1, 1, 1), cols.cpu())
        values, indices = N.max_pool_with_indices(x, (2, 2), (2, 2), 0)
        _check(lambda v, i: N.max_unpool(v, i, (5, 4)), values, indices, scalar_reads=True)
        _check(lambda g, i: N.max_pool_backward(g, i, (1, 2, 5, 4)), values, indices)


@pytest.mark.parametrize("xs, out", [((2, 3, 5, 7), (3, 4)), ((1, 2, 9), (4,)), ((1, 1, 3, 4, 5), (2, 3, 2)),
                                     ((2, 2, 4, 4), (4, 4)), ((0, 2, 3, 3), (2, 2))])
def test_adaptive_max_pool(xs, out):
    x = _tensor(xs, contiguous=False)
    values, indices = _check(lambda x: N.adaptive_max_pool(x, out), x)
    _check(lambda g, i: N.max_pool_backward(g, i, xs), _tensor(tuple(values.shape)), indices.cpu())


def test_max_unpool_and_its_errors():
    x = _tensor((2, 2, 4, 4))
    values, indices = N.max_pool_with_indices(x, (2, 2), (2, 2), 0)
    _check(lambda v, i: N.max_unpool(v, i, (4, 4)), values, indices, scalar_reads=True)
    _check(lambda v, i: N.max_unpool(v, i, (5, 4)), values.transpose(2, 3), indices.transpose(2, 3),
           scalar_reads=True)
    with device_only(allow_scalar_reads=True), pytest.raises(RuntimeError, match="Found an invalid max index: 99"):
        N.max_unpool(values.cuda(), (indices * 0 + 99).cuda(), (4, 4))
    with pytest.raises(RuntimeError, match="Expected shape of indices to be same"):
        N.max_unpool(values.cuda(), indices[:, :1].cuda(), (4, 4))


def test_pooling_errors_match_the_cpu():
    x = _tensor((1, 2, 5, 5)).cuda()
    for call, message in [(lambda: N.max_pool_with_indices(x, (0, 0)), "kernel_size should be greater than zero"),
                          (lambda: N.avg_pool(x, (2, 2), (1, 1), (-1, 0)), "pad must be non-negative"),
                          (lambda: N.avg_pool(x.to(et.int64), (2, 2)), "\"avg_pool2d\" not implemented for 'Long'"),
                          (lambda: N.max_pool_with_indices(x > 0, (2, 2)), "\"max_pool2d\" not implemented for 'Bool'"),
                          (lambda: N.adaptive_max_pool(x[:, :, :0], (2, 2)), "Expected input to have non-zero size")]:
        with device_only(), pytest.raises(RuntimeError, match=message):
            call()


# -- unfold / fold, padding, one_hot, embedding ---------------------------------------------------

@pytest.mark.parametrize("xs, kernel, dilation, padding, stride", [
    ((2, 3, 5, 4), (2, 3), (1, 1), (1, 1), (2, 1)),
    ((1, 2, 6, 6), (3, 3), (2, 1), (0, 2), (1, 3)),
    ((0, 2, 4, 4), (2, 2), (1, 1), (0, 0), (1, 1)),
])
def test_unfold_and_fold(xs, kernel, dilation, padding, stride):
    x = _tensor(xs, contiguous=False)
    cols = _check(lambda x: N.im2col(x, kernel, dilation, padding, stride), x)
    c = _tensor(tuple(cols.shape), contiguous=False)
    _check(lambda c: N.col2im(c, xs[2:], kernel, dilation, padding, stride), c)
    with device_only(), pytest.raises(RuntimeError, match="expected size of input's dimension 2 to match"):
        N.col2im(c.cuda()[:, :, :0], xs[2:], kernel, dilation, padding, stride)


PAD_CASES = [((2, 3), (1, 2)), ((2, 3), (1, -1, 0, 1)), ((1, 2, 3, 4), (2, 0, -1, 1, 1, 1)),
             ((3,), (0, 0)), ((), ()), ((0, 2), (1, 1, 1, 0)), ((2, 4), (-2, -2))]


@pytest.mark.parametrize("dtype", [et.float32, et.float16, et.bfloat16, et.int64, et.uint8, et.bool])
@pytest.mark.parametrize("shape, pad", PAD_CASES)
def test_constant_pad(shape, pad, dtype):
    x = _tensor(shape, contiguous=False)
    x = (x > 0) if dtype is et.bool else x.to(dtype)
    value = True if dtype is et.bool else 3
    _check(lambda x: N.constant_pad_nd(x, pad, value), x)
    bad, message = ((-5, 0), "resulted in a negative output size") if shape else \
        ((0, 0), "Length of pad should be no more than twice the number of dimensions")
    with device_only(), pytest.raises(RuntimeError, match=message):
        N.constant_pad_nd(x.cuda(), bad, 0)


def test_one_hot():
    idx = et.tensor([[0, 3], [2, 1]]).transpose(0, 1)
    _check(lambda i: N.one_hot(i, 5), idx, scalar_reads=True)
    _check(lambda i: N.one_hot(i), idx, scalar_reads=True)
    _check(lambda i: N.one_hot(i), et.tensor(2), scalar_reads=True)
    _check(lambda i: N.one_hot(i, 3), et.tensor([], dtype=et.int64), scalar_reads=True)
    for bad, classes, message in [([1, -1], 3, "Class values must be non-negative."),
                                  ([1, 3], 3, "Class values must be smaller than num_classes."),
                                  ([], -1, "Can not infer total number of classes from empty tensor.")]:
        with device_only(allow_scalar_reads=True), pytest.raises(RuntimeError, match=message):
            N.one_hot(et.tensor(bad, dtype=et.int64).cuda(), classes)


@pytest.mark.parametrize("padding_idx, scale", [(None, False), (2, True)])
def test_embedding_and_its_backward(padding_idx, scale):
    w = _tensor((5, 3), contiguous=False)
    idx = et.tensor([[1, 4, 2], [4, 0, 1]])
    _check(lambda w, i: N.embedding(w, i), w, idx, scalar_reads=True)
    _check(lambda w, i: N.embedding(w, i), w, idx[0, 0], scalar_reads=True)
    _check(lambda w, i: N.embedding(w, i), w.to(et.bfloat16), idx.to(et.int32).t(), scalar_reads=True)
    g = _tensor((2, 3, 3))
    _check(lambda g, i: N.embedding_backward(g, i, 5, padding_idx, scale), g, idx, scalar_reads=True)
    _check(lambda g, i: N.embedding_backward(g, i, 5, padding_idx, scale), g.to(et.float16), idx, scalar_reads=True)
    empty = et.tensor([], dtype=et.int64).reshape(0, 2)
    _check(lambda w, i: N.embedding(w, i), w, empty, scalar_reads=True)
    _check(lambda g, i: N.embedding_backward(g, i, 5, padding_idx, scale), _tensor((0, 2, 3)), empty,
           scalar_reads=True)
    with device_only(allow_scalar_reads=True), pytest.raises(IndexError, match="index out of range in self"):
        N.embedding(w.cuda(), et.tensor([5]).cuda())


# -- gradients through the autograd rules -----------------------------------------------------

def _window_chain(x, w, b, table):
    """conv -> max pool -> avg pool -> padding -> unfold/fold -> embedding, to a scalar."""
    y = N.convolution(x, w, b, 1, 1, 1, False, 0, 1)
    v, _ = N.max_pool_with_indices(y, (2, 2), (1, 1), (1, 1))
    a = N.avg_pool(N.constant_pad_nd(v, (1, 0, 0, 1), 0.5), (2, 2), (1, 2), 0, True, False)
    f = N.col2im(N.im2col(a, (2, 2), 1, 0, 1), tuple(a.shape[2:]), (2, 2), 1, 0, 1)
    t = N.convolution(f, w, None, 2, 0, 1, True, 1, 1)
    return (t * t).sum() + (N.embedding(table, et.tensor([[1, 0], [1, 2]], device=x.device)) * f[0, 0, :2, :2]).sum()


def test_backward_on_cuda_matches_the_cpu():
    pytest.importorskip("ember_autograd")
    leaves = [_tensor((2, 2, 5, 4)), _tensor((3, 2, 3, 3)), _tensor((3,)), _tensor((3, 2))]
    cpu = [t.clone().requires_grad_() for t in leaves]
    _window_chain(*cpu).backward()
    gpu = [t.cuda().requires_grad_() for t in leaves]
    out = _window_chain(*gpu)
    with device_only(allow_scalar_reads=True):
        out.backward()
    for c, g in zip(cpu, gpu):
        _same(c.grad, g.grad)



def test_double_backward_on_cuda_matches_the_cpu():
    # The rules of conv and pooling use these ops themselves: gradients of gradients.
    autograd = pytest.importorskip("ember_autograd")
    x0, w0 = _tensor((1, 2, 5, 4)), _tensor((3, 2, 3, 2))

    def second(x, w):
        y = N.convolution(x, w, None, 1, 1, 1, False, 0, 1)
        v = N.avg_pool(N.max_pool_with_indices(y, (2, 2), (1, 1), 0)[0], (2, 2), (1, 1), 0)
        gx, = autograd.grad((v * v).sum(), [x], create_graph=True)
        gw, = autograd.grad((gx * gx).sum(), [w])
        return gx.detach(), gw

    expected = second(x0.clone().requires_grad_(), w0.clone().requires_grad_())
    x, w = x0.cuda().requires_grad_(), w0.cuda().requires_grad_()
    with device_only(allow_scalar_reads=True):
        got = second(x, w)
    _same(expected, got)


SECOND_DEVICE_SCRIPT = """
    import ember_tensor as torch
    from ember_tensor._ops import nn as N

    x, w = torch.randn(1, 2, 5, 5), torch.randn(3, 2, 3, 3)
    x1, w1 = x.to("cuda:1"), w.to("cuda:1")
    before = torch.cuda.memory_allocated(0)
    y = N.convolution(x1, w1, None, 1, 1, 1, False, 0, 1)
    v, i = N.max_pool_with_indices(y, (2, 2), (2, 2), 0)
    p = N.constant_pad_nd(v, (1, 1), 0.0)
    g = N.convolution_backward_weight(y, x1, (3, 2, 3, 3), 1, 1, 1, 1)
    assert all(t.device == torch.device("cuda:1") for t in (y, v, i, p, g))
    assert torch.cuda.current_device() == 0 and torch.cuda.memory_allocated(0) == before
    assert (y.cpu() - N.convolution(x, w, None, 1, 1, 1, False, 0, 1)).abs().max().item() < 1e-5
    print("ok")
"""


def test_ops_on_a_second_device_allocate_and_run_there():
    if "simulator" not in et.cuda.get_device_name().lower():
        pytest.skip("simulates two devices on Numba's CUDA simulator")
    run_on_simulated_devices(SECOND_DEVICE_SCRIPT, devices=2)
