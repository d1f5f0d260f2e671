"""Gradients of ``torch.special`` (issue 27): gradcheck, and gradgradcheck where the
derivative is made of differentiable parts, in float64; the first arguments PyTorch does
not differentiate (zeta, gammainc, gammaincc) raise as PyTorch's do."""
import numpy as np
import pytest

import ember_autograd
import ember_tensor as E
import ember_tensor.special as S

gradcheck = ember_autograd.gradcheck
gradgradcheck = ember_autograd.gradgradcheck


def sample(shape, low, high, seed=0):
    """A float64 leaf requiring grad with values spread over [low, high)."""
    rng = np.random.default_rng(seed)
    values = rng.uniform(low, high, int(np.prod(shape)))
    return E.tensor(values.reshape(shape), dtype=E.float64).requires_grad_()


def const(values):
    return E.tensor(values, dtype=E.float64)


# (id, function of one tensor, low, high, second order)
OPS = [
    ("i0", S.i0, -4.0, 4.0, True),
    ("i0e", S.i0e, 0.2, 40.0, True),
    ("i0e_negative", S.i0e, -40.0, -0.2, True),
    ("i1", S.i1, -4.0, 4.0, True),
    ("i1e", S.i1e, -35.0, 35.0, True),
    ("erfcx", S.erfcx, -3.0, 10.0, True),
    ("ndtri", S.ndtri, 0.01, 0.99, True),
    ("log_ndtr", S.log_ndtr, -30.0, 5.0, True),
    ("ndtr", S.ndtr, -3.0, 3.0, True),
    ("sinc", S.sinc, -2.7, 2.7, True),
    ("entr", S.entr, 0.1, 3.0, True),
    ("expit", S.expit, -3.0, 3.0, True),
    ("xlog1py_x", lambda x: S.xlog1py(x, const([0.5, 2.0, -0.5, 1.0])), -2.0, 2.0, True),
    ("xlog1py_y", lambda y: S.xlog1py(const([0.5, 2.0, -0.5, 1.0]), y), -0.5, 2.0, True),
    ("zeta_q", lambda q: S.zeta(const([2.0, 3.0, 4.5, 2.0]), q), 0.5, 4.0, True),
    ("polygamma1", lambda x: S.polygamma(1, x), 0.3, 4.0, True),
    ("polygamma3", lambda x: S.polygamma(3, x), 0.3, 4.0, True),
    ("multigammaln", lambda x: S.multigammaln(x, 3), 1.5, 4.0, True),
    ("gammainc_x", lambda x: S.gammainc(const([0.5, 1.0, 2.5, 7.0]), x), 0.1, 6.0, False),
    ("gammaincc_x", lambda x: S.gammaincc(const([0.5, 1.0, 2.5, 7.0]), x), 0.1, 6.0, False),
]


@pytest.mark.parametrize("fn, low, high, second", [op[1:] for op in OPS], ids=[op[0] for op in OPS])
def test_gradcheck(fn, low, high, second):
    x = sample((4,), low, high)
    assert gradcheck(fn, (x,))
    if second:
        assert gradgradcheck(fn, (x,))


def test_i1_gradient_at_zero_is_one_half():
    for fn in (S.i1, S.i1e):
        x = E.zeros(2, dtype=E.float64, requires_grad=True)
        fn(x).sum().backward()
        assert x.grad.tolist() == [0.5, 0.5]


def test_inplace_forms_differentiate_at_the_input():
    for name, args, expected in (("polygamma_", (1,), lambda x: E.polygamma(2, x)),
                                 ("mvlgamma_", (2,), lambda x: E.digamma(x) + E.digamma(x - 0.5)),
                                 ("i0_", (), lambda x: S.i1(x)), ("sinc_", (), None)):
        x = sample((3,), 1.2, 3.0)
        y = x * 1.0
        getattr(y, name)(*args).sum().backward()
        if expected is not None:
            assert E.allclose(x.grad, expected(x.detach()))
    x = sample((3,), 1.2, 3.0)
    assert gradcheck(lambda t: (t * 1.0).polygamma_(2), (x,))


@pytest.mark.parametrize("fn", [S.zeta, S.gammainc, S.gammaincc])
def test_first_argument_is_not_differentiated(fn):
    a = sample((2,), 2.0, 3.0)
    with pytest.raises(RuntimeError, match="is not implemented"):
        fn(a, const([1.0, 2.0])).sum().backward()
