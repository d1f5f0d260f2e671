"""Complex autograd in PyTorch's convention (the conjugate Wirtinger derivative): a real
loss of complex intermediates gives PyTorch's gradients; gradcheck with complex128 inputs."""
import numpy as np
import pytest

import ember_autograd
import ember_tensor as et

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(7)
Z = (RNG.standard_normal((3, 4)) + 1j * RNG.standard_normal((3, 4))).astype(np.complex128)
W = (RNG.standard_normal((4, 2)) + 1j * RNG.standard_normal((4, 2))).astype(np.complex128)
X = RNG.standard_normal((3, 4))

# Each program maps (lib, z, w, x) to a real scalar loss; z and w are complex leaves, x real.
PROGRAMS = {
    "abs_sq": lambda lib, z, w, x: (z * z.conj()).real.sum(),
    "abs": lambda lib, z, w, x: z.abs().sum(),
    "exp_log": lambda lib, z, w, x: (z.exp() + (z + 3).log()).abs().sum(),
    "trig": lambda lib, z, w, x: (z.sin() * z.cos() + z.tanh()).real.sum(),
    "sqrt_div": lambda lib, z, w, x: ((z + 2).sqrt() / (z + 5)).imag.sum(),
    "pow": lambda lib, z, w, x: (z ** 3).abs().sum() + ((z + 3) ** 0.5).real.sum() + (z ** w[0, 0]).imag.sum(),
    "matmul": lambda lib, z, w, x: (z @ w).abs().pow(2).sum(),
    "mixed_real": lambda lib, z, w, x: (z * x).angle().sum() + (x * z.conj()).real.mean(),
    "sigmoid": lambda lib, z, w, x: z.sigmoid().abs().sum(),
    "reductions": lambda lib, z, w, x: z.sum(0).abs().sum() + z.mean().abs() + z.prod(1).abs().sum(),
    "views": lambda lib, z, w, x: lib.view_as_real(z * 2).pow(2).sum() + lib.view_as_complex(
        lib.stack([x, x * 2], -1)).mul(z).real.sum(),
    "polar": lambda lib, z, w, x: lib.polar(x.abs() + 1, x).mul(z).real.sum(),
    "sgn": lambda lib, z, w, x: (z.sgn() * w[0, 0]).real.sum() + (z * x).sgn().imag.sum() + x.sgn().sum(),
    # (Not with a real operand: PyTorch's backward then fails an internal check on its dtype.)
    "logaddexp": lambda lib, z, w, x: (lib.logaddexp(z, w[:, 0]) * w[0, 1]).real.sum()
    + lib.logaddexp(z * 2j, z).imag.sum() + lib.logaddexp(z, z).abs().sum(),
    "logcumsumexp": lambda lib, z, w, x: (lib.logcumsumexp(z, 1) * w[0, 1]).real.sum()
    + lib.logcumsumexp(z * 2j, 0).abs().sum(),
}


def _leaves(lib):
    return (lib.tensor(Z, requires_grad=True), lib.tensor(W, requires_grad=True),
            lib.tensor(X, requires_grad=True))


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_real_loss_of_complex_intermediates_matches_pytorch(name):
    ours, theirs = _leaves(et), _leaves(torch)
    PROGRAMS[name](et, *ours).backward()
    PROGRAMS[name](torch, *theirs).backward()
    for o, t in zip(ours, theirs):
        if t.grad is None:
            assert o.grad is None
            continue
        assert o.grad.dtype == getattr(et, str(t.grad.dtype).split(".")[1])
        np.testing.assert_allclose(o.grad.numpy(), t.grad.numpy(), rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("name", ["sgn", "abs", "angle"])
def test_gradients_at_zero_match_pytorch(name):
    """sgn, abs and angle of complex inputs, 0 among them: PyTorch's formulas (0 at 0)."""
    z, g = [1 + 2j, -0.5 + 0.25j, 0j, 3 - 1j], [0.3 - 0.7j, 1 + 1j, 0.5 + 2j, -1 + 0.5j]
    grads = []
    for lib in (et, torch):
        x = lib.tensor(z, requires_grad=True)
        y = getattr(lib, name)(x)
        out_grad = lib.tensor(g) if y.is_complex() else lib.tensor(g).real
        grad = ember_autograd.grad if lib is et else torch.autograd.grad
        grads.append(grad(y, x, out_grad)[0].numpy())
    np.testing.assert_allclose(*grads, rtol=1e-6, atol=1e-7)


def test_known_values():
    z = et.tensor([1 + 2j, -3 + 0.5j], requires_grad=True)
    (z * z.conj()).real.sum().backward()
    np.testing.assert_allclose(z.grad.numpy(), 2 * z.detach().numpy())
    z.grad = None
    z.abs().sum().backward()
    np.testing.assert_allclose(z.grad.numpy(), (z / z.abs()).detach().numpy())


@pytest.mark.parametrize("fn", [
    lambda z: z * z,
    lambda z: z.exp(),
    lambda z: (z + 2).log(),
    lambda z: z.sin(),
    lambda z: 1 / (z + 3),
    lambda z: z.abs(),
    lambda z: z.sgn(),
    lambda z: et.logaddexp(z, z.flip(0) * 2j),
    lambda z: et.logcumsumexp(z, 1),
    lambda z: et.logcumsumexp(z * 1j, 0),
])
def test_gradcheck_complex128(fn):
    z = et.tensor(Z[:2, :2] * 0.5, requires_grad=True)
    assert ember_autograd.gradcheck(fn, (z,))


def test_real_input_receives_the_real_part_of_a_complex_gradient():
    x = et.tensor([0.5, -1.0], requires_grad=True)
    (x * et.tensor([1 + 1j, 2 - 1j])).abs().sum().backward()
    t = torch.tensor([0.5, -1.0], requires_grad=True)
    (t * torch.tensor([1 + 1j, 2 - 1j])).abs().sum().backward()
    assert x.grad.dtype == et.float32
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-6)


def test_det_create_graph_at_a_singular_complex_matrix_matches_pytorch():
    # The adjugate through an SVD, with the conjugate phase conj(det(U) det(Vh)).
    values = np.array([[1 + 1j, 2 - 1j, 0.5j], [2 + 2j, 4 - 1j, 1.0], [3 + 3j, 6 - 2j, 1 + 0.5j]])
    results = []
    for lib, grad in ((et, ember_autograd.grad), (torch, torch.autograd.grad)):
        A = lib.tensor(values, requires_grad=True)
        g, = grad((lib.linalg.det(A) * (0.5 - 1j)).real, A, create_graph=True)
        results.append(g.detach().numpy())
    np.testing.assert_allclose(results[0], results[1], rtol=1e-10, atol=1e-12)
