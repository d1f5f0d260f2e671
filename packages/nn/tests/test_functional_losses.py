"""Every loss of ember_nn.functional against a NumPy reference, for each reduction,
plus PyTorch's shape and argument errors. No PyTorch needed."""
import numpy as np
import pytest

import ember_autograd  # noqa: F401 - backward()
import ember_nn.functional as F
import ember_tensor as et

rng = np.random.default_rng(2)


def t(a):
    return et.tensor(a)


def log_softmax(x, axis=1):
    m = x.max(axis, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis, keepdims=True))


def softplus(x):
    return np.logaddexp(0, x)


x, y = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
p, q = rng.random((3, 4)) * 0.9 + 0.05, rng.random((3, 4))
signs = np.sign(rng.standard_normal((3, 4)))
d = x - y

ELEMENTWISE = [
    # name, args, kwargs, per-element reference
    ("l1_loss", (x, y), {}, np.abs(d)),
    ("mse_loss", (x, y), {}, d * d),
    ("huber_loss", (x * 2, y), {"delta": 0.5},
     np.where(np.abs(2 * x - y) < 0.5, 0.5 * (2 * x - y) ** 2, 0.5 * (np.abs(2 * x - y) - 0.25))),
    ("smooth_l1_loss", (x * 2, y), {"beta": 0.5},
     np.where(np.abs(2 * x - y) < 0.5, 0.5 * (2 * x - y) ** 2 / 0.5, np.abs(2 * x - y) - 0.25)),
    ("binary_cross_entropy", (p, q), {}, -(q * np.log(p) + (1 - q) * np.log(1 - p))),
    ("binary_cross_entropy_with_logits", (x * 30, q), {}, (1 - q) * 30 * x + softplus(-30 * x)),
    ("binary_cross_entropy_with_logits", (x, q), {"pos_weight": t(np.array([1.0, 2.0, 3.0, 4.0]))},
     (1 - q) * x + (1 + (np.array([1.0, 2, 3, 4]) - 1) * q) * softplus(-x)),
    ("poisson_nll_loss", (x, q * 3), {}, np.exp(x) - 3 * q * x),
    ("poisson_nll_loss", (p, q * 3), {"log_input": False}, p - 3 * q * np.log(p + 1e-8)),
    ("gaussian_nll_loss", (x, y, p), {}, 0.5 * (np.log(p) + d * d / p)),
    ("kl_div", (np.log(p), q), {}, np.where(q > 0, q * (np.log(np.where(q > 0, q, 1)) - np.log(p)), 0)),
    ("kl_div", (np.log(p), np.log(q)), {"log_target": True}, q * (np.log(q) - np.log(p))),
    ("soft_margin_loss", (x, signs), {}, np.log1p(np.exp(-signs * x))),
    ("hinge_embedding_loss", (x, signs), {"margin": 0.5}, np.where(signs == 1, x, np.maximum(0, 0.5 - x))),
]


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("case", ELEMENTWISE, ids=[c[0] for c in ELEMENTWISE])
def test_elementwise_losses(case, reduction):
    name, args, kwargs, reference = case
    out = getattr(F, name)(*[t(a) for a in args], reduction=reduction, **kwargs).numpy()
    expected = {"none": reference, "mean": reference.mean(), "sum": reference.sum()}[reduction]
    np.testing.assert_allclose(out, expected, rtol=1e-6, atol=1e-12)


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_nll_and_cross_entropy_with_weights_and_ignore_index(reduction):
    logits = rng.standard_normal((5, 4, 2))
    target = np.array([[0, 3], [1, 1], [2, -100], [3, 0], [-100, 2]])
    weight = np.array([0.2, 1.0, 2.0, 0.7])
    logp = log_softmax(logits)
    valid = target != -100
    safe = np.where(valid, target, 0)
    picked = np.take_along_axis(logp, safe[:, None], 1)[:, 0]
    w = weight[safe] * valid
    losses = -picked * w
    expected = {"none": losses, "sum": losses.sum(), "mean": losses.sum() / w.sum()}[reduction]
    ce = F.cross_entropy(t(logits), t(target), t(weight), reduction=reduction)
    nll = F.nll_loss(t(logp), t(target), t(weight), reduction=reduction)
    np.testing.assert_allclose(ce.numpy(), expected, atol=1e-12)
    np.testing.assert_allclose(nll.numpy(), expected, atol=1e-12)


def test_cross_entropy_label_smoothing_and_probability_targets():
    logits = rng.standard_normal((4, 5))
    target = np.array([1, 0, 4, 2])
    logp = log_softmax(logits)
    eps = 0.2
    smoothed = np.full((4, 5), eps / 5)
    smoothed[np.arange(4), target] += 1 - eps
    expected = -(smoothed * logp).sum(1).mean()
    np.testing.assert_allclose(F.cross_entropy(t(logits), t(target), label_smoothing=eps).numpy(), expected)
    probs = rng.random((4, 5))
    probs /= probs.sum(1, keepdims=True)
    np.testing.assert_allclose(F.cross_entropy(t(logits), t(probs)).numpy(), -(probs * logp).sum(1).mean())
    # Unbatched input: the class dim is 0.
    np.testing.assert_allclose(F.cross_entropy(t(logits[0]), t(np.array(1))).numpy(), -logp[0, 1])


def test_margin_and_embedding_losses():
    a, b = rng.standard_normal(6), rng.standard_normal(6)
    s = np.sign(rng.standard_normal(6))
    np.testing.assert_allclose(F.margin_ranking_loss(t(a), t(b), t(s), margin=0.1).numpy(),
                               np.maximum(0, -s * (a - b) + 0.1).mean())
    x1, x2 = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    s3 = np.array([1.0, -1.0, 1.0])
    cos = (x1 * x2).sum(1) / np.sqrt(((x1 ** 2).sum(1) + 1e-12) * ((x2 ** 2).sum(1) + 1e-12))
    np.testing.assert_allclose(F.cosine_embedding_loss(t(x1), t(x2), t(s3), margin=0.2).numpy(),
                               np.where(s3 == 1, 1 - cos, np.maximum(0, cos - 0.2)).mean())
    anchor, pos, neg = (rng.standard_normal((3, 4)) for _ in range(3))
    dist = lambda u, v: np.linalg.norm(u - v + 1e-6, axis=1)  # noqa: E731
    np.testing.assert_allclose(F.triplet_margin_loss(t(anchor), t(pos), t(neg)).numpy(),
                               np.maximum(dist(anchor, pos) - dist(anchor, neg) + 1, 0).mean())
    out = F.triplet_margin_with_distance_loss(t(anchor), t(pos), t(neg),
                                              distance_function=lambda u, v: (u - v).abs().sum(-1))
    l1 = lambda u, v: np.abs(u - v).sum(1)  # noqa: E731
    np.testing.assert_allclose(out.numpy(), np.maximum(l1(anchor, pos) - l1(anchor, neg) + 1, 0).mean())


def test_multi_class_margin_losses():
    scores = rng.standard_normal((3, 4))
    target = np.array([2, 0, 3])
    right = scores[np.arange(3), target][:, None]
    hinge = np.maximum(0, 1 - right + scores)
    hinge[np.arange(3), target] = 0
    np.testing.assert_allclose(F.multi_margin_loss(t(scores), t(target)).numpy(), (hinge.sum(1) / 4).mean())
    labels = np.array([[3, 0, -1, 1], [1, -1, 0, 0], [0, 1, 2, 3]])
    expected = []
    for row, lab in zip(scores, labels):
        tgt = list(lab[:list(lab).index(-1)]) if -1 in lab else list(lab)
        others = [i for i in range(4) if i not in tgt]
        expected.append(sum(max(0, 1 - (row[j] - row[i])) for j in tgt for i in others) / 4)
    np.testing.assert_allclose(F.multilabel_margin_loss(t(scores), t(labels), reduction="none").numpy(), expected)
    multi = rng.integers(0, 2, (3, 4)).astype(float)
    ref = -(multi * -softplus(-scores) + (1 - multi) * -softplus(scores)).mean(1)
    np.testing.assert_allclose(F.multilabel_soft_margin_loss(t(scores), t(multi), reduction="none").numpy(), ref)


def ctc_reference(logp, labels):
    """-log p(labels) by brute force over all alignments of length T (tiny cases only)."""
    import itertools
    total = 0.0
    for path in itertools.product(range(logp.shape[1]), repeat=logp.shape[0]):
        collapsed = [c for i, c in enumerate(path) if c != 0 and (i == 0 or c != path[i - 1])]
        if collapsed == list(labels):
            total += np.exp(sum(logp[i, c] for i, c in enumerate(path)))
    return -np.log(total)


def test_ctc_loss_against_brute_force():
    logp = log_softmax(rng.standard_normal((4, 2, 3)), axis=2)
    targets = np.array([[1, 2], [1, 1]])
    out = F.ctc_loss(t(logp), t(targets), [4, 4], [2, 2], reduction="none").numpy()
    np.testing.assert_allclose(out, [ctc_reference(logp[:, 0], [1, 2]), ctc_reference(logp[:, 1], [1, 1])])
    mean = F.ctc_loss(t(logp), t(targets), [4, 4], [2, 2]).numpy()
    np.testing.assert_allclose(mean, (out / 2).mean())
    impossible = F.ctc_loss(t(logp[:1]), t(targets), [1, 1], [2, 2], reduction="none", zero_infinity=True)
    assert impossible.tolist() == [0.0, 0.0]


def test_losses_have_gradients():
    logits = et.randn(4, 5, dtype=et.float64, requires_grad=True)
    F.cross_entropy(logits, et.tensor([1, 0, 4, 2]), label_smoothing=0.1).backward()
    # Each row of the gradient of a softmax loss sums to zero.
    np.testing.assert_allclose(logits.grad.numpy().sum(1), 0, atol=1e-12)
    z = et.randn(6, dtype=et.float64, requires_grad=True)
    F.binary_cross_entropy_with_logits(z, et.rand(6, dtype=et.float64)).backward()
    assert z.grad is not None and z.grad.shape == z.shape


ERRORS = [
    (lambda: F.nll_loss(et.zeros(2, 3), et.tensor([0, 3])), IndexError, "Target 3 is out of bounds."),
    (lambda: F.cross_entropy(et.zeros(3, 4), et.tensor([0, 1])), ValueError,
     r"Expected input batch_size \(3\) to match target batch_size \(2\)."),
    (lambda: F.nll_loss(et.zeros(2, 3, 4), et.zeros(2, 3, dtype=et.int64)), RuntimeError,
     r"Expected target size \[2, 4\], got \[2, 3\]"),
    (lambda: F.binary_cross_entropy(et.rand(3), et.rand(4)), ValueError,
     r"Using a target size \(torch.Size\(\[4\]\)\) that is different to the input size"),
    (lambda: F.binary_cross_entropy_with_logits(et.rand(3), et.rand(4)), ValueError,
     r"Target size \(torch.Size\(\[4\]\)\) must be the same as input size \(torch.Size\(\[3\]\)\)"),
    (lambda: F.mse_loss(et.rand(3), et.rand(3), reduction="avg"), ValueError, "avg is not a valid value for reduction"),
    (lambda: F.cross_entropy(et.zeros(2, 3), et.tensor([0, 1]), label_smoothing=1.5), RuntimeError,
     "label_smoothing must be between 0.0 and 1.0. Got: 1.5"),
    (lambda: F.gaussian_nll_loss(et.zeros(2), et.zeros(2), et.tensor([1.0, -1.0])), ValueError,
     "var has negative entry/entries"),
    (lambda: F.multi_margin_loss(et.zeros(2, 3), et.tensor([0, 1]), p=3), ValueError,
     "only p == 1 and p == 2 supported"),
]


@pytest.mark.parametrize("call, error, message", ERRORS)
def test_pytorch_errors(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_legacy_reduction_flags():
    with pytest.warns(UserWarning, match="size_average and reduce args will be deprecated"):
        out = F.mse_loss(t(x), t(y), size_average=False)
    np.testing.assert_allclose(out.numpy(), (d * d).sum())
    with pytest.warns(UserWarning):
        assert tuple(F.l1_loss(t(x), t(y), reduce=False).shape) == (3, 4)


def test_cross_entropy_refuses_a_non_negative_ignore_index_with_probability_targets():
    logits, probabilities = et.zeros(2, 3), et.full((2, 3), 1 / 3)
    for ignore_index in (1, 0):
        with pytest.raises(RuntimeError, match="ignore_index is not supported for floating point target"):
            F.cross_entropy(logits, probabilities, ignore_index=ignore_index)
    for ignore_index in (-100, -1):
        assert F.cross_entropy(logits, probabilities, ignore_index=ignore_index).item() == pytest.approx(1.0986122886681098)
