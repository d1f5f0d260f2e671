"""Derivatives of the complex-number ops, in PyTorch's convention: the gradient of a real
loss L with respect to z is the conjugate Wirtinger derivative 2 dL/d(conj z), so that
``(z * z.conj()).real.sum()`` gives ``2 * z`` and ``z.abs().sum()`` gives ``z / |z|``.

The holomorphic ops of `elementwise.py` (mul, div, exp, log, ...) multiply by the
conjugate of their derivative; the ops here move gradients between complex tensors and
their real parts.
"""
import ember_tensor as E

from ._registry import composite, derivative


@derivative("conj", "conj_physical", "conj_physical_")
def conj(ctx, grad):
    return grad.conj()


@derivative("real", inputs=("input",))
def real(ctx, grad):
    # d real(z): the real gradient lands on the real part of z.
    return grad.to(grad.dtype.to_complex())


@derivative("imag", inputs=("input",))
def imag(ctx, grad):
    # d imag(z): the gradient lands on the imaginary part (grad * i).
    return grad * 1j


@derivative("view_as_real", inputs=("input",))
def view_as_real(ctx, grad):
    return E.view_as_complex(grad.contiguous())


@derivative("view_as_complex", inputs=("input",))
def view_as_complex(ctx, grad):
    return E.view_as_real(grad.contiguous() if grad.is_complex() else grad.to(grad.dtype.to_complex()))


@derivative("complex", inputs=("real", "imag"))
def complex(ctx, grad):  # noqa: A001 - the op's name
    return grad.real, grad.imag


@derivative("angle", save=lambda input, **_: (input,))
def angle(ctx, grad, x):
    if not x.is_complex():
        return E.zeros_like(x)
    # d angle(z) = Im(dz / z): PyTorch's grad * z / |z|^2 * i, and 0 at z = 0.
    denom = x.abs() ** 2
    safe = E.where(denom == 0, 1.0, denom)
    return E.where(denom == 0, 0.0, grad * x / safe * 1j)


@derivative("sgn", save=lambda input, **_: (input,))
def sgn(ctx, grad, x):
    if not x.is_complex():  # sign: flat almost everywhere
        return E.zeros_like(grad)
    # z / |z| moves only along the circle: PyTorch's (g - sgn * Re(conj(sgn) * g)) / |z|,
    # the component of g tangent to the circle, scaled by 1 / |z|; 0 at z = 0.
    r = x.abs()
    s = x.sgn()
    safe = E.where(r == 0, 1.0, r)
    return E.where(r == 0, 0.0, (grad - s * (s.conj() * grad).real) / safe)


composite("polar", "view_as_real_copy", "view_as_complex_copy")
