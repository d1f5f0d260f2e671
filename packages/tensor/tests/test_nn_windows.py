"""The sliding-window nn kernels (convolution, pooling, unfold/fold, padding, one_hot,
max_unpool, embedding) and their backward kernels on every device
(`device_checks.same_on`), over the argument tables of test_nn_kernels.py plus
non-contiguous, half-precision, empty and 0-d inputs, NaN and inf, and PyTorch's errors:
on the CPU each dtype gives what float64 gives, cast back (test_nn_kernels.py holds
float64 to NumPy references); on CUDA the CPU's result, computed on the device.

CUDA runs on Numba's simulator where no GPU is (a Python thread per CUDA thread): shapes
stay tiny.
"""
import contextlib

import numpy as np
import pytest

import ember_tensor as et
from cuda_guard import DEVICES, device_only, on_cuda, same_as_cpu
from device_checks import same_on
from ember_tensor._ops import nn as N

rng = np.random.default_rng(7)
TOL = {et.float64: 1e-10, et.float32: 1e-5, et.float16: 2e-2, et.bfloat16: 5e-2, et.int32: 0}


def _tensor(shape, dtype=et.float64, contiguous=True):
    """Random values of `shape`; a non-contiguous view (last and first dims swapped in
    memory) on request."""
    a = rng.standard_normal(shape)
    if contiguous or len(shape) < 2:
        return et.tensor(a, dtype=dtype)
    t = et.tensor(np.ascontiguousarray(np.swapaxes(a, 0, -1)), dtype=dtype).transpose(0, -1)
    assert not t.is_contiguous() or min(shape) <= 1
    return t


def _check(device, fn, *args, scalar_reads=False):
    """fn(*args) on `device` (`same_on`), within the tolerance of the first operand's dtype."""
    same_on(device, fn, *args, tol=TOL[args[0].dtype], scalar_reads=scalar_reads)


def _raises(device, call, message, *args, exc=RuntimeError, scalar_reads=False):
    """call(*args moved to `device`) raises `exc` matching `message`, without copying a
    CUDA operand to the host (but single elements when `scalar_reads`)."""
    args = [on_cuda(a) if device != "cpu" and isinstance(a, et.Tensor) else a for a in args]
    guard = device_only(allow_scalar_reads=scalar_reads) if device != "cpu" else contextlib.nullcontext()
    with guard, pytest.raises(exc, match=message):
        call(*args)


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


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("contiguous", [True, False])
@pytest.mark.parametrize("xs, ws, stride, padding, dilation, groups", CONV_CASES)
def test_convolution_and_its_backward_kernels(xs, ws, stride, padding, dilation, groups, contiguous, device):
    """Convolution (1-3 spatial dims, strided, padded, dilated, grouped, depthwise, an
    empty batch) and its input and weight gradients."""
    x, w, b = _tensor(xs, contiguous=contiguous), _tensor(ws, contiguous=contiguous), _tensor(ws[:1])
    conv = lambda x, w, b: N.convolution(x, w, b, stride, padding, dilation, False, 0, groups)  # noqa: E731
    _check(device, conv, x, w, b)
    g = _tensor(tuple(conv(x, w, b).shape), contiguous=contiguous)
    _check(device, lambda g, w: N.convolution_backward_input(g, w, xs, stride, padding, dilation, groups), g, w)
    _check(device, lambda g, x: N.convolution_backward_weight(g, x, ws, stride, padding, dilation, groups), g, x)


TRANSPOSED_CASES = [
    # x shape, w shape (C_in, C_out/G, *K), stride, padding, dilation, output_padding, groups
    ((1, 3, 3, 3), (3, 2, 3, 3), (2, 2), (1, 1), (1, 1), (1, 1), 1),
    ((2, 4, 4), (4, 3, 2), (3,), (0,), (2,), (1,), 2),
    ((1, 2, 2, 2, 2), (2, 1, 2, 2, 2), (1, 2, 1), (0, 1, 0), (1, 1, 1), (0, 1, 0), 1),
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("xs, ws, stride, padding, dilation, output_padding, groups", TRANSPOSED_CASES)
def test_transposed_convolution(xs, ws, stride, padding, dilation, output_padding, groups, device):
    """Transposed convolution with output padding, dilation and groups."""
    x, w, b = _tensor(xs), _tensor(ws, contiguous=False), _tensor((ws[1] * groups,))
    _check(device, lambda x, w, b: N.convolution(x, w, b, stride, padding, dilation, True, output_padding, groups),
           x, w, b)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [et.float32, et.float16, et.bfloat16])
def test_convolution_dtypes(dtype, device):
    """Convolution and its gradients in float32 and the half types."""
    x, w, b = _tensor((2, 2, 5, 4), dtype), _tensor((3, 2, 3, 2), dtype), _tensor((3,), dtype)
    _check(device, lambda x, w, b: N.convolution(x, w, b, 1, 1, 1, False, 0, 1), x, w, b)
    g = _tensor(tuple(N.convolution(x, w, b, 1, 1, 1, False, 0, 1).shape), dtype)
    _check(device, lambda g, w: N.convolution_backward_input(g, w, (2, 2, 5, 4), 1, 1, 1, 1), g, w)
    _check(device, lambda g, x: N.convolution_backward_weight(g, x, (3, 2, 3, 2), 1, 1, 1, 1), g, x)


CONV_ERRORS = [
    (lambda x, w: N.convolution(x, w[:, :1], None, 1, 0, 1, False, 0, 1), "to have 1 channels, but got 2"),
    (lambda x, w: N.convolution(x, w, None, 1, 0, 1, False, 0, 1), "Kernel size can't be greater"),
    (lambda x, w: N.convolution(x, w, None, 0, 0, 1, False, 0, 1), "non-positive stride is not supported"),
    (lambda x, w: N.convolution(x.to(et.int64), w.to(et.int64), None, 1, 2, 1, False, 0, 1),
     "\"convolution\" not implemented for 'Long'"),
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("call, message", CONV_ERRORS)
def test_convolution_errors(call, message, device):
    """Channels that do not match, a kernel larger than the input, a zero stride and
    integer inputs raise PyTorch's errors."""
    _raises(device, call, message, _tensor((1, 2, 3, 3)), _tensor((2, 2, 5, 5)))


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


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("contiguous", [True, False])
@pytest.mark.parametrize("xs, kernel, stride, padding, dilation, ceil_mode", POOL_CASES)
def test_max_pool_and_its_backward(xs, kernel, stride, padding, dilation, ceil_mode, contiguous, device):
    """Max pooling (values and indices; 1-3 spatial dims, dilation, ceil_mode, an empty
    batch), its backward and the gather of its indices."""
    x = _tensor(xs, contiguous=contiguous)
    _check(device, lambda x: N.max_pool_with_indices(x, kernel, stride, padding, dilation, ceil_mode), x)
    values, indices = N.max_pool_with_indices(x, kernel, stride, padding, dilation, ceil_mode)
    g = _tensor(tuple(values.shape), contiguous=contiguous)
    _check(device, lambda g, i: N.max_pool_backward(g, i, xs), g, indices)
    _check(device, lambda x, i: N.take_along_planes(x, i), x, indices)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("contiguous", [True, False])
@pytest.mark.parametrize("count_include_pad, divisor_override", [(True, None), (False, None), (True, 5)])
@pytest.mark.parametrize("xs, kernel, stride, padding, dilation, ceil_mode",
                         [case for case in POOL_CASES if case[4] == (1,) * len(case[1])])
def test_avg_pool_and_its_backward(xs, kernel, stride, padding, dilation, ceil_mode, count_include_pad,
                                   divisor_override, contiguous, device):
    """Average pooling (with and without the padding counted, a divisor override) and its
    backward."""
    x = _tensor(xs, contiguous=contiguous)
    avg = lambda x: N.avg_pool(x, kernel, stride, padding, ceil_mode, count_include_pad, divisor_override)  # noqa: E731
    _check(device, avg, x)
    g = _tensor(tuple(avg(x).shape), contiguous=contiguous)
    _check(device, lambda g: N.avg_pool_backward(g, xs, kernel, stride, padding, ceil_mode, count_include_pad,
                                                 divisor_override), g)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [et.float32, et.float16, et.bfloat16, et.int32])
def test_window_ops_over_dtypes_with_nan_and_inf(dtype, device):
    """Max and adaptive max pooling of every dtype (NaN wins, inf too), and average
    pooling, unfold/fold, max_unpool and the max-pool backward of floating ones."""
    x = _tensor((1, 2, 5, 4), et.float32)
    if dtype.is_floating_point:
        x[0, 0, 1, 1] = float("nan")
        x[0, 1, 2, 2] = float("inf")
    x = x.to(dtype) if dtype.is_floating_point else (x * 10).to(dtype)
    _check(device, lambda x: N.max_pool_with_indices(x, (2, 2), (1, 2), (1, 0)), x)
    _check(device, lambda x: N.adaptive_max_pool(x, (3, 2)), x)
    if dtype.is_floating_point:
        _check(device, lambda x: N.avg_pool(x, (3, 2), (2, 1), (1, 1), True, False), x)
        _check(device, lambda x: N.im2col(x, (2, 2), 1, 1, 1), x)
        _check(device, lambda c: N.col2im(c, (5, 4), (2, 2), 1, 1, 1), N.im2col(x, (2, 2), 1, 1, 1))
        values, indices = N.max_pool_with_indices(x, (2, 2), (2, 2), 0)
        _check(device, lambda v, i: N.max_unpool(v, i, (5, 4)), values, indices, scalar_reads=True)
        _check(device, lambda g, i: N.max_pool_backward(g, i, (1, 2, 5, 4)), values, indices)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("xs, out", [((2, 3, 5, 7), (3, 4)), ((1, 2, 9), (4,)), ((1, 1, 3, 4, 5), (2, 3, 2)),
                                     ((2, 2, 4, 4), (4, 4)), ((0, 2, 3, 3), (2, 2))])
@pytest.mark.parametrize("contiguous", [True, False])
def test_adaptive_max_pool(xs, out, contiguous, device):
    """Adaptive max pooling to smaller, equal and 1-3-d sizes (an empty batch too) and
    its backward."""
    x = _tensor(xs, contiguous=contiguous)
    _check(device, lambda x: N.adaptive_max_pool(x, out), x)
    values, indices = N.adaptive_max_pool(x, out)
    _check(device, lambda g, i: N.max_pool_backward(g, i, xs), _tensor(tuple(values.shape)), indices)


@pytest.mark.parametrize("device", DEVICES)
def test_max_unpool_and_its_errors(device):
    """max_unpool of contiguous and transposed values (into a larger output too); an
    index out of range and indices of another shape raise PyTorch's errors."""
    x = _tensor((2, 2, 4, 4))
    values, indices = N.max_pool_with_indices(x, (2, 2), (2, 2), 0)
    _check(device, lambda v, i: N.max_unpool(v, i, (4, 4)), values, indices, scalar_reads=True)
    _check(device, lambda v, i: N.max_unpool(v, i, (5, 4)), values.transpose(2, 3), indices.transpose(2, 3),
           scalar_reads=True)
    _raises(device, lambda v, i: N.max_unpool(v, i, (4, 4)), "Found an invalid max index: 99", values,
            indices * 0 + 99, scalar_reads=True)
    _raises(device, lambda v, i: N.max_unpool(v, i, (4, 4)), "Expected shape of indices to be same", values,
            indices[:, :1].contiguous(), scalar_reads=True)


POOL_ERRORS = [(lambda x: N.max_pool_with_indices(x, (0, 0)), "kernel_size should be greater than zero"),
               (lambda x: N.avg_pool(x, (2, 2), (1, 1), (-1, 0)), "pad must be non-negative"),
               (lambda x: N.avg_pool(x.to(et.int64), (2, 2)), "\"avg_pool2d\" not implemented for 'Long'"),
               (lambda x: N.max_pool_with_indices(x > 0, (2, 2)), "\"max_pool2d\" not implemented for 'Bool'"),
               (lambda x: N.adaptive_max_pool(x[:, :, :0], (2, 2)), "Expected input to have non-zero size")]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("call, message", POOL_ERRORS)
def test_pooling_errors(call, message, device):
    """A zero kernel, negative padding, integer and bool inputs and an empty spatial dim
    raise PyTorch's errors."""
    _raises(device, call, message, _tensor((1, 2, 5, 5)))


# -- unfold / fold, padding, one_hot, embedding ---------------------------------------------------

@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("xs, kernel, dilation, padding, stride", [
    ((2, 3, 5, 4), (2, 3), (1, 1), (1, 1), (2, 1)),
    ((1, 2, 6, 6), (3, 3), (2, 1), (0, 2), (1, 3)),
    ((0, 2, 4, 4), (2, 2), (1, 1), (0, 0), (1, 1)),
])
def test_unfold_and_fold(xs, kernel, dilation, padding, stride, device):
    """im2col and col2im (dilated, padded, strided, an empty batch); col2im of columns
    that do not fit raises PyTorch's error."""
    x = _tensor(xs, contiguous=False)
    _check(device, lambda x: N.im2col(x, kernel, dilation, padding, stride), x)
    c = _tensor(tuple(N.im2col(x, kernel, dilation, padding, stride).shape), contiguous=False)
    _check(device, lambda c: N.col2im(c, xs[2:], kernel, dilation, padding, stride), c)
    _raises(device, lambda c: N.col2im(c, xs[2:], kernel, dilation, padding, stride),
            "expected size of input's dimension 2 to match", c[:, :, :0])


PAD_CASES = [((2, 3), (1, 2)), ((2, 3), (1, -1, 0, 1)), ((1, 2, 3, 4), (2, 0, -1, 1, 1, 1)),
             ((3,), (0, 0)), ((), ()), ((0, 2), (1, 1, 1, 0)), ((2, 4), (-2, -2))]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [et.float32, et.float16, et.bfloat16, et.int64, et.uint8, et.bool])
@pytest.mark.parametrize("shape, pad", PAD_CASES)
def test_constant_pad(shape, pad, dtype, device):
    """constant_pad_nd of every dtype, padding and cropping (negative pads), 0-d and
    empty; a negative output size or a pad longer than the dims raise PyTorch's errors."""
    x = _tensor(shape, contiguous=False)
    x = (x > 0) if dtype is et.bool else x.to(dtype)
    value = True if dtype is et.bool else 3
    same_on(device, lambda x: N.constant_pad_nd(x, pad, value), x, tol=TOL.get(dtype, 0))
    bad, message = ((-5, 0), "resulted in a negative output size") if shape else \
        ((0, 0), "Length of pad should be no more than twice the number of dimensions")
    _raises(device, lambda x: N.constant_pad_nd(x, bad, 0), message, x)


@pytest.mark.parametrize("device", DEVICES)
def test_one_hot(device):
    """one_hot of transposed, 0-d and empty indices, with and without num_classes; bad
    classes raise PyTorch's errors."""
    idx = et.tensor([[0, 3], [2, 1]]).transpose(0, 1)
    for indices, classes in ((idx, 5), (idx, -1), (et.tensor(2), -1), (et.tensor([], dtype=et.int64), 3)):
        same_on(device, lambda i: N.one_hot(i, classes), indices, scalar_reads=True)
    for bad, classes, message in [([1, -1], 3, "Class values must be non-negative."),
                                  ([1, 3], 3, "Class values must be smaller than num_classes."),
                                  ([], -1, "Can not infer total number of classes from empty tensor.")]:
        _raises(device, lambda i: N.one_hot(i, classes), message, et.tensor(bad, dtype=et.int64), scalar_reads=True)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("padding_idx, scale", [(None, False), (2, True)])
def test_embedding_and_its_backward(padding_idx, scale, device):
    """embedding (transposed weight, 0-d, int32 and empty indices, bfloat16) and its
    backward (padding_idx, scale_grad_by_freq, float16); an index out of range raises."""
    w = _tensor((5, 3), contiguous=False)
    idx = et.tensor([[1, 4, 2], [4, 0, 1]])
    for weight, indices in ((w, idx), (w, idx[0, 0]), (w.to(et.bfloat16), idx.to(et.int32).t())):
        _check(device, lambda w, i: N.embedding(w, i), weight, indices, scalar_reads=True)
    g = _tensor((2, 3, 3))
    for grad in (g, g.to(et.float16)):
        _check(device, lambda g, i: N.embedding_backward(g, i, 5, padding_idx, scale), grad, idx, scalar_reads=True)
    empty = et.tensor([], dtype=et.int64).reshape(0, 2)
    _check(device, lambda w, i: N.embedding(w, i), w, empty, scalar_reads=True)
    _check(device, lambda g, i: N.embedding_backward(g, i, 5, padding_idx, scale), _tensor((0, 2, 3)), empty,
           scalar_reads=True)
    _raises(device, N.embedding, "index out of range in self", w, et.tensor([5]), exc=IndexError, scalar_reads=True)


# -- gradients through the autograd rules -----------------------------------------------------

def _window_chain(x, w, b, table):
    """conv -> max pool -> avg pool -> padding -> unfold/fold -> embedding, to a scalar."""
    y = N.convolution(x, w, b, 1, 1, 1, False, 0, 1)
    v, _ = N.max_pool_with_indices(y, (2, 2), (1, 1), (1, 1))
    a = N.avg_pool(N.constant_pad_nd(v, (1, 0, 0, 1), 0.5), (2, 2), (1, 2), 0, True, False)
    f = N.col2im(N.im2col(a, (2, 2), 1, 0, 1), tuple(a.shape[2:]), (2, 2), 1, 0, 1)
    t = N.convolution(f, w, None, 2, 0, 1, True, 1, 1)
    return (t * t).sum() + (N.embedding(table, et.tensor([[1, 0], [1, 2]], device=x.device)) * f[0, 0, :2, :2]).sum()


def _conv_pool(x, w):
    """A conv -> max pool -> avg pool chain, to a scalar."""
    y = N.convolution(x, w, None, 1, 1, 1, False, 0, 1)
    v = N.avg_pool(N.max_pool_with_indices(y, (2, 2), (1, 1), 0)[0], (2, 2), (1, 1), 0)
    return (v * v).sum()


@pytest.mark.parametrize("device", DEVICES)
def test_backward_through_the_window_ops(device):
    """Gradients through the chain: on the CPU as finite differences say (gradcheck), on
    CUDA the CPU's, computed on the device."""
    autograd = pytest.importorskip("ember_autograd")
    leaves = [_tensor((2, 2, 5, 4)), _tensor((3, 2, 3, 3)), _tensor((3,)), _tensor((3, 2))]
    if device == "cpu":
        assert autograd.gradcheck(_window_chain, [t.clone().requires_grad_() for t in leaves])
        return
    cpu = [t.clone().requires_grad_() for t in leaves]
    _window_chain(*cpu).backward()
    gpu = [t.cuda().requires_grad_() for t in leaves]
    out = _window_chain(*gpu)
    with device_only(allow_scalar_reads=True):
        out.backward()
    for c, g in zip(cpu, gpu):
        same_as_cpu(c.grad, g.grad, tol=1e-10)


@pytest.mark.parametrize("device", DEVICES)
def test_double_backward_through_conv_and_pooling(device):
    """Gradients of gradients (the rules of conv and pooling use these ops themselves):
    on the CPU as finite differences say (gradgradcheck); on CUDA the CPU's input
    gradient and the weight gradient of its square, computed on the device."""
    autograd = pytest.importorskip("ember_autograd")
    x0, w0 = _tensor((1, 2, 5, 4)), _tensor((3, 2, 3, 2))
    if device == "cpu":
        assert autograd.gradgradcheck(_conv_pool, [x0.clone().requires_grad_(), w0.clone().requires_grad_()])
        return

    def second(x, w):
        """The chain's input gradient, and the weight gradient of its square."""
        gx, = autograd.grad(_conv_pool(x, w), [x], create_graph=True)
        gw, = autograd.grad((gx * gx).sum(), [w])
        return gx.detach(), gw

    expected = second(x0.clone().requires_grad_(), w0.clone().requires_grad_())
    x, w = x0.cuda().requires_grad_(), w0.cuda().requires_grad_()
    with device_only(allow_scalar_reads=True):
        got = second(x, w)
    same_as_cpu(expected, got, tol=1e-10)
