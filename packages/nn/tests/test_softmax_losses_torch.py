"""softmax, log_softmax, cross_entropy and nll_loss against PyTorch: values and input
gradients (the fused row kernels forward and backward), float32 and float64, the last
and an inner dim, class-index and class-probability targets, weights, ignore_index,
label smoothing, reductions, and the edges (empty batch, every target ignored, -inf
logits, a single class), plus double backward through the differentiable formulas."""
import numpy as np
import pytest

import ember_autograd  # noqa: F401 - backward()
import ember_nn.functional as F
import ember_tensor as et

torch = pytest.importorskip("torch")
rng = np.random.default_rng(5)
TOL = {np.float32: 2e-5, np.float64: 1e-10}


def _pair(values, grad=True):
    """The same values as an ember and a torch tensor (leaves that require grad)."""
    a = et.tensor(values, requires_grad=grad)
    b = torch.tensor(values, requires_grad=grad)
    return a, b


def _close(got, expected, tol):
    np.testing.assert_allclose(np.asarray(got.detach().numpy(), np.float64),
                               expected.detach().numpy().astype(np.float64), rtol=tol, atol=tol)


def _check(call_ember, call_torch, values, dtype, extra=()):
    """Forward values and the input gradient of a random upstream gradient agree."""
    a, b = _pair(values.astype(dtype))
    ya, yb = call_ember(a, *extra), call_torch(b, *[torch.from_numpy(e.numpy()) if isinstance(e, et.Tensor)
                                                    else e for e in extra])
    _close(ya, yb, TOL[dtype])
    g = rng.standard_normal(tuple(yb.shape)).astype(dtype)
    ya.backward(et.tensor(g))
    yb.backward(torch.tensor(g))
    _close(a.grad, b.grad, TOL[dtype] * 10)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
@pytest.mark.parametrize("shape, dim", [((7, 1000), -1), ((64, 33), 0), ((3, 70, 600), 1), ((5,), 0),
                                        ((0, 4), 1), ((4, 1), 1), ((2, 3, 4, 5), 2)])
def test_softmax_matches_torch(name, shape, dim, dtype):
    x = rng.standard_normal(shape) * 6
    _check(lambda t: getattr(F, name)(t, dim), lambda t: getattr(torch.nn.functional, name)(t, dim), x, dtype)


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_infinite_logits_match_torch(name):
    """-inf logits (masked attention) get probability 0, and their gradient is PyTorch's."""
    x = rng.standard_normal((4, 9))
    x[:, ::3] = -np.inf
    _check(lambda t: getattr(F, name)(t, 1), lambda t: getattr(torch.nn.functional, name)(t, 1), x, np.float32)


def _special_rows(case, columns):
    """Rows of 6 x `columns` logits with special values where the row kernels take each
    row's max in the previous row's exp pass: a NaN, +inf, an all -inf row or huge values
    in the first, a middle or the last row, beside ordinary rows."""
    x = rng.standard_normal((6, columns)) * 4
    kind, row = case
    if kind == "nan":
        x[row, columns // 2] = np.nan
    elif kind == "inf":
        x[row, 0] = np.inf
    elif kind == "all -inf":
        x[row] = -np.inf
    elif kind == "huge":
        x[row] = rng.standard_normal(columns) * 1e30
    elif kind == "denormal exps":  # exp(x - max) below float32's smallest normal number
        x[row] = -np.linspace(0.0, 104.0, columns)
    return x


SPECIAL_ROWS = [(kind, row) for kind in ("nan", "inf", "all -inf", "huge", "denormal exps") for row in (0, 2, 5)]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("columns", [1, 17, 1000])
@pytest.mark.parametrize("case", SPECIAL_ROWS, ids=lambda c: f"{c[0]}-row{c[1]}")
@pytest.mark.parametrize("name", ["softmax", "log_softmax", "cross_entropy"])
def test_special_rows_beside_ordinary_rows_match_torch(name, case, columns, dtype):
    """NaN rows stay NaN (and only they), -inf and +inf give PyTorch's values, whichever
    row they sit in: the next row's max is taken during this row's exp pass."""
    x = _special_rows(case, columns).astype(dtype)
    target = rng.integers(0, columns, 6)
    a, b = et.tensor(x), torch.tensor(x)
    if name == "cross_entropy":
        got = F.cross_entropy(a, et.tensor(target), reduction="none")
        expected = torch.nn.functional.cross_entropy(b, torch.tensor(target), reduction="none")
    else:
        got, expected = getattr(F, name)(a, 1), getattr(torch.nn.functional, name)(b, 1)
    np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=TOL[dtype] * 10, atol=TOL[dtype],
                               equal_nan=True)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "strided"])
@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_many_rows_in_any_layout_match_torch(name, layout, dtype):
    """Rows past the size the backend splits across threads (80 x 1000), from a transposed
    or every-other-column view: values and the input gradient are PyTorch's."""
    base = rng.standard_normal((80, 2000) if layout == "strided" else (80, 1000)) * 5
    base[7, 3] = np.nan  # a NaN row inside the first part
    base[79, 0] = np.inf  # and +inf in the last row
    values = base.astype(dtype)

    def view(t):
        if layout == "transposed":
            return t.T.contiguous().T if isinstance(t, torch.Tensor) else t.T.contiguous().T
        return t[:, ::2] if layout == "strided" else t
    a, b = _pair(values)
    ya, yb = getattr(F, name)(view(a), 1), getattr(torch.nn.functional, name)(view(b), 1)
    np.testing.assert_allclose(ya.detach().numpy(), yb.detach().numpy(), rtol=TOL[dtype] * 10, atol=TOL[dtype],
                               equal_nan=True)
    g = rng.standard_normal(tuple(yb.shape)).astype(dtype)
    ya.backward(et.tensor(g))
    yb.backward(torch.tensor(g))
    np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=TOL[dtype] * 100, atol=TOL[dtype] * 10,
                               equal_nan=True)


CE_CASES = [  # (logits shape, target kind, kwargs)
    ((32, 10), "index", {}),
    ((32, 10), "index", {"reduction": "sum"}),
    ((32, 10), "index", {"reduction": "none"}),
    ((32, 10), "index", {"weight": "w"}),
    ((32, 10), "index", {"ignore_index": 3, "weight": "w"}),
    ((32, 10), "index", {"label_smoothing": 0.2}),
    ((32, 10), "index", {"label_smoothing": 0.1, "weight": "w", "ignore_index": 2}),
    ((4, 10, 3, 5), "index", {}),
    ((4, 10, 3, 5), "index", {"reduction": "none", "ignore_index": 0}),
    ((10,), "index", {}),
    ((32, 10), "probs", {}),
    ((32, 10), "probs", {"label_smoothing": 0.3, "weight": "w"}),
    ((4, 10, 6), "probs", {"reduction": "sum"}),
]


def _ce_args(shape, kind, kwargs, dtype):
    classes = shape[0] if len(shape) == 1 else shape[1]
    target_shape = () if len(shape) == 1 else (shape[0],) + shape[2:]
    if kind == "index":
        target = rng.integers(0, classes, target_shape)
        te, tt = et.tensor(target), torch.tensor(target)
    else:
        probs = rng.random(shape).astype(dtype)
        probs /= probs.sum(0 if len(shape) == 1 else 1, keepdims=True)
        te, tt = et.tensor(probs), torch.tensor(probs)
    ke, kt = dict(kwargs), dict(kwargs)
    if kwargs.get("weight") == "w":
        w = (rng.random(classes) + 0.5).astype(dtype)
        ke["weight"], kt["weight"] = et.tensor(w), torch.tensor(w)
    return te, tt, ke, kt


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape, kind, kwargs", CE_CASES)
def test_cross_entropy_matches_torch(shape, kind, kwargs, dtype):
    te, tt, ke, kt = _ce_args(shape, kind, kwargs, dtype)
    _check(lambda t: F.cross_entropy(t, te, **ke), lambda t: torch.nn.functional.cross_entropy(t, tt, **kt),
           rng.standard_normal(shape) * 3, dtype)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cross_entropy_edges_match_torch(reduction):
    """Every target ignored (mean: NaN, as PyTorch), an empty batch, -inf logits off target."""
    x = rng.standard_normal((6, 5))
    target = np.full(6, -100)
    cases = [(x, target), (np.zeros((0, 5)), np.zeros(0, np.int64))]
    masked = x.copy()
    masked[:, 1] = -np.inf
    cases.append((masked, np.array([0, 2, 3, 4, 0, 2])))
    for logits, t in cases:
        a, b = _pair(logits.astype(np.float32))
        la = F.cross_entropy(a, et.tensor(t), reduction=reduction)
        lb = torch.nn.functional.cross_entropy(b, torch.tensor(t), reduction=reduction)
        np.testing.assert_allclose(la.detach().numpy(), lb.detach().numpy(), rtol=1e-5, atol=1e-6)
        if lb.numel():
            la.sum().backward()
            lb.sum().backward()
            np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_nll_loss_of_log_softmax_matches_torch():
    x = rng.standard_normal((16, 7))
    t = rng.integers(0, 7, 16)
    _check(lambda a: F.nll_loss(F.log_softmax(a, 1), et.tensor(t)),
           lambda b: torch.nn.functional.nll_loss(torch.nn.functional.log_softmax(b, 1), torch.tensor(t)),
           x, np.float64)


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_double_backward_matches_torch(name):
    """create_graph takes the differentiable formula: second derivatives are PyTorch's."""
    x = rng.standard_normal((3, 5))
    v = rng.standard_normal((3, 5))
    a, b = _pair(x)
    ga, = ember_autograd.grad((getattr(F, name)(a, 1) * et.tensor(v)).sum(), a, create_graph=True)
    gb, = torch.autograd.grad((getattr(torch.nn.functional, name)(b, 1) * torch.tensor(v)).sum(), b,
                              create_graph=True)
    (ga ** 2).sum().backward()
    (gb ** 2).sum().backward()
    _close(a.grad, b.grad, 1e-10)


def test_fused_backward_is_not_differentiated_again():
    """Without create_graph the gradient is a plain tensor (no graph kept)."""
    a = et.tensor(rng.standard_normal((2, 3)), requires_grad=True)
    g, = ember_autograd.grad(F.softmax(a, 1).pow(2).sum(), a)
    assert not g.requires_grad
