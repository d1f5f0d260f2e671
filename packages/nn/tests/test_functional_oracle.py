"""Every function of ember_nn.functional against PyTorch (an optional oracle: skipped
when torch is not installed), forward values and gradients, float64."""
import numpy as np
import pytest

import ember_nn.functional as F

from _oracle import compare

torch = pytest.importorskip("torch")
TF = torch.nn.functional

rng = np.random.default_rng(0)


def r(*shape):
    return rng.standard_normal(shape)


def pos(*shape):
    return rng.random(shape) * 0.9 + 0.05


def idx(high, *shape):
    return rng.integers(0, high, shape)


x34 = r(3, 4)
x2355 = r(2, 3, 5, 5)
CASES = [
    # name, args, kwargs
    ("relu", (x34,), {}), ("relu6", (r(3, 4) * 5,), {}), ("elu", (x34,), {"alpha": 0.7}),
    ("selu", (x34,), {}), ("celu", (x34,), {"alpha": 1.3}), ("leaky_relu", (x34, 0.2), {}),
    ("prelu", (r(2, 3, 4), pos(3)), {}), ("rrelu", (x34,), {"training": False}),
    ("glu", (r(3, 4),), {"dim": 1}), ("gelu", (x34,), {}), ("gelu", (x34,), {"approximate": "tanh"}),
    ("silu", (x34,), {}), ("mish", (x34,), {}), ("sigmoid", (x34,), {}), ("logsigmoid", (r(3, 4) * 30,), {}),
    ("tanh", (x34,), {}), ("tanhshrink", (x34,), {}), ("hardtanh", (x34, -0.5, 0.7), {}),
    ("hardsigmoid", (r(3, 4) * 4,), {}), ("hardswish", (r(3, 4) * 4,), {}), ("hardshrink", (x34, 0.3), {}),
    ("softshrink", (x34, 0.3), {}), ("softplus", (r(3, 4) * 10,), {"beta": 2.0, "threshold": 5.0}),
    ("softsign", (x34,), {}), ("threshold", (x34, 0.1, -2.0), {}),
    ("softmax", (r(2, 3, 4),), {"dim": 1}), ("log_softmax", (r(2, 3, 4),), {"dim": -1}),
    ("softmin", (r(2, 3, 4),), {"dim": 0}),
    ("linear", (r(2, 5, 3), r(4, 3), r(4)), {}), ("linear", (r(5, 3), r(4, 3), r(4)), {}),
    ("bilinear", (r(5, 3), r(5, 2), r(4, 3, 2), r(4)), {}),
    ("conv1d", (r(2, 4, 7), r(6, 2, 3), r(6)), {"stride": 2, "padding": 1, "groups": 2}),
    ("conv2d", (x2355, r(4, 3, 3, 3), r(4)), {"padding": "same", "dilation": 2}),
    ("conv2d", (x2355, r(4, 3, 2, 2)), {"padding": "same"}),
    ("conv2d", (r(3, 5, 5), r(4, 3, 3, 3)), {"padding": "valid"}),
    ("conv3d", (r(1, 2, 4, 4, 3), r(3, 2, 2, 2, 2)), {"stride": (1, 2, 1)}),
    ("conv_transpose1d", (r(2, 3, 5), r(3, 2, 3), r(2)), {"stride": 2, "padding": 1, "output_padding": 1}),
    ("conv_transpose2d", (r(1, 4, 3, 3), r(4, 1, 3, 2)), {"stride": 2, "groups": 2, "dilation": (1, 2)}),
    ("conv_transpose3d", (r(1, 2, 2, 3, 2), r(2, 2, 2, 2, 2)), {}),
    ("max_pool1d", (r(2, 3, 9), 3), {"stride": 2, "padding": 1, "ceil_mode": True}),
    ("max_pool2d", (x2355, 2), {}), ("max_pool2d", (x2355, (3, 2)), {"stride": (2, 1), "dilation": (1, 2)}),
    ("max_pool2d", (r(3, 5, 5), 2), {"return_indices": True}),
    ("max_pool3d", (r(1, 2, 4, 4, 4), 2), {"padding": 1}),
    ("avg_pool1d", (r(2, 3, 9), 3), {"stride": 2, "padding": 1, "count_include_pad": False}),
    ("avg_pool2d", (x2355, 3), {"stride": 2, "padding": 1, "ceil_mode": True}),
    ("avg_pool2d", (x2355, 2), {"divisor_override": 3}),
    ("avg_pool3d", (r(1, 2, 4, 4, 4), 2), {}),
    ("adaptive_avg_pool1d", (r(2, 3, 7), 3), {}), ("adaptive_avg_pool2d", (x2355, (2, 3)), {}),
    ("adaptive_avg_pool2d", (x2355, (None, 1)), {}), ("adaptive_avg_pool3d", (r(1, 2, 5, 4, 3), 2), {}),
    ("adaptive_avg_pool2d", (x2355, 1), {}), ("adaptive_avg_pool2d", (r(3, 5, 5), (1, 1)), {}),  # global
    ("adaptive_avg_pool1d", (r(2, 3, 7), 1), {}), ("adaptive_avg_pool3d", (r(1, 2, 5, 4, 3), 1), {}),
    ("adaptive_max_pool1d", (r(2, 3, 7), 3), {}), ("adaptive_max_pool2d", (x2355, (2, 3)), {"return_indices": True}),
    ("lp_pool1d", (pos(2, 3, 8), 2, 3), {}), ("lp_pool2d", (pos(2, 3, 6, 6), 3, 2), {}),
    ("batch_norm", (r(4, 3, 5), None, None, r(3), r(3), True), {}),
    ("batch_norm", (r(4, 3), pos(3), pos(3) + 1, r(3), r(3)), {}, (1, 2)),
    ("batch_norm", (r(4, 3, 2), r(3), pos(3) + 1, r(3), r(3), True, 0.3), {}, (1, 2)),
    ("instance_norm", (r(2, 3, 5, 4),), {}), ("instance_norm", (r(2, 3, 6), None, None, r(3), r(3)), {}),
    ("layer_norm", (r(2, 3, 4), (3, 4), r(3, 4), r(3, 4)), {}), ("layer_norm", (r(2, 3, 4), (4,)), {}),
    ("group_norm", (r(2, 6, 4), 3, r(6), r(6)), {}), ("rms_norm", (r(2, 3, 4), (4,), r(4)), {}),
    ("rms_norm", (r(2, 3, 4), (3, 4)), {"eps": 1e-3}),
    ("local_response_norm", (r(2, 5, 4), 3), {}), ("local_response_norm", (r(2, 4, 3, 3), 2), {"k": 2.0}),
    ("normalize", (r(3, 4),), {}), ("normalize", (r(3, 4),), {"p": 1.0, "dim": 0}),
    ("cosine_similarity", (r(3, 4), r(3, 4)), {}), ("pairwise_distance", (r(3, 4), r(3, 4)), {}),
    ("pairwise_distance", (r(3, 4), r(3, 4)), {"p": 1.0, "keepdim": True}), ("pdist", (r(4, 3),), {}),
    ("pad", (r(2, 3, 4), (1, 2)), {}), ("pad", (r(2, 3, 4), (1, 2, 0, 1)), {"value": 2.5}),
    ("pad", (r(2, 3, 4), (2, 1)), {"mode": "reflect"}), ("pad", (r(1, 2, 3, 4), (2, 1, 1, 2)), {"mode": "reflect"}),
    ("pad", (r(1, 2, 3, 4), (2, 3, 1, 0)), {"mode": "replicate"}),
    ("pad", (r(1, 2, 3, 4), (2, 1, 1, 2)), {"mode": "circular"}),
    ("pad", (r(1, 1, 3, 3, 3), (1, 1, 1, 1, 1, 1)), {"mode": "replicate"}),
    ("interpolate", (r(1, 2, 5),), {"scale_factor": 2}),
    ("interpolate", (r(1, 2, 5, 4),), {"size": (7, 3)}),
    ("interpolate", (r(1, 2, 5, 4),), {"size": (7, 3), "mode": "nearest-exact"}),
    ("interpolate", (r(1, 2, 5),), {"size": 8, "mode": "linear"}),
    ("interpolate", (r(1, 2, 5, 4),), {"scale_factor": 1.7, "mode": "bilinear"}),
    ("interpolate", (r(1, 2, 5, 4),), {"size": (3, 7), "mode": "bilinear", "align_corners": True}),
    ("interpolate", (r(1, 2, 5, 4),), {"size": (8, 6), "mode": "bicubic"}),
    ("interpolate", (r(1, 2, 5, 4),), {"size": (3, 7), "mode": "bicubic", "align_corners": True}),
    ("interpolate", (r(1, 2, 3, 4, 2),), {"scale_factor": (2, 1.5, 2), "mode": "trilinear"}),
    ("interpolate", (r(1, 2, 6, 6),), {"size": (4, 3), "mode": "area"}),
    ("interpolate", (r(1, 2, 5, 4),), {"scale_factor": 0.6, "mode": "bilinear", "recompute_scale_factor": True}),
    ("interpolate", (r(1, 2, 9, 7),), {"size": (4, 3), "mode": "bilinear", "antialias": True}),
    ("interpolate", (r(1, 2, 9, 7),), {"size": (4, 5), "mode": "bicubic", "antialias": True}),
    ("interpolate", (r(1, 2, 9, 7),), {"scale_factor": 0.4, "mode": "bilinear", "antialias": True,
                                       "align_corners": True}),
    ("interpolate", (r(1, 2, 4, 3),), {"size": (7, 5), "mode": "bicubic", "antialias": True}),
    ("affine_grid", (r(2, 2, 3), (2, 1, 4, 5)), {"align_corners": False}),
    ("affine_grid", (r(2, 3, 4), (2, 1, 2, 3, 4)), {"align_corners": True}),
    ("grid_sample", (r(2, 3, 5, 4), rng.uniform(-1.1, 1.1, (2, 3, 2, 2))), {"align_corners": False}),
    ("grid_sample", (r(2, 3, 5, 4), rng.uniform(-1.1, 1.1, (2, 3, 2, 2))),
     {"align_corners": True, "padding_mode": "border"}),
    ("grid_sample", (r(2, 3, 5, 4), rng.uniform(-0.9, 0.9, (2, 3, 2, 2))), {"mode": "nearest"}),
    ("grid_sample", (r(2, 3, 5, 4), rng.uniform(-2.5, 2.5, (2, 3, 2, 2))), {"padding_mode": "reflection"}),
    ("grid_sample", (r(2, 3, 5, 4), rng.uniform(-2.5, 2.5, (2, 3, 2, 2))),
     {"padding_mode": "reflection", "align_corners": True}),
    ("grid_sample", (r(2, 3, 5, 4), rng.uniform(-1.2, 1.2, (2, 3, 2, 2))), {"mode": "bicubic"}),
    ("grid_sample", (r(2, 3, 5, 4), rng.uniform(-1.2, 1.2, (2, 3, 2, 2))),
     {"mode": "bicubic", "padding_mode": "border", "align_corners": True}),
    ("grid_sample", (r(2, 3, 5, 4), rng.uniform(-2.2, 2.2, (2, 3, 2, 2))),
     {"mode": "bicubic", "padding_mode": "reflection"}),
    ("grid_sample", (r(2, 2, 3, 4, 5), rng.uniform(-1.1, 1.1, (2, 2, 3, 2, 3))), {"align_corners": False}),
    ("grid_sample", (r(2, 2, 3, 4, 5), rng.uniform(-2.1, 2.1, (2, 2, 3, 2, 3))),
     {"align_corners": True, "padding_mode": "reflection"}),
    ("grid_sample", (r(1, 2, 3, 4, 5), rng.uniform(-0.9, 0.9, (1, 2, 3, 2, 3))),
     {"mode": "nearest", "padding_mode": "border"}),
    ("unfold", (r(2, 3, 5, 4), (2, 3)), {"padding": 1, "stride": (2, 1)}),
    ("fold", (r(2, 12, 15), (4, 5), 2), {"padding": 1, "stride": (1, 2)}),
    ("pixel_shuffle", (r(2, 8, 3, 2), 2), {}), ("channel_shuffle", (r(2, 6, 3, 2), 3), {}),
    ("conv_tbc", (r(7, 2, 3), r(3, 3, 4), r(4)), {"pad": 1}), ("pixel_unshuffle", (r(2, 2, 4, 6), 2), {}),
    ("embedding", (idx(5, 2, 3), r(5, 4)), {}), ("embedding", (idx(5, 2, 3), r(5, 4)), {"padding_idx": 1}),
    ("one_hot", (idx(4, 2, 3), 5), {}),
    ("dropout", (x34,), {"training": False}), ("alpha_dropout", (x34,), {"training": False}),
]

LOSS_CASES = [
    ("l1_loss", (r(3, 4), r(3, 4)), {}), ("mse_loss", (r(3, 4), r(3, 4)), {"reduction": "sum"}),
    ("mse_loss", (r(3, 4), r(3, 4)), {"reduction": "none"}),
    ("nll_loss", (r(4, 5), idx(5, 4)), {}), ("nll_loss", (r(4, 5, 3), idx(5, 4, 3), pos(5)), {"reduction": "sum"}, (2,)),
    ("nll_loss", (r(4, 5), np.array([1, -100, 3, 3])), {"reduction": "none"}),
    ("cross_entropy", (r(4, 5), idx(5, 4)), {}), ("cross_entropy", (r(5), np.array(3)), {}),
    ("cross_entropy", (r(4, 5, 2, 3), idx(5, 4, 2, 3), pos(5)), {"ignore_index": 2}, (2,)),
    ("cross_entropy", (r(4, 5), idx(5, 4)), {"label_smoothing": 0.2}),
    ("linear_cross_entropy", (r(4, 3), r(5, 3), idx(5, 4)), {"linear_bias": r(5), "label_smoothing": 0.1}),
    ("linear_cross_entropy", (r(4, 3), r(5, 3), np.array([1, -100, 2, 0])), {"ignore_index": -100,
                                                                             "reduction": "sum"}),
    ("cross_entropy", (r(4, 5), np.array([1, 2, 0, 4]), pos(5)), {"label_smoothing": 0.3, "ignore_index": 0}, (2,)),
    ("cross_entropy", (r(4, 5), idx(5, 4), pos(5)), {"label_smoothing": 0.1, "reduction": "sum"}, (2,)),
    ("cross_entropy", (r(4, 5), pos(4, 5)), {}),
    ("cross_entropy", (r(4, 5, 3), pos(4, 5, 3), pos(5)), {"label_smoothing": 0.1}, (2,)),
    ("binary_cross_entropy", (pos(3, 4), pos(3, 4)), {}),
    ("binary_cross_entropy", (pos(3, 4), pos(3, 4), pos(3, 4)), {"reduction": "sum"}, (2,)),
    ("binary_cross_entropy_with_logits", (r(3, 4) * 20, pos(3, 4)), {}),
    ("binary_cross_entropy_with_logits", (r(3, 4), pos(3, 4)), {"pos_weight": pos(4) * 3, "weight": pos(3, 4)}),
    ("poisson_nll_loss", (r(3, 4), pos(3, 4) * 3), {}), ("poisson_nll_loss", (pos(3, 4), pos(3, 4) * 3),
                                                         {"log_input": False, "full": True}),
    ("gaussian_nll_loss", (r(3, 4), r(3, 4), pos(3, 4)), {}), ("gaussian_nll_loss", (r(3, 4), r(3, 4), pos(3, 1)),
                                                               {"full": True, "reduction": "sum"}),
    ("kl_div", (np.log(pos(3, 4)), pos(3, 4)), {"reduction": "batchmean"}),
    ("kl_div", (np.log(pos(3, 4)), np.log(pos(3, 4))), {"log_target": True, "reduction": "sum"}),
    ("huber_loss", (r(3, 4) * 2, r(3, 4)), {"delta": 0.7}), ("smooth_l1_loss", (r(3, 4) * 2, r(3, 4)), {"beta": 0.5}),
    ("soft_margin_loss", (r(3, 4), np.sign(r(3, 4))), {}, (1,)),
    ("multilabel_soft_margin_loss", (r(3, 4), idx(2, 3, 4).astype(float)), {"weight": pos(4)}),
    ("multilabel_margin_loss", (r(3, 4), np.array([[3, 0, -1, 1], [0, 1, 2, 3], [-1, 0, 0, 0]])), {}),
    # a class listed twice counts twice, as in PyTorch's kernel
    ("multilabel_margin_loss", (r(3, 4), np.array([[1, 1, 2, -1], [0, 3, 3, 3], [2, 2, -1, 1]])), {}),
    ("multi_margin_loss", (r(3, 4), idx(4, 3)), {}), ("multi_margin_loss", (r(3, 4), idx(4, 3)),
                                                      {"p": 2, "margin": 0.5, "weight": pos(4)}),
    ("hinge_embedding_loss", (r(3, 4), np.sign(r(3, 4))), {"margin": 0.5}),
    ("cosine_embedding_loss", (r(3, 4), r(3, 4), np.sign(r(3))), {"margin": 0.1}),
    ("margin_ranking_loss", (r(5), r(5), np.sign(r(5))), {"margin": 0.2}),
    ("triplet_margin_loss", (r(3, 4), r(3, 4), r(3, 4)), {}),
    ("triplet_margin_loss", (r(3, 4), r(3, 4), r(3, 4)), {"p": 1, "swap": True, "reduction": "none"}),
    ("triplet_margin_with_distance_loss", (r(3, 4), r(3, 4), r(3, 4)), {"margin": 0.5}),
]


def _id(case):
    return case[0]


@pytest.mark.parametrize("case", CASES + LOSS_CASES, ids=[c[0] for c in CASES + LOSS_CASES])
def test_matches_pytorch(case):
    name, args, kwargs = case[:3]
    constant = case[3] if len(case) > 3 else ()
    compare(torch, getattr(F, name), getattr(TF, name), args, kwargs, constant=constant)


def test_ctc_loss_matches_pytorch():
    # PyTorch's CTC gradient is only right for log_softmax outputs: compare through one.
    logits = r(6, 2, 4)
    targets = np.array([[1, 2, 2], [3, 1, 0]])
    for reduction in ("mean", "sum", "none"):
        compare(torch, lambda x, *a, **k: F.ctc_loss(F.log_softmax(x, -1), *a, **k),
                lambda x, *a, **k: TF.ctc_loss(TF.log_softmax(x, -1), *a, **k),
                (logits, targets, [6, 5], [3, 2]), {"reduction": reduction})
    flat_targets = np.array([1, 2, 2, 3, 1])
    compare(torch, lambda x, *a, **k: F.ctc_loss(F.log_softmax(x, -1), *a, **k),
            lambda x, *a, **k: TF.ctc_loss(TF.log_softmax(x, -1), *a, **k),
            (logits, flat_targets, [6, 5], [3, 2]), {})


def test_signatures_match_pytorch():
    import inspect

    def params(fn):
        return [(p.name, p.default, p.kind) for p in inspect.signature(fn).parameters.values()]

    checked = 0
    for name in F.__all__:
        try:
            expected = params(getattr(TF, name))
        except (ValueError, TypeError):  # builtins without a Python signature
            continue
        if [p[0] for p in expected] == ["args", "kwargs"]:  # torch's boolean_dispatch wrappers
            continue
        assert params(getattr(F, name)) == expected, name
        checked += 1
    assert checked > 75


@pytest.mark.parametrize("nd, shape, kwargs", [
    (2, (2, 3, 9, 8), {"kernel_size": 2, "output_size": (4, 5)}),
    (2, (2, 3, 9, 8), {"kernel_size": (3, 2), "output_ratio": (0.5, 0.7)}),
    (2, (3, 7, 7), {"kernel_size": 3, "output_size": 3}),
    (3, (1, 2, 6, 7, 5), {"kernel_size": 2, "output_size": (3, 4, 2)}),
])
def test_fractional_max_pool_matches_pytorch_given_the_samples(nd, shape, kwargs):
    samples = rng.random((shape[0] if len(shape) == nd + 2 else 1, shape[-nd - 1], nd))
    fn = "fractional_max_pool%dd" % nd
    compare(torch, lambda x, s, **k: getattr(F, fn)(x, _random_samples=s, return_indices=True, **k),
            lambda x, s, **k: getattr(TF, fn)(x, _random_samples=s, return_indices=True, **k),
            (r(*shape), samples), kwargs, constant=(1,))
