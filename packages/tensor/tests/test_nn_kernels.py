"""The nn kernels of ember_tensor (convolution, pooling, normalisation, softmax, nll,
index kernels) against direct NumPy loop references, on contiguous, non-contiguous and
empty-batch inputs."""
import itertools

import numpy as np
import pytest

import ember_tensor as et
from ember_tensor._ops import nn as N

rng = np.random.default_rng(0)


def as_tensor(a, contiguous=True):
    """`a` as a tensor; non-contiguous (a transposed copy transposed back) on request."""
    if contiguous:
        return et.tensor(a)
    t = et.tensor(np.ascontiguousarray(np.swapaxes(a, 0, -1))).transpose(0, -1)
    assert not t.is_contiguous() or a.ndim < 2 or min(a.shape) <= 1
    return t


# -- references: plain loops over output positions ------------------------------------

def conv_reference(x, w, stride, padding, dilation, groups):
    nd = x.ndim - 2
    xp = np.pad(x, [(0, 0), (0, 0)] + [(p, p) for p in padding])
    n, c = x.shape[:2]
    o, cg = w.shape[:2]
    k = w.shape[2:]
    out = [(s + 2 * p - d * (kk - 1) - 1) // st + 1
           for s, p, d, kk, st in zip(x.shape[2:], padding, dilation, k, stride)]
    y = np.zeros([n, o] + out)
    for oc in range(o):
        g = oc // (o // groups)
        for pos in itertools.product(*(range(v) for v in out)):
            box = tuple(slice(q * st, q * st + d * (kk - 1) + 1, d)
                        for q, st, d, kk in zip(pos, stride, dilation, k))
            patch = xp[(slice(None), slice(g * cg, (g + 1) * cg)) + box]
            y[(slice(None), oc) + pos] = (patch * w[oc]).reshape(n, patch[0].size if n else 0).sum(1)
    return y


def pool_reference(x, kernel, stride, padding, reduce, pad_value):
    nd = len(kernel)
    xp = np.pad(x, [(0, 0), (0, 0)] + [(p, p) for p in padding], constant_values=pad_value)
    out = [(s + 2 * p - kk) // st + 1 for s, p, kk, st in zip(x.shape[2:], padding, kernel, stride)]
    y = np.zeros(list(x.shape[:2]) + out)
    for pos in itertools.product(*(range(v) for v in out)):
        box = tuple(slice(q * st, q * st + kk) for q, st, kk in zip(pos, stride, kernel))
        window = xp[(slice(None), slice(None)) + box]
        y[(slice(None), slice(None)) + pos] = reduce(window.reshape(x.shape[:2] + (window[0, 0].size if window.size else 1,)), axis=2) if window.size else 0
    return y


CONV_CASES = [
    # x shape, w shape, stride, padding, dilation, groups
    ((2, 3, 6, 5), (4, 3, 3, 3), (1, 1), (1, 1), (1, 1), 1),
    ((2, 4, 7, 6), (6, 2, 3, 2), (2, 1), (1, 0), (1, 2), 2),
    ((2, 3, 9), (4, 3, 3), (2,), (1,), (1,), 1),
    ((1, 2, 4, 5, 4), (2, 2, 2, 3, 2), (1, 1, 1), (1, 0, 1), (1, 1, 1), 1),
    ((0, 3, 5, 5), (2, 3, 3, 3), (1, 1), (0, 0), (1, 1), 1),
]


@pytest.mark.parametrize("contiguous", [True, False])
@pytest.mark.parametrize("xs, ws, stride, padding, dilation, groups", CONV_CASES)
def test_convolution_forward_and_adjoints(xs, ws, stride, padding, dilation, groups, contiguous):
    x, w = rng.standard_normal(xs), rng.standard_normal(ws)
    y = N.convolution(as_tensor(x, contiguous), et.tensor(w), None, stride, padding, dilation, False, 0, groups)
    np.testing.assert_allclose(y.numpy(), conv_reference(x, w, stride, padding, dilation, groups), atol=1e-12)
    # The backward kernels are the adjoints of the forward: <g, conv(x, w)> = <bwd_in(g), x> = <bwd_w(g), w>.
    g = rng.standard_normal(y.shape)
    gx = N.convolution_backward_input(as_tensor(g, contiguous), et.tensor(w), xs, stride, padding, dilation, groups)
    gw = N.convolution_backward_weight(et.tensor(g), as_tensor(x, contiguous), ws, stride, padding, dilation, groups)
    inner = (g * y.numpy()).sum()
    assert np.isclose((gx.numpy() * x).sum(), inner) and np.isclose((gw.numpy() * w).sum(), inner)


def test_convolution_bias_transposed_and_errors():
    x, w, b = rng.standard_normal((1, 2, 4, 4)), rng.standard_normal((3, 2, 3, 3)), rng.standard_normal(3)
    y = N.convolution(et.tensor(x), et.tensor(w), et.tensor(b), 1, 1, 1, False, 0, 1)
    np.testing.assert_allclose(y.numpy(), conv_reference(x, w, (1, 1), (1, 1), (1, 1), 1) + b[:, None, None])
    # A transposed convolution is the adjoint of the forward one (stride 2, output_padding 1).
    z = rng.standard_normal((1, 3, 3, 3))
    yt = N.convolution(et.tensor(z), et.tensor(w), None, 2, 1, 1, True, 1, 1)
    assert tuple(yt.shape) == (1, 2, 6, 6)
    x6 = rng.standard_normal((1, 2, 6, 6))
    fwd = N.convolution(et.tensor(x6), et.tensor(w), None, 2, 1, 1, False, 0, 1).numpy()
    assert np.isclose((fwd * z).sum(), (yt.numpy() * x6).sum())
    with pytest.raises(RuntimeError, match=r"expected input\[1, 2, 4, 4\] to have 4 channels, but got 2"):
        N.convolution(et.tensor(x), et.tensor(rng.standard_normal((3, 4, 3, 3))), None, 1, 0, 1, False, 0, 1)
    with pytest.raises(RuntimeError, match="Kernel size can't be greater than actual input size"):
        N.convolution(et.tensor(x), et.tensor(rng.standard_normal((3, 2, 5, 5))), None, 1, 0, 1, False, 0, 1)


POOL_CASES = [
    ((2, 3, 6, 6), (2, 2), (2, 2), (0, 0)),
    ((2, 3, 7, 5), (3, 2), (2, 1), (1, 1)),
    ((2, 3, 9), (3,), (2,), (1,)),
    ((1, 2, 4, 5, 4), (2, 3, 2), (2, 1, 2), (1, 1, 0)),
    ((0, 3, 4, 4), (2, 2), (2, 2), (0, 0)),
]


@pytest.mark.parametrize("contiguous", [True, False])
@pytest.mark.parametrize("xs, kernel, stride, padding", POOL_CASES)
def test_max_and_avg_pool(xs, kernel, stride, padding, contiguous):
    x = rng.standard_normal(xs)
    values, indices = N.max_pool_with_indices(as_tensor(x, contiguous), kernel, stride, padding)
    np.testing.assert_array_equal(values.numpy(), pool_reference(x, kernel, stride, padding, np.max, -np.inf))
    # The indices point at the chosen values in each (n, c) plane.
    planes = x.reshape(xs[0], xs[1], int(np.prod(xs[2:])))
    np.testing.assert_array_equal(np.take_along_axis(planes, indices.numpy().reshape(xs[0], xs[1], int(np.prod(values.shape[2:]))), 2)
                                  .reshape(values.shape), values.numpy())
    avg = N.avg_pool(as_tensor(x, contiguous), kernel, stride, padding, False, True)
    np.testing.assert_allclose(avg.numpy(), pool_reference(x, kernel, stride, padding, np.mean, 0.0), atol=1e-12)
    # avg_pool_backward is avg_pool's adjoint.
    g = rng.standard_normal(avg.shape)
    gx = N.avg_pool_backward(et.tensor(g), xs, kernel, stride, padding, False, True)
    assert np.isclose((gx.numpy() * x).sum(), (g * avg.numpy()).sum())


def test_pool_edge_rules():
    x = et.arange(1.0, 6.0).reshape(1, 1, 5)
    # ceil_mode adds a last partial window; count_include_pad=False divides by real elements.
    assert N.max_pool_with_indices(x, (2,), (2,), 0, 1, True)[0].tolist() == [[[2.0, 4.0, 5.0]]]
    assert N.avg_pool(x, (2,), (2,), 0, True, True).tolist() == [[[1.5, 3.5, 5.0]]]
    assert N.avg_pool(x, (3,), (2,), 1, False, False).tolist() == [[[1.5, 3.0, 4.5]]]
    assert N.avg_pool(x, (3,), (2,), 1, False, True).tolist() == [[[1.0, 3.0, 3.0]]]
    assert N.avg_pool(x.reshape(1, 1, 1, 5), (1, 2), (1, 2), 0, False, True, 1).tolist() == [[[[3.0, 7.0]]]]
    with pytest.raises(RuntimeError, match="pad should be at most half of effective kernel size"):
        N.max_pool_with_indices(x, (2,), (2,), 2)
    values, indices = N.adaptive_max_pool(et.tensor([[[1.0, 5.0, 2.0, 8.0, 3.0]]]), (2,))
    assert values.tolist() == [[[5.0, 8.0]]] and indices.tolist() == [[[1, 3]]]
    grad = N.max_pool_backward(et.ones(1, 1, 2), indices, (1, 1, 5))
    assert grad.tolist() == [[[0.0, 1.0, 0.0, 1.0, 0.0]]]
    assert N.max_unpool(values, indices, (5,)).tolist() == [[[0.0, 5.0, 0.0, 8.0, 0.0]]]


@pytest.mark.parametrize("contiguous", [True, False])
def test_batch_norm_training_and_eval(contiguous):
    x = rng.standard_normal((4, 3, 5))
    rm, rv = et.zeros(3, dtype=et.float64), et.ones(3, dtype=et.float64)
    y, mean, invstd = N.native_batch_norm(as_tensor(x, contiguous), None, None, rm, rv, True, 0.1, 1e-5)
    m, v = x.mean((0, 2)), x.var((0, 2))
    np.testing.assert_allclose(y.numpy(), (x - m[:, None]) / np.sqrt(v[:, None] + 1e-5), atol=1e-12)
    np.testing.assert_allclose(rm.numpy(), 0.1 * m)
    np.testing.assert_allclose(rv.numpy(), 0.9 + 0.1 * x.var((0, 2), ddof=1))
    y_eval = N.native_batch_norm(et.tensor(x), et.ones(3, dtype=et.float64), None, rm, rv, False, 0.1, 1e-5)[0]
    np.testing.assert_allclose(y_eval.numpy(), (x - rm.numpy()[:, None]) / np.sqrt(rv.numpy()[:, None] + 1e-5))
    with pytest.raises(ValueError, match="Expected more than 1 value per channel when training"):
        N.native_batch_norm(et.ones(1, 3), None, None, None, None, True, 0.1, 1e-5)


def test_layer_and_group_norm():
    x = rng.standard_normal((2, 6, 4))
    y = N.native_layer_norm(as_tensor(x, False), (6, 4), None, None, 1e-5)[0].numpy()
    flat = x.reshape(2, -1)
    ref = (flat - flat.mean(1, keepdims=True)) / np.sqrt(flat.var(1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(y, ref.reshape(x.shape), atol=1e-12)
    g = N.native_group_norm(et.tensor(x), None, None, 3, 1e-5)[0].numpy()
    groups = x.reshape(2, 3, -1)
    ref = (groups - groups.mean(2, keepdims=True)) / np.sqrt(groups.var(2, keepdims=True) + 1e-5)
    np.testing.assert_allclose(g, ref.reshape(x.shape), atol=1e-12)
    with pytest.raises(RuntimeError, match=r"Given normalized_shape=\[5\], expected input with shape \[\*, 5\]"):
        N.native_layer_norm(et.tensor(x), (5,), None, None, 1e-5)


@pytest.mark.parametrize("shape, dim", [((3, 4), 1), ((2, 3, 4), 0), ((5,), -1), ((), 0), ((0, 3), 1)])
def test_softmax_and_log_softmax(shape, dim):
    x = rng.standard_normal(shape) * 10
    e = np.exp(x - (x.max(axis=dim, keepdims=True) if x.size and x.ndim else 0))
    ref = e / e.sum(axis=dim, keepdims=True) if x.ndim else np.ones(())
    np.testing.assert_allclose(N.softmax(et.tensor(x), dim).numpy(), ref, atol=1e-12)
    np.testing.assert_allclose(N.log_softmax(et.tensor(x), dim).numpy(), np.log(ref), atol=1e-12)
    # Large inputs do not overflow.
    assert N.softmax(et.tensor([1000.0, 1000.0]), 0).tolist() == [0.5, 0.5]


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_nll_loss_with_weights_and_ignore_index(reduction):
    logp = rng.standard_normal((4, 3, 2))
    target = np.array([[0, 1], [2, 2], [1, -100], [0, 2]])
    weight = np.array([0.5, 1.0, 2.0])
    out = N.nll_loss(et.tensor(logp), et.tensor(target), et.tensor(weight), reduction, -100).numpy()
    valid = target != -100
    safe = np.where(valid, target, 0)
    picked = np.take_along_axis(logp, safe[:, None, :], 1)[:, 0]
    w = weight[safe] * valid
    ref = {"none": -picked * w, "sum": (-picked * w).sum(), "mean": (-picked * w).sum() / w.sum()}[reduction]
    np.testing.assert_allclose(out, ref)
    g = rng.standard_normal(np.shape(ref))
    grad = N.nll_loss_backward(et.tensor(g), et.tensor(logp), et.tensor(target), et.tensor(weight),
                               reduction, -100).numpy()
    # Adjoint check: the loss is linear in logp.
    assert np.isclose((grad * logp).sum(), (g * ref).sum())


def test_nll_loss_errors():
    with pytest.raises(IndexError, match="Target 5 is out of bounds."):
        N.nll_loss(et.zeros(2, 3), et.tensor([0, 5]))
    with pytest.raises(ValueError, match=r"Expected input batch_size \(2\) to match target batch_size \(3\)."):
        N.nll_loss(et.zeros(2, 3), et.tensor([0, 1, 2]))
    with pytest.raises(RuntimeError, match="expected target dtype to be Long or Byte, but got Float"):
        N.nll_loss(et.zeros(2, 3), et.tensor([0.0, 1.0]))


def test_index_kernels():
    w = rng.standard_normal((5, 3))
    idx = np.array([[1, 4], [4, 0]])
    np.testing.assert_array_equal(N.embedding(et.tensor(w), et.tensor(idx)).numpy(), w[idx])
    grad = N.embedding_backward(et.ones(2, 2, 3, dtype=et.float64), et.tensor(idx), 5, 0).numpy()
    np.testing.assert_array_equal(grad[:, 0], [0, 1, 0, 0, 2])
    with pytest.raises(IndexError, match="index out of range in self"):
        N.embedding(et.tensor(w), et.tensor([5]))
    assert N.one_hot(et.tensor([0, 2]), 3).tolist() == [[1, 0, 0], [0, 0, 1]]
    assert N.one_hot(et.tensor(1)).tolist() == [0, 1]
    padded = N.constant_pad_nd(et.ones(2, 2), (1, -1, 0, 1), 3.0)
    assert padded.tolist() == [[3.0, 1.0], [3.0, 1.0], [3.0, 3.0]]
    x = rng.standard_normal((2, 3, 5, 4))
    cols = N.im2col(as_tensor(x, False), (2, 3), 1, 1, (2, 1))
    assert tuple(cols.shape) == (2, 18, 3 * 4)
    # fold is unfold's adjoint.
    c = rng.standard_normal(cols.shape)
    folded = N.col2im(et.tensor(c), (5, 4), (2, 3), 1, 1, (2, 1)).numpy()
    assert np.isclose((folded * x).sum(), (c * cols.numpy()).sum())


def test_half_precision_computes_in_float32():
    x = et.randn(1, 2, 4, 4).to(et.float16)
    w = et.randn(3, 2, 3, 3).to(et.float16)
    y = N.convolution(x, w, None, 1, 1, 1, False, 0, 1)
    assert y.dtype == et.float16
    ref = N.convolution(x.float(), w.float(), None, 1, 1, 1, False, 0, 1)
    np.testing.assert_allclose(y.float().numpy(), ref.numpy(), atol=2e-2)


@pytest.mark.parametrize("dtype", [et.float32, et.float64])
def test_max_pool_propagates_nan_and_pads_with_minus_infinity(dtype):
    x = et.tensor([[[[1.0, float("nan"), -5.0], [-3.0, -4.0, -6.0]]]], dtype=dtype)
    values, indices = N.max_pool_with_indices(x, (2, 2), (1, 1), (1, 1))
    assert np.isnan(values.numpy()[0, 0, 0, 1]) and indices.tolist()[0][0][0][1] == 1
    # Padding never wins: the corner window sees only x[0, 0] = 1.
    assert values.numpy()[0, 0, 0, 0] == 1.0 and indices.tolist()[0][0][0][0] == 0
    assert values.numpy()[0, 0, 2, 3] == -6.0


def test_big_inputs_take_the_parallel_kernels():
    # Above the parallel threshold: same results as the strided NumPy references.
    x, w = rng.standard_normal((4, 8, 20, 20)), rng.standard_normal((6, 8, 3, 3))
    y = N.convolution(et.tensor(x), et.tensor(w), None, 1, 1, 1, False, 0, 1).numpy()
    np.testing.assert_allclose(y, conv_reference(x, w, (1, 1), (1, 1), (1, 1), 1), atol=1e-10)
    values = N.max_pool_with_indices(et.tensor(x), (2, 2), (2, 2), 0)[0].numpy()
    np.testing.assert_array_equal(values, pool_reference(x, (2, 2), (2, 2), (0, 0), np.max, -np.inf))


def test_softmax_is_a_tensor_method_and_a_top_level_function():
    x = et.tensor([[1.0, 2.0], [3.0, 5.0]])
    np.testing.assert_allclose(x.softmax(1).numpy(), et.softmax(x, 1).numpy())
    np.testing.assert_allclose(x.log_softmax(0).numpy(), et.log_softmax(x, 0).numpy())
    assert et.softmax(x, -1, dtype=et.float64).dtype == et.float64


@pytest.mark.skipif(not et.cuda.is_available(), reason="no CUDA and no simulator")
def test_cuda_tensors_run_the_device_kernels_and_match_the_references():
    # CUDA inputs compute on the device (no host copy inside device_only) and stay there.
    from cuda_guard import device_only

    x, w = rng.standard_normal((2, 3, 5, 5)), rng.standard_normal((4, 3, 3, 3))
    xc, wc, rm = et.tensor(x).cuda(), et.tensor(w).cuda(), et.zeros(4, dtype=et.float64).cuda()
    with device_only():
        y = N.convolution(xc, wc, None, 1, 1, 1, False, 0, 1)
        values, indices = N.max_pool_with_indices(y, (2, 2), (2, 2), 0)
        N.native_batch_norm(y, None, None, rm, None, True, 0.5, 1e-5)
    assert y.device.type == "cuda"
    np.testing.assert_allclose(y.cpu().numpy(), conv_reference(x, w, (1, 1), (1, 1), (1, 1), 1), atol=1e-10)
    assert values.device.type == "cuda" and indices.device.type == "cuda"
    np.testing.assert_allclose(rm.cpu().numpy(), 0.5 * y.cpu().numpy().mean((0, 2, 3)), atol=1e-12)


BAD_GEOMETRY = [
    (lambda: N.convolution(et.ones(1, 2, 5, 5), et.ones(3, 2, 3, 3), None, 0, 0, 1, False, 0, 1),
     "non-positive stride is not supported"),
    (lambda: N.convolution(et.ones(1, 2, 5, 5), et.ones(3, 2, 3, 3), None, 1, -1, 1, False, 0, 1),
     "negative padding is not supported"),
    (lambda: N.convolution(et.ones(1, 2, 5, 5), et.ones(3, 2, 3, 3), None, 1, 0, 0, False, 0, 1),
     "dilation should be greater than zero"),
    (lambda: N.max_pool_with_indices(et.ones(1, 2, 5, 5), (0, 0)), "kernel_size should be greater than zero"),
    (lambda: N.max_pool_with_indices(et.ones(1, 2, 5, 5), (2, 2), (0, 0)), "stride should not be zero"),
    (lambda: N.avg_pool(et.ones(1, 2, 5, 5), (2, 2), (1, 1), (-1, 0)), "pad must be non-negative"),
    (lambda: N.im2col(et.ones(1, 2, 5, 5), 2, 1, 0, 0), "stride should be greater than zero"),
]


@pytest.mark.parametrize("call, message", BAD_GEOMETRY)
def test_bad_geometry_is_refused_before_any_kernel_runs(call, message):
    with pytest.raises(RuntimeError, match=message):
        call()
