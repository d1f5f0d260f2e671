"""Gradients of custom kernels (ember.kernel with grad=, raw_kernel with backward=):
first and second order against central finite differences in float64, broadcasting
gradients, and the graph node a kernel leaves."""
import math

import numpy as np
import pytest

import ember_autograd as autograd
import ember_tensor as et


@et.kernel.helper
def _sig(x):
    return 1 / (1 + math.exp(-x))


@et.kernel(grad=[lambda x: _sig(x) * (1 - _sig(x)) * (1 - 2 * _sig(x))])
def sigmoid_prime(x):
    return _sig(x) * (1 - _sig(x))


@et.kernel(grad=[sigmoid_prime])  # the derivative is itself a differentiable kernel
def sigmoid_k(x):
    return _sig(x)


@et.kernel(grad=[lambda x, y: y, lambda x, y: x + 0 * y])
def times(x, y):
    return x * y


def numeric_grad(fn, x, eps=1e-6):
    """d sum(fn(x)) / dx by central differences (x: float64 array)."""
    grad = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[i] += eps
        down[i] -= eps
        grad[i] = (fn(up).sum() - fn(down).sum()) / (2 * eps)
    return grad


def grad_of_sum(output, inputs, create_graph=False):
    """autograd.grad of output.sum(), seeded with ones (kept free of the sum op's own rule)."""
    return autograd.grad(output, inputs, grad_outputs=et.ones_like(output), create_graph=create_graph)


def _sigmoid_np(x):
    return 1 / (1 + np.exp(-x))


def test_first_and_second_derivative_match_finite_differences():
    values = np.array([0.5, -1.0, 2.0, -3.0])
    x = et.tensor(values, requires_grad=True)
    (g,) = grad_of_sum(sigmoid_k(x), x, create_graph=True)
    np.testing.assert_allclose(g.detach().numpy(), numeric_grad(_sigmoid_np, values), rtol=1e-6)
    (g2,) = grad_of_sum(g, x)
    first = lambda v: _sigmoid_np(v) * (1 - _sigmoid_np(v))  # noqa: E731
    np.testing.assert_allclose(g2.numpy(), numeric_grad(first, values), rtol=1e-5)


def test_backward_accumulates_into_leaves_and_unbroadcasts():
    x = et.tensor([[1.0, 2.0, 3.0]], dtype=et.float64, requires_grad=True)   # (1, 3)
    y = et.tensor([[2.0], [5.0]], dtype=et.float64, requires_grad=True)      # (2, 1)
    out = times(x, y)
    assert out.shape == (2, 3) and type(out.grad_fn).__name__ == "TimesBackward0"
    out.backward(et.ones_like(out))
    assert x.grad.shape == (1, 3) and x.grad.tolist() == [[7.0, 7.0, 7.0]]
    assert y.grad.shape == (2, 1) and y.grad.tolist() == [[6.0], [6.0]]


def test_python_number_arguments_get_no_gradient():
    x = et.tensor([1.0, 2.0], dtype=et.float64, requires_grad=True)
    out = times(x, 3.0)
    out.backward(et.ones_like(out))
    assert x.grad.tolist() == [3.0, 3.0]


def test_kernel_without_grad_is_not_differentiable():
    @et.kernel
    def square(x):
        return x * x

    x = et.tensor([1.0], requires_grad=True)
    assert not square(x).requires_grad


def _jacobi_cpu(out, A, b, iters):
    # x <- D^-1 (b - R x), as the slides' C++ extension: the whole loop in one kernel.
    n = b.shape[0]
    current = np.zeros(n)
    for _ in range(iters):
        for i in range(n):
            total = b[i]
            for j in range(n):
                if j != i:
                    total -= A[i, j] * current[j]
            out[i] = total / A[i, i]
        current[:] = out[:]


def _jacobi_backward(grad, A, b, iters):
    # x = A^-1 b, so d loss / d b = A^-T grad: one more Jacobi solve, with A transposed.
    return None, jacobi_solve(A.t().contiguous(), grad, iters), None


jacobi_solve = et.raw_kernel(_jacobi_cpu, output=lambda A, b, iters: (b.shape, b.dtype),
                             backward=_jacobi_backward, name="jacobi_solve", inputs=["A", "b", "iters"])


def test_raw_kernel_jacobi_solver_and_its_user_given_backward():
    A = et.tensor([[4.0, 1.0, 0.0], [1.0, 5.0, 2.0], [0.0, 2.0, 6.0]], dtype=et.float64)
    b = et.tensor([1.0, 2.0, 3.0], dtype=et.float64, requires_grad=True)
    x = jacobi_solve(A, b, 200)
    np.testing.assert_allclose(x.detach().numpy(), np.linalg.solve(A.numpy(), b.detach().numpy()), rtol=1e-10)
    (grad_b,) = grad_of_sum(x, b)  # the slides' autograd.grad(jacobi_solve(A, b).sum(), b)
    np.testing.assert_allclose(grad_b.numpy(), np.linalg.solve(A.numpy().T, np.ones(3)), rtol=1e-10)


@pytest.mark.parametrize("dtype", [et.float32, et.float64])
def test_gradient_dtype_follows_the_input(dtype):
    x = et.tensor([0.25, 0.5], dtype=dtype, requires_grad=True)
    out = sigmoid_k(x)
    out.backward(et.ones_like(out))
    assert x.grad.dtype is dtype


def test_custom_kernel_shows_in_the_profiler():
    from ember_autograd import profiler

    x = et.ones(4)
    with profiler.profile() as prof:
        sigmoid_k(x)
    names = [event.key for event in prof.key_averages()]
    assert "custom::sigmoid_k" in names
    assert "custom::sigmoid_k" in prof.key_averages().table()
