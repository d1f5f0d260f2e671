"""ember_nn.functional (everything but the losses) against NumPy references, with
non-contiguous and 0-d inputs where the function takes them. No PyTorch needed."""
import math

import numpy as np
import pytest

import ember_autograd  # noqa: F401 - backward()
import ember_nn.functional as F
import ember_tensor as et

rng = np.random.default_rng(1)


def noncontig(a):
    """The same values as `a`, as a non-contiguous tensor (a transposed copy transposed back)."""
    return et.tensor(np.ascontiguousarray(np.swapaxes(a, 0, -1))).transpose(0, -1)


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def softplus(x):
    return np.log1p(np.exp(x))


ERF = np.vectorize(math.erf)

ACTIVATIONS = [
    # name, kwargs, reference
    ("relu", {}, lambda x: np.maximum(x, 0)),
    ("relu6", {}, lambda x: np.clip(x, 0, 6)),
    ("leaky_relu", {"negative_slope": 0.1}, lambda x: np.where(x > 0, x, 0.1 * x)),
    ("elu", {"alpha": 0.5}, lambda x: np.where(x > 0, x, 0.5 * np.expm1(x))),
    ("selu", {}, lambda x: 1.0507009873554805 * np.where(x > 0, x, 1.6732632423543772 * np.expm1(x))),
    ("celu", {"alpha": 2.0}, lambda x: np.where(x > 0, x, 2.0 * np.expm1(x / 2.0))),
    ("gelu", {}, lambda x: 0.5 * x * (1 + ERF(x / np.sqrt(2)))),
    ("gelu", {"approximate": "tanh"},
     lambda x: 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))),
    ("silu", {}, lambda x: x * sigmoid(x)),
    ("mish", {}, lambda x: x * np.tanh(softplus(x))),
    ("sigmoid", {}, sigmoid),
    ("logsigmoid", {}, lambda x: -softplus(-x)),
    ("tanh", {}, np.tanh),
    ("tanhshrink", {}, lambda x: x - np.tanh(x)),
    ("hardtanh", {"min_val": -0.5, "max_val": 0.5}, lambda x: np.clip(x, -0.5, 0.5)),
    ("hardsigmoid", {}, lambda x: np.clip(x / 6 + 0.5, 0, 1)),
    ("hardswish", {}, lambda x: x * np.clip(x + 3, 0, 6) / 6),
    ("hardshrink", {"lambd": 0.5}, lambda x: np.where(np.abs(x) > 0.5, x, 0)),
    ("softshrink", {"lambd": 0.5}, lambda x: np.where(x > 0.5, x - 0.5, np.where(x < -0.5, x + 0.5, 0))),
    ("softplus", {"beta": 2.0}, lambda x: softplus(2 * x) / 2),
    ("softsign", {}, lambda x: x / (1 + np.abs(x))),
    ("threshold", {"threshold": 0.2, "value": -1.0}, lambda x: np.where(x > 0.2, x, -1.0)),
    ("rrelu", {"training": False}, lambda x: np.where(x >= 0, x, x * (1 / 8 + 1 / 3) / 2)),
]


@pytest.mark.parametrize("name, kwargs, reference", ACTIVATIONS, ids=[a[0] for a in ACTIVATIONS])
@pytest.mark.parametrize("layout", ["contiguous", "noncontiguous", "0-d"])
def test_activation(name, kwargs, reference, layout):
    x = rng.standard_normal(()) * 3 if layout == "0-d" else rng.standard_normal((3, 4)) * 3
    t = noncontig(x) if layout == "noncontiguous" else et.tensor(x)
    np.testing.assert_allclose(getattr(F, name)(t, **kwargs).numpy(), reference(x), rtol=1e-6, atol=1e-12)


def test_inplace_activations_write_their_input():
    x = et.tensor([-1.0, 2.0])
    assert F.relu(x, inplace=True) is x and x.tolist() == [0.0, 2.0]
    y = et.tensor([-1.0, 2.0])
    F.leaky_relu_(y, 0.5)
    assert y.tolist() == [-0.5, 2.0]


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_softmax_family(dim):
    x = rng.standard_normal((3, 4))
    e = np.exp(x - x.max(dim, keepdims=True))
    ref = e / e.sum(dim, keepdims=True)
    np.testing.assert_allclose(F.softmax(noncontig(x), dim).numpy(), ref, atol=1e-12)
    np.testing.assert_allclose(F.log_softmax(et.tensor(x), dim).numpy(), np.log(ref), atol=1e-12)
    e = np.exp(-x - (-x).max(dim, keepdims=True))
    np.testing.assert_allclose(F.softmin(et.tensor(x), dim).numpy(), e / e.sum(dim, keepdims=True), atol=1e-12)


def test_glu_and_prelu():
    x = rng.standard_normal((2, 6))
    np.testing.assert_allclose(F.glu(et.tensor(x), 1).numpy(), x[:, :3] * sigmoid(x[:, 3:]))
    x = rng.standard_normal((2, 3, 4))
    w = np.array([0.1, 0.2, 0.3])
    np.testing.assert_allclose(F.prelu(et.tensor(x), et.tensor(w)).numpy(), np.where(x > 0, x, x * w[:, None]))
    with pytest.raises(RuntimeError, match="Halving dimension must be even"):
        F.glu(et.ones(3))


def test_linear_and_bilinear():
    x, w, b = rng.standard_normal((2, 5, 3)), rng.standard_normal((4, 3)), rng.standard_normal(4)
    np.testing.assert_allclose(F.linear(noncontig(x), et.tensor(w), et.tensor(b)).numpy(), x @ w.T + b)
    np.testing.assert_allclose(F.linear(et.tensor(x[0]), et.tensor(w)).numpy(), x[0] @ w.T)
    x1, x2, wb = rng.standard_normal((5, 3)), rng.standard_normal((5, 2)), rng.standard_normal((4, 3, 2))
    ref = np.einsum("bi,kij,bj->bk", x1, wb, x2) + b
    np.testing.assert_allclose(F.bilinear(et.tensor(x1), et.tensor(x2), et.tensor(wb), et.tensor(b)).numpy(), ref)
    with pytest.raises(RuntimeError, match=r"mat1 and mat2 shapes cannot be multiplied \(10x3 and 2x4\)"):
        F.linear(et.tensor(x), et.ones(4, 2, dtype=et.float64))


def conv2d_reference(x, w, stride=1, padding=0):
    xp = np.pad(x, ((0, 0), (0, 0), (padding, padding), (padding, padding)))
    n, _, h, wd = xp.shape
    o, _, kh, kw = w.shape
    oh, ow = (h - kh) // stride + 1, (wd - kw) // stride + 1
    y = np.zeros((n, o, oh, ow))
    for i in range(oh):
        for j in range(ow):
            patch = xp[:, :, i * stride:i * stride + kh, j * stride:j * stride + kw]
            y[:, :, i, j] = np.einsum("nchw,ochw->no", patch, w)
    return y


def test_conv2d_batched_unbatched_and_same_padding():
    x, w, b = rng.standard_normal((2, 3, 6, 5)), rng.standard_normal((4, 3, 3, 3)), rng.standard_normal(4)
    ref = conv2d_reference(x, w, 2, 1) + b[:, None, None]
    np.testing.assert_allclose(F.conv2d(noncontig(x), et.tensor(w), et.tensor(b), 2, 1).numpy(), ref, atol=1e-12)
    np.testing.assert_allclose(F.conv2d(et.tensor(x[0]), et.tensor(w), None, 2, 1).numpy(),
                               conv2d_reference(x[:1], w, 2, 1)[0], atol=1e-12)
    same = F.conv2d(et.tensor(x), et.tensor(w), padding="same")
    assert tuple(same.shape) == (2, 4, 6, 5)
    with pytest.raises(RuntimeError, match="padding='same' is not supported for strided convolutions"):
        F.conv2d(et.tensor(x), et.tensor(w), stride=2, padding="same")


def test_conv_transpose_is_the_adjoint_of_conv():
    # conv1d's weight (out=3, in=2, k) is, read as (in=3, out=2, k), conv_transpose1d's.
    x, w, z = rng.standard_normal((1, 2, 7)), rng.standard_normal((3, 2, 3)), rng.standard_normal((1, 3, 3))
    forward = F.conv1d(et.tensor(x), et.tensor(w), stride=2).numpy()
    back = F.conv_transpose1d(et.tensor(z), et.tensor(w), stride=2).numpy()
    assert back.shape == x.shape
    assert np.isclose((forward * z).sum(), (back * x).sum())


def test_pools():
    x = rng.standard_normal((2, 3, 4, 6))
    blocks = x.reshape(2, 3, 2, 2, 3, 2)
    np.testing.assert_allclose(F.max_pool2d(noncontig(x), 2).numpy(), blocks.max((3, 5)))
    np.testing.assert_allclose(F.avg_pool2d(et.tensor(x), 2).numpy(), blocks.mean((3, 5)))
    np.testing.assert_allclose(F.adaptive_avg_pool2d(et.tensor(x), (2, 3)).numpy(), blocks.mean((3, 5)))
    np.testing.assert_allclose(F.adaptive_max_pool2d(et.tensor(x), (2, 3)).numpy(), blocks.max((3, 5)))
    np.testing.assert_allclose(F.adaptive_avg_pool2d(et.tensor(x), 1).numpy(), x.mean((2, 3), keepdims=True))
    values, indices = F.max_pool2d(et.tensor(x), 2, return_indices=True)
    restored = F.max_unpool2d(values, indices, 2).numpy()
    assert restored.shape == x.shape and np.array_equal(np.sort(restored[restored != 0]), np.sort(values.numpy().ravel()))
    lp = F.lp_pool2d(et.tensor(np.abs(x)), 2, 2).numpy()
    np.testing.assert_allclose(lp, np.sqrt((np.abs(blocks) ** 2).sum((3, 5))))
    # Unbatched input and a 1-d pool.
    np.testing.assert_allclose(F.max_pool1d(et.tensor(x[0]), 3).numpy(), x[0].reshape(3, 4, 2, 3).max(-1))


def test_normalisations():
    x = rng.standard_normal((4, 3, 5))
    mean, var = x.mean((0, 2), keepdims=True), x.var((0, 2), keepdims=True)
    rm, rv = et.zeros(3, dtype=et.float64), et.ones(3, dtype=et.float64)
    out = F.batch_norm(noncontig(x), rm, rv, training=True, momentum=0.5)
    np.testing.assert_allclose(out.numpy(), (x - mean) / np.sqrt(var + 1e-5), atol=1e-12)
    np.testing.assert_allclose(rm.numpy(), 0.5 * mean.ravel())
    inst = F.instance_norm(et.tensor(x)).numpy()
    np.testing.assert_allclose(inst, (x - x.mean(2, keepdims=True)) / np.sqrt(x.var(2, keepdims=True) + 1e-5),
                               atol=1e-12)
    ln = F.layer_norm(et.tensor(x), (5,)).numpy()
    np.testing.assert_allclose(ln, (x - x.mean(2, keepdims=True)) / np.sqrt(x.var(2, keepdims=True) + 1e-5),
                               atol=1e-12)
    rms = F.rms_norm(et.tensor(x), (5,), eps=1e-6).numpy()
    np.testing.assert_allclose(rms, x / np.sqrt((x * x).mean(2, keepdims=True) + 1e-6))
    g = F.group_norm(et.tensor(rng.standard_normal((2, 4, 3))), 2)
    assert abs(float(g.mean())) < 1e-12
    n = F.normalize(et.tensor(x), dim=1).numpy()
    np.testing.assert_allclose(n, x / np.linalg.norm(x, axis=1, keepdims=True))
    lrn = F.local_response_norm(et.tensor(x), 1, alpha=1.0, beta=1.0, k=1.0).numpy()
    np.testing.assert_allclose(lrn, x / (1 + x * x))


def test_distances():
    a, b = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    np.testing.assert_allclose(F.pairwise_distance(et.tensor(a), et.tensor(b)).numpy(),
                               np.linalg.norm(a - b + 1e-6, axis=-1))
    cos = (a * b).sum(1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)
    np.testing.assert_allclose(F.cosine_similarity(noncontig(a), et.tensor(b)).numpy(), cos)
    np.testing.assert_allclose(F.pdist(et.tensor(a)).numpy(),
                               [np.linalg.norm(a[i] - a[j]) for i in range(3) for j in range(i + 1, 3)])


@pytest.mark.parametrize("mode, numpy_mode", [("reflect", "reflect"), ("replicate", "edge"), ("circular", "wrap")])
def test_pad_modes(mode, numpy_mode):
    x = rng.standard_normal((1, 2, 3, 4))
    out = F.pad(noncontig(x), (2, 1, 1, 2), mode=mode).numpy()
    np.testing.assert_allclose(out, np.pad(x, ((0, 0), (0, 0), (1, 2), (2, 1)), mode=numpy_mode))


def test_constant_pad_and_errors():
    x = rng.standard_normal((2, 3))
    np.testing.assert_allclose(F.pad(et.tensor(x), (1, 2), value=7.0).numpy(),
                               np.pad(x, ((0, 0), (1, 2)), constant_values=7.0))
    with pytest.raises(RuntimeError, match="Padding size should be less than the corresponding input dimension"):
        F.pad(et.tensor(x).unsqueeze(0), (3, 3), mode="reflect")


def test_interpolate_modes():
    x = rng.standard_normal((1, 1, 3, 4))
    np.testing.assert_allclose(F.interpolate(et.tensor(x), scale_factor=2).numpy(),
                               x.repeat(2, axis=2).repeat(2, axis=3))
    # align_corners=True maps corners to corners: a linear ramp stays a linear ramp.
    ramp = np.arange(4.0).reshape(1, 1, 4)
    np.testing.assert_allclose(F.interpolate(et.tensor(ramp), size=7, mode="linear", align_corners=True).numpy(),
                               np.linspace(0, 3, 7).reshape(1, 1, 7))
    # align_corners=False: half-pixel centres, edges clamped.
    np.testing.assert_allclose(F.interpolate(et.tensor(ramp), scale_factor=2, mode="linear").numpy().ravel(),
                               [0, 0.25, 0.75, 1.25, 1.75, 2.25, 2.75, 3])
    # bicubic reproduces a constant exactly; area averages blocks.
    np.testing.assert_allclose(F.interpolate(et.ones(1, 1, 3, 3, dtype=et.float64), size=(5, 4),
                                             mode="bicubic").numpy(), np.ones((1, 1, 5, 4)))
    np.testing.assert_allclose(F.interpolate(et.tensor(x), size=(1, 2), mode="area").numpy(),
                               x.reshape(1, 1, 1, 3, 2, 2).mean((3, 5)))
    with pytest.raises(ValueError, match="align_corners option can only be set with the interpolating modes"):
        F.interpolate(et.tensor(x), scale_factor=2, align_corners=True)


def test_interpolate_nearest_computes_source_indices_in_float32_as_pytorch():
    # 18 -> 20: output 10 reads floorf(10 * 0.9f) = floorf(9.0f) = row 9 (float64 would give 8).
    out = F.interpolate(et.arange(18, dtype=et.float32).reshape(1, 1, 18), size=20, mode="nearest")
    assert out.flatten().tolist() == [0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 9, 10, 11, 12, 13, 14, 15, 16, 17]


def test_affine_grid_and_grid_sample_identity():
    x = rng.standard_normal((2, 3, 4, 5))
    theta = et.tensor(np.tile(np.array([[1.0, 0, 0], [0, 1.0, 0]]), (2, 1, 1)))
    for align in (True, False):
        grid = F.affine_grid(theta, (2, 3, 4, 5), align_corners=align)
        np.testing.assert_allclose(F.grid_sample(et.tensor(x), grid, align_corners=align).numpy(), x, atol=1e-12)
        np.testing.assert_allclose(F.grid_sample(et.tensor(x), grid, mode="nearest", align_corners=align).numpy(),
                                   x, atol=1e-12)


def test_unfold_fold_pixel_shuffle():
    x = rng.standard_normal((2, 3, 4, 4))
    cols = F.unfold(et.tensor(x), 2, stride=2)
    blocks = x.reshape(2, 3, 2, 2, 2, 2).transpose(0, 1, 3, 5, 2, 4).reshape(2, 12, 4)
    np.testing.assert_allclose(cols.numpy(), blocks)
    np.testing.assert_allclose(F.fold(cols, (4, 4), 2, stride=2).numpy(), x)
    shuffled = F.pixel_shuffle(et.tensor(x.reshape(2, 12, 2, 2)), 2)
    assert tuple(shuffled.shape) == (2, 3, 4, 4)
    np.testing.assert_allclose(F.pixel_unshuffle(shuffled, 2).numpy(), x.reshape(2, 12, 2, 2))


def test_embedding_and_one_hot():
    w = rng.standard_normal((5, 3))
    idx = np.array([[0, 4], [2, 2]])
    np.testing.assert_array_equal(F.embedding(et.tensor(idx), et.tensor(w)).numpy(), w[idx])
    weight = et.tensor(w, requires_grad=True)
    F.embedding(et.tensor(idx), weight, padding_idx=2).sum().backward()
    assert weight.grad.numpy()[:, 0].tolist() == [1.0, 0.0, 0.0, 0.0, 1.0]
    big = et.tensor(np.full((3, 2), 10.0))
    F.embedding(et.tensor([1]), big, max_norm=1.0)
    assert abs(float(big[1].norm()) - 1.0) < 1e-5 and float(big[0].norm()) > 10
    assert F.one_hot(et.tensor([2, 0])).tolist() == [[0, 0, 1], [1, 0, 0]]


def test_dropout_family():
    et.manual_seed(0)
    x = et.ones(2000, dtype=et.float64)
    y = F.dropout(x, 0.25).numpy()
    assert set(np.unique(y)) <= {0.0, 1 / 0.75} and abs((y == 0).mean() - 0.25) < 0.05
    assert F.dropout(x, 0.25, training=False) is x
    z = F.dropout2d(et.ones(4, 50, 3, 3, dtype=et.float64), 0.5).numpy()
    assert np.all(z.reshape(4, 50, 9).std(-1) == 0)  # whole channels kept or dropped
    a = F.alpha_dropout(et.randn(20000, dtype=et.float64), 0.2, training=True).numpy()
    assert abs(a.mean()) < 0.05 and abs(a.std() - 1) < 0.05  # SELU statistics kept
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1, but got 1.5"):
        F.dropout(x, 1.5)
    et.manual_seed(3)
    first = F.dropout(x, 0.5).numpy()
    et.manual_seed(3)
    assert np.array_equal(first, F.dropout(x, 0.5).numpy())


def test_functional_batch_norm_wants_a_float_momentum():
    with pytest.raises(TypeError, match="argument 'momentum' \\(position 7\\) must be float, not NoneType"):
        F.batch_norm(et.randn(4, 3), et.zeros(3), et.ones(3), training=True, momentum=None)


def test_gumbel_softmax_samples_the_distribution():
    et.manual_seed(0)
    logits = et.tensor(np.log([[0.2, 0.3, 0.5]]).repeat(4000, 0))
    soft = F.gumbel_softmax(logits, tau=0.5)
    np.testing.assert_allclose(soft.numpy().sum(1), 1.0)
    hard = F.gumbel_softmax(logits, hard=True).numpy()
    assert set(np.unique(hard)) == {0.0, 1.0} and np.all(hard.sum(1) == 1)
    # Argmax of logits + Gumbel noise is a sample of softmax(logits).
    np.testing.assert_allclose(hard.mean(0), [0.2, 0.3, 0.5], atol=0.03)
    x = et.randn(3, 4, dtype=et.float64, requires_grad=True)
    F.gumbel_softmax(x, hard=True, dim=0).sum().backward()
    assert x.grad is not None


def test_fractional_max_pool_picks_window_maxima():
    et.manual_seed(1)
    x = rng.standard_normal((2, 3, 9, 8))
    values, indices = F.fractional_max_pool2d(et.tensor(x), 2, output_size=(4, 5), return_indices=True)
    assert tuple(values.shape) == (2, 3, 4, 5)
    planes = x.reshape(2, 3, -1)
    np.testing.assert_array_equal(np.take_along_axis(planes, indices.numpy().reshape(2, 3, -1), 2).reshape(2, 3, 4, 5),
                                  values.numpy())
    # The first window starts at 0 and the last one ends at the input's edge.
    rows, cols = np.divmod(indices.numpy(), 8)
    assert rows[..., 0, :].min() <= 1 and rows[..., -1, :].max() >= 7
    assert cols[..., :, 0].min() <= 1 and cols[..., :, -1].max() >= 6
    with pytest.raises(ValueError, match="requires specifying either an output_size or an output_ratio"):
        F.fractional_max_pool2d(et.tensor(x), 2)


def test_grid_sample_nearest_gives_the_grid_a_zero_gradient():
    # PyTorch's result requires grad through the grid too; the grid's gradient is zeros.
    inp = et.randn(1, 2, 3, 3, requires_grad=True)
    grid = et.tensor(np.random.default_rng(0).uniform(-0.9, 0.9, (1, 2, 2, 2)).astype(np.float32),
                     requires_grad=True)
    out = F.grid_sample(inp, grid, mode="nearest", align_corners=False)
    assert out.requires_grad
    out.sum().backward()
    assert grid.grad is not None and grid.grad.abs().sum().item() == 0.0
    assert inp.grad.sum().item() == 8.0  # each of the 2 x 4 outputs picks one input


def test_grid_sample_of_a_nan_grid_does_not_crash():
    grid = et.zeros(1, 1, 2, 2)
    grid[0, 0, 0, 0] = float("nan")
    for mode in ("nearest", "bilinear", "bicubic"):
        out = F.grid_sample(et.ones(1, 1, 3, 3), grid, mode=mode, align_corners=False)
        assert out.shape == (1, 1, 1, 2) and out[0, 0, 0, 1].item() == 1.0
