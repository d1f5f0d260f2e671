"""Gradients of the nn kernels: gradcheck (and gradgradcheck where the backward is itself
differentiable) in float64, on small shapes."""
import pytest

import ember_autograd
import ember_tensor as et
from ember_autograd import gradcheck, gradgradcheck
from ember_tensor import nn_ops as K


def rand(*shape, grad=True):
    return et.randn(*shape, dtype=et.float64).requires_grad_(grad)


et.manual_seed(0)
CASES = {
    "linear": (lambda x, w, b: K.linear(x, w, b), lambda: (rand(2, 3, 4), rand(5, 4), rand(5))),
    "conv2d": (lambda x, w, b: K.convolution(x, w, b, (2, 1), 1, (1, 2), False, 0, 2),
               lambda: (rand(2, 4, 5, 6), rand(2, 2, 3, 2), rand(2))),
    "conv1d_transposed": (lambda x, w, b: K.convolution(x, w, b, 2, 1, 1, True, 1, 1),
                          lambda: (rand(1, 3, 4), rand(3, 2, 3), rand(2))),
    "conv3d": (lambda x, w: K.convolution(x, w, None, 1, (1, 0, 0), 1, False, 0, 1),
               lambda: (rand(1, 2, 3, 3, 3), rand(2, 2, 2, 2, 2))),
    "max_pool2d": (lambda x: K.max_pool_with_indices(x, (2, 2), (1, 2), 1, 1, True)[0],
                   lambda: (rand(2, 2, 5, 5),)),
    "adaptive_max_pool": (lambda x: K.adaptive_max_pool(x, (2, 3))[0], lambda: (rand(1, 2, 5, 7),)),
    "avg_pool2d": (lambda x: K.avg_pool(x, (3, 2), (2, 1), (1, 1), True, False), lambda: (rand(2, 2, 5, 4),)),
    "max_unpool": (lambda x: K.max_unpool(x, et.tensor([[[1, 3]]]), (5,)), lambda: (rand(1, 1, 2),)),
    "batch_norm": (lambda x, w, b: K.native_batch_norm(x, w, b, None, None, True, 0.1, 1e-5)[0],
                   lambda: (rand(4, 3, 2), rand(3), rand(3))),
    "layer_norm": (lambda x, w, b: K.native_layer_norm(x, (3, 2), w, b, 1e-5)[0],
                   lambda: (rand(4, 3, 2), rand(3, 2), rand(3, 2))),
    "group_norm": (lambda x, w, b: K.native_group_norm(x, w, b, 2, 1e-5)[0],
                   lambda: (rand(2, 4, 3), rand(4), rand(4))),
    "softmax": (lambda x: K.softmax(x, 1), lambda: (rand(3, 4),)),
    "log_softmax": (lambda x: K.log_softmax(x, 0), lambda: (rand(3, 4),)),
    "nll_loss": (lambda x: K.nll_loss(x, et.tensor([[0, 2], [1, -100]]), et.tensor([1.0, 2.0, 0.5], dtype=et.float64)),
                 lambda: (rand(2, 3, 2),)),
    "embedding": (lambda w: K.embedding(w, et.tensor([[0, 2], [2, 3]])), lambda: (rand(4, 3),)),
    "constant_pad": (lambda x: K.constant_pad_nd(x, (1, 2, -1, 1), 0.5), lambda: (rand(3, 4),)),
    "im2col": (lambda x: K.im2col(x, (2, 2), 1, 1, (2, 1)), lambda: (rand(1, 2, 3, 4),)),
    "col2im": (lambda x: K.col2im(x, (3, 3), 2, 1, 0, 1), lambda: (rand(1, 4, 4),)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradcheck(name):
    fn, make = CASES[name]
    assert gradcheck(fn, make(), eps=1e-6, atol=1e-5)


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradgradcheck(name):
    fn, make = CASES[name]
    assert gradgradcheck(fn, make(), eps=1e-6, atol=1e-5)


def test_norm_gradients_with_and_without_create_graph_agree():
    import ember_autograd
    x, w = rand(4, 3, 2), rand(3)
    y = K.native_batch_norm(x, w, None, None, None, True, 0.1, 1e-5)[0]
    g = et.randn(4, 3, 2, dtype=et.float64)
    fused = ember_autograd.grad(y, (x, w), g, retain_graph=True)
    composite = ember_autograd.grad(y, (x, w), g, create_graph=True)
    for a, b in zip(fused, composite):
        assert et.allclose(a, b.detach(), atol=1e-10)
    assert composite[0].requires_grad


def test_eval_batch_norm_double_backward():
    rm, rv = et.zeros(3, dtype=et.float64), et.ones(3, dtype=et.float64) * 2
    assert gradgradcheck(lambda x, w: K.native_batch_norm(x, w, None, rm, rv, False, 0.1, 1e-5)[0],
                         (rand(4, 3), rand(3)), eps=1e-6, atol=1e-5)


def test_conv_gradient_matches_finite_difference_in_float32_too():
    x, w = et.randn(1, 2, 5, 5, requires_grad=True), et.randn(3, 2, 3, 3, requires_grad=True)
    K.convolution(x, w, None, 1, 1, 1, False, 0, 1).sum().backward()
    assert x.grad.shape == x.shape and w.grad.shape == w.shape and x.grad.dtype == et.float32


def test_embedding_padding_row_gets_no_gradient():
    w = rand(4, 2)
    K.embedding(w, et.tensor([0, 2, 0]), 0).sum().backward()
    assert w.grad.tolist() == [[0.0, 0.0], [0.0, 0.0], [1.0, 1.0], [0.0, 0.0]]


def test_relu_backward_is_pytorchs_threshold_backward():
    # No gradient where the result is <= 0 (-0 included), a NaN passes its gradient on;
    # double backward applies the same mask (ThresholdBackwardBackward0), none for x.
    values = [-1.0, 0.0, -0.0, 2.0, float("nan"), 3.0, -float("inf"), float("inf")]
    x = et.tensor(values, dtype=et.float64, requires_grad=True)
    g, = ember_autograd.grad((et.relu(x) * et.arange(8.)).sum(), x, create_graph=True)
    assert g.tolist() == [0.0, 0.0, 0.0, 3.0, 4.0, 5.0, 0.0, 7.0]
    assert type(g.grad_fn).__name__ == "ThresholdBackwardBackward0"
    a = et.randn(6, 5, dtype=et.float64, requires_grad=True)
    assert gradgradcheck(et.relu, (a,))
    for dtype in (et.float32, et.float16, et.bfloat16):
        h = et.tensor([[-1.0, 2.0], [0.5, -0.25]], dtype=dtype, requires_grad=True)
        et.relu(h).sum().backward()
        assert h.grad.dtype is dtype and h.grad.tolist() == [[0.0, 1.0], [1.0, 0.0]]


def test_cross_entropy_rows_gradients_and_node():
    # (N, C) logits at class indices run as one op (nn_ops.cross_entropy_rows) whose node
    # carries nll_loss's name, as the loss's grad_fn in PyTorch; the composite cases
    # (label smoothing, probabilities, N-d, half) keep theirs.
    x = et.randn(6, 4, dtype=et.float64, requires_grad=True)
    t = et.tensor([0, 3, 1, -100, 2, 2])
    w = et.rand(4, dtype=et.float64)
    assert type(K.cross_entropy_loss(x, t).grad_fn).__name__ == "NllLossBackward0"
    for reduction in ("mean", "sum", "none"):
        def loss(a, reduction=reduction):
            out = K.cross_entropy_loss(a, t, w, reduction, -100)
            return out if reduction != "none" else out * et.arange(6.0, dtype=et.float64)
        assert gradcheck(loss, (x,)) and gradgradcheck(loss, (x,))
    y = et.randn(5, 3, requires_grad=True)
    labels = et.tensor([0, 2, 1, 1, 0])
    for loss in (K.cross_entropy_loss(y, labels, label_smoothing=0.1),
                 K.cross_entropy_loss(y, y.softmax(1).detach()),
                 K.cross_entropy_loss(y.reshape(5, 3, 1), labels.reshape(5, 1)),
                 K.cross_entropy_loss(y.half(), labels)):
        loss.backward()
        assert y.grad is not None and bool(et.isfinite(y.grad).all())
        y.grad = None
