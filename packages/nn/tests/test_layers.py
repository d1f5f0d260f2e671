"""Every layer class: parameter names, shapes and default init, extra_repr text, errors,
and (with PyTorch installed, as an optional oracle) repr and forward values with the same
weights copied across."""
import math

import numpy as np
import pytest

import ember_tensor as torch
import ember_nn as nn
from ember_nn import functional as F

RNG = np.random.default_rng(0)


def has_functional(*names):
    return all(hasattr(F, name) for name in names)


def needs_functional(*names):
    """Skip a forward check while ember_nn.functional does not have `names` yet."""
    missing = [n for n in names if not hasattr(F, n)]
    return pytest.mark.skipif(bool(missing), reason=f"ember_nn.functional has no {', '.join(missing)} yet")


# (layer, constructor args, constructor kwargs, input shapes, functional it calls)
LAYERS = [
    ("Identity", (3,), {"unused": 1}, [(2, 3)], None),
    ("Linear", (5, 3), {}, [(4, 5)], "linear"),
    ("Linear", (5, 3), {"bias": False}, [(2, 4, 5)], "linear"),
    ("Bilinear", (4, 3, 2), {}, [(5, 4), (5, 3)], "bilinear"),
    ("Flatten", (), {}, [(2, 3, 4)], None),
    ("Flatten", (0, 1), {}, [(2, 3, 4)], None),
    ("Unflatten", (1, (2, 3)), {}, [(4, 6)], None),
    ("Conv1d", (2, 4, 3), {"stride": 2, "padding": 1}, [(2, 2, 9)], "conv1d"),
    ("Conv2d", (1, 10, 5), {}, [(2, 1, 12, 12)], "conv2d"),
    ("Conv2d", (4, 6, (3, 2)), {"padding": "same", "dilation": 2, "groups": 2, "bias": False}, [(1, 4, 7, 6)],
     "conv2d"),
    ("Conv2d", (2, 3, 3), {"padding": 1, "padding_mode": "reflect"}, [(1, 2, 5, 5)], "conv2d"),
    ("Conv2d", (2, 3, 3), {"padding": 2, "padding_mode": "circular"}, [(1, 2, 5, 5)], "conv2d"),
    ("Conv2d", (2, 3, 3), {"padding": "valid", "padding_mode": "replicate"}, [(1, 2, 5, 5)], "conv2d"),
    ("Conv3d", (2, 2, 2), {"stride": (1, 2, 1)}, [(1, 2, 4, 5, 3)], "conv3d"),
    ("ConvTranspose1d", (2, 3, 3), {"stride": 2, "output_padding": 1}, [(1, 2, 4)], "conv_transpose1d"),
    ("ConvTranspose2d", (4, 2, 3), {"stride": 2, "padding": 1, "groups": 2}, [(1, 4, 3, 3)], "conv_transpose2d"),
    ("ConvTranspose3d", (2, 2, 2), {}, [(1, 2, 2, 3, 2)], "conv_transpose3d"),
    ("MaxPool1d", (3,), {"stride": 2, "ceil_mode": True}, [(2, 3, 8)], "max_pool1d"),
    ("MaxPool2d", (2,), {}, [(2, 3, 6, 6)], "max_pool2d"),
    ("MaxPool2d", (3,), {"stride": 2, "padding": 1, "dilation": 1, "return_indices": True}, [(1, 2, 7, 7)],
     "max_pool2d"),
    ("MaxPool3d", (2,), {}, [(1, 2, 4, 4, 4)], "max_pool3d"),
    ("AvgPool1d", (3,), {}, [(2, 3, 9)], "avg_pool1d"),
    ("AvgPool2d", (3,), {"stride": 2, "padding": 1, "count_include_pad": False}, [(1, 2, 7, 7)], "avg_pool2d"),
    ("AvgPool2d", (2,), {"divisor_override": 3}, [(1, 2, 4, 4)], "avg_pool2d"),
    ("AvgPool3d", (2,), {"ceil_mode": True}, [(1, 2, 5, 5, 5)], "avg_pool3d"),
    ("AdaptiveAvgPool1d", (3,), {}, [(2, 3, 7)], "adaptive_avg_pool1d"),
    ("AdaptiveAvgPool2d", ((2, 3),), {}, [(1, 2, 7, 8)], "adaptive_avg_pool2d"),
    ("AdaptiveAvgPool3d", (2,), {}, [(1, 2, 5, 4, 3)], "adaptive_avg_pool3d"),
    ("AdaptiveMaxPool1d", (3,), {}, [(2, 3, 7)], "adaptive_max_pool1d"),
    ("AdaptiveMaxPool2d", (2,), {"return_indices": True}, [(1, 2, 5, 5)], "adaptive_max_pool2d"),
    ("AdaptiveMaxPool3d", ((2, 1, 2),), {}, [(1, 2, 4, 3, 5)], "adaptive_max_pool3d"),
    ("LPPool1d", (2, 3), {}, [(1, 2, 9)], "lp_pool1d"),
    ("LPPool2d", (3, 2), {"stride": 1}, [(1, 2, 4, 4)], "lp_pool2d"),
    ("LPPool3d", (2, 2), {}, [(1, 2, 4, 4, 2)], "lp_pool3d"),
    ("Unfold", ((2, 3),), {"padding": 1, "stride": 2}, [(2, 3, 5, 6)], "unfold"),
    ("Fold", ((4, 5), 2), {}, [(2, 12, 12)], "fold"),
    ("BatchNorm1d", (3,), {}, [(4, 3)], "batch_norm"),
    ("BatchNorm1d", (3,), {"momentum": None}, [(4, 3, 5)], "batch_norm"),
    ("BatchNorm2d", (2,), {"affine": False}, [(3, 2, 4, 4)], "batch_norm"),
    ("BatchNorm2d", (2,), {"track_running_stats": False}, [(3, 2, 4, 4)], "batch_norm"),
    ("BatchNorm3d", (2,), {"eps": 1e-3, "momentum": 0.3}, [(2, 2, 3, 3, 3)], "batch_norm"),
    ("InstanceNorm1d", (3,), {}, [(2, 3, 6)], "instance_norm"),
    ("InstanceNorm2d", (3,), {"affine": True}, [(2, 3, 4, 4)], "instance_norm"),
    ("InstanceNorm2d", (3,), {"track_running_stats": True}, [(3, 4, 4)], "instance_norm"),
    ("InstanceNorm3d", (2,), {}, [(1, 2, 3, 3, 3)], "instance_norm"),
    ("LayerNorm", (4,), {}, [(2, 3, 4)], "layer_norm"),
    ("LayerNorm", ((3, 4),), {"elementwise_affine": False}, [(2, 3, 4)], "layer_norm"),
    ("LayerNorm", (4,), {"bias": False, "eps": 1e-3}, [(2, 4)], "layer_norm"),
    ("GroupNorm", (2, 4), {}, [(2, 4, 3)], "group_norm"),
    ("GroupNorm", (1, 4), {"affine": False}, [(2, 4, 2, 2)], "group_norm"),
    ("RMSNorm", (4,), {}, [(2, 3, 4)], "rms_norm"),
    ("RMSNorm", ((3, 4),), {"eps": 1e-5}, [(2, 3, 4)], "rms_norm"),
    ("LocalResponseNorm", (2,), {}, [(1, 5, 3, 3)], "local_response_norm"),
    ("ZeroPad1d", (2,), {}, [(1, 2, 3)], "pad"),
    ("ZeroPad2d", ((1, 0, 2, 1),), {}, [(1, 2, 3, 3)], "pad"),
    ("ZeroPad3d", (1,), {}, [(1, 1, 2, 2, 2)], "pad"),
    ("ConstantPad1d", (2, 3.5), {}, [(1, 2, 3)], "pad"),
    ("ConstantPad2d", ((1, 2, 0, 1), -1.0), {}, [(1, 2, 3, 3)], "pad"),
    ("ConstantPad3d", (1, 2.0), {}, [(1, 1, 2, 2, 2)], "pad"),
    ("ReflectionPad1d", (2,), {}, [(1, 2, 4)], "pad"),
    ("ReflectionPad2d", ((1, 1, 2, 0),), {}, [(1, 2, 4, 4)], "pad"),
    ("ReflectionPad3d", (1,), {}, [(1, 1, 3, 3, 3)], "pad"),
    ("ReplicationPad1d", (2,), {}, [(1, 2, 4)], "pad"),
    ("ReplicationPad2d", (1,), {}, [(1, 2, 3, 3)], "pad"),
    ("ReplicationPad3d", (1,), {}, [(1, 1, 2, 2, 2)], "pad"),
    ("CircularPad1d", (1,), {}, [(1, 2, 4)], "pad"),
    ("CircularPad2d", (1,), {}, [(1, 2, 3, 3)], "pad"),
    ("CircularPad3d", (1,), {}, [(1, 1, 2, 2, 2)], "pad"),
    ("Upsample", (), {"scale_factor": 2}, [(1, 2, 3, 3)], "interpolate"),
    ("Upsample", (), {"size": (5, 4), "mode": "bilinear"}, [(1, 2, 3, 3)], "interpolate"),
    ("Upsample", (), {"scale_factor": 1.5, "mode": "bicubic", "align_corners": True}, [(1, 1, 4, 4)],
     "interpolate"),
    ("UpsamplingNearest2d", (), {"scale_factor": 2}, [(1, 2, 2, 3)], "interpolate"),
    ("UpsamplingBilinear2d", (), {"size": (4, 5)}, [(1, 2, 2, 3)], "interpolate"),
    ("PixelShuffle", (2,), {}, [(1, 8, 2, 3)], "pixel_shuffle"),
    ("PixelUnshuffle", (2,), {}, [(1, 2, 4, 6)], "pixel_unshuffle"),
    ("ChannelShuffle", (3,), {}, [(2, 6, 2, 3)], "channel_shuffle"),
    ("Threshold", (0.1, 20.0), {}, [(3, 4)], "threshold"),
    ("ReLU", (), {}, [(3, 4)], "relu"),
    ("RReLU", (), {}, [(3, 4)], "rrelu"),  # eval mode below: the mean slope
    ("Hardtanh", (-2.0, 0.5), {}, [(3, 4)], "hardtanh"),
    ("ReLU6", (), {}, [(3, 4)], "relu6"),
    ("Sigmoid", (), {}, [(3, 4)], "sigmoid"),
    ("Hardsigmoid", (), {}, [(3, 4)], "hardsigmoid"),
    ("Tanh", (), {}, [(3, 4)], "tanh"),
    ("SiLU", (), {}, [(3, 4)], "silu"),
    ("Mish", (), {}, [(3, 4)], "mish"),
    ("Hardswish", (), {}, [(3, 4)], "hardswish"),
    ("ELU", (), {"alpha": 0.5}, [(3, 4)], "elu"),
    ("CELU", (2.0,), {}, [(3, 4)], "celu"),
    ("SELU", (), {}, [(3, 4)], "selu"),
    ("GLU", (), {}, [(3, 4)], "glu"),
    ("GLU", (0,), {}, [(4, 3)], "glu"),
    ("GELU", (), {}, [(3, 4)], "gelu"),
    ("GELU", ("tanh",), {}, [(3, 4)], "gelu"),
    ("Hardshrink", (), {}, [(3, 4)], "hardshrink"),
    ("LeakyReLU", (0.2,), {}, [(3, 4)], "leaky_relu"),
    ("LogSigmoid", (), {}, [(3, 4)], "logsigmoid"),
    ("Softplus", (), {"beta": 2.0, "threshold": 1.0}, [(3, 4)], "softplus"),
    ("Softshrink", (0.3,), {}, [(3, 4)], "softshrink"),
    ("PReLU", (), {}, [(3, 4)], "prelu"),
    ("PReLU", (3,), {"init": 0.1}, [(2, 3, 4)], "prelu"),
    ("Softsign", (), {}, [(3, 4)], "softsign"),
    ("Tanhshrink", (), {}, [(3, 4)], "tanhshrink"),
    ("Softmin", (1,), {}, [(3, 4)], "softmin"),
    ("Softmax", (), {"dim": 0}, [(3, 4)], "softmax"),
    ("Softmax2d", (), {}, [(2, 3, 2, 2)], "softmax"),
    ("LogSoftmax", (-1,), {}, [(3, 4)], "log_softmax"),
    ("Dropout", (0.3,), {}, [(3, 4)], "dropout"),  # eval mode below: the identity
    ("Dropout1d", (), {}, [(2, 3, 4)], "dropout1d"),
    ("Dropout2d", (0.2, True), {}, [(2, 3, 2, 2)], "dropout2d"),
    ("Dropout3d", (), {}, [(1, 2, 2, 2, 2)], "dropout3d"),
    ("AlphaDropout", (), {}, [(3, 4)], "alpha_dropout"),
    ("FeatureAlphaDropout", (0.2,), {}, [(2, 3, 4)], "feature_alpha_dropout"),
]

EVAL_ONLY = {"RReLU", "Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout"}


def case_id(case):
    name, args, kwargs = case[:3]
    return f"{name}{args}{kwargs}".replace(" ", "")


def make_inputs(shapes, non_contiguous=True):
    """float32 inputs; the first is a non-contiguous (transposed) view."""
    arrays = [RNG.standard_normal(shape).astype(np.float32) for shape in shapes]
    tensors = []
    for i, a in enumerate(arrays):
        if non_contiguous and i == 0 and a.ndim >= 2:
            t = torch.tensor(np.ascontiguousarray(np.swapaxes(a, -1, -2))).transpose(-1, -2)
            assert not t.is_contiguous() or 1 in a.shape[-2:]
        else:
            t = torch.tensor(a)
        tensors.append(t)
    return arrays, tensors


@pytest.mark.parametrize("case", LAYERS, ids=case_id)
def test_layer_matches_pytorch(case):
    real = pytest.importorskip("torch")
    name, args, kwargs, shapes, function = case
    if function is not None and not has_functional(function):
        pytest.skip(f"ember_nn.functional has no {function} yet")
    layer = getattr(nn, name)(*args, **kwargs)
    reference = getattr(real.nn, name)(*args, **kwargs)
    assert repr(layer) == repr(reference)
    ours = {k: tuple(v.shape) for k, v in layer.state_dict().items()}
    theirs = {k: tuple(v.shape) for k, v in reference.state_dict().items()}
    assert ours == theirs
    reference.load_state_dict({k: real.from_numpy(np.array(v)) for k, v in layer.state_dict().items()})
    if name in EVAL_ONLY:
        layer.eval()
        reference.eval()
    arrays, inputs = make_inputs(shapes)
    out = layer(*inputs)
    expected = reference(*(real.from_numpy(a) for a in arrays))
    outs = out if isinstance(out, tuple) else (out,)
    expecteds = expected if isinstance(expected, tuple) else (expected,)
    for o, e in zip(outs, expecteds, strict=True):
        assert tuple(o.shape) == tuple(e.shape)
        np.testing.assert_allclose(np.array(o.detach()), e.detach().numpy(), rtol=1e-4, atol=1e-5)
    for key, value in reference.state_dict().items():  # running statistics updated alike
        np.testing.assert_allclose(np.array(layer.state_dict()[key]), value.numpy(), rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("case", LAYERS, ids=case_id)
def test_layer_gradients_match_pytorch(case):
    """Gradients with respect to the input and every parameter, the same weights copied."""
    real = pytest.importorskip("torch")
    name, args, kwargs, shapes, function = case
    if function is not None and not has_functional(function):
        pytest.skip(f"ember_nn.functional has no {function} yet")
    layer = getattr(nn, name)(*args, **kwargs)
    reference = getattr(real.nn, name)(*args, **kwargs)
    reference.load_state_dict({k: real.from_numpy(np.array(v)) for k, v in layer.state_dict().items()})
    if name in EVAL_ONLY:
        layer.eval()
        reference.eval()
    arrays = [RNG.standard_normal(shape).astype(np.float32) for shape in shapes]
    inputs = [torch.tensor(a, requires_grad=True) for a in arrays]
    ref_inputs = [real.tensor(a, requires_grad=True) for a in arrays]
    out = layer(*inputs)
    expected = reference(*ref_inputs)
    out = out[0] if isinstance(out, tuple) else out
    expected = expected[0] if isinstance(expected, tuple) else expected
    weights = RNG.standard_normal(tuple(expected.shape)).astype(np.float32)
    (out * torch.tensor(weights)).sum().backward()
    (expected * real.from_numpy(weights)).sum().backward()
    for ours, theirs in zip(inputs, ref_inputs):
        np.testing.assert_allclose(np.array(ours.grad), theirs.grad.numpy(), rtol=1e-4, atol=1e-4)
    ref_params = dict(reference.named_parameters())
    for key, param in layer.named_parameters():
        np.testing.assert_allclose(np.array(param.grad), ref_params[key].grad.numpy(), rtol=1e-4, atol=1e-4,
                                   err_msg=key)


@pytest.mark.parametrize("dims, shape, kwargs", [
    (1, (1, 2, 8), {}), (2, (1, 2, 4, 6), {}), (2, (1, 1, 5, 5), {"output_size": (5, 5)}), (3, (1, 1, 4, 4, 2), {}),
])
def test_max_unpool_inverts_max_pool_like_pytorch(dims, shape, kwargs):
    real = pytest.importorskip("torch")
    if not has_functional(f"max_unpool{dims}d", f"max_pool{dims}d"):
        pytest.skip(f"ember_nn.functional has no max_unpool{dims}d yet")
    a = RNG.standard_normal(shape).astype(np.float32)
    pool, unpool = getattr(nn, f"MaxPool{dims}d")(2, return_indices=True), getattr(nn, f"MaxUnpool{dims}d")(2)
    ref_pool, ref_unpool = getattr(real.nn, f"MaxPool{dims}d")(2, return_indices=True), getattr(real.nn, f"MaxUnpool{dims}d")(2)
    assert repr(unpool) == repr(ref_unpool)
    values, indices = pool(torch.tensor(a))
    ref_values, ref_indices = ref_pool(real.tensor(a))
    out = unpool(values, indices, **kwargs)
    expected = ref_unpool(ref_values, ref_indices, **kwargs)
    np.testing.assert_array_equal(np.array(out), expected.numpy())


@pytest.mark.parametrize("layer, shape, unit", [
    (nn.Dropout(0.5), (400,), ()), (nn.Dropout1d(0.5), (4, 50, 6), (6,)), (nn.Dropout2d(0.5), (4, 50, 2, 3), (2, 3)),
    (nn.Dropout3d(0.5), (2, 50, 2, 2, 2), (2, 2, 2)),
])
def test_dropout_layers_drop_in_training_only(layer, shape, unit):
    if not has_functional(layer._function):
        pytest.skip(f"ember_nn.functional has no {layer._function} yet")
    torch.manual_seed(0)
    x = torch.ones(*shape)
    out = np.array(layer(x))
    assert set(np.unique(out)) <= {0.0, 2.0}  # kept values are scaled by 1 / (1 - p)
    assert 0.3 < (out == 0).mean() < 0.7
    if unit:  # whole channels are dropped together
        per_channel = out.reshape(-1, int(np.prod(unit)))
        assert (per_channel.min(axis=1) == per_channel.max(axis=1)).all()
    layer.eval()
    assert np.array(layer(x)).tolist() == np.ones(shape).tolist()


def _float(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def _probabilities(*shape):
    return RNG.uniform(0.05, 0.95, shape).astype(np.float32)


def _classes(n, c):
    return RNG.integers(0, c, n).astype(np.int64)


def _signs(*shape):
    return RNG.choice(np.array([-1.0, 1.0], dtype=np.float32), shape)


def _log_probabilities(n, c):
    x = _float(n, c)
    return (x - np.log(np.exp(x).sum(1, keepdims=True))).astype(np.float32)


# (loss, constructor kwargs, input arrays (the first ones differentiable), how many are differentiable)
LOSSES = [
    ("L1Loss", {}, lambda: [_float(3, 4), _float(3, 4)], 1),
    ("MSELoss", {"reduction": "sum"}, lambda: [_float(3, 4), _float(3, 4)], 1),
    ("NLLLoss", {}, lambda: [_log_probabilities(5, 4), _classes(5, 4)], 1),
    ("NLLLoss", {"ignore_index": 1, "reduction": "none"}, lambda: [_log_probabilities(5, 4), _classes(5, 4)], 1),
    ("NLLLoss2d", {}, lambda: [_log_probabilities(8, 3).reshape(2, 2, 2, 3).transpose(0, 3, 1, 2).copy(),
                               _classes(8, 3).reshape(2, 2, 2)], 1),
    ("CrossEntropyLoss", {}, lambda: [_float(5, 4), _classes(5, 4)], 1),
    ("CrossEntropyLoss", {"label_smoothing": 0.2, "reduction": "sum"}, lambda: [_float(5, 4), _classes(5, 4)], 1),
    ("CrossEntropyLoss", {}, lambda: [_float(2, 3, 4, 2), _classes(16, 3).reshape(2, 4, 2)], 1),
    ("CrossEntropyLoss", {}, lambda: [_float(5, 4), np.eye(4, dtype=np.float32)[_classes(5, 4)]], 1),
    ("BCELoss", {}, lambda: [_probabilities(3, 4), _probabilities(3, 4)], 1),
    ("BCEWithLogitsLoss", {}, lambda: [_float(3, 4) * 10, _probabilities(3, 4)], 1),
    ("PoissonNLLLoss", {}, lambda: [_float(3, 4), np.abs(_float(3, 4))], 1),
    ("PoissonNLLLoss", {"log_input": False, "full": True}, lambda: [_probabilities(3, 4), np.abs(_float(3, 4)) * 3],
     1),
    ("GaussianNLLLoss", {}, lambda: [_float(3, 4), _float(3, 4), _probabilities(3, 4)], 1),
    ("KLDivLoss", {"reduction": "batchmean"}, lambda: [_log_probabilities(3, 4), _probabilities(3, 4)], 1),
    ("KLDivLoss", {"log_target": True, "reduction": "sum"}, lambda: [_log_probabilities(3, 4), _log_probabilities(3, 4)], 1),
    ("HuberLoss", {"delta": 0.5}, lambda: [_float(3, 4), _float(3, 4)], 1),
    ("SmoothL1Loss", {"beta": 0.5}, lambda: [_float(3, 4), _float(3, 4)], 1),
    ("SoftMarginLoss", {}, lambda: [_float(3, 4), _signs(3, 4)], 1),
    ("MultiLabelMarginLoss", {}, lambda: [_float(2, 4), np.array([[3, 0, -1, 1], [1, 2, 3, -1]])], 1),
    ("MultiLabelSoftMarginLoss", {}, lambda: [_float(3, 4), (_float(3, 4) > 0).astype(np.float32)], 1),
    ("MultiMarginLoss", {}, lambda: [_float(5, 4), _classes(5, 4)], 1),
    ("MultiMarginLoss", {"p": 2, "margin": 0.5}, lambda: [_float(5, 4), _classes(5, 4)], 1),
    ("HingeEmbeddingLoss", {"margin": 0.5}, lambda: [_float(3, 4), _signs(3, 4)], 1),
    ("CosineEmbeddingLoss", {"margin": 0.1}, lambda: [_float(5, 3), _float(5, 3), _signs(5)], 2),
    ("MarginRankingLoss", {"margin": 0.2}, lambda: [_float(5), _float(5), _signs(5)], 2),
    ("TripletMarginLoss", {"margin": 2.0}, lambda: [_float(5, 3), _float(5, 3), _float(5, 3)], 3),
    ("TripletMarginWithDistanceLoss", {"swap": True}, lambda: [_float(5, 3), _float(5, 3), _float(5, 3)], 3),
    # CTC's gradient is compared through log_softmax below: PyTorch's own with respect to
    # log_probs is only meaningful for log_softmax outputs.
    ("CTCLoss", {}, lambda: [_log_probabilities(12, 4).reshape(6, 2, 4), np.array([[1, 2, 2], [3, 1, 0]]),
                             np.array([6, 5]), np.array([3, 2])], 0),
]

LOSS_FUNCTIONS = {
    "L1Loss": "l1_loss", "MSELoss": "mse_loss", "NLLLoss": "nll_loss", "NLLLoss2d": "nll_loss", "CrossEntropyLoss": "cross_entropy",
    "BCELoss": "binary_cross_entropy", "BCEWithLogitsLoss": "binary_cross_entropy_with_logits",
    "PoissonNLLLoss": "poisson_nll_loss", "GaussianNLLLoss": "gaussian_nll_loss", "KLDivLoss": "kl_div",
    "HuberLoss": "huber_loss", "SmoothL1Loss": "smooth_l1_loss", "SoftMarginLoss": "soft_margin_loss",
    "MultiLabelMarginLoss": "multilabel_margin_loss", "MultiLabelSoftMarginLoss": "multilabel_soft_margin_loss",
    "MultiMarginLoss": "multi_margin_loss", "HingeEmbeddingLoss": "hinge_embedding_loss",
    "CosineEmbeddingLoss": "cosine_embedding_loss", "MarginRankingLoss": "margin_ranking_loss",
    "TripletMarginLoss": "triplet_margin_loss", "TripletMarginWithDistanceLoss": "triplet_margin_with_distance_loss",
    "CTCLoss": "ctc_loss",
}


@pytest.mark.parametrize("case", LOSSES, ids=lambda case: f"{case[0]}{case[1]}".replace(" ", ""))
def test_loss_values_and_gradients_match_pytorch(case):
    real = pytest.importorskip("torch")
    name, kwargs, make_arrays, n_differentiable = case
    if not has_functional(LOSS_FUNCTIONS[name]):
        pytest.skip(f"ember_nn.functional has no {LOSS_FUNCTIONS[name]} yet")
    arrays = make_arrays()
    ours = [torch.tensor(a, requires_grad=i < n_differentiable) for i, a in enumerate(arrays)]
    theirs = [real.tensor(a, requires_grad=i < n_differentiable) for i, a in enumerate(arrays)]
    loss = getattr(nn, name)(**kwargs)
    assert repr(loss) == repr(getattr(real.nn, name)(**kwargs))
    out = loss(*ours)
    expected = getattr(real.nn, name)(**kwargs)(*theirs)
    assert tuple(out.shape) == tuple(expected.shape)
    np.testing.assert_allclose(np.array(out.detach()), expected.detach().numpy(), rtol=1e-4, atol=1e-5)
    if not n_differentiable:
        return
    out.sum().backward()
    expected.sum().backward()
    for i in range(n_differentiable):
        np.testing.assert_allclose(np.array(ours[i].grad), theirs[i].grad.numpy(), rtol=1e-4, atol=1e-5)


@needs_functional("ctc_loss", "log_softmax")
def test_ctc_loss_gradient_through_log_softmax_matches_pytorch():
    real = pytest.importorskip("torch")
    logits = _float(6, 2, 4)
    targets, input_lengths, target_lengths = np.array([[1, 2, 2], [3, 1, 0]]), np.array([6, 5]), np.array([3, 2])
    ours = torch.tensor(logits, requires_grad=True)
    theirs = real.tensor(logits, requires_grad=True)
    nn.CTCLoss()(F.log_softmax(ours, 2), torch.tensor(targets), torch.tensor(input_lengths),
                 torch.tensor(target_lengths)).backward()
    real.nn.CTCLoss()(real.log_softmax(theirs, 2), real.tensor(targets), real.tensor(input_lengths),
                      real.tensor(target_lengths)).backward()
    np.testing.assert_allclose(np.array(ours.grad), theirs.grad.numpy(), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("make, inputs", [
    (lambda: nn.PairwiseDistance(), [(4, 3), (4, 3)]),
    (lambda: nn.PairwiseDistance(p=1.0, keepdim=True), [(4, 3), (4, 3)]),
    (lambda: nn.CosineSimilarity(dim=0), [(4, 3), (4, 3)]),
])
def test_distance_modules_match_pytorch(make, inputs):
    real = pytest.importorskip("torch")
    module = make()
    arrays = [_float(*shape) for shape in inputs]
    reference = getattr(real.nn, type(module).__name__)(**{
        "PairwiseDistance": lambda m: {"p": m.norm, "eps": m.eps, "keepdim": m.keepdim},
        "CosineSimilarity": lambda m: {"dim": m.dim, "eps": m.eps}}[type(module).__name__](module))
    assert repr(module) == repr(reference)
    np.testing.assert_allclose(np.array(module(*(torch.tensor(a) for a in arrays))),
                               reference(*(real.tensor(a) for a in arrays)).numpy(), rtol=1e-5, atol=1e-6)


# -- default initialisation ------------------------------------------------------------------

@pytest.mark.parametrize("layer, fan_in", [
    (lambda: nn.Linear(30, 20), 30),
    (lambda: nn.Conv2d(4, 8, 3), 36),
    (lambda: nn.Conv1d(6, 4, 5, groups=2), 15),
    (lambda: nn.ConvTranspose2d(4, 6, 3), 54),  # weight (in, out, k, k): fan_in is out * k * k
    (lambda: nn.Bilinear(9, 4, 5), 9),
])
def test_default_init_is_uniform_within_one_over_sqrt_fan_in(layer, fan_in):
    torch.manual_seed(0)
    m = layer()
    bound = 1 / math.sqrt(fan_in)
    for p in m.parameters():
        values = np.array(p.detach())
        assert np.abs(values).max() <= bound + 1e-7
        if values.size > 20:
            assert np.abs(values).max() > 0.7 * bound


@pytest.mark.parametrize("layer", [nn.BatchNorm2d(3), nn.LayerNorm(3), nn.GroupNorm(1, 3), nn.InstanceNorm1d(3, affine=True)])
def test_norm_layers_start_as_identity_transforms(layer):
    assert layer.weight.tolist() == [1.0, 1.0, 1.0] and layer.bias.tolist() == [0.0, 0.0, 0.0]


def test_batchnorm_buffers():
    bn = nn.BatchNorm1d(2)
    assert [n for n, _ in bn.named_buffers()] == ["running_mean", "running_var", "num_batches_tracked"]
    assert bn.num_batches_tracked.dtype is torch.int64 and bn.num_batches_tracked.dim() == 0
    no_stats = nn.BatchNorm1d(2, track_running_stats=False)
    assert no_stats.running_mean is None and list(no_stats.state_dict()) == ["weight", "bias"]
    sd = bn.state_dict()
    del sd["num_batches_tracked"]
    sd._metadata[""]["version"] = 1  # an old checkpoint: the counter starts at zero
    assert bn.load_state_dict(sd).missing_keys == []


def test_parameters_follow_dtype_and_factory_kwargs():
    m = nn.Linear(3, 2, dtype=torch.float64)
    assert m.weight.dtype is torch.float64 and m.bias.dtype is torch.float64
    conv = nn.Conv2d(2, 4, 3, device="cpu")
    assert conv.weight.shape == (4, 2, 3, 3) and conv.bias.shape == (4,)
    assert nn.ConvTranspose2d(2, 4, 3, groups=2).weight.shape == (2, 2, 3, 3)


# -- extra_repr text (checked without PyTorch) ----------------------------------------------

@pytest.mark.parametrize("layer, text", [
    (nn.Linear(320, 50), "Linear(in_features=320, out_features=50, bias=True)"),
    (nn.Conv2d(10, 20, kernel_size=5), "Conv2d(10, 20, kernel_size=(5, 5), stride=(1, 1))"),
    (nn.Conv2d(2, 4, 3, padding="same", bias=False, padding_mode="reflect"),
     "Conv2d(2, 4, kernel_size=(3, 3), stride=(1, 1), padding=same, bias=False, padding_mode=reflect)"),
    (nn.ConvTranspose1d(2, 2, 3, stride=2, output_padding=1, groups=2),
     "ConvTranspose1d(2, 2, kernel_size=(3,), stride=(2,), output_padding=(1,), groups=2)"),
    (nn.Dropout2d(), "Dropout2d(p=0.5, inplace=False)"),
    (nn.MaxPool2d(2), "MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)"),
    (nn.BatchNorm1d(4), "BatchNorm1d(4, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)"),
    (nn.LayerNorm(4), "LayerNorm((4,), eps=1e-05, elementwise_affine=True, bias=True)"),
    (nn.ReLU(inplace=True), "ReLU(inplace=True)"),
    (nn.Hardswish(inplace=True), "Hardswish()"),
    (nn.GELU("tanh"), "GELU(approximate='tanh')"),
    (nn.Softmax(dim=1), "Softmax(dim=1)"),
    (nn.ZeroPad2d(2), "ZeroPad2d((2, 2, 2, 2))"),
    (nn.ConstantPad1d(2, 3.5), "ConstantPad1d(padding=(2, 2), value=3.5)"),
    (nn.Upsample(scale_factor=2), "Upsample(scale_factor=2.0, mode='nearest')"),
    (nn.CrossEntropyLoss(label_smoothing=0.1), "CrossEntropyLoss()"),
    (nn.Flatten(), "Flatten(start_dim=1, end_dim=-1)"),
    (nn.Unflatten(1, (2, 5)), "Unflatten(dim=1, unflattened_size=(2, 5))"),
    (nn.ChannelShuffle(3), "ChannelShuffle(groups=3)"),
])
def test_repr_text(layer, text):
    assert repr(layer) == text


# -- constructor errors -----------------------------------------------------------------------------

@pytest.mark.parametrize("make, error, message", [
    (lambda: nn.Conv2d(3, 4, 3, groups=2), ValueError, "in_channels must be divisible by groups"),
    (lambda: nn.Conv2d(4, 3, 3, groups=2), ValueError, "out_channels must be divisible by groups"),
    (lambda: nn.Conv2d(4, 4, 3, groups=0), ValueError, "groups must be a positive integer"),
    (lambda: nn.Conv2d(1, 1, 3, padding="full"), ValueError, "Invalid padding string 'full'"),
    (lambda: nn.Conv2d(1, 1, 3, stride=2, padding="same"), ValueError,
     "padding='same' is not supported for strided convolutions"),
    (lambda: nn.Conv2d(1, 1, 3, padding_mode="mirror"), ValueError, "padding_mode must be one of"),
    (lambda: nn.ConvTranspose2d(1, 1, 3, padding_mode="reflect"), ValueError,
     'Only "zeros" padding mode is supported for ConvTranspose2d'),
    (lambda: nn.Dropout(1.5), ValueError, "dropout probability has to be between 0 and 1, but got 1.5"),
    (lambda: nn.GroupNorm(3, 4), ValueError, "num_channels must be divisible by num_groups"),
    (lambda: nn.Unflatten(1, 6), TypeError, "unflattened_size must be a tuple of ints, but found type int"),
    (lambda: nn.Unflatten(1, (2, 3.0)), TypeError, "unflattened_size must be tuple of ints, but found element of "
                                                   "type float at pos 1"),
    (lambda: nn.MultiMarginLoss(p=3), ValueError, "only p == 1 and p == 2 supported"),
    (lambda: nn.Hardtanh(1.0, -1.0), AssertionError, "max_val"),
])
def test_constructor_errors(make, error, message):
    with pytest.raises(error, match=message.replace("(", r"\(").replace(")", r"\)")):
        make()


@pytest.mark.parametrize("layer, shape, message", [
    (nn.BatchNorm1d(3), (2, 3, 4, 5), "expected 2D or 3D input (got 4D input)"),
    (nn.BatchNorm2d(3), (2, 3), "expected 4D input (got 2D input)"),
    (nn.InstanceNorm2d(3), (3,), "expected 3D or 4D input (got 1D input)"),
    (nn.Softmax2d(), (3, 4), "Softmax2d: expected input to be 3D or 4D, got 2D instead"),
])
def test_input_rank_errors(layer, shape, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        layer(torch.zeros(*shape))


def test_legacy_loss_flags_map_to_reduction():
    with pytest.warns(UserWarning, match="reduction='sum'"):
        assert nn.MSELoss(size_average=False).reduction == "sum"
    with pytest.warns(UserWarning):
        assert nn.L1Loss(reduce=False).reduction == "none"
    assert nn.NLLLoss(weight=torch.ones(3)).weight.tolist() == [1.0, 1.0, 1.0]
    assert [n for n, _ in nn.BCEWithLogitsLoss(pos_weight=torch.ones(2)).named_buffers()] == ["pos_weight"]


# -- lazy modules --------------------------------------------------------------------------------------

@needs_functional("linear")
def test_lazy_linear_infers_in_features():
    layer = nn.LazyLinear(4)
    assert isinstance(layer.weight, nn.UninitializedParameter)
    out = layer(torch.ones(2, 7))
    assert type(layer) is nn.Linear and layer.weight.shape == (4, 7) and out.shape == (2, 4)
    assert np.abs(np.array(layer.weight.detach())).max() <= 1 / math.sqrt(7)
    assert not layer._forward_pre_hooks


@needs_functional("conv2d")
def test_lazy_conv2d_infers_in_channels_without_pytorch():
    conv = nn.LazyConv2d(5, 3, padding=1)
    out = conv(torch.ones(1, 3, 4, 4))
    assert type(conv) is nn.Conv2d and conv.weight.shape == (5, 3, 3, 3) and out.shape == (1, 5, 4, 4)


@pytest.mark.parametrize("name, args, kwargs, shape", [
    ("LazyLinear", (3,), {}, (2, 5)),
    ("LazyConv1d", (2, 3), {}, (5, 7)),
    ("LazyConv2d", (4, 3), {"groups": 2, "bias": False}, (1, 2, 5, 5)),
    ("LazyConv3d", (2, 2), {}, (1, 2, 3, 3, 3)),
    ("LazyConvTranspose1d", (2, 3), {"stride": 2}, (1, 3, 4)),
    ("LazyConvTranspose2d", (3, 2), {}, (1, 4, 3, 3)),
    ("LazyConvTranspose3d", (2, 2), {}, (1, 2, 2, 2, 2)),
    ("LazyBatchNorm1d", (), {}, (4, 3)),
    ("LazyBatchNorm2d", (), {"affine": False}, (2, 3, 2, 2)),
    ("LazyBatchNorm3d", (), {"track_running_stats": False}, (2, 3, 2, 2, 2)),
    ("LazyInstanceNorm1d", (), {}, (2, 3, 4)),
    ("LazyInstanceNorm2d", (), {"affine": False, "track_running_stats": False}, (3, 4, 4)),
    ("LazyInstanceNorm3d", (), {}, (1, 2, 2, 2, 2)),
])
def test_lazy_modules_become_their_regular_class_like_pytorch(name, args, kwargs, shape):
    real = pytest.importorskip("torch")
    ours, theirs = getattr(nn, name)(*args, **kwargs), getattr(real.nn, name)(*args, **kwargs)
    assert repr(ours) == repr(theirs)
    a = RNG.standard_normal(shape).astype(np.float32)
    theirs(real.tensor(a))
    ours(torch.tensor(a))
    assert type(ours).__name__ == type(theirs).__name__ and repr(ours) == repr(theirs)
    assert {k: tuple(v.shape) for k, v in ours.state_dict().items()} == \
        {k: tuple(v.shape) for k, v in theirs.state_dict().items()}
    assert not ours._forward_pre_hooks  # the initialising hook is gone


def test_lazy_linear_takes_shapes_from_a_state_dict():
    source = nn.Linear(6, 2)
    lazy = nn.LazyLinear(2)
    lazy.load_state_dict(source.state_dict())
    assert type(lazy) is nn.Linear and lazy.weight.tolist() == source.weight.tolist()


# -- autograd through layers ---------------------------------------------------------------------------

def autograd_runs(function):
    if not has_functional(function):
        return False
    try:
        x = torch.ones(2, 3, requires_grad=True)
        getattr(F, function)(x, torch.ones(4, 3)).sum().backward()
    except (RuntimeError, NotImplementedError, TypeError):
        return False
    return x.grad is not None


@pytest.mark.skipif(not autograd_runs("linear"), reason="linear's backward is not available yet")
def test_linear_parameters_are_leaves_that_accumulate_grad():
    layer = nn.Linear(3, 2)
    x = torch.ones(4, 3)
    layer(x).sum().backward()
    layer(x).sum().backward()
    np.testing.assert_allclose(np.array(layer.weight.grad), np.full((2, 3), 8.0))
    np.testing.assert_allclose(np.array(layer.bias.grad), [8.0, 8.0])
    assert layer.weight.is_leaf and isinstance(layer.weight, nn.Parameter)
    layer.zero_grad()
    assert layer.weight.grad is None


# -- PyTorch's constructor signatures ----------------------------------------------------------------

# The files of this test's layers (sequence models are tested in test_sequence.py).
LAYER_FILES = ["activation", "batchnorm", "container", "conv", "distance", "dropout", "flatten", "fold",
               "instancenorm", "linear", "loss", "normalization", "padding", "parameter_containers", "pixelshuffle",
               "pooling", "upsampling"]


def _public_layer_names():
    import importlib
    return sorted(name for file in LAYER_FILES
                  for name in importlib.import_module(f"ember_nn.modules.{file}").__all__)


def test_every_layer_has_pytorchs_constructor_signature_and_defaults():
    real = pytest.importorskip("torch")
    import inspect

    def parameters(cls):
        return [(p.name, p.kind, p.default) for p in list(inspect.signature(cls.__init__).parameters.values())[1:]]

    mismatched = {}
    for name in _public_layer_names():
        if hasattr(real.nn, name) and parameters(getattr(nn, name)) != parameters(getattr(real.nn, name)):
            mismatched[name] = (parameters(getattr(nn, name)), parameters(getattr(real.nn, name)))
    assert mismatched == {}


@pytest.mark.parametrize("namespace, names", [
    ("init", ["calculate_gain", "uniform_", "normal_", "trunc_normal_", "constant_", "ones_", "zeros_", "eye_",
              "dirac_", "xavier_uniform_", "xavier_normal_", "kaiming_uniform_", "kaiming_normal_", "orthogonal_",
              "sparse_"]),
    ("utils", ["clip_grad_norm_", "clip_grad_value_", "parameters_to_vector", "vector_to_parameters", "weight_norm",
               "remove_weight_norm", "spectral_norm", "remove_spectral_norm", "fuse_conv_bn_eval"]),
])
def test_init_and_utils_have_pytorchs_signatures(namespace, names):
    real = pytest.importorskip("torch")
    import inspect

    def parameters(fn):
        return [(p.name, p.default) for p in inspect.signature(fn).parameters.values()]

    ours, theirs = getattr(nn, namespace), getattr(real.nn, namespace)
    assert {n: parameters(getattr(ours, n)) for n in names} == {n: parameters(getattr(theirs, n)) for n in names}


def test_channel_shuffle_interleaves_the_groups_without_pytorch():
    x = torch.arange(12.).reshape(1, 6, 2)
    out = nn.ChannelShuffle(3)(x)
    # channels (0 1 | 2 3 | 4 5) read as 3 groups of 2 and transposed: 0 2 4 1 3 5
    assert out[0, :, 0].tolist() == [0.0, 4.0, 8.0, 2.0, 6.0, 10.0]
    with pytest.raises(RuntimeError, match="Number of channels must be divisible by groups. Got 6 channels and 4 groups."):
        nn.ChannelShuffle(4)(x)
