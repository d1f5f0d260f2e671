"""gradcheck and gradgradcheck (float64) of every differentiable op family, on contiguous,
non-contiguous and 0-d samples. Inputs are drawn away from kinks (|x| > 0.1) and inside each
op's domain, so finite differences are meaningful."""
import numpy as np
import pytest

import ember_autograd
import ember_tensor as E
from ember_autograd.gradcheck import GradcheckError

gradcheck = ember_autograd.gradcheck
gradgradcheck = ember_autograd.gradgradcheck


def sample(shape, low=-2.0, high=2.0, seed=0, transposed=False):
    """A float64 leaf requiring grad, uniform in [low, high] and at least 0.1 from 0 and
    from every other element (no ties for max/min/median)."""
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape)) if shape else 1
    while True:
        values = rng.uniform(low, high, n)
        spaced = np.diff(np.sort(values)).min(initial=1.0) > 0.02
        if spaced and (np.abs(values).min() > 0.1 or low >= 0):
            break
    array = values.reshape(shape)
    if transposed and len(shape) >= 2:
        t = E.tensor(np.ascontiguousarray(array.swapaxes(-1, -2)), dtype=E.float64).transpose(-1, -2)
    else:
        t = E.tensor(array, dtype=E.float64)
    return t.requires_grad_()


POS = dict(low=0.2, high=2.0)
UNIT = dict(low=-0.9, high=0.9)

# (id, function, [(shape, sample kwargs), ...], check second order)
OPS = [
    ("neg", lambda x: -x, [((3, 4), {})], True),
    ("abs", E.abs, [((3, 4), {})], True),
    ("exp", E.exp, [((3, 4), {})], True),
    ("exp2", E.exp2, [((3,), {})], True),
    ("expm1", E.expm1, [((3,), {})], True),
    ("log", E.log, [((3, 4), POS)], True),
    ("log2", E.log2, [((3,), POS)], True),
    ("log10", E.log10, [((3,), POS)], True),
    ("log1p", E.log1p, [((3,), POS)], True),
    ("sqrt", E.sqrt, [((3, 4), POS)], True),
    ("rsqrt", E.rsqrt, [((3,), POS)], True),
    ("reciprocal", E.reciprocal, [((3,), POS)], True),
    ("square", E.square, [((3,), {})], True),
    ("sin", E.sin, [((3, 4), {})], True),
    ("cos", E.cos, [((3,), {})], True),
    ("tan", E.tan, [((3,), UNIT)], True),
    ("asin", E.asin, [((3,), UNIT)], True),
    ("acos", E.acos, [((3,), UNIT)], True),
    ("atan", E.atan, [((3,), {})], True),
    ("sinh", E.sinh, [((3,), {})], True),
    ("cosh", E.cosh, [((3,), {})], True),
    ("tanh", E.tanh, [((3, 4), {})], True),
    ("asinh", E.asinh, [((3,), {})], True),
    ("acosh", E.acosh, [((3,), dict(low=1.2, high=3.0))], True),
    ("atanh", E.atanh, [((3,), UNIT)], True),
    ("sigmoid", E.sigmoid, [((3, 4), {})], True),
    ("relu", E.relu, [((3, 4), {})], True),
    ("erf", E.erf, [((3,), {})], True),
    ("erfc", E.erfc, [((3,), {})], True),
    ("erfinv", E.erfinv, [((3,), UNIT)], True),
    ("lgamma", E.lgamma, [((3,), POS)], True),
    ("digamma", E.digamma, [((3,), POS)], True),
    ("logit", E.logit, [((3,), dict(low=0.1, high=0.9))], True),
    ("frac", E.frac, [((3,), dict(low=0.1, high=0.9))], True),
    ("floor", E.floor, [((3,), dict(low=0.1, high=0.9))], False),
    ("add", lambda a, b: a + b, [((3, 4), {}), ((4,), {})], True),
    ("add_alpha", lambda a, b: E.add(a, b, alpha=2.5), [((3, 4), {}), ((3, 1), {})], True),
    ("sub", lambda a, b: a - b, [((3, 4), {}), ((1, 4), {})], True),
    ("rsub", lambda a: 2.0 - a, [((3,), {})], True),
    ("mul", lambda a, b: a * b, [((3, 4), {}), ((4,), {})], True),
    ("div", lambda a, b: a / b, [((3, 4), {}), ((4,), POS)], True),
    ("pow_scalar", lambda a: a ** 3, [((3, 4), {})], True),
    ("pow_tensor", lambda a, b: a ** b, [((3,), POS), ((3,), {})], True),
    ("rpow", lambda b: 2.0 ** b, [((3,), {})], True),
    ("atan2", E.atan2, [((3,), {}), ((3,), {})], True),
    ("hypot", E.hypot, [((3,), {}), ((3,), {})], True),
    ("maximum", E.maximum, [((3, 4), dict(seed=1)), ((3, 4), dict(seed=2))], True),
    ("minimum", E.minimum, [((3, 4), dict(seed=1)), ((4,), dict(seed=2))], True),
    ("fmax", E.fmax, [((3,), dict(seed=1)), ((3,), dict(seed=2))], True),
    ("remainder", lambda a, b: E.remainder(a, b), [((3,), POS), ((3,), dict(low=2.5, high=3.0))], True),
    ("fmod", lambda a, b: E.fmod(a, b), [((3,), POS), ((3,), dict(low=2.5, high=3.0))], True),
    ("where", lambda a, b: E.where(a > 0, a, b), [((3, 4), {}), ((3, 4), {})], True),
    ("lerp", E.lerp, [((3,), {}), ((3,), {}), ((3,), UNIT)], True),
    ("clamp", lambda a: a.clamp(-0.5, 0.5), [((3, 4), {})], True),
    ("clamp_tensor", lambda a, lo: a.clamp(min=lo), [((3,), dict(seed=1)), ((3,), dict(seed=2))], True),
    ("addcmul", lambda a, b, c: E.addcmul(a, b, c, value=0.5), [((3,), {}), ((3,), {}), ((3,), {})], True),
    ("addcdiv", lambda a, b, c: E.addcdiv(a, b, c), [((3,), {}), ((3,), {}), ((3,), POS)], True),
    ("sum", lambda a: a.sum(1), [((3, 4), {})], True),
    ("mean", lambda a: a.mean((0, 1), keepdim=True), [((3, 4), {})], True),
    ("prod", lambda a: a.prod(0), [((3, 4), {})], True),
    ("amax", lambda a: a.amax(1), [((3, 4), {})], True),
    ("max_dim", lambda a: a.max(1)[0], [((3, 4), {})], True),
    ("min_all", lambda a: a.min(), [((3, 4), {})], True),
    ("median_dim", lambda a: a.median(0)[0], [((3, 4), {})], True),
    ("var", lambda a: a.var(1), [((3, 4), {})], True),
    ("std", lambda a: a.std(), [((3, 4), {})], True),
    ("var_mean", lambda a: E.var_mean(a, 0), [((3, 4), {})], True),
    ("std_mean", lambda a: E.std_mean(a, 1, keepdim=True), [((3, 4), {})], True),
    ("norm", lambda a: a.norm(), [((3, 4), {})], True),
    ("norm_p1", lambda a: a.norm(1, dim=1), [((3, 4), {})], True),
    ("norm_p3", lambda a: a.norm(3), [((3, 4), {})], True),
    ("norm_inf", lambda a: a.norm(float("inf"), dim=0), [((3, 4), {})], True),
    ("logsumexp", lambda a: a.logsumexp(1), [((3, 4), {})], True),
    ("trace", E.trace, [((3, 4), {})], True),
    ("diag_2d", lambda a: E.diag(a, 1), [((3, 4), {})], True),
    ("diag_1d", lambda a: E.diag(a, -1), [((3,), {})], True),
    ("diag_embed", E.diag_embed, [((2, 3), {})], True),
    ("view", lambda a: a.view(3, 2, 2), [((3, 4), {})], True),
    ("reshape", lambda a: a.reshape(-1), [((3, 4), {})], True),
    ("expand", lambda a: a.expand(2, 3, 4), [((3, 1), {})], True),
    ("permute", lambda a: a.permute(2, 0, 1), [((2, 3, 4), {})], True),
    ("transpose", lambda a: a.transpose(0, 1), [((3, 4), {})], True),
    ("t", lambda a: a.t(), [((3, 4), {})], True),
    ("squeeze_unsqueeze", lambda a: a.unsqueeze(0).squeeze(2), [((3, 1), {})], True),
    ("narrow", lambda a: a.narrow(1, 1, 2), [((3, 4), {})], True),
    ("select", lambda a: a.select(0, 1), [((3, 4), {})], True),
    ("diagonal", lambda a: a.diagonal(1), [((3, 4), {})], True),
    ("unfold", lambda a: a.unfold(0, 3, 1), [((5,), {})], True),
    ("as_strided", lambda a: a.as_strided((2, 2), (1, 2)), [((3, 4), {})], True),
    ("flatten", lambda a: a.flatten(), [((2, 3), {})], True),
    ("movedim", lambda a: a.movedim(0, 1), [((2, 3), {})], True),
    ("split", lambda a: a.split(2, dim=1), [((3, 4), {})], True),
    ("chunk", lambda a: a.chunk(2), [((4, 2), {})], True),
    ("unbind", lambda a: a.unbind(1), [((3, 2), {})], True),
    ("getitem_slice", lambda a: a[1:, ::2], [((3, 4), {})], True),
    ("getitem_index", lambda a: a[E.tensor([0, 2, 0])], [((3, 4), {})], True),
    ("getitem_mask", lambda a: a[a > 0], [((3, 4), {})], True),
    ("cat", lambda a, b: E.cat([a, b], 1), [((3, 2), {}), ((3, 1), {})], True),
    ("stack", lambda a, b: E.stack([a, b]), [((3,), {}), ((3,), {})], True),
    ("clone", lambda a: a.clone(), [((3,), {})], True),
    ("contiguous", lambda a: a.t().contiguous(), [((3, 4), {})], True),
    ("matmul", E.matmul, [((3, 4), {}), ((4, 2), {})], True),
    ("matmul_batched", E.matmul, [((2, 3, 4), {}), ((4,), {})], True),
    ("mm", E.mm, [((3, 4), {}), ((4, 2), {})], True),
    ("bmm", E.bmm, [((2, 3, 4), {}), ((2, 4, 2), {})], True),
    ("mv", E.mv, [((3, 4), {}), ((4,), {})], True),
    ("dot", E.dot, [((4,), {}), ((4,), {})], True),
    ("outer", E.outer, [((3,), {}), ((4,), {})], True),
    ("addmm", lambda c, a, b: E.addmm(c, a, b, beta=0.5, alpha=2.0), [((3, 2), {}), ((3, 4), {}), ((4, 2), {})], True),
    ("addmv", E.addmv, [((3,), {}), ((3, 4), {}), ((4,), {})], True),
    ("baddbmm", E.baddbmm, [((2, 3, 2), {}), ((2, 3, 4), {}), ((2, 4, 2), {})], True),
]


def _inputs(specs, transposed):
    return tuple(sample(shape, seed=i + kw.get("seed", 0) * 10, transposed=transposed,
                        **{k: v for k, v in kw.items() if k != "seed"})
                 for i, (shape, kw) in enumerate(specs))


@pytest.mark.parametrize("transposed", [False, True], ids=["contiguous", "noncontiguous"])
@pytest.mark.parametrize("name, fn, specs, second", OPS, ids=[op[0] for op in OPS])
def test_gradcheck(name, fn, specs, second, transposed):
    inputs = _inputs(specs, transposed)
    assert gradcheck(fn, inputs)
    if second and not transposed:
        assert gradgradcheck(fn, inputs)


ZERO_DIM = [
    E.neg, E.abs, E.exp, E.log, E.sqrt, E.sin, E.tanh, E.sigmoid, lambda a: a.sum(), lambda a: a.mean(0),
    lambda a: a.prod(), lambda a: a.amax(), lambda a: E.std_mean(a, correction=0)[1],
    lambda a: a.logsumexp(0), lambda a: a.clone(), lambda a: a * a, lambda a: a.max(0)[0],
    lambda a: a.expand(3), lambda a: a.unsqueeze(0), lambda a: a.norm(),
]


@pytest.mark.parametrize("fn", ZERO_DIM)
def test_gradcheck_zero_dim(fn):
    x = sample((), **POS)
    assert gradcheck(fn, (x,))
    assert gradgradcheck(fn, (x,))


def test_gradcheck_reports_a_wrong_gradient_like_pytorch():
    class WrongSquare(ember_autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return grad * x  # should be 2x

    x = sample((2,))
    with pytest.raises(GradcheckError,
                       match=r"Jacobian mismatch for output 0 with respect to input 0,\nnumerical:"):
        gradcheck(WrongSquare.apply, (x,))
    assert gradcheck(WrongSquare.apply, (x,), raise_exception=False) is False


def test_dtype_conversion_casts_the_gradient_back():
    x = E.tensor([1.0, 2.0], dtype=E.float64, requires_grad=True)
    (x.to(E.float32) * 3).sum().backward()
    assert x.grad.dtype is E.float64 and x.grad.tolist() == [3.0, 3.0]


def test_gradcheck_warns_for_single_precision():
    x = E.tensor([1.0, 2.0], requires_grad=True)
    with pytest.warns(UserWarning, match="is not a double precision"):
        gradcheck(lambda a: a * 2, (x,), atol=1e-2, rtol=1e-2, eps=1e-3)


def test_gradcheck_needs_an_input_requiring_grad():
    with pytest.raises(ValueError, match="at least one input tensor to require gradient"):
        gradcheck(lambda a: a * 2, (E.ones(2, dtype=E.float64),))


# In-place variants on a non-leaf (a clone): the rule of the op applies, recorded in place.
INPLACE_UNARY = [
    ("neg_", {}), ("abs_", {}), ("exp_", {}), ("exp2_", {}), ("expm1_", {}), ("log_", POS), ("log2_", POS),
    ("log10_", POS), ("log1p_", POS), ("sqrt_", POS), ("rsqrt_", POS), ("reciprocal_", POS), ("square_", {}),
    ("sin_", {}), ("cos_", {}), ("tan_", UNIT), ("asin_", UNIT), ("acos_", UNIT), ("atan_", {}), ("sinh_", {}),
    ("cosh_", {}), ("tanh_", {}), ("asinh_", {}), ("acosh_", dict(low=1.2, high=3.0)), ("atanh_", UNIT),
    ("sigmoid_", {}), ("relu_", {}), ("erf_", {}), ("erfc_", {}), ("erfinv_", UNIT), ("lgamma_", POS),
    ("digamma_", POS), ("frac_", dict(low=0.1, high=0.9)), ("nan_to_num_", {}),
    ("logit_", dict(low=0.1, high=0.9)),
]


@pytest.mark.parametrize("name, domain", INPLACE_UNARY, ids=[n for n, _ in INPLACE_UNARY])
def test_gradcheck_in_place_unary(name, domain):
    x = sample((3,), **domain)

    def fn(a):
        return getattr(a.clone(), name)()
    assert gradcheck(fn, (x,))
    assert gradgradcheck(fn, (x,))


INPLACE_BINARY = [
    ("add_", lambda a, b: a.add_(b, alpha=2.0), {}), ("sub_", lambda a, b: a.sub_(b), {}),
    ("mul_", lambda a, b: a.mul_(b), {}), ("div_", lambda a, b: a.div_(b), POS),
    ("pow_", lambda a, b: a.abs().pow_(b), {}), ("atan2_", lambda a, b: a.atan2_(b), {}),
    ("hypot_", lambda a, b: a.hypot_(b), {}), ("lerp_", lambda a, b: a.lerp_(b, 0.3), {}),
    ("clamp_", lambda a, b: a.clamp_(-0.5, 0.5), {}), ("addcmul_", lambda a, b: a.addcmul_(b, b, value=2.0), {}),
    ("addcdiv_", lambda a, b: a.addcdiv_(b, b * b), POS), ("copy_", lambda a, b: a.copy_(b), {}),
    ("setitem_", lambda a, b: a.__setitem__(slice(0, 2), b[1:]) or a, {}),
]


@pytest.mark.parametrize("name, fn, domain", INPLACE_BINARY, ids=[n for n, _, _ in INPLACE_BINARY])
def test_gradcheck_in_place_binary(name, fn, domain):
    x, y = sample((3,), seed=1), sample((3,), seed=2, **domain)

    def f(a, b):
        return fn(a.clone() * 1.5, b)
    assert gradcheck(f, (x, y))
    assert gradgradcheck(f, (x, y))


@pytest.mark.parametrize("fn", [lambda a: a.round(), lambda a: a.sign(), lambda a: a.ceil(),
                                lambda a: a.sgn(), lambda a: a.clone().sgn_(),
                                lambda a: a.trunc(), lambda a: a.clone().fill_(2.0),
                                lambda a: a.clone().zero_(), lambda a: a.clone().normal_(),
                                lambda a: a.clone().uniform_()])
def test_piecewise_constant_ops_have_zero_gradients(fn):
    x = sample((3,), low=0.1, high=0.4)
    (g,) = ember_autograd.grad(fn(x).sum(), x)
    assert g.tolist() == [0.0, 0.0, 0.0]


@pytest.mark.parametrize("name", ["mul", "div", "matmul", "logsumexp", "getitem_index", "std", "cat"])
def test_fast_mode_random_directions(name):
    fn, specs = {op[0]: (op[1], op[2]) for op in OPS}[name]
    inputs = _inputs(specs, transposed=False)
    assert gradcheck(fn, inputs, fast_mode=True)
    assert gradgradcheck(fn, inputs, fast_mode=True)


def test_fast_mode_reports_a_wrong_gradient():
    class Half(ember_autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            return grad

    with pytest.raises(GradcheckError, match="computed in fast mode"):
        gradcheck(Half.apply, (sample((4,)),), fast_mode=True)
