"""PyTorch's top-level spellings of torch.nn.functional's ops (``torch.conv2d``,
``torch.embedding(weight, indices)``, ``torch.batch_norm(..., cudnn_enabled)``, losses with
an integer ``reduction``): each called with ATen's signature, compared with PyTorch's result."""
import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(0)


def _pair(*shape, positive=False):
    a = RNG.standard_normal(shape).astype(np.float32)
    if positive:
        a = np.abs(a) + 0.1
    return ember.tensor(a), torch.tensor(a)


def _same(ours, theirs, atol=1e-5):
    if isinstance(theirs, tuple):
        assert isinstance(ours, tuple) and len(ours) == len(theirs)
        for o, t in zip(ours, theirs):
            _same(o, t, atol)
        return
    assert tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-5, atol=atol)


def _both(name, *pairs_and_args, **kwargs):
    """Call ember.<name> and torch.<name> on the same arguments: (ember, torch) pairs become
    the side's tensor, anything else is passed to both."""
    ours = [a[0] if isinstance(a, tuple) and len(a) == 2 and isinstance(a[0], ember.Tensor) else a
            for a in pairs_and_args]
    theirs = [a[1] if isinstance(a, tuple) and len(a) == 2 and isinstance(a[0], ember.Tensor) else a
              for a in pairs_and_args]
    _same(getattr(ember, name)(*ours, **kwargs), getattr(torch, name)(*theirs, **kwargs))


def test_convolutions_take_functional_arguments_positionally():
    x, w, b = _pair(2, 3, 9, 9), _pair(4, 3, 3, 3), _pair(4)
    _both("conv2d", x, w, b, 2, 1, 1, 1)
    _both("conv2d", x, w)
    _both("conv1d", _pair(2, 3, 9), _pair(4, 3, 3), None, 1, "same")
    _both("conv3d", _pair(1, 2, 4, 4, 4), _pair(3, 2, 2, 2, 2))
    _both("conv_transpose2d", x, _pair(3, 4, 3, 3), None, 2, 1, 1)
    _both("conv_transpose1d", _pair(2, 3, 5), _pair(3, 2, 3))
    _both("conv_transpose3d", _pair(1, 2, 3, 3, 3), _pair(2, 2, 2, 2, 2))
    _both("conv_tbc", _pair(5, 2, 3), _pair(3, 3, 4), _pair(4), 1)


def test_pooling_empty_stride_means_kernel_size():
    x = _pair(2, 3, 8, 8)
    _both("max_pool2d", x, 2)
    _both("max_pool2d", x, [3, 3], [], 1)
    _both("max_pool2d", x, 3, 1, 1, 1, True)
    _both("max_pool1d", _pair(2, 3, 9), 3)
    _both("max_pool1d_with_indices", _pair(2, 3, 9), 2)
    _both("max_pool3d", _pair(1, 2, 4, 4, 4), 2)
    _both("avg_pool1d", _pair(2, 3, 9), 3, [], 1, False, False)
    _both("adaptive_avg_pool1d", _pair(2, 3, 9), 4)
    _both("adaptive_max_pool1d", _pair(2, 3, 9), 4)  # ATen's form returns values and indices


def test_normalizations_in_aten_argument_order():
    x = _pair(4, 3, 5, 5)
    weight, bias = _pair(3), _pair(3)
    mean_e, mean_t = ember.zeros(3), torch.zeros(3)
    var_e, var_t = ember.ones(3), torch.ones(3)
    ours = ember.batch_norm(x[0], weight[0], bias[0], mean_e, var_e, True, 0.1, 1e-5, True)
    theirs = torch.batch_norm(x[1], weight[1], bias[1], mean_t, var_t, True, 0.1, 1e-5, True)
    _same(ours, theirs, atol=1e-4)
    _same(mean_e, mean_t)  # the running statistics were updated in place, as PyTorch's
    _same(var_e, var_t)
    _both("batch_norm", x, None, None, (ember.zeros(3), torch.zeros(3)), (ember.ones(3), torch.ones(3)),
          False, 0.1, 1e-5, False)
    _both("instance_norm", x, weight, bias, None, None, True, 0.1, 1e-5, False)
    _both("layer_norm", x, [5, 5])
    _both("layer_norm", _pair(2, 6), (6,), _pair(6), _pair(6), 1e-3, False)
    _both("group_norm", _pair(2, 6, 4), 3, _pair(6), _pair(6))
    _both("rms_norm", _pair(2, 6), [6], _pair(6))


def test_embedding_takes_the_weight_first():
    weight = _pair(10, 4)
    idx = np.array([[1, 2, 4], [4, 3, 9]])
    _both("embedding", weight, (ember.tensor(idx), torch.tensor(idx)))
    _both("embedding", weight, (ember.tensor(idx), torch.tensor(idx)), 2)
    w_e = ember.tensor(weight[1].numpy(), requires_grad=True)
    w_t = weight[1].clone().requires_grad_()
    ember.embedding(w_e, ember.tensor(idx), 4).sum().backward()
    torch.embedding(w_t, torch.tensor(idx), 4).sum().backward()
    _same(w_e.grad, w_t.grad)  # the padding row gets no gradient


def test_losses_take_aten_reduction_codes():
    a, b = _pair(4, 5), _pair(4, 5)
    target01 = (ember.tensor((RNG.random((4, 5)) > 0.5).astype(np.float32)),)
    target01 = (target01[0], torch.tensor(target01[0].numpy()))
    for code in (0, 1, 2):
        _both("binary_cross_entropy_with_logits", a, target01, None, None, code)
        _both("kl_div", a, (ember.softmax(b[0], 1), torch.softmax(b[1], 1)), code)
        _both("margin_ranking_loss", _pair(6), _pair(6), (ember.tensor([1., -1] * 3), torch.tensor([1., -1] * 3)),
              0.2, code)
        _both("hinge_embedding_loss", _pair(6), (ember.tensor([1., -1] * 3), torch.tensor([1., -1] * 3)), 1.0, code)
        _both("cosine_embedding_loss", a, b, (ember.tensor([1., -1, 1, -1]), torch.tensor([1., -1, 1, -1])),
              0.0, code)
        _both("poisson_nll_loss", a, _pair(4, 5, positive=True), True, False, 1e-8, code)
        _both("triplet_margin_loss", a, b, _pair(4, 5), 1.0, 2.0, 1e-6, False, code)
    _both("kl_div", a, b, 1, log_target=True)
    with pytest.raises(ValueError):
        ember.kl_div(a[0], b[0], 7)


def test_ctc_loss_with_integer_reduction():
    log_probs = ember.randn(6, 2, 5).log_softmax(2)
    targets = np.array([[1, 2, 2], [3, 1, 4]])
    ours = ember.ctc_loss(log_probs, ember.tensor(targets), [6, 5], [3, 2], 0, 2)
    theirs = torch.ctc_loss(torch.tensor(log_probs.numpy()), torch.tensor(targets), [6, 5], [3, 2], 0, 2)
    _same(ours, theirs, atol=1e-4)


def test_dropout_requires_train_and_scales_kept_values():
    x = ember.ones(2000)
    assert ember.dropout(x, 0.5, False) is x or bool((ember.dropout(x, 0.5, False) == x).all())
    y = ember.dropout(x, 0.25, True)
    kept = y[y != 0]
    assert np.allclose(kept.numpy(), 1 / 0.75)
    assert 0.6 < kept.numel() / 2000 < 0.9
    with pytest.raises(TypeError):
        ember.dropout(x, 0.5)  # ATen's form has no default for train, as PyTorch's
    z = ember.ones(2000)
    assert ember.dropout_(z, 1.0, True) is z and bool((z == 0).all())
    assert ember.alpha_dropout(x, 0.5, False) is x or bool((ember.alpha_dropout(x, 0.5, False) == x).all())


def test_feature_dropout_zeroes_whole_channels():
    x = ember.ones(8, 16, 3, 3)
    y = ember.feature_dropout(x, 0.5, True)
    per_channel = y.reshape(8, 16, 9)
    first = per_channel[:, :, :1]
    assert bool((per_channel == first).all())  # every element of a channel kept or dropped together
    assert set(np.unique(first.numpy()).tolist()) <= {0.0, 2.0}
    with pytest.raises(RuntimeError):
        ember.feature_dropout(ember.ones(4), 0.5, True)
    w = ember.ones(4, 4, 2)
    assert ember.feature_dropout_(w, 1.0, True) is w and bool((w == 0).all())
    v = ember.feature_alpha_dropout(ember.ones(4, 6, 2), 0.5, True)
    assert bool((v.reshape(4, 6, 2)[:, :, :1] == v.reshape(4, 6, 2)).all())


def test_activations_distances_and_shuffles():
    x = _pair(3, 4, 4, 4)
    _both("celu", x, 0.7)
    _both("selu", x)
    _both("threshold", x, 0.1, 20.0)
    _both("hardshrink", x, 0.3)
    _both("rrelu", x)  # training=False: the fixed mean slope
    _both("prelu", x, _pair(4))
    _both("pixel_shuffle", _pair(1, 8, 2, 2), 2)
    _both("pixel_unshuffle", _pair(1, 2, 4, 4), 2)
    _both("channel_shuffle", _pair(1, 6, 2, 2), 3)
    _both("native_channel_shuffle", _pair(1, 6, 2, 2), 2)
    _both("cosine_similarity", _pair(5, 3), _pair(5, 3))
    _both("pairwise_distance", _pair(5, 3), _pair(5, 3), 1.0)
    _both("pdist", _pair(5, 3))
    _both("bilinear", _pair(2, 3), _pair(2, 4), _pair(5, 3, 4), _pair(5))
    for name in ("celu_", "selu_", "threshold_", "rrelu_"):
        e, t = _pair(6)
        args = (0.0, 1.0) if name == "threshold_" else ()
        assert getattr(ember, name)(e, *args) is e
        getattr(torch, name)(t, *args)
        _same(e, t)


def test_tensor_methods_hardshrink_and_prelu():
    e, t = _pair(2, 3, 4)
    _same(e.hardshrink(0.2), t.hardshrink(0.2))
    w = _pair(3)
    _same(e.prelu(w[0]), t.prelu(w[1]))
