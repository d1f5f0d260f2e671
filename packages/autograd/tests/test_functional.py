"""autograd.functional against PyTorch's numbers (computed once with torch 2.x)."""
import numpy as np
import pytest

import ember_tensor as E
from ember_autograd import functional as F

X = E.tensor([[0.5, -1.0], [2.0, 0.25]], dtype=E.float64)
Y = E.tensor([1.5, -0.5], dtype=E.float64)


def f_exp_sum(x):
    return x.exp().sum(1)


def f_two(x, y):
    return (x * y).sum(), x.sin() + y


def f_scalar(x, y):
    return (x ** 3).sum() + (x * y).sum() * y.sum()


def close(a, b):
    np.testing.assert_allclose(np.asarray(a.tolist()), np.asarray(b), rtol=1e-12, atol=1e-12)


def test_jacobian_single_tensor():
    j = F.jacobian(f_exp_sum, X)
    e = np.exp(np.array(X.tolist()))
    expected = np.zeros((2, 2, 2))
    for i in range(2):
        expected[i, i, :] = e[i]
    close(j, expected)
    assert not j.requires_grad


def test_jacobian_tuples_shapes():
    j = F.jacobian(f_two, (X, Y))
    assert isinstance(j, tuple) and len(j) == 2 and len(j[0]) == 2
    assert [tuple(t.shape) for t in j[0]] == [(2, 2), (2,)]
    assert [tuple(t.shape) for t in j[1]] == [(2, 2, 2, 2), (2, 2, 2)]
    close(j[0][1], (np.array(X.tolist())).sum(0))


def test_hessian_matches_pytorch():
    # torch.autograd.functional.hessian(lambda x: (x**3).sum() + x.prod(), torch.tensor([1., 2., 3.]))
    h = F.hessian(lambda x: (x ** 3).sum() + x.prod(), E.tensor([1.0, 2.0, 3.0]))
    assert h.tolist() == [[6.0, 3.0, 2.0], [3.0, 12.0, 1.0], [2.0, 1.0, 18.0]]


def test_hessian_of_two_inputs_is_a_nested_tuple():
    h = F.hessian(f_scalar, (X, Y))
    assert [tuple(t.shape) for t in h[0]] == [(2, 2, 2, 2), (2, 2, 2)]
    assert [tuple(t.shape) for t in h[1]] == [(2, 2, 2), (2, 2)]


def test_vjp_and_jvp_agree_with_the_jacobian():
    v_out = E.tensor([1.0, -2.0], dtype=E.float64)
    v_in = E.tensor([[1.0, 0.5], [-1.0, 2.0]], dtype=E.float64)
    jac = np.array(F.jacobian(f_exp_sum, X).tolist())
    out, vjp = F.vjp(f_exp_sum, X, v_out)
    close(out, np.exp(np.array(X.tolist())).sum(1))
    close(vjp, np.einsum("i,ijk->jk", np.array(v_out.tolist()), jac))
    out, jvp = F.jvp(f_exp_sum, X, v_in)
    close(jvp, np.einsum("ijk,jk->i", jac, np.array(v_in.tolist())))


def test_hvp_and_vhp_agree_with_the_hessian():
    v = E.tensor([1.0, -1.0, 0.5], dtype=E.float64)
    x = E.tensor([1.0, 2.0, 3.0], dtype=E.float64)

    def f(t):
        return (t ** 3).sum() + t.prod()
    h = np.array(F.hessian(f, x).tolist())
    value, hv = F.hvp(f, x, v)
    assert value.item() == 42.0
    close(hv, h @ np.array(v.tolist()))
    close(F.vhp(f, x, v)[1], np.array(v.tolist()) @ h)


def test_create_graph_keeps_results_differentiable():
    x = E.tensor([1.0, 2.0], dtype=E.float64, requires_grad=True)
    _, g = F.vjp(lambda t: (t ** 3).sum(), x, create_graph=True)
    assert g.requires_grad
    g.sum().backward()
    assert x.grad.tolist() == [6.0, 12.0]


def test_strict_mode_refuses_independent_inputs():
    with pytest.raises(RuntimeError, match="independent of input 1"):
        F.vjp(lambda a, b: a * 2, (Y, Y.clone()), E.ones(2, dtype=E.float64), strict=True)
    # without strict, the gradient is zeros
    assert F.vjp(lambda a, b: a * 2, (Y, Y.clone()), E.ones(2, dtype=E.float64))[1][1].tolist() == [0.0, 0.0]


def test_v_must_match_the_outputs():
    with pytest.raises(RuntimeError, match="The vector v can only be None"):
        F.vjp(f_exp_sum, X)
    with pytest.raises(RuntimeError, match="Entry 0 in v has invalid size"):
        F.vjp(f_exp_sum, X, E.ones(3, dtype=E.float64))
    with pytest.raises(TypeError, match="must be either a Tensor or a tuple of Tensors"):
        F.jacobian(f_exp_sum, [1.0, 2.0])
